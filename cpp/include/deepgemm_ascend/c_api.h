/* The C ABI of deepgemm_ascend, for hosts that cannot use the C++ API (C, Rust, Go, ctypes, ...).
 *
 * Tensors are opaque handles over caller-owned memory (no copies); every call returns a status and,
 * on failure, leaves a message naming the offending argument in dga_last_error() (per thread). As in
 * the C++ API, nothing is written to outputs when a call fails its checks. */
#ifndef DEEPGEMM_ASCEND_C_API_H_
#define DEEPGEMM_ASCEND_C_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dga_status {
  DGA_OK = 0,
  DGA_ERROR_TYPE = 1,            /* wrong dtype or kind of argument */
  DGA_ERROR_VALUE = 2,           /* shape, stride, alignment, aliasing, out-of-range value */
  DGA_ERROR_RUNTIME = 3,         /* backend or device failure */
  DGA_ERROR_NOT_IMPLEMENTED = 4,
  DGA_ERROR_INTERNAL = 5         /* anything else (a bug: please report) */
} dga_status;

typedef enum dga_dtype {
  DGA_BF16 = 0,
  DGA_FP16 = 1,
  DGA_FP32 = 2,
  DGA_FP8_E4M3 = 3,
  DGA_FP8_E5M2 = 4,
  DGA_FP4_E2M1X2 = 5, /* two E2M1 values per byte, low nibble first */
  DGA_INT8 = 6,
  DGA_UINT8 = 7,
  DGA_INT16 = 8,
  DGA_INT32 = 9,
  DGA_INT64 = 10
} dga_dtype;

typedef struct dga_tensor_s* dga_tensor;

/* A host tensor of `ndim` (1..6) dimensions over `data`; `strides` in elements (NULL: contiguous).
 * `dtype` is a dga_dtype value, passed as int so that any value a foreign caller sends is well defined. */
dga_status dga_tensor_create(void* data, int dtype, int ndim, const int64_t* shape, const int64_t* strides,
                             dga_tensor* out);
void dga_tensor_destroy(dga_tensor t); /* NULL is fine */

/* D = C + A @ B (layout "nt", "nn", "tn" or "tt"); c may be NULL. See api.hpp for the operands. */
dga_status dga_bf16_gemm(const char* layout, dga_tensor a, dga_tensor b, dga_tensor d, dga_tensor c);
/* FP8 / FP4 GEMM with scale factors; recipes (gran_mn, gran_k) for A and B. */
dga_status dga_fp8_fp4_gemm(const char* layout, dga_tensor a, dga_tensor sfa, dga_tensor b, dga_tensor sfb,
                            dga_tensor d, dga_tensor c, int64_t gran_m, int64_t gran_k_a, int64_t gran_n,
                            int64_t gran_k_b);

const char* dga_last_error(void); /* "" after a successful call */
const char* dga_version(void);
int dga_get_num_ai_cores(void);
dga_status dga_set_num_ai_cores(int n); /* 0 = all */

#ifdef __cplusplus
}
#endif

#endif /* DEEPGEMM_ASCEND_C_API_H_ */
