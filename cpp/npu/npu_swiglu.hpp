// The SwiGLU stage of Mega MoE on the vector cores (swiglu.asc): per row of h (bf16 gate / up values of the
// first GEMM) act = silu(min(gate, clamp)) * clamp(up) * weight, then e4m3 with one UE8M0 scale per 32
// values, or bf16, as block::swiglu_row computes it on the host (the scale code and its inverse are the
// same functions: block::swiglu_scale_code, swiglu_inverse_scale). Each step takes one chunk of one row:
//   MTE2  the chunk's h values (its gate / up columns) into the UB
//   V     bf16 -> fp32; per group of 32 outputs: the gate and up blocks (block-stride loads), the
//         activation, and for e4m3 the group's largest |act| (ReduceMax) into a 32 B slot
//   S     e4m3: each group's scale code and inverse from its slot (scalar reads and writes of the UB)
//   V     e4m3: act * inverse, cast (RINT, saturating)
//   MTE3  the chunk's outputs and scale words to GM
// The next chunk's h values load while this one is computed, and its outputs are stored while the next is
// (two-stage rings, MTE2 -> V and V -> MTE3); the scalar phase is ordered after the activation and before the
// quantisation by V -> S and S -> V events. Part of the NPU primitive layer; NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/block/swiglu.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "npu_ctx.hpp"
#include "npu_primitives.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace swiglu {

constexpr uint32_t kGroup = uint32_t(block::kSwigluScaleGroup);  // outputs per scale
constexpr uint32_t kBlockFloats = 8;                             // fp32 values of one 32 B UB block
constexpr uint32_t kWordGroups = uint32_t(block::kScalesPerWord);

// Where group i's gate and up values start in the chunk's fp32 h values, and the block stride of their
// loads (in 32 B blocks): interleaved by 8 ([gate 8 | up 8] per 16 columns) or [gate | up] halves.
struct Columns {
  uint32_t gate, up, step, stride;
};


// act of `groups` groups (an even count: I is a multiple of 128), two a register (the block-stride loads reach
// the next group's columns at the same stride); e4m3: act and each group's largest |act| (slot i, 32 B
// apart), bf16: the cast outputs.
template <class Arch, bool kFp8>
__simd_vf__ inline void activate(__ubuf__ float* hf, __ubuf__ float* act, __ubuf__ float* amax,
                                 __ubuf__ bfloat16_t* out, uint32_t groups, Columns c, float clamp, float weight) {
  namespace R = AscendC::Reg;
  R::RegTensor<float> g, u, t, a, r;
  R::RegTensor<bfloat16_t> y;
  uint32_t lanes = kGroup;
  R::MaskReg m = R::CreateMask<float>(), lo = R::UpdateMask<float>(lanes), hi;  // both groups, the first, the second
  R::MaskNot(hi, lo, m);
  for (uint16_t j = 0; j < uint16_t(groups / 2); ++j) {
    const uint32_t i = 2 * uint32_t(j);  // the pair's first group
    R::LoadAlign<float, R::DataCopyMode::DATA_BLOCK_COPY>(g, hf + c.gate + i * c.step, c.stride, m);
    R::LoadAlign<float, R::DataCopyMode::DATA_BLOCK_COPY>(u, hf + c.up + i * c.step, c.stride, m);
    R::Mins(g, g, clamp, m);
    R::Mins(u, u, clamp, m);
    R::Maxs(u, u, -clamp, m);
    R::Muls(t, g, -1.0f, m);
    R::Exp(t, t, m);
    R::Adds(t, t, 1.0f, m);
    R::Div(t, g, t, m);  // silu(g) = g / (1 + e^-g)
    R::Mul(t, t, u, m);
    R::Muls(t, t, weight, m);
    if constexpr (kFp8) {
      R::StoreAlign(act + i * kGroup, t, m);
      R::Abs(a, t, m);
      R::ReduceMax(r, a, lo);
      R::StoreAlign<float, R::StoreDist::DIST_FIRST_ELEMENT_B32>(amax + i * kBlockFloats, r, lo);
      R::ReduceMax(r, a, hi);
      R::StoreAlign<float, R::StoreDist::DIST_FIRST_ELEMENT_B32>(amax + (i + 1) * kBlockFloats, r, lo);
    } else {
      R::Cast<bfloat16_t, float, vreg::kToBf16>(y, t, m);
      R::StoreAlign<bfloat16_t, R::StoreDist::DIST_PACK_B32>(out + i * kGroup, y, m);
    }
  }
}

// out = e4m3(act * inverse) per group; the group's inverse scale fills its 32 B slot (a stride-0 load
// repeats it across the lanes).
template <class Arch>
__simd_vf__ inline void quantise(__ubuf__ float* act, __ubuf__ float* inv, __ubuf__ fp8_e4m3fn_t* out,
                                 uint32_t groups) {
  namespace R = AscendC::Reg;
  R::RegTensor<float> a, s;
  R::RegTensor<fp8_e4m3fn_t> q;
  uint32_t lanes = kGroup;
  R::MaskReg m = R::UpdateMask<float>(lanes);
  for (uint16_t i = 0; i < uint16_t(groups); ++i) {
    R::LoadAlign<float, R::DataCopyMode::DATA_BLOCK_COPY>(a, act + i * kGroup, 1, m);
    R::LoadAlign<float, R::DataCopyMode::DATA_BLOCK_COPY>(s, inv + i * kBlockFloats, 0, m);
    R::Mul(a, a, s, m);
    R::Cast<fp8_e4m3fn_t, float, vreg::kToE4m3>(q, a, m);
    R::StoreAlign<fp8_e4m3fn_t, R::StoreDist::DIST_PACK4_B32>(out + i * kGroup, q, m);
  }
}

}  // namespace swiglu

template <class Arch = arch::Ascend950>
class SwigluRows {
  using E = AscendC::HardEvent;
  static constexpr uint32_t kB16 = 2, kF32 = 4, kBlock = Arch::kUBAlign;
  // UB bytes per output of a chunk: two stages of bf16 h (2 x 4), fp32 h (8), act (4), two stages of out
  // (2 x <= 2) and of the scale words (2 x 32 B per 128 outputs), the amax and inverse slots (32 B per 32
  // outputs each), rounded up.
  static constexpr uint32_t kUbBytesPerOutput = 27;
  static constexpr uint32_t kWordOutputs = swiglu::kGroup * swiglu::kWordGroups;
  using InRing = Ring<2, Pipe::kMTE2, Pipe::kV>;
  using OutRing = Ring<2, Pipe::kV, Pipe::kMTE3, 2>;  // a chunk's outputs and its scale words

 public:
  // Outputs per step: a multiple of 128 whose buffers fit the UB.
  static constexpr uint32_t kChunk = Arch::kUBBytes / kUbBytesPerOutput / kWordOutputs * kWordOutputs;

  __aicore__ inline SwigluRows(VecCtx<Arch>& ctx, const DgaSwigluParams& p)
      : ctx_(ctx),
        p_(p),
        chunk_(uint32_t(p.inter < int64_t(kChunk) ? p.inter : int64_t(kChunk))),
        chunks_((p.inter + chunk_ - 1) / chunk_),
        in_(ctx, {{Pos::kUB, 2 * chunk_ * kB16}}, "swiglu h"),
        hf_(ctx.alloc(Pos::kUB, 2 * chunk_ * kF32)),
        act_(ctx.alloc(Pos::kUB, chunk_ * kF32)),
        amax_(ctx.alloc(Pos::kUB, chunk_ / swiglu::kGroup * kBlock)),
        inv_(ctx.alloc(Pos::kUB, chunk_ / swiglu::kGroup * kBlock)),
        out_(ctx, {{Pos::kUB, chunk_ * kB16}, {Pos::kUB, chunk_ / kWordOutputs * kBlock}}, "swiglu out"),
        v_s_(ctx.pipe().template AllocEventID<E::V_S>()),
        s_v_(ctx.pipe().template AllocEventID<E::S_V>()) {}
  __aicore__ inline ~SwigluRows() {
    ctx_.pipe().template ReleaseEventID<E::V_S>(v_s_);
    ctx_.pipe().template ReleaseEventID<E::S_V>(s_v_);
  }
  SwigluRows(const SwigluRows&) = delete;
  SwigluRows& operator=(const SwigluRows&) = delete;

  // IEEE casts for the run (a bf16 act past bf16's range is inf, as on the host). Units are (row, chunk)
  // pairs, this core's every GetBlockNum()-th; the next unit's load is issued before this one is computed.
  __aicore__ inline void run() {
    const IeeeCasts ieee;
    const int64_t total = p_.rows * chunks_;
    int64_t u = next(AscendC::GetBlockIdx() - AscendC::GetBlockNum());
    if (u < total) load(u);
    while (u < total) {
      const int64_t v = next(u);
      if (v < total) load(v);
      step(u);
      u = v;
    }
  }

 private:
  // This core's first unit after u whose row belongs to a group of the psum ends (every row without them).
  __aicore__ inline int64_t next(int64_t u) const {
    const int64_t total = p_.rows * chunks_;
    for (u += AscendC::GetBlockNum(); u < total && !in_group(u / chunks_);) u += AscendC::GetBlockNum();
    return u;
  }
  __aicore__ inline bool in_group(int64_t r) const {
    if (p_.ends == 0) return true;
    auto ends = gm_at<int32_t>(p_.ends);
    int64_t start = 0;
    for (int64_t g = 0; g < p_.groups; ++g) {
      const int64_t end = ends.GetValue(uint64_t(g));
      if (r < end) return r >= start;
      start = (end + p_.align - 1) / p_.align * p_.align;
    }
    return false;
  }
  __aicore__ inline uint32_t values(int64_t j0) const {
    return uint32_t(p_.inter - j0 < int64_t(chunk_) ? p_.inter - j0 : int64_t(chunk_));
  }

  __aicore__ inline void step(int64_t u) {
    const int64_t r = u / chunks_, j0 = (u % chunks_) * chunk_;
    const uint32_t n = values(j0), groups = n / swiglu::kGroup;
    const float weight = gm_at<float>(p_.weights).GetValue(uint64_t(r * p_.w_stride));
    __ubuf__ float* const hf = ctx_.template ub<float>(hf_);
    __ubuf__ float* const act = ctx_.template ub<float>(act_);
    vreg::convert<Arch, float, bfloat16_t>(hf, ctx_.template ub<bfloat16_t>(in_.consume()), 2 * n);
    in_.release();
    const swiglu::Columns c = p_.interleaved != 0
                                  ? swiglu::Columns{0, swiglu::kBlockFloats, 2 * swiglu::kGroup, 2}
                                  : swiglu::Columns{0, n, swiglu::kGroup, 1};
    __ubuf__ float* const amax = ctx_.template ub<float>(amax_);
    const auto& o = out_.acquire();
    __ubuf__ bfloat16_t* const out = ctx_.template ub<bfloat16_t>(o.part[0]);
    if (p_.fp8_out == 0) {
      swiglu::activate<Arch, false>(hf, act, amax, out, groups, c, p_.clamp, weight);
      return store(r, j0, n, n * kB16);
    }
    swiglu::activate<Arch, true>(hf, act, amax, out, groups, c, p_.clamp, weight);
    set_event<E::V_S>(v_s_);  // the scalar reads the amax slots once the activation wrote them
    wait_event<E::V_S>(v_s_);
    scales(groups, o.part[1]);
    set_event<E::S_V>(s_v_);  // the quantisation reads the inverses once the scalar wrote them
    wait_event<E::S_V>(s_v_);
    swiglu::quantise<Arch>(act, ctx_.template ub<float>(inv_), ctx_.template ub<fp8_e4m3fn_t>(o.part[0]), groups);
    store(r, j0, n, n);
  }

  // Unit u's gate / up columns: one run (interleaved: columns [2 j0, 2 j0 + 2n)) or two (gate j0.., up
  // I + j0..), into the next stage of the bf16 ring.
  __aicore__ inline void load(int64_t u) {
    const int64_t r = u / chunks_, j0 = (u % chunks_) * chunk_;
    const uint32_t n = values(j0);
    const uint64_t row = p_.h + uint64_t(r * p_.h_stride) * kB16;
    const bool il = p_.interleaved != 0;
    const uint64_t at = row + uint64_t(il ? 2 * j0 : j0) * kB16;
    const uint16_t runs = il ? 1 : 2;
    const uint32_t bytes = (il ? 2 * n : n) * kB16;
    const int64_t gap = il ? 0 : (p_.inter - int64_t(n)) * kB16;  // bytes from the gate run's end to the up run
    const AscendC::DataCopyExtParams cp(runs, bytes, uint32_t(gap), 0, 0);
    AscendC::DataCopyPad(ctx_.template tensor<bfloat16_t>(in_.acquire()), gm_at<bfloat16_t>(at), cp,
                         AscendC::DataCopyPadExtParams<bfloat16_t>(false, 0, 0, bfloat16_t(0)));
    in_.commit();
  }

  // Scalar unit: each group's code (into its scale word in `words`) and inverse (filling its slot).
  __aicore__ inline void scales(uint32_t groups, const Tile& words_tile) {
    auto amax = ctx_.template tensor<float>(amax_);
    auto inv = ctx_.template tensor<float>(inv_);
    auto words = ctx_.template tensor<uint8_t>(words_tile);
    for (uint32_t g = 0; g < groups; ++g) {
      const uint8_t code = block::swiglu_scale_code(amax.GetValue(g * swiglu::kBlockFloats));
      const float s = block::swiglu_inverse_scale(code);
      for (uint32_t k = 0; k < swiglu::kBlockFloats; ++k) inv.SetValue(g * swiglu::kBlockFloats + k, s);
      words.SetValue((g / swiglu::kWordGroups) * kBlock + g % swiglu::kWordGroups, code);
    }
  }

  // The stage's outputs (`bytes`) and, for e4m3, its scale words (4 codes each, one per 32 B UB block) to GM.
  __aicore__ inline void store(int64_t r, int64_t j0, uint32_t n, uint32_t bytes) {
    out_.commit();
    const auto& o = out_.consume();
    const uint32_t item = bytes / n;
    const uint64_t at = p_.out + uint64_t((r * p_.out_stride + j0) * int64_t(item));
    AscendC::DataCopyPad(gm_at<uint8_t>(at), ctx_.template tensor<uint8_t>(o.part[0]),
                         AscendC::DataCopyExtParams(1, bytes, 0, 0, 0));
    if (p_.fp8_out != 0) {
      const uint64_t sf = p_.sf + uint64_t(r * p_.sf_row_bytes + (j0 / kWordOutputs) * p_.sf_word_bytes);
      const uint32_t word = swiglu::kWordGroups;
      const AscendC::DataCopyExtParams cp(uint16_t(n / kWordOutputs), word, 0, uint32_t(p_.sf_word_bytes - word), 0);
      AscendC::DataCopyPad(gm_at<uint8_t>(sf), ctx_.template tensor<uint8_t>(o.part[1]), cp);
    }
    out_.release();
  }

  VecCtx<Arch>& ctx_;
  const DgaSwigluParams& p_;
  uint32_t chunk_;
  int64_t chunks_;
  InRing in_;
  Tile hf_, act_, amax_, inv_;
  OutRing out_;
  AscendC::TEventID v_s_, s_v_;
};

// The kernel body of dga_swiglu.
__aicore__ inline void run_swiglu(const DgaSwigluParams& p) {
  VecCtx<arch::Ascend950> ctx;
  SwigluRows<> op(ctx, p);
  op.run();
}

}  // namespace deepgemm_ascend::tile::npu
