// BF16 Mega MoE on the NPU kernels (mega_moe.asc, the contiguous GEMMs and swiglu.asc) on the instruction
// model, one rank in this process, against the host Mega MoE on a buffer of the same layout: y within bf16
// rounding, the receive statistics equal; unused (-1) slots and a token listing one expert in two slots.
// Our reading of the documentation, not the 950.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/comm/mega_moe_layout.hpp"
#include "deepgemm_ascend/comm/peer_group.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
namespace comm = dga::comm;
namespace core = dga::core;
namespace runtime = dga::runtime;
using core::DType;

namespace {

struct CallResult {
  std::vector<uint16_t> y;
  std::vector<int32_t> stats;
};

// One call on a fresh buffer of shape s with this rank's tokens and routing; the backend as selected.
CallResult call(const comm::MegaMoeShape& s, int64_t tokens, const std::vector<uint16_t>& w1, const std::vector<uint16_t>& w2,
         bool model) {
  const comm::MegaMoeRegions regions = comm::mega_moe_regions(s);
  const int64_t h = s.hidden, inter = s.intermediate_hidden, e = s.experts_per_rank();
  std::vector<uint8_t> buf(size_t(regions.total_bytes) + 512, 0);
  uint8_t* base = buf.data() + (512 - uintptr_t(buf.data()) % 512) % 512;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int64_t> pick(0, s.num_experts - 1);
  auto* x = reinterpret_cast<uint16_t*>(base + regions.x.offset);
  auto* idx = reinterpret_cast<int64_t*>(base + regions.topk_idx.offset);
  auto* wts = reinterpret_cast<float*>(base + regions.topk_weights.offset);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t c = 0; c < h; ++c) x[t * h + c] = core::float_to_bf16(nd(rng));
    for (int64_t k = 0; k < s.num_topk; ++k) {
      idx[t * s.num_topk + k] = t % 5 == 0 && k == 1 ? -1 : (pick(rng) + k) % s.num_experts;
      wts[t * s.num_topk + k] = nd(rng);
    }
  }
  idx[3 * s.num_topk] = idx[3 * s.num_topk + 1] = 2;  // one expert in two slots of a token
  comm::PeerGroup::register_process(base);
  runtime::set_backend(model ? "npu-model" : "host");
  CallResult r{std::vector<uint16_t>(size_t(tokens * h), 0x7FC1), std::vector<int32_t>(size_t(e), 3)};
  const dga::MegaMoeBuffer mb{s, {uintptr_t(base)}, 0};
  const auto vy = dga_test::contiguous(r.y.data(), DType::kBF16, {tokens, h});
  const auto v1 = dga_test::contiguous(const_cast<uint16_t*>(w1.data()), DType::kBF16, {e, 2 * inter, h});
  const auto v2 = dga_test::contiguous(const_cast<uint16_t*>(w2.data()), DType::kBF16, {e, h, inter});
  const auto vs = dga_test::contiguous(r.stats.data(), DType::kInt32, {e});
  try {
    dga::mega_moe(mb, vy, v1, nullptr, v2, nullptr, &vs, 4.0f, true);
  } catch (...) {
    runtime::set_backend("host");
    throw;
  }
  runtime::set_backend("host");
  return r;
}

TEST(NpuModelMegaMoe, Bf16MatchesTheHostMegaMoe) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  comm::MegaMoeShape s{.num_experts = 4, .num_max_tokens_per_rank = 384, .num_topk = 3, .hidden = 128,
                       .intermediate_hidden = 128, .num_ring_tokens = 0, .num_ranks = 1, .fp8 = false};
  s.num_ring_tokens = 768;  // two experts per wave: two waves
  const int64_t h = s.hidden, inter = s.intermediate_hidden, e = s.experts_per_rank(), tokens = 21;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.1f);
  std::vector<uint16_t> w1(size_t(e * 2 * inter * h)), w2(size_t(e * h * inter));
  for (auto& v : w1) v = core::float_to_bf16(nd(rng));
  for (auto& v : w2) v = core::float_to_bf16(nd(rng));
  const CallResult host = call(s, tokens, w1, w2, false), model = call(s, tokens, w1, w2, true);
  EXPECT_EQ(host.stats, model.stats);
  double num = 0, den = 0;
  int64_t bad = 0;
  for (size_t i = 0; i < host.y.size(); ++i) {
    const double a = core::bf16_to_float(host.y[i]), b = core::bf16_to_float(model.y[i]);
    bad += !std::isfinite(b) || std::fabs(a - b) > 2.0 * std::ldexp(1.0, -8) * std::fabs(a) + 1e-6;
    num += (a - b) * (a - b), den += a * a + b * b;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_LT(num / den, 1e-6);
}

}  // namespace
