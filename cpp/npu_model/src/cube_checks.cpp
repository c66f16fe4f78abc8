// The documented operand rules of the cube's Mmad and MmadMx (cube.hpp), apart from the arithmetic in
// cube.cpp: the m / k / n ranges and the L0 start addresses.
#include "deepgemm_ascend/npu_model/cube_checks.hpp"

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
// Mmad.md (参数说明, MmadParams): m, n, k in [0, 4095]; C in L0C from a 1024 B aligned start, A in L0A and B in
// L0B from 512 B aligned starts.
constexpr uint16_t kMaxMkn = 4095;
constexpr StartRule kMadC{"c", "L0C", 1024, "Mmad.md"};
constexpr StartRule kMadA{"a", "L0A", 512, "Mmad.md"};
constexpr StartRule kMadB{"b", "L0B", 512, "Mmad.md"};
// MmadMx.md (参数说明): C 1024 B aligned; A and B 512 B aligned for fp4, 1024 B for fp8.
constexpr StartRule kMxC{"c", "L0C", 1024, "MmadMx.md"};
constexpr StartRule kMxFp4A{"a", "L0A", 512, "MmadMx.md"};
constexpr StartRule kMxFp4B{"b", "L0B", 512, "MmadMx.md"};
constexpr StartRule kMxFp8A{"a", "L0A", 1024, "MmadMx.md"};
constexpr StartRule kMxFp8B{"b", "L0B", 1024, "MmadMx.md"};

void check_sizes(const Mad& op) {
  DGA_REQUIRE(op.m <= kMaxMkn, kValue, "m", "m in [0, ", kMaxMkn, "], got ", op.m);
  DGA_REQUIRE(op.k <= kMaxMkn, kValue, "k", "k in [0, ", kMaxMkn, "], got ", op.k);
  DGA_REQUIRE(op.n <= kMaxMkn, kValue, "n", "n in [0, ", kMaxMkn, "], got ", op.n);
}
}  // namespace

void check_mad_operands(const void* c, const uint8_t* a, const uint8_t* b, const Mad& op, Accesses* acc) {
  check_sizes(op);
  note_start(acc, c, kMadC);
  note_start(acc, a, kMadA);
  note_start(acc, b, kMadB);
}

void check_mad_mx_operands(const float* c, const uint8_t* a, const uint8_t* b, bool fp4, const Mad& op,
                           Accesses* acc) {
  check_sizes(op);
  note_start(acc, c, kMxC);
  note_start(acc, a, fp4 ? kMxFp4A : kMxFp8A);
  note_start(acc, b, fp4 ? kMxFp4B : kMxFp8B);
}

}  // namespace deepgemm_ascend::npu_model
