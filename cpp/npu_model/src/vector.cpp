#include "deepgemm_ascend/npu_model/vector.hpp"

#include <cmath>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "vector_elementwise.hpp"

namespace deepgemm_ascend::npu_model {

namespace {

constexpr size_t kMaxPreds = size_t(UINT16_MAX) + 1;  // handles are uint16_t
constexpr int kCtrlAtomicTypeShift = 6, kCtrlAtomicOpShift = 9;
constexpr uint64_t kCtrlAtomicTypeMask = 0x7, kCtrlAtomicOpMask = 0x3;
constexpr int kCtrlNoSaturationBit = 48, kCtrlNanKeptBit = 50, kCtrlGlobalSaturationBit = 60;
constexpr int kLoopSizeBits = 21, kLoopUbStrideShift = 40, kLoopUbStrideBits = 21, kLoopGmStrideBits = 40;
constexpr uint16_t kBf16SignBit = 0x8000, kBf16Abs = 0x7FFF, kBf16Inf = 0x7F80, kBf16Max = 0x7F7F, kBf16Zero = 0;

constexpr uint64_t low_bits(int n) { return (uint64_t(1) << n) - 1; }
size_t elements(Width w) { return kVregBytes / size_t(w); }
uint64_t align32(uint64_t n) { return (n + kUbBlockBytes - 1) / kUbBlockBytes * kUbBlockBytes; }

// The element count a pattern turns on, for e elements; 0 for ALLF.
size_t pattern_count(Pattern p, size_t e) {
  switch (p) {
    case Pattern::kAll: return e;
    case Pattern::kAllF: return 0;
    case Pattern::kH: return e / 2;
    case Pattern::kQ: return e / 4;
    case Pattern::kVl1: return 1;
    case Pattern::kVl2: return 2;
    case Pattern::kVl3: return 3;
    case Pattern::kVl4: return 4;
    case Pattern::kVl8: return 8;
    case Pattern::kVl16: return 16;
    case Pattern::kVl32: return 32;
    case Pattern::kVl64: return 64;
    case Pattern::kVl128: return 128;
    default: break;
  }
  core::fail(core::ErrorKind::kNotImplemented, "pattern", "mask pattern ", int(p),
             " is not modelled (M3, M4 or unknown)");
}

// Elements [0, n) of width w on (the lowest predicate bit of each).
Pred prefix(size_t n, Width w) {
  Pred p;
  for (size_t i = 0; i < n; ++i) p.set(i * size_t(w));
  return p;
}

// fp32 -> bf16, nearest even; saturating: NaN -> +0, infinities -> +-max.
uint16_t to_bf16(float x, bool saturate) {
  if (std::isnan(x)) return saturate ? kBf16Zero : core::float_to_bf16(x);
  const uint16_t h = core::float_to_bf16(x);
  if (saturate && (h & kBf16Abs) == kBf16Inf) return uint16_t((h & kBf16SignBit) | kBf16Max);
  return h;
}

// fl(fl(a * b) + c) in fp32, computed in double (exact product, correctly rounded sum) so that the
// compiler cannot contract it into one fused operation.
float mul_then_add(float a, float b, float c) {
  const float product = float(double(a) * double(b));
  return float(double(product) + double(c));
}

}  // namespace

UbToGm data_copy_pad_ub_to_gm(uint16_t block_count, uint32_t block_len, uint32_t src_stride_blocks,
                              uint64_t dst_stride_bytes) {
  const uint64_t src = uint64_t(src_stride_blocks) * kUbBlockBytes + block_len;
  return {block_count, block_len, dst_stride_bytes + block_len, uint32_t(align32(src))};
}

GmToUb data_copy_pad_gm_to_ub(uint16_t block_count, uint32_t block_len, int64_t src_stride_bytes,
                              uint32_t dst_stride_blocks) {
  const uint64_t dst = uint64_t(dst_stride_blocks) * kUbBlockBytes + block_len;
  return {.n_burst = block_count, .len_burst = block_len, .left_pad = 0, .right_pad = 0, .constant_pad = false,
          .src_stride = uint64_t(src_stride_bytes + int64_t(block_len)), .dst_stride = uint32_t(align32(dst))};
}

VectorCore::VectorCore() { intern(Pred{}); }

// ---- predicates ------------------------------------------------------------------------------------

uint16_t VectorCore::intern(const Pred& p) {
  const auto it = handles_.find(p);
  if (it != handles_.end()) return it->second;
  DGA_REQUIRE(preds_.size() < kMaxPreds, kRuntime, "mask", "more than ", kMaxPreds, " distinct predicates");
  preds_.push_back(p);
  return handles_[p] = uint16_t(preds_.size() - 1);
}

const Pred& VectorCore::pred(uint16_t handle) const {
  DGA_REQUIRE(handle < preds_.size(), kValue, "mask", "predicate handle ", handle, " was never created");
  return preds_[handle];
}

uint16_t VectorCore::pset(Width w, Pattern pattern) {
  const size_t n = pattern_count(pattern, elements(w));
  DGA_REQUIRE(n <= elements(w), kNotImplemented, "pattern", "VL", n, " exceeds the ", elements(w),
              " elements of a register");
  return intern(prefix(n, w));
}

uint16_t VectorCore::plt(Width w, uint32_t& scalar, Post post) {
  DGA_REQUIRE(post == Post::kUpdate, kNotImplemented, "post", "plt without POST_UPDATE is not modelled");
  const size_t e = elements(w);
  const uint16_t handle = intern(prefix(scalar < e ? scalar : e, w));
  scalar = scalar < e ? 0 : uint32_t(scalar - e);
  return handle;
}

uint16_t VectorCore::pset_b16(Pattern pattern) { return pset(Width::kB16, pattern); }
uint16_t VectorCore::pset_b32(Pattern pattern) { return pset(Width::kB32, pattern); }
uint16_t VectorCore::plt_b16(uint32_t& scalar, Post post) { return plt(Width::kB16, scalar, post); }
uint16_t VectorCore::plt_b32(uint32_t& scalar, Post post) { return plt(Width::kB32, scalar, post); }

// ---- register micro-ops ------------------------------------------------------------------------------

void VectorCore::vlds(Vreg& dst, const uint8_t* src, LoadDist dist, Accesses* acc) const {
  if (dist == LoadDist::kUnpackB16) {
    constexpr size_t kHalf = kVregBytes / 2;
    Vreg out;
    for (size_t i = 0; i < kHalf / sizeof(uint16_t); ++i) {
      uint16_t v;
      std::memcpy(&v, src + i * sizeof v, sizeof v);
      out.set<uint16_t>(2 * i, v);  // slot 2 i + 1 stays 0
    }
    dst = out;
    note(acc, src, kHalf, false);
    return;
  }
  if (dist == LoadDist::kUnpack4B8) {
    constexpr size_t kQuarter = kVregBytes / 4;
    Vreg out;
    for (size_t j = 0; j < kQuarter; ++j) out.set<uint8_t>(4 * j, src[j]);  // bytes 4 j + 1 .. 4 j + 3 stay 0
    dst = out;
    note(acc, src, kQuarter, false);
    return;
  }
  if (dist == LoadDist::kBrcB16 || dist == LoadDist::kBrcB32) {
    const size_t w = dist == LoadDist::kBrcB16 ? sizeof(uint16_t) : sizeof(uint32_t);
    for (size_t at = 0; at < kVregBytes; at += w) std::memcpy(dst.bytes.data() + at, src, w);
    note(acc, src, w, false);
    return;
  }
  DGA_REQUIRE(dist == LoadDist::kNorm, kNotImplemented, "dist", "vlds distribution ", int(dist), " is not modelled");
  std::memcpy(dst.bytes.data(), src, kVregBytes);
  note(acc, src, kVregBytes, false);
}

void VectorCore::vsts(const Vreg& src, uint8_t* dst, StoreDist dist, uint16_t mask, Accesses* acc) const {
  Width w = Width::kB8;
  bool pack = false;
  switch (dist) {
    case StoreDist::kNormB8: break;
    case StoreDist::kNormB16: w = Width::kB16; break;
    case StoreDist::kNormB32: w = Width::kB32; break;
    case StoreDist::kPackB16: w = Width::kB16, pack = true; break;
    case StoreDist::kPackB32: w = Width::kB32, pack = true; break;
    case StoreDist::kPack4B32: w = Width::kB32, pack = true; break;
    case StoreDist::kFirstB32:
      if (active(mask, 0, Width::kB32)) {
        std::memcpy(dst, src.bytes.data(), sizeof(uint32_t));
        note(acc, dst, sizeof(uint32_t), true);
      }
      return;
    default: core::fail(core::ErrorKind::kNotImplemented, "dist", "vsts distribution ", int(dist), " is not modelled");
  }
  const size_t in = size_t(w), out = dist == StoreDist::kPack4B32 ? in / 4 : pack ? in / 2 : in;
  size_t count = 0;  // active elements so far; a packing store needs them to be a prefix
  for (size_t i = 0; i < elements(w); ++i) {
    if (!active(mask, i, w)) continue;
    DGA_REQUIRE(!pack || count == i, kNotImplemented, "mask",
                "a packing store under a mask that is not a prefix of elements is not modelled");
    std::memcpy(dst + i * out, src.bytes.data() + i * in, out);  // little endian: the low half comes first
    note(acc, dst + i * out, out, true);
    ++count;
  }
}

void VectorCore::vdup(Vreg& dst, uint32_t bits, Width w, uint16_t mask, Merge merge) const {
  for (size_t i = 0; i < elements(w); ++i) {
    const bool on = active(mask, i, w);
    if (!on && merge == Merge::kMerging) continue;
    const uint32_t v = on ? bits : 0;
    std::memcpy(dst.bytes.data() + i * size_t(w), &v, size_t(w));  // the low w bytes of v
  }
}

void VectorCore::vaxpy(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "Axpy supports ZEROING only");
  for (size_t i = 0; i < elements(Width::kB32); ++i)
    dst.set<float>(i, active(mask, i, Width::kB32) ? mul_then_add(scalar, src.get<float>(i), dst.get<float>(i)) : 0.0f);
}

void VectorCore::vcvt_f322bf16(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Sat sat, Part part,
                               Merge merge) const {
  DGA_REQUIRE(round == Round::kRint, kNotImplemented, "round", "only CAST_RINT is modelled for f32 -> bf16");
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "only ZEROING is modelled for f32 -> bf16");
  const bool saturate = saturating(sat);
  narrow_to_b16(dst, src, mask, part, [&](float x) { return to_bf16(x, saturate); });
}

void VectorCore::vcvt_bf162f32(Vreg& dst, const Vreg& src, uint16_t mask, Part part, Merge merge) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "only ZEROING is modelled for bf16 -> f32");
  const Pred& p = pred(mask);
  Vreg out;
  for (size_t i = 0; i < elements(Width::kB32); ++i) {
    const size_t slot = 2 * i + size_t(part);
    if (p.test(slot * size_t(Width::kB16))) out.set<uint32_t>(i, uint32_t(src.get<uint16_t>(slot)) << 16);
  }
  dst = out;
}

// Each lambda is one fp32 operation (no contraction across calls: the operands and results are stored).
void VectorCore::vadd(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const {
  binary(dst, a, b, mask, merge, [](float x, float y) { return x + y; });
}

void VectorCore::vsub(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "Sub supports ZEROING only");
  binary(dst, a, b, mask, merge, [](float x, float y) { return x - y; });
}

void VectorCore::vmul(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "Mul supports ZEROING only");
  binary(dst, a, b, mask, merge, [](float x, float y) { return x * y; });
}

void VectorCore::vmula(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "MulAddDst supports ZEROING only");
  for (size_t i = 0; i < elements(Width::kB32); ++i)
    dst.set<float>(i, active(mask, i, Width::kB32) ? mul_then_add(a.get<float>(i), b.get<float>(i), dst.get<float>(i))
                                                   : 0.0f);
}

void VectorCore::vcadd(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const {
  DGA_REQUIRE(merge == Merge::kZeroing, kNotImplemented, "merge", "ReduceSum supports ZEROING only");
  std::array<float, kVregBytes / sizeof(float)> level{};
  for (size_t i = 0; i < level.size(); ++i) level[i] = active(mask, i, Width::kB32) ? src.get<float>(i) : 0.0f;
  for (size_t n = level.size(); n > 1; n /= 2)
    for (size_t i = 0; i < n / 2; ++i) level[i] = level[2 * i] + level[2 * i + 1];
  Vreg out;
  out.set<float>(0, level[0]);
  dst = out;
}

// ---- CTRL ----------------------------------------------------------------------------------------------

bool VectorCore::saturated_nan_kept() const { return ((ctrl_ >> kCtrlNanKeptBit) & 1) != 0; }

bool VectorCore::saturating(Sat sat) const {
  if ((ctrl_ >> kCtrlGlobalSaturationBit) & 1) return ((ctrl_ >> kCtrlNoSaturationBit) & 1) == 0;
  return sat == Sat::kEnable;
}

void VectorCore::set_atomic_type(AtomicType t) {
  ctrl_ = (ctrl_ & ~(kCtrlAtomicTypeMask << kCtrlAtomicTypeShift)) | (uint64_t(t) << kCtrlAtomicTypeShift);
}
void VectorCore::set_atomic_op(AtomicOp op) {
  ctrl_ = (ctrl_ & ~(kCtrlAtomicOpMask << kCtrlAtomicOpShift)) | (uint64_t(op) << kCtrlAtomicOpShift);
}
AtomicType VectorCore::atomic_type() const {
  return AtomicType((ctrl_ >> kCtrlAtomicTypeShift) & kCtrlAtomicTypeMask);
}
AtomicOp VectorCore::atomic_op() const { return AtomicOp((ctrl_ >> kCtrlAtomicOpShift) & kCtrlAtomicOpMask); }

// ---- MTE3 and the loop registers --------------------------------------------------------------------------

void VectorCore::set_loop_size(Loops& l, uint64_t reg) {
  l.size1 = uint32_t(reg & low_bits(kLoopSizeBits));
  l.size2 = uint32_t((reg >> kLoopSizeBits) & low_bits(kLoopSizeBits));
}
void VectorCore::set_loop_stride(uint64_t& ub, uint64_t& gm, uint64_t reg) {
  gm = reg & low_bits(kLoopGmStrideBits);
  ub = (reg >> kLoopUbStrideShift) & low_bits(kLoopUbStrideBits);
}
void VectorCore::check_loops(const Loops& l) {
  DGA_REQUIRE(l.ub1 % kUbBlockBytes == 0 && l.ub2 % kUbBlockBytes == 0, kValue, "loop_stride",
              "the UB loop strides must be multiples of 32 B, got ", l.ub1, " and ", l.ub2);
  DGA_REQUIRE(l.size1 > 0 && l.size2 > 0, kNotImplemented, "loop_size", "a loop size of 0 is not modelled");
}

void VectorCore::set_loop_size_ubtoout(uint64_t reg) { set_loop_size(out_, reg); }
void VectorCore::set_loop1_stride_ubtoout(uint64_t reg) { set_loop_stride(out_.ub1, out_.gm1, reg); }
void VectorCore::set_loop2_stride_ubtoout(uint64_t reg) { set_loop_stride(out_.ub2, out_.gm2, reg); }
void VectorCore::set_loop_size_outtoub(uint64_t reg) { set_loop_size(in_, reg); }
void VectorCore::set_loop1_stride_outtoub(uint64_t reg) { set_loop_stride(in_.ub1, in_.gm1, reg); }
void VectorCore::set_loop2_stride_outtoub(uint64_t reg) { set_loop_stride(in_.ub2, in_.gm2, reg); }

namespace {
// asc_copy_ub2gm_align_arch_3510.md / asc_copy_gm2ub_align_arch_3510.md (参数说明, 约束说明), with DataCopyPad's
// pages (UBToGM / GMToUB非对齐数据搬运(DataCopyPad).md): n_burst in [1, 4095] and len_burst in [1, 2097151]
// (0: the DataCopyPad no-op), the UB start 32 B aligned, the GM source of GM -> UB aligned to its element.
constexpr uint32_t kMaxBursts = 4095, kMaxBurstBytes = 2097151;
constexpr StartRule kUbToGmSrc{"src", "UB", 32, "asc_copy_ub2gm_align_arch_3510.md"};
constexpr StartRule kGmToUbDst{"dst", "UB", 32, "asc_copy_gm2ub_align_arch_3510.md"};

void check_bursts(uint16_t n_burst, uint32_t len_burst) {
  DGA_REQUIRE(n_burst <= kMaxBursts, kValue, "n_burst", "n_burst in [1, ", kMaxBursts, "], got ", n_burst);
  DGA_REQUIRE(len_burst <= kMaxBurstBytes, kValue, "len_burst", "len_burst in [1, ", kMaxBurstBytes, "] bytes, got ",
              len_burst);
}
}  // namespace

void VectorCore::copy_burst(uint8_t* to, const uint8_t* from, uint32_t bytes, Accesses* acc) const {
  note(acc, from, bytes, false);
  note_gm(acc, to, bytes, true);
  if (atomic_type() == AtomicType::kNone) {
    std::memcpy(to, from, bytes);
    return;
  }
  for (uint32_t k = 0; k < bytes; k += sizeof(float)) {
    float a, b;
    std::memcpy(&a, to + k, sizeof a);
    std::memcpy(&b, from + k, sizeof b);
    const float sum = a + b;
    std::memcpy(to + k, &sum, sizeof sum);
  }
}

void VectorCore::copy_ubuf_to_gm_align_v2(uint8_t* gm, const uint8_t* ub, const UbToGm& op, Accesses* acc) const {
  if (op.n_burst == 0 || op.len_burst == 0) return;
  check_bursts(op.n_burst, op.len_burst);
  note_start(acc, ub, kUbToGmSrc);
  DGA_REQUIRE(op.src_stride % kUbBlockBytes == 0 || op.src_stride == op.len_burst, kValue, "src_stride",
              "a UB stride other than len_burst (", op.len_burst, ") must be a multiple of 32 B, got ", op.src_stride);
  check_loops(out_);
  const AtomicType type = atomic_type();
  DGA_REQUIRE(type == AtomicType::kNone || (type == AtomicType::kF32 && atomic_op() == AtomicOp::kAdd),
              kNotImplemented, "atomic", "only the fp32 atomic add is modelled (type ", int(type), ", op ",
              int(atomic_op()), ")");
  DGA_REQUIRE(type == AtomicType::kNone || op.len_burst % sizeof(float) == 0, kValue, "len_burst",
              "an fp32 atomic add moves whole floats, got ", op.len_burst, " bytes");
  for (uint64_t l2 = 0; l2 < out_.size2; ++l2)
    for (uint64_t l1 = 0; l1 < out_.size1; ++l1)
      for (uint64_t b = 0; b < op.n_burst; ++b)
        copy_burst(gm + l2 * out_.gm2 + l1 * out_.gm1 + b * op.dst_stride,
                   ub + l2 * out_.ub2 + l1 * out_.ub1 + b * op.src_stride, op.len_burst, acc);
}

// ---- MTE2 -------------------------------------------------------------------------------------------------

void VectorCore::copy_gm_to_ubuf_align_v2(uint8_t* ub, const uint8_t* gm, size_t elem_bytes, const GmToUb& op,
                                          Accesses* acc) const {
  if (op.n_burst == 0 || op.len_burst == 0) return;
  check_bursts(op.n_burst, op.len_burst);
  note_start(acc, ub, kGmToUbDst);
  DGA_REQUIRE(elem_bytes > 0 && reinterpret_cast<uintptr_t>(gm) % elem_bytes == 0, kValue, "src",
              "the GM source must be aligned to its ", elem_bytes, "-byte element (asc_copy_gm2ub_align_arch_3510.md)");
  DGA_REQUIRE(op.left_pad == 0 && op.right_pad == 0 && !op.constant_pad, kNotImplemented, "padding",
              "GM -> UB padding is not modelled (left ", int(op.left_pad), ", right ", int(op.right_pad),
              ", constant ", op.constant_pad, ")");
  DGA_REQUIRE(elem_bytes > 0 && kUbBlockBytes % elem_bytes == 0 && op.len_burst % elem_bytes == 0, kValue,
              "len_burst", "len_burst ", op.len_burst, " is not a multiple of the ", elem_bytes, "-byte element");
  const bool compact = op.dst_stride == op.len_burst && op.dst_stride % kUbBlockBytes != 0;
  DGA_REQUIRE(compact || op.dst_stride % kUbBlockBytes == 0, kValue, "dst_stride",
              "a UB stride other than len_burst (", op.len_burst, ") must be a multiple of 32 B, got ", op.dst_stride);
  DGA_REQUIRE(compact || op.n_burst == 1 || op.dst_stride >= align32(op.len_burst), kValue, "dst_stride",
              "UB rows of ", align32(op.len_burst), " bytes every ", op.dst_stride, " bytes overlap");
  DGA_REQUIRE(!compact || uint64_t(op.n_burst) * op.len_burst % kUbBlockBytes == 0, kNotImplemented, "dst_stride",
              "packed blocks that do not end on a 32 B boundary (their dummy tail) are not modelled");
  check_loops(in_);
  const size_t row = compact ? op.len_burst : size_t(align32(op.len_burst));
  for (uint64_t l2 = 0; l2 < in_.size2; ++l2)
    for (uint64_t l1 = 0; l1 < in_.size1; ++l1)
      for (uint64_t b = 0; b < op.n_burst; ++b) {
        const uint8_t* from = gm + l2 * in_.gm2 + l1 * in_.gm1 + b * op.src_stride;
        uint8_t* to = ub + l2 * in_.ub2 + l1 * in_.ub1 + b * op.dst_stride;
        note_gm(acc, from, op.len_burst, false);
        note(acc, to, row, true);
        std::memmove(to, from, op.len_burst);
        for (size_t k = op.len_burst; k < row; k += elem_bytes) std::memcpy(to + k, to, elem_bytes);  // dummy
      }
}

}  // namespace deepgemm_ascend::npu_model
