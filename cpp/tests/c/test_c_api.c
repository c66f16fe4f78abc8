/* The C ABI from C: a BF16 GEMM against a naive reference, and a refused call (status, message,
 * output untouched). Exit status 0 = pass. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "deepgemm_ascend/c_api.h"

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

#define M 37
#define N 29
#define K 64
#define CHECK(cond, ...)              \
  do {                                \
    if (!(cond)) {                    \
      fprintf(stderr, __VA_ARGS__);   \
      fprintf(stderr, "\n");          \
      return 1;                       \
    }                                 \
  } while (0)

int main(void) {
  static uint16_t a[M * K], b[N * K];
  static float d[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = to_bf16((float)((i * 7) % 13) - 6.0f);
  for (int i = 0; i < N * K; ++i) b[i] = to_bf16((float)((i * 5) % 11) * 0.5f - 2.5f);
  const int64_t sa[2] = {M, K}, sb[2] = {N, K}, sd[2] = {M, N};
  dga_tensor ta = NULL, tb = NULL, td = NULL, bad = NULL;
  CHECK(dga_tensor_create(a, DGA_BF16, 2, sa, NULL, &ta) == DGA_OK, "create a: %s", dga_last_error());
  CHECK(dga_tensor_create(b, DGA_BF16, 2, sb, NULL, &tb) == DGA_OK, "create b: %s", dga_last_error());
  CHECK(dga_tensor_create(d, DGA_FP32, 2, sd, NULL, &td) == DGA_OK, "create d: %s", dga_last_error());
  CHECK(dga_bf16_gemm("nt", ta, tb, td, NULL) == DGA_OK, "gemm: %s", dga_last_error());
  CHECK(strcmp(dga_last_error(), "") == 0, "error text after success: %s", dga_last_error());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int p = 0; p < K; ++p) ref += (double)from_bf16(a[i * K + p]) * from_bf16(b[j * K + p]);
      CHECK(fabs(d[i * N + j] - ref) <= 1e-3 * (1 + fabs(ref)), "d[%d,%d] = %f, want %f", i, j, d[i * N + j], ref);
    }

  /* A wrongly shaped output is refused, named, and left untouched. */
  const int64_t wrong[2] = {M, N + 1};
  static float e[M * (N + 1)];
  for (int i = 0; i < M * (N + 1); ++i) e[i] = 7.0f;
  CHECK(dga_tensor_create(e, DGA_FP32, 2, wrong, NULL, &bad) == DGA_OK, "create e: %s", dga_last_error());
  CHECK(dga_bf16_gemm("nt", ta, tb, bad, NULL) == DGA_ERROR_VALUE, "a mis-shaped d was accepted");
  CHECK(strncmp(dga_last_error(), "d:", 2) == 0, "message does not name d: %s", dga_last_error());
  for (int i = 0; i < M * (N + 1); ++i) CHECK(e[i] == 7.0f, "refused call wrote to d");
  dga_tensor_destroy(bad);
  bad = NULL;
  CHECK(dga_bf16_gemm("xx", ta, tb, td, NULL) == DGA_ERROR_VALUE, "bad layout accepted");
  CHECK(dga_bf16_gemm("nt", NULL, tb, td, NULL) == DGA_ERROR_VALUE, "NULL a accepted");
  CHECK(dga_tensor_create(a, 99, 2, sa, NULL, &bad) == DGA_ERROR_TYPE && bad == NULL, "bad dtype accepted");
  CHECK(dga_set_num_ai_cores(-1) == DGA_ERROR_VALUE, "negative core count accepted");

  dga_tensor_destroy(ta);
  dga_tensor_destroy(tb);
  dga_tensor_destroy(td);
  dga_tensor_destroy(NULL);
  printf("C ABI ok (deepgemm_ascend %s)\n", dga_version());
  return 0;
}
