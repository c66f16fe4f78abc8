// The vector-core target of the HC pre-norm vector pass (kernel/hc_prenorm.hpp): each step's element
// work on an AI Vector core. GM -> UB (MTE2) through a four-stage input ring, register code on V
// (Reg API, 64 fp32 lanes per register), UB -> GM (MTE3) through a two-stage output ring. Part of the NPU
// primitive layer; NOT validated on hardware.
#pragma once

#include "kernel_operator.h"

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/kernel/hc_prenorm.hpp"
#include "npu_ctx.hpp"
#include "npu_ring.hpp"
#include "npu_vreg.hpp"

namespace deepgemm_ascend::tile::npu {

namespace hc {

using vreg::kLanes;
using vreg::kToBf16;
using vreg::kToF32;

// hi[i] = bf16(b[i]), lo[i] = bf16(b[i] - hi[i]) for i < n (RINT; b - hi is exact in fp32).
template <class Arch>
__simd_vf__ inline void split(__ubuf__ bfloat16_t* hi, __ubuf__ bfloat16_t* lo, __ubuf__ float* b, uint32_t n) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = kLanes<Arch>;
  R::RegTensor<float> x, h32, r;
  R::RegTensor<bfloat16_t> h, l;
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign(x, b + i * kL);
    R::Cast<bfloat16_t, float, kToBf16>(h, x, m);
    R::StoreAlign<bfloat16_t, R::StoreDist::DIST_PACK_B32>(hi + i * kL, h, m);
    R::Cast<float, bfloat16_t, kToF32>(h32, h, m);
    R::Sub(r, x, h32, m);
    R::Cast<bfloat16_t, float, kToBf16>(l, r, m);
    R::StoreAlign<bfloat16_t, R::StoreDist::DIST_PACK_B32>(lo + i * kL, l, m);
  }
}

// acc[lane] (+)= sum of a[i]^2 over the i of that lane, i < n (acc starts at 0 when `first`).
template <class Arch>
__simd_vf__ inline void sqr_accumulate(__ubuf__ float* acc, __ubuf__ bfloat16_t* a, uint32_t n, uint32_t first) {
  namespace R = AscendC::Reg;
  constexpr uint32_t kL = kLanes<Arch>;
  R::RegTensor<float> s, x;
  R::RegTensor<bfloat16_t> xb;
  R::MaskReg all = R::CreateMask<float>();
  if (first != 0) R::Duplicate(s, 0.0f, all);
  else R::LoadAlign(s, acc);
  uint32_t count = n;
  const uint16_t steps = uint16_t((n + kL - 1) / kL);
  for (uint16_t i = 0; i < steps; ++i) {
    R::MaskReg m = R::UpdateMask<float>(count);
    R::LoadAlign<bfloat16_t, R::LoadDist::DIST_UNPACK_B16>(xb, a + i * kL);
    R::Cast<float, bfloat16_t, kToF32>(x, xb, m);  // inactive lanes 0 (ZEROING)
    R::MulAddDst(s, x, x, all);
  }
  R::StoreAlign(acc, s, all);
}

// out[0] = the sum of acc's lanes.
template <class Arch>
__simd_vf__ inline void sqr_reduce(__ubuf__ float* out, __ubuf__ float* acc) {
  namespace R = AscendC::Reg;
  R::RegTensor<float> s, t;
  R::MaskReg all = R::CreateMask<float>();
  R::MaskReg one = R::CreateMask<float, R::MaskPattern::VL1>();
  R::LoadAlign(s, acc);
  R::Reduce<R::ReduceType::SUM>(t, s, all);
  R::StoreAlign(out, t, one);
}

}  // namespace hc

template <class ArchTag = arch::Ascend950>
struct HcVecTarget {
  using Arch = ArchTag;
  using Ctx = VecCtx<Arch>;

  // An AIV-only kernel: the block index counts vector cores.
  __aicore__ static inline int64_t core_idx(const Ctx&) { return AscendC::GetBlockIdx(); }
  __aicore__ static inline int64_t core_num(const Ctx&) { return AscendC::GetBlockNum(); }
  // In a mix kernel: the cube core's group and this vector core's place in it.
  __aicore__ static inline int64_t group_idx(const Ctx&) { return AscendC::GetBlockIdx() / AscendC::GetSubBlockNum(); }
  __aicore__ static inline int64_t group_num(const Ctx&) { return AscendC::GetBlockNum(); }
  __aicore__ static inline int64_t sub_idx(const Ctx&) { return AscendC::GetSubBlockIdx(); }
  __aicore__ static inline int64_t sub_num(const Ctx&) { return AscendC::GetSubBlockNum(); }

  // The pass's writes (MTE3) are done on every vector core: then each tells its cube core (mode 2, kHcPassDone),
  // which waits for both of its group's.
  static constexpr uint16_t kHcPassDone = 0;
  __aicore__ static inline void pass_done(Ctx&) {
    all_vector_cores_barrier<PIPE_MTE3>();
    cross_core_set<PIPE_MTE3>(kHcPassDone);
  }

  class HcPrenorm {
    // UB: four input stages of kInBytes (up to three loads in flight while one is summed: the GM read latency
    // is hidden), two output stages of kOutBytes, the lanes' partial sums, the ends batch.
    static constexpr uint32_t kInStages = 4, kInBytes = Arch::kUBBytes / 16, kOutStages = 2,
                              kOutBytes = Arch::kUBBytes / 8, kEndsBytes = Arch::kUBBytes / 64;
    static constexpr uint32_t kBlock = Arch::kUBAlign, kFloat = sizeof(float), kHalf = sizeof(bfloat16_t);
    static constexpr int64_t kSqrRowsPerStep = 64;  // small steps spread M over the cores
    using InRing = Ring<kInStages, Pipe::kMTE2, Pipe::kV>;
    using OutRing = Ring<kOutStages, Pipe::kV, Pipe::kMTE3>;

   public:
    __aicore__ inline HcPrenorm(Ctx& ctx, const DgaHcPrenormParams& p)
        : ctx_(ctx),
          p_(p),
          in_(ctx, {{Pos::kUB, kInBytes}}, "hc in"),
          out_(ctx, {{Pos::kUB, kOutBytes}}, "hc out"),
          acc_(ctx.alloc(Pos::kUB, Arch::kVectorRegBytes)),
          ends_(ctx.alloc(Pos::kUB, kEndsBytes)) {}

    // fp32 values of B per step (hi and lo share an output stage).
    __aicore__ inline int64_t chunk() const { return int64_t(kInBytes / kFloat / hc::kLanes<Arch> * hc::kLanes<Arch>); }
    __aicore__ inline int64_t sqr_rows() const { return kSqrRowsPerStep; }
    __aicore__ inline int64_t zero_rows() const { return int64_t(kOutBytes / row_pitch(p_.d.cols * kFloat)); }

    __aicore__ inline void split(int64_t r, int64_t c0, int64_t n) {
      const Tile in = in_.acquire();
      load<float>(in, p_.b.addr + uint64_t((r * p_.b.row_stride + c0) * kFloat), uint32_t(n));
      in_.commit();
      const Tile x = in_.consume();
      const Tile out = out_.acquire();
      const uint32_t lo_at = uint32_t(chunk()) * kHalf;
      hc::split<Arch>(ub<bfloat16_t>(out, 0), ub<bfloat16_t>(out, lo_at), ub<float>(x, 0), uint32_t(n));
      in_.release();
      out_.commit();
      const Tile o = out_.consume();
      const uint64_t at = uint64_t((r * p_.b.cols + c0) * kHalf);
      store<bfloat16_t>(p_.hi + at, o, 0, 1, uint32_t(n) * kHalf, 0);
      store<bfloat16_t>(p_.lo + at, o, lo_at, 1, uint32_t(n) * kHalf, 0);
      out_.release();
    }

    // Rows [r0, r0 + rows) over K [k0, k0 + ks): each row in chunks of one input stage, loaded up to
    // kInStages - 1 chunks ahead of the one being summed.
    __aicore__ inline void sqr_sums(int64_t s, int64_t r0, int64_t rows, int64_t k0, int64_t ks) {
      const SqrWalk w{r0, k0, ks, layout::ceil_div(ks, SqrWalk::kChunk)};
      const int64_t loads = rows * w.per_row;
      int64_t issued = 0;
      for (; issued < loads && issued < int64_t(kInStages) - 1; ++issued) load_chunk(w, issued);
      const Tile out = out_.acquire();
      for (int64_t r = 0; r < rows; ++r) {
        if (ks == 0) hc::sqr_accumulate<Arch>(ub<float>(acc_, 0), ub<bfloat16_t>(acc_, 0), 0, 1);
        for (int64_t c = 0; c < w.per_row; ++c) {
          if (issued < loads) load_chunk(w, issued++);
          const Tile x = in_.consume();
          const uint32_t n = uint32_t(layout::imin(SqrWalk::kChunk, ks - c * SqrWalk::kChunk));
          hc::sqr_accumulate<Arch>(ub<float>(acc_, 0), ub<bfloat16_t>(x, 0), n, c == 0 ? 1 : 0);
          in_.release();
        }
        hc::sqr_reduce<Arch>(ub<float>(out, uint32_t(r) * kBlock), ub<float>(acc_, 0));
      }
      out_.commit();
      const Tile o = out_.consume();
      // One float per 32 B UB block, packed in GM.
      store<float>(p_.sqr_sum + uint64_t((s * p_.a.rows + r0) * kFloat), o, 0, uint16_t(rows), kFloat, 0);
      out_.release();
    }

    __aicore__ inline void zero_d(int64_t s, int64_t r0, int64_t rows) {
      const uint32_t row_bytes = uint32_t(p_.d.cols) * kFloat;
      const Tile out = out_.acquire();
      const uint32_t values = uint32_t(rows) * row_pitch(row_bytes) / kFloat;
      AscendC::Duplicate(ctx_.template tensor<float>(out), 0.0f, int32_t(values));
      out_.commit();
      const Tile o = out_.consume();
      const uint64_t at = p_.d.addr + uint64_t((s * p_.d_split + r0 * p_.d.row_stride) * kFloat);
      store<float>(at, o, 0, uint16_t(rows), row_bytes, uint64_t(p_.d.row_stride) * kFloat - row_bytes);
      out_.release();
    }

    // Scalar writes to UB, stored in batches; PIPE_ALL barriers order them against the batch's store.
    __aicore__ inline void set_end(int64_t s, int64_t end) {
      if (pending_ == 0) barrier_all();
      ctx_.template tensor<int32_t>(ends_).SetValue(uint32_t(pending_), int32_t(end));
      ++pending_;
      if (pending_ * int64_t(sizeof(int32_t)) == int64_t(kEndsBytes) || s + 1 == p_.splits) store_ends();
    }
    __aicore__ inline void store_ends() {
      if (pending_ == 0) return;
      barrier_all();
      const uint32_t bytes = uint32_t(pending_) * uint32_t(sizeof(int32_t));
      store<int32_t>(p_.ends + uint64_t(stored_) * sizeof(int32_t), ends_, 0, 1, bytes, 0);
      barrier_all();
      stored_ += pending_;
      pending_ = 0;
    }

   private:
    // The chunks of a sqr_sums step: row r0 + i / per_row, values [c0, c0 + kChunk) of its K range from k0.
    struct SqrWalk {
      static constexpr int64_t kChunk = int64_t(kInBytes / kHalf);
      int64_t r0, k0, ks, per_row;
    };
    __aicore__ inline void load_chunk(const SqrWalk& w, int64_t i) {
      const int64_t r = w.r0 + i / w.per_row, c0 = (i % w.per_row) * SqrWalk::kChunk;
      const Tile in = in_.acquire();
      load<bfloat16_t>(in, p_.a.addr + uint64_t((r * p_.a.row_stride + w.k0 + c0) * kHalf),
                       uint32_t(layout::imin(SqrWalk::kChunk, w.ks - c0)));
      in_.commit();
    }

    // A UB row of `bytes` as DataCopyPad lays it out: padded to the 32 B block.
    __aicore__ static inline uint32_t row_pitch(uint32_t bytes) { return (bytes + kBlock - 1) / kBlock * kBlock; }

    template <class T>
    __aicore__ inline __ubuf__ T* ub(const Tile& t, uint32_t byte_offset) {
      return reinterpret_cast<__ubuf__ T*>(ctx_.template tensor<uint8_t>(t)[byte_offset].GetPhyAddr());
    }
    // n contiguous values from GM to the start of `t` (MTE2).
    template <class T>
    __aicore__ inline void load(const Tile& t, uint64_t addr, uint32_t n) {
      const AscendC::DataCopyExtParams cp(1, n * uint32_t(sizeof(T)), 0, 0, 0);
      AscendC::DataCopyPad(ctx_.template tensor<T>(t), gm_at<T>(addr), cp,
                           AscendC::DataCopyPadExtParams<T>(false, 0, 0, T(0)));
    }
    // `rows` rows of row_bytes from UB (each row padded to 32 B, from byte `offset` of `t`) to GM rows
    // gap_bytes apart (MTE3).
    template <class T>
    __aicore__ inline void store(uint64_t addr, const Tile& t, uint32_t offset, uint16_t rows, uint32_t row_bytes,
                                 uint64_t gap_bytes) {
      const AscendC::DataCopyExtParams cp(rows, row_bytes, 0, int64_t(gap_bytes), 0);
      AscendC::DataCopyPad(gm_at<T>(addr), ctx_.template tensor<T>(t)[uint32_t(offset / sizeof(T))], cp);
    }

    Ctx& ctx_;
    DgaHcPrenormParams p_;
    InRing in_;
    OutRing out_;
    Tile acc_, ends_;
    int64_t pending_ = 0, stored_ = 0;
  };
};

// The kernel body of dga_hc_prenorm_vector.
__aicore__ inline void run_hc_prenorm_vector(const DgaHcPrenormParams& p) {
  HcVecTarget<>::Ctx ctx;
  const IeeeCasts ieee;  // hi = bf16(b) as the host rounds it (|b| past bf16's range: inf)
  kernel::hc_prenorm_vector<HcVecTarget<>>(ctx, p);
}

}  // namespace deepgemm_ascend::tile::npu
