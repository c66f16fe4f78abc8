// Mega MoE building blocks: the symmetric-buffer layout, the peer barriers (ranks simulated by threads
// over buffers in one process), the grid sync of persistent launches, buffer scopes, the SwiGLU
// stage, and a two-rank fused call through the C++ API checked against a scalar model.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/block/swiglu.hpp"
#include "deepgemm_ascend/comm/mega_moe_layout.hpp"
#include "deepgemm_ascend/comm/peer_group.hpp"
#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/host/core.hpp"
#include "deepgemm_ascend/host/grid_sync.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
namespace comm = dga::comm;
namespace block = dga::block;
namespace core = dga::core;
using dga::core::DType;

namespace {

comm::MegaMoeShape small_shape(int64_t ranks, bool fp8 = true) {
  comm::MegaMoeShape s{.num_experts = 4 * ranks, .num_max_tokens_per_rank = 384, .num_topk = 2, .hidden = 128,
                       .intermediate_hidden = 128, .num_ring_tokens = 0, .num_ranks = ranks, .fp8 = fp8};
  s.num_ring_tokens = comm::default_ring_tokens(s.num_max_tokens_per_rank, 4, 2, ranks);
  return s;
}

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const dga::core::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// The scale code's integer form (shared with the NPU kernel's scalar unit) is float_to_ue8m0's ceiling of
// max(amax, 1e-4) / 448, and its inverse the exact power of two.
TEST(SwigluScale, CodeIsTheCeilingUe8m0AndTheInverseExact) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> expo(-40.0f, 130.0f);
  std::vector<float> amax = {0.0f, 1e-4f, 448.0f, 448.0f * 1.0000001f, 1.0f, 3.0e38f, INFINITY, 1e-30f};
  for (int i = 0; i < 20000; ++i) amax.push_back(std::exp2(expo(rng)));
  for (float a : amax) {
    const uint8_t want = core::float_to_ue8m0(std::max(a, block::kSwigluAmaxFloor) / block::kE4M3Max,
                                              core::Ue8m0Rounding::kCeil);
    const uint8_t code = block::swiglu_scale_code(a);
    ASSERT_EQ(code, want) << a;
    ASSERT_EQ(block::swiglu_inverse_scale(code), std::ldexp(1.0f, 127 - int(code))) << a;
  }
}

TEST(MegaMoeLayout, RegionsAreOrderedAlignedAndSized) {
  const auto s = small_shape(2);
  const auto r = comm::mega_moe_regions(s);
  const comm::Region order[] = {r.workspace, r.x, r.x_sf, r.topk_idx, r.topk_weights, r.l1_tokens,
                                r.l1_sf, r.l1_weights, r.l2_tokens, r.l2_sf, r.combine};
  for (size_t i = 0; i < std::size(order); ++i) {
    EXPECT_EQ(order[i].offset % 512, 0) << i;
    if (i) EXPECT_LE(order[i - 1].offset + order[i - 1].bytes, order[i].offset) << i;
  }
  EXPECT_GE(int64_t(sizeof(comm::PeerHeader)), 0);
  EXPECT_LE(int64_t(sizeof(comm::PeerHeader)), r.workspace.bytes);
  EXPECT_EQ(r.x.bytes, 384 * 128);
  EXPECT_EQ(r.x_sf.bytes, 384 * 4);
  EXPECT_EQ(r.combine.bytes, 2 * 384 * 128 * 2);
  EXPECT_EQ(r.sf_ring_rows % 4, 0);
  EXPECT_LE(r.combine.offset + r.combine.bytes, r.total_bytes);
  const auto b = comm::mega_moe_regions(small_shape(2, false));
  EXPECT_EQ(b.x.bytes, 384 * 128 * 2);
  EXPECT_EQ(b.x_sf.bytes, 0);
}

TEST(MegaMoeLayout, RejectsBadShapes) {
  auto s = small_shape(2);
  s.num_ring_tokens = 10;
  EXPECT_NE(error_of([&] { comm::mega_moe_regions(s); }).find("num_ring_tokens"), std::string::npos);
  s = small_shape(2);
  s.num_experts = 7;
  EXPECT_NE(error_of([&] { comm::mega_moe_regions(s); }).find("num_experts"), std::string::npos);
  s = small_shape(2);
  s.num_max_tokens_per_rank = 100;
  EXPECT_NE(error_of([&] { comm::mega_moe_regions(s); }).find("num_max_tokens_per_rank"), std::string::npos);
  EXPECT_NE(comm::layout_hash(small_shape(2)), comm::layout_hash(small_shape(2, false)));
}

// Two ranks as two threads over two zeroed buffers.
struct TwoBuffers {
  std::vector<uint8_t> a = std::vector<uint8_t>(4096), b = std::vector<uint8_t>(4096);
  std::vector<uint8_t*> bases() { return {a.data(), b.data()}; }
};

TEST(PeerGroup, BarriersOrderWritesBetweenRanks) {
  TwoBuffers buf;
  constexpr int kRounds = 200;
  std::vector<int> seen(kRounds, -1);
  auto rank_fn = [&](int rank) {
    comm::PeerGroup g(buf.bases(), rank, 42, 10.0);
    for (int i = 0; i < kRounds; ++i) {
      g.begin_call(i);
      g.barrier(0, "publish");
      if (rank == 0) seen[size_t(i)] = int(g.header(1).num_tokens);  // rank 1's value of this round
      g.barrier(1, "consume");
    }
  };
  auto other = std::async(std::launch::async, rank_fn, 1);
  rank_fn(0);
  other.get();
  for (int i = 0; i < kRounds; ++i) EXPECT_EQ(seen[size_t(i)], i);
}

TEST(PeerGroup, AbsentPeerTimesOutWithItsRank) {
  TwoBuffers buf;
  comm::PeerGroup g(buf.bases(), 0, 1, 0.2);
  g.begin_call(0);
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { g.barrier(0, "dispatch"); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_NE(msg.find("rank 1 did not arrive within"), std::string::npos) << msg;
}

TEST(PeerGroup, AbortedPeerStopsWaitersWithItsReason) {
  TwoBuffers buf;
  comm::PeerGroup g0(buf.bases(), 0, 1, 10.0), g1(buf.bases(), 1, 1, 10.0);
  g1.abort("y: wrong shape");
  g0.begin_call(0);
  const std::string msg = error_of([&] { g0.barrier(0, "dispatch"); });
  EXPECT_NE(msg.find("rank 1 failed: y: wrong shape"), std::string::npos) << msg;
}

TEST(PeerGroup, MismatchedLayoutsAreRefused) {
  TwoBuffers buf;
  auto other = std::async(std::launch::async, [&] {
    comm::PeerGroup g(buf.bases(), 1, 2, 5.0);
    g.begin_call(0);
    return error_of([&] { g.barrier(0, "dispatch"); });
  });
  comm::PeerGroup g(buf.bases(), 0, 1, 5.0);
  g.begin_call(0);
  const std::string msg = error_of([&] { g.barrier(0, "dispatch"); });
  EXPECT_NE(msg.find("different layout"), std::string::npos) << msg;
  EXPECT_NE(other.get().find("different layout"), std::string::npos);
}

TEST(GridSync, FailingBlockReleasesTheOthers) {
  auto& backend = dga::runtime::host_backend();
  const int blocks = backend.num_ai_cores();
  if (blocks < 2) GTEST_SKIP() << "needs two cores";
  dga::tile::host::GridSync grid(blocks);
  std::string msg;
  try {
    backend.launch("grid_sync_test", blocks, [&](dga::tile::host::Core& core) {
      try {
        if (core.block_idx() == 1) throw std::runtime_error("block 1 broke");
        grid.sync();
      } catch (...) {
        grid.fail(std::current_exception());
        throw;
      }
    });
  } catch (const std::exception&) {
    try {
      grid.rethrow_if_failed();
    } catch (const std::exception& e) {
      msg = e.what();
    }
  }
  EXPECT_EQ(msg, "block 1 broke");
}

TEST(BufferScope, ReleasesAllocationsOfTheScope) {
  auto& backend = dga::runtime::host_backend();
  backend.launch("scope_test", 1, [](dga::tile::host::Core& core) {
    const uint32_t before = core.used(dga::tile::Pos::kL1);
    {
      dga::tile::host::BufferScope scope(core);
      core.alloc(dga::tile::Pos::kL1, 4096, "scoped");
      EXPECT_GE(core.used(dga::tile::Pos::kL1), before + 4096);
    }
    EXPECT_EQ(core.used(dga::tile::Pos::kL1), before);
  });
}

TEST(Swiglu, Fp8RowMatchesScalarModel) {
  constexpr int64_t inter = 64;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<uint16_t> h(2 * inter);
  for (auto& v : h) v = dga::core::float_to_bf16(nd(rng));
  std::vector<uint8_t> out(inter);
  uint8_t sf[4] = {};
  dga::block::swiglu_row(h.data(), inter, 0.5f, {2.0f, true, true, false}, out.data(), {sf, 4});
  for (int64_t g = 0; g < inter / 32; ++g) {
    float act[32], amax = 0;
    for (int j = 0; j < 32; ++j) {
      const float gate = std::min(dga::core::bf16_to_float(h[size_t(g * 32 + j)]), 2.0f);
      const float up = std::clamp(dga::core::bf16_to_float(h[size_t(inter + g * 32 + j)]), -2.0f, 2.0f);
      act[j] = gate / (1.0f + std::exp(-gate)) * up * 0.5f;
      amax = std::max(amax, std::fabs(act[j]));
    }
    const int e = int(std::ceil(std::log2(double(std::max(amax, 1e-4f)) / 448.0)));
    EXPECT_EQ(int(sf[g]) - 127, e);
    for (int j = 0; j < 32; ++j)
      EXPECT_EQ(out[size_t(g * 32 + j)], dga::core::float_to_e4m3(float(std::ldexp(double(act[j]), -e))));
  }
}

// Shared anonymous memory, visible to a forked child.
template <class T>
T* shared_array(size_t n) {
  void* p = ::mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return static_cast<T*>(p);
}

// Two ranks (this process and a forked child: ranks are processes, each with its own AI cores) of a
// BF16 Mega MoE through the public C++ API; each token goes to one expert of the other rank with
// weight 1, W1 = [0.5 I (gate); 2 I (up)] interleaved by 8, W2 = I, so
// y = bf16(silu(bf16(x / 2)) * bf16(2 x)) elementwise.
TEST(MegaMoe, TwoRanksBf16AgainstScalarModel) {
  const auto s = [] {
    auto sh = small_shape(2, false);
    sh.num_topk = 1;
    sh.num_ring_tokens = comm::default_ring_tokens(sh.num_max_tokens_per_rank, 4, 1, 2);
    return sh;
  }();
  const auto regions = comm::mega_moe_regions(s);
  const int64_t h = s.hidden, inter = s.intermediate_hidden, e = s.experts_per_rank(), t_count = 5;
  ASSERT_EQ(h, inter);
  uint8_t* bufs[2] = {shared_array<uint8_t>(size_t(regions.total_bytes)),
                      shared_array<uint8_t>(size_t(regions.total_bytes))};
  std::vector<uintptr_t> ptrs{uintptr_t(bufs[0]), uintptr_t(bufs[1])};
  // Weights: W1[e] rows interleaved by 8 ([gate 8, up 8, ...]) = 0.5 I (gate) and 2 I (up); W2 = I.
  std::vector<uint16_t> w1(size_t(e * 2 * inter * h)), w2(size_t(e * h * inter));
  for (int64_t x = 0; x < e; ++x)
    for (int64_t j = 0; j < inter; ++j) {
      const int64_t row = (j / 8) * 16 + j % 8;
      w1[size_t((x * 2 * inter + row) * h + j)] = dga::core::float_to_bf16(0.5f);
      w1[size_t((x * 2 * inter + row + 8) * h + j)] = dga::core::float_to_bf16(2.0f);
      w2[size_t((x * h + j) * inter + j)] = dga::core::float_to_bf16(1.0f);
    }
  auto view = [](void* p, DType dt, std::vector<int64_t> shape) {
    return dga_test::contiguous(p, dt, shape);
  };
  uint16_t* ys[2] = {shared_array<uint16_t>(size_t(t_count * h)), shared_array<uint16_t>(size_t(t_count * h))};
  int32_t* stats[2] = {shared_array<int32_t>(size_t(e)), shared_array<int32_t>(size_t(e))};
  auto rank_fn = [&](int rank) {
    uint8_t* base = bufs[rank];
    auto* x = reinterpret_cast<uint16_t*>(base + regions.x.offset);
    auto* idx = reinterpret_cast<int64_t*>(base + regions.topk_idx.offset);
    auto* wts = reinterpret_cast<float*>(base + regions.topk_weights.offset);
    for (int64_t t = 0; t < t_count; ++t) {
      for (int64_t c = 0; c < h; ++c) x[t * h + c] = dga::core::float_to_bf16(float(rank + 1) * 0.25f * float(t + c % 7 - 3));
      idx[t] = (1 - rank) * e + t % e;  // an expert of the other rank
      wts[t] = 1.0f;
    }
    comm::PeerGroup::register_process(base);
    dga::MegaMoeBuffer mb{s, ptrs, rank};
    const auto vy = view(ys[rank], DType::kBF16, {t_count, h});
    const auto v1 = view(w1.data(), DType::kBF16, {e, 2 * inter, h});
    const auto v2 = view(w2.data(), DType::kBF16, {e, h, inter});
    const auto vs = view(stats[rank], DType::kInt32, {e});
    dga::mega_moe(mb, vy, v1, nullptr, v2, nullptr, &vs, -1.0f, true);
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // only this thread exists in the child: run one block on it
    int code = 0;
    try {
      dga::runtime::host_backend().set_num_ai_cores(1);
      rank_fn(1);
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  std::string err;
  try {
    rank_fn(0);
  } catch (const std::exception& ex) {
    err = ex.what();
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank 1 failed";
  ASSERT_EQ(err, "");
  for (int rank = 0; rank < 2; ++rank) {
    for (int64_t t = 0; t < t_count; ++t)
      for (int64_t c = 0; c < h; ++c) {
        const float xv = float(rank + 1) * 0.25f * float(t + c % 7 - 3);
        const float gate = dga::core::bf16_to_float(dga::core::float_to_bf16(0.5f * xv));
        const float up = dga::core::bf16_to_float(dga::core::float_to_bf16(2.0f * xv));
        const float act = dga::core::bf16_to_float(dga::core::float_to_bf16(gate / (1.0f + std::exp(-gate)) * up));
        ASSERT_EQ(ys[rank][size_t(t * h + c)], dga::core::float_to_bf16(act)) << rank << " " << t << " " << c;
      }
    // Rank r's experts receive the other rank's tokens t with t % e == expert.
    for (int64_t x = 0; x < e; ++x) EXPECT_EQ(stats[rank][size_t(x)], (t_count - x + e - 1) / e);
  }
}

TEST(Swiglu, VectorSiluMatchesScalarWithinUlps) {
  namespace th = dga::tile::host;
  if (th::swiglu_kernels().silu_mul == &th::silu_mul_scalar) GTEST_SKIP() << "no vector SiLU for this host ISA";
  constexpr int64_t inter = 256;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 8.0f);
  std::vector<uint16_t> h(2 * inter);
  for (auto& v : h) v = dga::core::float_to_bf16(nd(rng));
  const float specials[] = {NAN, INFINITY, -INFINITY, 100.0f, -100.0f, 0.0f, -0.0f, 1e-30f};
  for (int i = 0; i < 8; ++i) h[size_t(i * 17)] = dga::core::float_to_bf16(specials[i]);
  for (bool interleaved : {false, true})
    for (float clamp : {INFINITY, 3.0f}) {
      std::vector<float> vec(inter), ref(inter);
      for (int64_t j0 = 0; j0 < inter; j0 += 32) {
        th::silu_mul_avx512({.h = h.data(), .inter = inter, .j0 = j0, .n = 32, .interleaved = interleaved,
                             .clamp = clamp, .weight = 0.75f, .act = vec.data() + j0});
        th::silu_mul_scalar({.h = h.data(), .inter = inter, .j0 = j0, .n = 32, .interleaved = interleaved,
                             .clamp = clamp, .weight = 0.75f, .act = ref.data() + j0});
      }
      for (int64_t j = 0; j < inter; ++j) {
        if (std::isnan(ref[size_t(j)])) {
          EXPECT_TRUE(std::isnan(vec[size_t(j)])) << j;
          continue;
        }
        if (std::isinf(ref[size_t(j)])) {
          EXPECT_EQ(vec[size_t(j)], ref[size_t(j)]) << j;
          continue;
        }
        const float tol = 4 * std::fabs(std::nextafter(ref[size_t(j)], INFINITY) - ref[size_t(j)]);
        EXPECT_NEAR(vec[size_t(j)], ref[size_t(j)], tol) << j << " interleaved " << interleaved << " clamp " << clamp;
      }
    }
}

// The vector FP8 re-quantisation of a SwiGLU scale group against the scalar one, bit for bit: every E4M3 code's
// value, its neighbours one fp32 ulp away and the midpoints to the next code (ties), subnormals, the saturation
// bound, infinities and NaN, signed, plus a sweep of fp32 bit patterns; each length 1..48 (tails), with the bytes
// beyond n left as they were.
TEST(Swiglu, VectorE4m3GroupMatchesScalarBitForBit) {
  namespace th = dga::tile::host;
  if (th::swiglu_kernels().encode_e4m3 == &th::encode_e4m3_scalar)
    GTEST_SKIP() << "no vector E4M3 encode for this host ISA";
  std::vector<float> v;
  for (int c = 0; c < 0x7F; ++c) {
    const float x = dga::core::e4m3_to_float(uint8_t(c)), y = dga::core::e4m3_to_float(uint8_t(c + 1));
    for (float f : {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY), 0.5f * (x + y),
                    std::nextafter(0.5f * (x + y), 0.0f), std::nextafter(0.5f * (x + y), INFINITY)})
      v.insert(v.end(), {f, -f});
  }
  for (float f : {448.0f, 464.0f, 480.0f, 1e30f, INFINITY, NAN, 1e-45f, 0.0f, 1e-10f, 0.0009765625f})
    v.insert(v.end(), {f, -f});
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 65521) v.push_back(dga::core::bits_float(uint32_t(bits)));
  for (float scale : {1.0f, 0.25f, 3.0f}) {
    std::vector<uint8_t> vec(v.size()), ref(v.size());
    th::encode_e4m3_avx512(v.data(), int64_t(v.size()), scale, vec.data());
    th::encode_e4m3_scalar(v.data(), int64_t(v.size()), scale, ref.data());
    for (size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(vec[i], ref[i]) << "value " << v[i] << " (bits " << std::hex << dga::core::float_bits(v[i]) << ")";
  }
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 30.0f);
  for (int64_t n = 1; n <= 48; ++n) {
    std::vector<float> g(static_cast<size_t>(n));
    for (auto& x : g) x = nd(rng);
    if (n % 5 == 0) g[size_t(n / 2)] = NAN;  // does not count in the amax
    EXPECT_EQ(th::group_amax_avx512(g.data(), n), th::group_amax_scalar(g.data(), n)) << n;
    std::vector<uint8_t> vec(size_t(n) + 20, 0xA5), ref(size_t(n) + 20, 0xA5);
    th::encode_e4m3_avx512(g.data(), n, 0.125f, vec.data());
    th::encode_e4m3_scalar(g.data(), n, 0.125f, ref.data());
    EXPECT_EQ(vec, ref) << n;
  }
  EXPECT_EQ(th::group_amax_avx512(nullptr, 0), 0.0f);
}
