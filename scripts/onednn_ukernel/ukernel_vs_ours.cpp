// Our host cube micro-kernels against oneDNN's ukernel BRGEMM, one thread, operands resident in L2.
// oneDNN's ukernel is reached through the copy torch ships (at::native::cpublas::brgemm / pack, oneDNN
// v3.12 in torch 2.13; declared here by hand, they are exported from libtorch_cpu.so): PyPI's `onednn`
// wheel is built without the ukernel API and Debian's libdnnl (2.6) predates it. torch's wrapper packs
// and runs bf16 only where oneDNN's AMX ukernel does (it throws "No need to pack" elsewhere), so only
// the AMX path can be compared. Built and run by run.sh.
//   usage: ukernel_vs_ours M N K   (each a multiple of 32; our kernels take the L0 formats, oneDNN its own)
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "deepgemm_ascend/core/cpu_features.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"

namespace c10 {
struct BFloat16;
enum class ScalarType : int8_t;
}  // namespace c10
namespace at::native::cpublas {
void brgemm(int64_t M, int64_t N, int64_t K, int64_t ld_a, int64_t ld_b, int64_t ld_c, bool add_C, const c10::BFloat16* A,
            const c10::BFloat16* B, float* C, bool is_vnni);
void brgemm_release(bool is_vnni);
void pack(int64_t K, int64_t N, int64_t ld_in, int64_t ld_out, c10::ScalarType dt_in, c10::ScalarType dt_out,
          const void* in, void* out);
}  // namespace at::native::cpublas

namespace host = deepgemm_ascend::tile::host;
namespace cpublas = at::native::cpublas;

namespace {

constexpr auto kBf16 = c10::ScalarType(15);  // c10::ScalarType::BFloat16
constexpr int kRounds = 7;
constexpr double kRoundSeconds = 0.1;

// Median over rounds of GFLOPS, each round as many calls as fit in kRoundSeconds.
template <class F>
double gflops(F f, double flop) {
  std::vector<double> t;
  for (int r = 0; r < kRounds; ++r) {
    const auto s = std::chrono::steady_clock::now();
    int n = 0;
    double dt;
    do {
      f();
      ++n;
      dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    } while (dt < kRoundSeconds);
    t.push_back(dt / n);
  }
  std::sort(t.begin(), t.end());
  return flop / t[t.size() / 2] / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s M N K\n", argv[0]);
    return 2;
  }
  const int64_t M = std::atol(argv[1]), N = std::atol(argv[2]), K = std::atol(argv[3]);
  namespace rt = deepgemm_ascend::runtime;
  const auto isas = rt::supported_host_isas();
  if (std::find(isas.begin(), isas.end(), rt::HostIsa::kAmxBf16) == isas.end()) {
    std::printf("no AMX here: oneDNN's ukernel (through torch) runs on AMX only; nothing to compare\n");
    return 0;
  }
  std::vector<uint16_t> a(size_t(M * K)), b(size_t(K * N)), packed(size_t(K * N));
  for (auto& v : a) v = uint16_t(0x3F80 + (std::rand() & 0x3F));
  for (auto& v : b) v = uint16_t(0x3F80 + (std::rand() & 0x3F));
  std::vector<float> c(size_t(M * N), 0.f);
  const double flop = 2.0 * double(M) * double(N) * double(K);
  const double amx = gflops([&] { host::mmad_bf16_amx({c.data(), a.data(), b.data(), M, N, K, false}); }, flop);
  const double avx = gflops([&] { host::mmad_bf16_avx512bf16({c.data(), a.data(), b.data(), M, N, K, false}); }, flop);
  // oneDNN: A row-major, B packed by oneDNN into blocks of nb columns, C row-major fp32; M in blocks of 64.
  std::printf("%ldx%ldx%ld, one thread, GFLOPS: ours amx %.0f, ours avx512bf16 %.0f", M, N, K, amx, avx);
  for (int64_t nb : {32, 64}) {
    for (int64_t n0 = 0; n0 < N; n0 += nb)
      cpublas::pack(K, nb, N, nb, kBf16, kBf16, b.data() + n0, packed.data() + n0 * K);
    const int64_t mb = std::min<int64_t>(M, 64);
    const double dnn = gflops([&] {
      for (int64_t m0 = 0; m0 < M; m0 += mb)
        for (int64_t n0 = 0; n0 < N; n0 += nb)
          cpublas::brgemm(mb, nb, K, K, nb, N, true, reinterpret_cast<const c10::BFloat16*>(a.data() + m0 * K),
                          reinterpret_cast<const c10::BFloat16*>(packed.data() + n0 * K), c.data() + m0 * N + n0, true);
    }, flop);
    std::printf(", onednn ukernel (64 x %ld blocks) %.0f", nb, dnn);
  }
  std::printf("\n");
  cpublas::brgemm_release(true);
  return 0;
}
