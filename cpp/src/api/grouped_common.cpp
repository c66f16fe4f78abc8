#include "grouped_common.hpp"

#include <algorithm>

#include "deepgemm_ascend/api.hpp"
#include "validate.hpp"

namespace deepgemm_ascend::api {

using core::DType;
using core::TensorView;

namespace {
constexpr int64_t kKAlignmentUnit = 32;  // K-grouped alignments are multiples of the MX block
constexpr int kL0Bits = 16;
}  // namespace

std::vector<int64_t> read_int32(const TensorView& t, const char* arg, int64_t n) {
  require_dtype(t, arg, {DType::kInt32});
  DGA_REQUIRE(t.ndim == 1 && t.shape[0] == n, kValue, arg, "expected shape [", n, "], got ", t.shape_str());
  DGA_REQUIRE(t.is_contiguous(), kValue, arg, "must be contiguous, got strides ", t.strides_str());
  const auto* p = t.as<const int32_t>();
  return std::vector<int64_t>(p, p + n);
}

Formats formats(const TensorView& a2, const TensorView* sfa, const TensorView& b2, const TensorView* sfb) {
  DGA_REQUIRE((sfa == nullptr) == (sfb == nullptr), kValue, sfa ? "sfb" : "sfa",
              "give scale factors for both operands (FP8 / FP4) or for neither (BF16)");
  if (sfa) return {.scaled = true, .a = operand(a2, "a"), .b = operand(b2, "b")};
  require_dtype(a2, "a", {DType::kBF16});
  require_dtype(b2, "b", {DType::kBF16});
  return {.scaled = false,
          .a = {.fmt = tile::OperandFormat::kBF16, .rows = a2.shape[0], .cols = a2.shape[1]},
          .b = {.fmt = tile::OperandFormat::kBF16, .rows = b2.shape[0], .cols = b2.shape[1]}};
}

void launch_grouped(const char* name, const std::vector<kernel::GemmProblem>& problems, const Formats& f,
                    const GroupedLaunch& l) {
  kernel::GemmArgs args{.problems = problems.data(),
                        .num_problems = int64_t(problems.size()),
                        .config = {},
                        .operands = {.a = f.a.fmt, .b = f.b.fmt},
                        .scaled = f.scaled};
  if (problems.empty()) return;
  launch_gemm(name,
              {.m = std::max<int64_t>(l.avg_m, 1),
               .n = l.n,
               .k = l.k,
               .a_bits = tile::operand_bits(f.a.fmt),
               .b_bits = tile::operand_bits(f.b.fmt),
               .l0_bits = kL0Bits,
               .d_bytes = l.d_bytes,
               .with_accumulation = l.acc,
               .num_cores = 1,
               .promote_k = f.scaled ? l.promote_k : 0},
              args);
}

int64_t k_grouped_alignment() {
  const int64_t align = get_mk_alignment_for_contiguous_layout();
  DGA_REQUIRE(align % kKAlignmentUnit == 0, kValue, "alignment", "K-grouped layouts need an alignment that is a ",
              "multiple of ", kKAlignmentUnit, ", got ", align);
  return align;
}

}  // namespace deepgemm_ascend::api
