// The NPU instruction model, the vector side of the Ascend 950 (dav-3510): the register-compute
// micro-ops that Duplicate(dst, scalar, count), Axpy(dst, src, scalar, count) (float), Cast(bf16 <- float,
// CAST_RINT, count), the Reg API's LoadAlign (NORM, UNPACK_B16), Cast (float <- bf16), Add / Sub / Mul and
// ReduceSum (float), Relu / Muls / Adds (float), Arange and Compares (int32, float), Select (b32), MaskAnd /
// MaskOr / MaskNot, and DataCopyPad (GM <-> UB, DataCopyExtParams) issue in the devkit's CPU-debug headers,
// with the semantics of the AscendC documentation. Our reading of the documentation, over host memory.
//
// Call sites (asc-devkit, impl/basic_api/):
//   dav_3510/kernel_operator_vec_duplicate_impl.h      DuplicateFromScalarImpl: pset_b32(ALL), vdup, then per
//                                                      256 B: plt_b32(count, POST_UPDATE), vsts NORM_B32
//   dav_3510/kernel_operator_vec_ternary_scalar_impl.h VecAxpyLevel2VFImpl: plt, vlds x2, vaxpy, vsts
//   dav_3510/kernel_operator_vec_vconv_impl.h          CastIntrinsicsImplVF: plt_b32, vlds, vcvt(RINT, SAT,
//                                                      PART_EVEN, ZEROING), vsts PK_B32 (GenStoreL2)
//   dav_3510/kernel_operator_data_copy_impl.h          CopyUbufToGmAlignV2 -> copy_ubuf_to_gm_align_v2;
//                                                      SetLoopModeParaImpl -> set_loop*_ubtoout;
//                                                      DataCopyPadGm2UBImpl -> CopyGmToUbufAlignV2 ->
//                                                      copy_gm_to_ubuf_align_v2; SetLoopModeParaImpl (OUT_TO_UB)
//                                                      and InitSplitArchSpr -> set_loop*_outtoub
//   dav_3510/kernel_operator_set_atomic_impl.h         SetAtomicAdd<float>: set_atomic_f32, set_atomic_add
//   reg_compute/dav_3510/kernel_reg_compute_{maskreg,datacopy_load,datacopy_store,vec_duplicate,
//                                             vec_ternary_scalar,vec_vconv}_impl.h: the micro-ops' operands;
//   reg_compute/dav_3510/kernel_reg_compute_vec_vconv_impl.h   CastOperator (bf16 -> float): vcvt(dst, src, mask,
//                                                              Part(layoutMode), mode)
//   reg_compute/dav_3510/kernel_reg_compute_vec_binary_impl.h  Add / Sub / MulOperator: vadd / vsub / vmul(dst,
//                                                              src0, src1, mask, ZEROING)
//   reg_compute/dav_3510/kernel_reg_compute_vec_reduce_impl.h  ReduceSumImpl: vcadd(dst, src, mask, ZEROING)
//   reg_compute/dav_3510/kernel_reg_compute_vec_unary_impl.h   ReluImpl: vrelu(dst, src, mask, ZEROING)
//   reg_compute/dav_3510/kernel_reg_compute_vec_binary_scalar_impl.h  AddsImpl / MulsImpl: vadds / vmuls(dst,
//                                                              src, scalar, mask, ZEROING)
//   reg_compute/dav_3510/kernel_reg_compute_vec_arange_impl.h  ArangeImpl: vci(dst, start, Order)
//   reg_compute/dav_3510/kernel_reg_compute_vec_cmpsel_impl.h  CompareScalarImpl: vcmps_{eq,ne,gt,ge,lt,le}(pdst,
//                                                              src, scalar, mask); SelectImpl: vsel(dst, src0,
//                                                              src1, mask) on the elements as uint32_t (b32)
//   reg_compute/dav_3510/kernel_reg_compute_maskreg_impl.h     MaskAnd / MaskOr / MaskNotImpl: pand / por(pdst,
//                                                              p0, p1, mask), pnot(pdst, p, mask)
// The new micro-ops (vrelu .. pnot) are in vector_select.cpp.
// Documentation (cannmirror/asc-devkit, docs/zh/api/SIMD-API/; R = 基础API/Reg矢量计算/):
//   R寄存器数据类型/MaskReg.md (CreateMask, UpdateMask, 1 predicate bit per register byte), R数据填充/Duplicate.md,
//   R复合计算/Axpy.md, R类型转换/Cast.md, R辅助数据类型/{RegLayout,MaskMergeMode}.md,
//   R基础算术/{Add,Sub,Mul}.md, R归约计算/Reduce.md, R基础算术/{Relu,Muls,Adds}.md, R索引操作/Arange.md,
//   R比较与选择/{Compares,Select}.md, R逻辑计算/{And,Or,Not}.md (their MaskReg forms), and the same
//   instructions' C-API pages C-API/reg/{arithmetic_compute/asc_relu,index_operate/asc_arange,
//   compare_and_select/asc_{lt,ge,..}_scalar,compare_and_select/asc_select,logic_compute/asc_{and,or,not}}.md,
//   R Reg数据搬入/连续对齐搬入（LoadAlign）.md, R Reg数据搬出/连续对齐搬出（StoreAlign）.md,
//   基础API/特殊寄存器访问/SetCtrlSpr(ISASI).md (CTRL bits), 基础API/原子操作/SetAtomicAdd.md,
//   基础API/Memory矢量计算/数据搬运/GM与UB数据搬运/{UBToGM,GMToUB}非对齐数据搬运(DataCopyPad).md,
//   .../寄存器配置说明/SetLoopModePara.md, C-API/vector_datamove/asc_copy_{ub2gm,gm2ub}_align/
//   asc_copy_{ub2gm,gm2ub}_align_arch_3510.md and asc_set_{ub2gm,gm2ub}_loop{_size,1_stride,2_stride}.md.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "deepgemm_ascend/npu_model/access.hpp"

namespace deepgemm_ascend::npu_model {

inline constexpr size_t kVregBytes = 256;        // VL: one vector register (vector_f32 = 64 floats)
inline constexpr size_t kPregBits = kVregBytes;  // a predicate holds one bit per register byte (VL / 8 bytes)
inline constexpr size_t kUbBlockBytes = 32;      // the UB data block
// CTRL at reset (ResetCtrlSprImpl's defaultCtrl): CTRL[60] = 1 (global saturation control), CTRL[48] = 0
// (saturating float conversions), no atomic.
inline constexpr uint64_t kDefaultCtrl = 0x1000000000000008ull;

// A vector register as bytes; get / set read element i of type T (little endian, as std::array<T, N>).
struct Vreg {
  std::array<uint8_t, kVregBytes> bytes{};
  template <class T>
  T get(size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  void set(size_t i, T v) {
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
};

// Bit k of a predicate governs register byte k. For elements of w bytes, element i is active when bit i * w
// is set (MaskReg.md: b16 elements own 2 bits, b32 elements 4, only the lowest counts); the model's
// pset / plt set exactly those lowest bits.
using Pred = std::bitset<kPregBits>;

enum class Width : uint8_t { kB8 = 1, kB16 = 2, kB32 = 4 };  // element bytes
// MaskPattern of MaskReg.md, numbered as the devkit's enum (ALLF = 15).
enum class Pattern : uint8_t { kAll, kVl1, kVl2, kVl3, kVl4, kVl8, kVl16, kVl32, kVl64, kVl128, kM3, kM4, kH, kQ,
                               kAllF = 15 };
enum class Post : uint8_t { kNoUpdate, kUpdate };  // plt's POST_UPDATE literal
enum class Merge : uint8_t { kMerging, kZeroing };  // MaskMergeMode: inactive lanes keep dst / become 0
// Numbered as the Reg API's LoadDist, which LoadAlign static_casts into vlds's Dist operand (the stub's own
// Dist enum numbers DIST_US_B8 and later differently).
enum class LoadDist : uint8_t { kNorm = 0, kBrcB16 = 2, kBrcB32 = 3, kUnpackB16 = 14, kUnpack4B8 = 20 };
// Numbered as the stub's DistVST (DIST_NORM_B8.., DIST_PK_B16 = 6, DIST_PK_B32 = 7).
enum class StoreDist : uint8_t { kNormB8 = 0, kNormB16 = 1, kNormB32 = 2, kFirstB32 = 5, kPackB16 = 6, kPackB32 = 7,
                                 kPack4B32 = 12 };
enum class Round : uint8_t { kRint, kRound, kFloor, kCeil, kTrunc, kOdd, kHybrid };  // the stub's ROUND order
enum class Sat : uint8_t { kDisable, kEnable };  // RoundingSaturation (SatMode::NO_SAT / SAT)
enum class Part : uint8_t { kEven, kOdd };       // RegLayout ZERO / ONE of a b32 -> b16 conversion
enum class Part4 : uint8_t { kP0, kP1, kP2, kP3 };  // Part_T: the byte of a b32 slot a b32 -> b8 conversion writes
enum class Order : uint8_t { kIncrease, kDecrease };                 // vci's Order (IndexOrder)
enum class Cmp : uint8_t { kEq, kNe, kGt, kGe, kLt, kLe };              // vcmps_eq .. vcmps_le
enum class AtomicType : uint8_t { kNone, kF32, kF16, kS16, kS32, kS8, kBF16 };  // CTRL[8:6]
enum class AtomicOp : uint8_t { kAdd, kMax, kMin };                            // CTRL[10:9]

// copy_ubuf_to_gm_align_v2's operands (asc_copy_ub2gm_align_arch_3510.md): n_burst blocks of len_burst
// bytes; strides are head to head in bytes; the UB stride is a multiple of 32 B unless equal to len_burst.
struct UbToGm {
  uint16_t n_burst = 0;
  uint32_t len_burst = 0;
  uint64_t dst_stride = 0;
  uint32_t src_stride = 0;
};

// DataCopyPad(GlobalTensor, LocalTensor, DataCopyExtParams{blockCount, blockLen, srcStride, dstStride}) in
// the default PaddingMode::Normal, as CopyUbufToGmAlignV2 turns it into the instruction's operands: UB rows
// start every align32(srcStride * 32 + blockLen) bytes (srcStride counts 32 B blocks after a row padded to
// 32 B), GM rows every dstStride + blockLen bytes (dstStride counts bytes after a row).
UbToGm data_copy_pad_ub_to_gm(uint16_t block_count, uint32_t block_len, uint32_t src_stride_blocks,
                              uint64_t dst_stride_bytes);

// copy_gm_to_ubuf_align_v2's operands (asc_copy_gm2ub_align_arch_3510.md): n_burst blocks of len_burst bytes;
// strides head to head in bytes (src in GM, dst in UB); left / right padding in elements; constant_pad is
// enable_constant_pad (DataCopyPadExtParams::isPad).
struct GmToUb {
  uint16_t n_burst = 0;
  uint32_t len_burst = 0;
  uint8_t left_pad = 0, right_pad = 0;
  bool constant_pad = false;
  uint64_t src_stride = 0;
  uint32_t dst_stride = 0;
};

// DataCopyPad(LocalTensor, GlobalTensor, DataCopyExtParams{blockCount, blockLen, srcStride, dstStride},
// DataCopyPadExtParams{false, 0, 0, 0}) in PaddingMode::Normal, as CopyGmToUbufAlignV2 turns it into the
// instruction's operands: GM rows every srcStride + blockLen bytes (srcStride counts bytes after a row, down
// to -blockLen), UB rows every align32(dstStride * 32 + blockLen) bytes (dstStride counts 32 B blocks).
GmToUb data_copy_pad_gm_to_ub(uint16_t block_count, uint32_t block_len, int64_t src_stride_bytes,
                              uint32_t dst_stride_blocks);

// One AI Vector core's vector state: the predicate file, CTRL (saturation and atomic mode) and the MTE3 / MTE2
// loop registers. Predicates are values: a handle (the devkit's vector_bool, a uint16_t index) names one
// distinct 256-bit value for the core's lifetime; handle 0 is the all-off predicate.
class VectorCore {
 public:
  VectorCore();

  // ---- predicates (MaskReg.md) -------------------------------------------------------------------
  // pset_bN(pattern): ALL = every element of N bits, VLk = elements [0, k), H / Q = the lower half /
  // quarter, ALLF = none. Refused: M3, M4 (not modelled) and VLk beyond the register's elements.
  uint16_t pset_b16(Pattern pattern);
  uint16_t pset_b32(Pattern pattern);
  // plt_bN(scalar, POST_UPDATE): elements [0, min(scalar, E)) on, E = 256 / (N / 8) elements; then
  // scalar = scalar < E ? 0 : scalar - E (UpdateMask in MaskReg.md). Refused: kNoUpdate.
  uint16_t plt_b16(uint32_t& scalar, Post post);
  uint16_t plt_b32(uint32_t& scalar, Post post);
  const Pred& pred(uint16_t handle) const;
  uint16_t intern(const Pred& p);  // the handle of a value (new on first use)

  // ---- register micro-ops ------------------------------------------------------------------------
  // vlds (连续对齐搬入, 表3), no mask: NORM loads the 256 bytes at src; UNPK_B16 loads VL / 2 = 128 bytes as 64
  // u16 and puts element i in 16-bit slot 2 i, slot 2 i + 1 = 0; UNPK4_B8 loads VL / 4 = 64 bytes and puts
  // byte j in register byte 4 j, the three after it 0. BRC_B16 / BRC_B32 (表3: one b16 / b32 value moved and
  // broadcast to every element position) read 2 / 4 bytes at src into every element. Other distributions are
  // refused.
  void vlds(Vreg& dst, const uint8_t* src, LoadDist dist, Accesses* acc = nullptr) const;
  // vsts (连续对齐搬出): NORM_Bn writes element i (n bits) to dst + i * n / 8 when it is active under mask
  // (b n element rule); PK_B16 / PK_B32 write the low half of active element i (b16 / b32 rule) to
  // dst + i * n / 16. Inactive elements leave memory untouched. A packing store with a mask that is not
  // a prefix of elements is refused ("low halves of the valid elements stored contiguously" reads either
  // as compaction or as positional; they agree on prefixes, which is what plt makes). PK4_B32 writes the
  // low byte of active b32 element i to dst + i (prefix rule too); FIRST_ELEMENT_B32 writes element 0 to dst
  // when it is active.
  void vsts(const Vreg& src, uint8_t* dst, StoreDist dist, uint16_t mask, Accesses* acc = nullptr) const;
  // vdup(dst, scalar, mask, mode): active elements of width w get the low w bytes of bits; inactive ones
  // become 0 (kZeroing) or keep dst (kMerging).
  void vdup(Vreg& dst, uint32_t bits, Width w, uint16_t mask, Merge merge) const;
  // vaxpy, float: dst_i = scalar * src_i + dst_i on active b32 elements, inactive ones 0. The product and
  // the sum are rounded to fp32 separately (Axpy.md does not call it fused, unlike asc_madd). MERGING is
  // refused (Axpy.md: not supported).
  void vaxpy(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const;
  // vcvt f32 -> bf16 (Cast.md, RegLayout.md cast_b32_to_b16): dst is zeroed, then active b32 element i
  // (b32 rule) is converted to 16-bit slot 2 i + part. Rounding RINT (nearest, ties to even). Saturation
  // (SetCtrlSpr(ISASI).md table 6): CTRL[60] = 1 -> saturating iff CTRL[48] = 0, else as sat says.
  // Saturating: NaN -> +0, +-inf and overflow -> +-max (0x7F7F); otherwise IEEE (quiet NaN, +-inf).
  // Refused: other roundings, kMerging.
  void vcvt_f322bf16(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Sat sat, Part part,
                     Merge merge) const;
  // vcvt bf16 -> f32 (Cast.md 表7: RegLayout ZERO / ONE, ZEROING; RegLayout.md cast_b16_to_b32: dst[i] =
  // src[2 i + layout]). The mask selects by the source (Cast.md: MaskReg根据输入的源操作数进行有效元素筛选;
  // RegLayout.md: one b16 element per 2 bits): element i is active when predicate bit 2 (2 i + part) is set
  // (for ZERO that is bit 4 i, the b32 rule). Active elements widen exactly (the bf16 bits become the float's
  // high half: inf and NaN carry over, fp32 results being unsaturated (Cast.md); subnormal inputs widen bit for
  // bit too, the documentation not saying they flush); inactive ones are 0.
  // Refused: kMerging.
  void vcvt_bf162f32(Vreg& dst, const Vreg& src, uint16_t mask, Part part, Merge merge) const;
  // vcvt s32 -> f32 (Cast.md 表8: RegLayout / SatMode UNKNOWN, ZEROING, RINT / ROUND / FLOOR / CEIL / TRUNC;
  // RoundMode.md: RINT nearest even, ROUND nearest with ties away from zero, FLOOR / CEIL towards -inf /
  // +inf, TRUNC towards 0): active b32 element i becomes the int32 rounded to fp32 (integer to float is
  // always saturating, 表4, and never overflows fp32); inactive ones are 0. Refused: ODD / HYBRID (not in
  // the table), kMerging.
  void vcvt_s322f32(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Merge merge) const;
  // vcvt f32 -> f16 (Cast.md 表7: RegLayout ZERO / ONE, SatMode NO_SAT / SAT, ZEROING; RegLayout.md
  // cast_b32_to_b16): as vcvt_f322bf16 with half: dst zeroed, active b32 element i to 16-bit slot 2 i + part,
  // RINT, saturation by CTRL (表5; saturating: NaN -> +0, +-inf and overflow -> +-65504 (0x7BFF); otherwise
  // IEEE). Refused: roundings other than RINT (ODD, ROUND, FLOOR, CEIL, TRUNC are in the table but not
  // modelled), kMerging.
  void vcvt_f322f16(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Sat sat, Part part, Merge merge) const;
  // vadd / vsub / vmul, float (Add.md, Sub.md, Mul.md): dst_i = a_i + b_i, a_i - b_i, a_i * b_i on active b32
  // elements, each one IEEE fp32 operation rounded to nearest even (CTRL[48] saturation does not apply:
  // SetCtrlSpr(ISASI).md limits it to half for computations; Mul.md: unsaturated). Subnormals are kept (the
  // documentation does not say they flush). Inactive elements become 0 (kZeroing) or keep dst (kMerging,
  // vadd only: Sub.md and Mul.md do not support MERGING, refused).
  void vadd(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const;
  void vsub(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const;
  void vmul(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const;
  // vmula, float (MulAddDst: dst_i = a_i * b_i + dst_i on active b32 elements, inactive ones 0): the product
  // and the sum rounded to fp32 separately, as vaxpy (the API has FusedMulDstAdd as its fused form; MulAddDst
  // is not called fused). Refused: kMerging (MulAddDst: ZEROING only).
  void vmula(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const;
  // vcadd, float (Reduce.md, ReduceType::SUM): dst element 0 = the sum of src's active b32 elements, inactive
  // ones counting as 0, in the documented binary tree (ReduceType::SUM累加顺序: adjacent pairs, 64 -> 32 -> ..
  // -> 1, each addition rounded to fp32); the other dst elements are 0 (ZEROING). No active element: 0.
  // Refused: kMerging (Reduce.md: not supported).
  void vcadd(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const;

  // ---- the epilogue's micro-ops (vector_select.cpp) ------------------------------------------------
  // vrelu, float (Relu.md: dst_i = max(0, src_i); asc_relu.md, the same instruction: dst_i = src_i >= 0 ? src_i
  // : 0). The model follows asc_relu.md's comparison where max is silent: -0.0 >= 0 holds, so -0.0 stays -0.0;
  // NaN >= 0 does not, so NaN becomes +0 (neither page names NaN: the model's choice). Inactive elements 0.
  // Refused: kMerging (Relu.md: not supported).
  void vrelu(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const;
  // vmuls / vadds, float (Muls.md: dst_i = src_i * scalar; Adds.md: dst_i = src_i + scalar): one IEEE fp32
  // operation rounded to nearest even per active b32 element (subnormals kept, inf / NaN as IEEE, as vmul /
  // vadd); inactive elements 0. Refused: kMerging (Muls.md, Adds.md: not supported).
  void vmuls(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const;
  void vadds(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const;
  // vci (Arange.md, asc_arange.md), all elements, no mask: kIncrease: element i = start + i; kDecrease: element
  // i = start + (E - 1 - i), E the element count. int32: two's complement wrap-around (Arange.md 约束说明);
  // float: the exact start + k rounded once to fp32 (nearest even; the documentation gives no rounding).
  void vci_s32(Vreg& dst, int32_t start, Order order) const;
  void vci_f32(Vreg& dst, float start, Order order) const;
  // vcmps_* (Compares.md, asc_*_scalar.md): a new predicate with, for each b32 element i active under mask,
  // bit 4 i set when src_i cmp scalar holds (the element's lowest bit, as pset / plt set them; MaskReg.md);
  // inactive elements false (Compares.md: 未选中元素置零); every other bit 0. int32: signed comparison. float:
  // IEEE comparison (-0.0 == +0.0; with a NaN operand only kNe holds: the documentation is silent on NaN,
  // the model's choice).
  uint16_t vcmps_s32(const Vreg& src, int32_t scalar, Cmp cmp, uint16_t mask);
  uint16_t vcmps_f32(const Vreg& src, float scalar, Cmp cmp, uint16_t mask);
  // vsel, b32 elements (Select.md, asc_select.md): dst_i = bit 4 i of sel ? a_i : b_i for every element (no
  // zeroing: the elements the mask does not pick come from b). Bitwise: float, int32 and uint32 alike.
  void vsel_b32(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t sel) const;
  // pand / por / pnot (And.md, Or.md, Not.md, MaskReg forms; asc_and.md: 根据mask对src0，src1的有效bit进行逻辑与):
  // over all 256 predicate bits, bit k = mask_k ? (a_k & b_k, a_k | b_k, !a_k) : 0 (the bits mask leaves out
  // become 0, as the documented ZEROING of the register forms; the MaskReg pages do not say). A new handle.
  uint16_t pand(uint16_t a, uint16_t b, uint16_t mask);
  uint16_t por(uint16_t a, uint16_t b, uint16_t mask);
  uint16_t pnot(uint16_t src, uint16_t mask);

  // ---- the SwiGLU stage's micro-ops (vector_math.cpp), float, ZEROING only (MERGING refused) ------------
  // vexp (Exp.md): e^x per active element (std::exp: the model does not reproduce the 950's error, Exp.md
  // gives none; kernels compare against the host with a tolerance). vabs (Abs.md): the sign bit cleared.
  // vdiv (Div.md, default mode): one IEEE fp32 division rounded to nearest even. vmaxs / vmins (Maxs.md,
  // Mins.md): max(x, s) / min(x, s); a NaN operand gives NaN (the pages are silent on NaN: the model's
  // choice, the one that keeps a NaN visible). Inactive elements 0.
  void vexp(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const;
  void vabs(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const;
  void vdiv(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge) const;
  void vmaxs(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const;
  void vmins(Vreg& dst, const Vreg& src, float scalar, uint16_t mask, Merge merge) const;
  // vcmax (Reduce.md, ReduceType::MAX): dst element 0 = the largest active element (a NaN among them gives
  // NaN, as vmaxs), every other element 0; no active element: refused (Reduce.md leaves it undefined).
  void vcmax(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge) const;
  // vsldb (非连续对齐搬入（LoadAlign）.md, DATA_BLOCK_COPY): the register's 8 data blocks of 32 B, block k from
  // src + k * block_stride * 32 B; a block with no active element (under mask, element width w) is not read
  // and becomes 0.
  void vsldb(Vreg& dst, const uint8_t* src, uint32_t block_stride, uint16_t mask, Width w,
             Accesses* acc = nullptr) const;
  // vcvt f32 -> fp8 e4m3 (Cast.md, Tuple<fp8_e4m3fn_t, float>; RegLayout.md cast_b32_to_b8): dst is zeroed,
  // then active b32 element i (b32 rule) is converted to byte 4 i + part. Rounding RINT. Saturating (as
  // vcvt_f322bf16 decides it): |x| >= 448 -> +-448 (0x7E), NaN -> 0, or NaN (0x7F) with CTRL[50] = 1
  // (Cast.md; SetCtrlSpr(ISASI).md: reset 0); otherwise values that round above 448 (and infinities)
  // become NaN (e4m3fn has no infinity). Refused: other roundings.
  void vcvt_f322e4m3(Vreg& dst, const Vreg& src, uint16_t mask, Round round, Sat sat, Part4 part, Merge merge) const;
  // vcvt fp4x2 e2m1 -> bf16 (Cast.md, Tuple<bfloat16_t, fp4x2_e2m1_t>; RegLayout.md cast_b4_to_b16: dst[2 j] =
  // nibble 2 part + 8 j, dst[2 j + 1] = the nibble after it, nibble 2 b being the low one of byte b): pair j
  // is active when predicate bit 4 j + part is set (one bit per source byte, Cast.md); inactive pairs are 0.
  // Exact (e2m1 has no inf or NaN). Refused: kMerging (the devkit's static_assert).
  void vcvt_e2m12bf16(Vreg& dst, const Vreg& src, uint16_t mask, Part4 part, Merge merge) const;
  // vor (Or.md), integer elements of width w: dst_i = a_i | b_i on active elements, inactive ones 0
  // (ZEROING, the only mode Or takes).
  void vor(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Width w, Merge merge) const;

  // ---- CTRL and atomics (SetCtrlSpr(ISASI).md, SetAtomicAdd.md) -----------------------------------
  void set_ctrl(uint64_t value) { ctrl_ = value; }
  uint64_t ctrl() const { return ctrl_; }
  void set_atomic_type(AtomicType t);  // set_atomic_f32 / _bf16 / ...: CTRL[8:6]
  void set_atomic_add() { set_atomic_op(AtomicOp::kAdd); }
  void set_atomic_max() { set_atomic_op(AtomicOp::kMax); }
  void set_atomic_min() { set_atomic_op(AtomicOp::kMin); }
  void set_atomic_none() { set_atomic_type(AtomicType::kNone); }  // DisableDmaAtomic: CTRL[8:6] = 0
  AtomicType atomic_type() const;
  AtomicOp atomic_op() const;

  // ---- MTE3, UB -> GM ---------------------------------------------------------------------------
  // LOOP_SIZE_UBTOOUT: [20:0] loop1 size, [41:21] loop2 size (reset value: 1, 1 = no loop).
  // LOOP{1,2}_STRIDE_UBTOOUT: [60:40] UB stride, [39:0] GM stride, bytes, between loop iterations.
  void set_loop_size_ubtoout(uint64_t reg);
  void set_loop1_stride_ubtoout(uint64_t reg);
  void set_loop2_stride_ubtoout(uint64_t reg);
  // For l2 < loop2, l1 < loop1, b < n_burst: len_burst bytes from ub + l2 * s2 + l1 * s1 + b * src_stride
  // to gm + l2 * d2 + l1 * d1 + b * dst_stride (SetLoopModePara.md: loop2 outer, loop1 inner). With the
  // atomic type F32 and op ADD the GM floats are added to (IEEE fp32 sums). n_burst or len_burst 0: a
  // no-op. Refused: other atomic types / ops, a loop size 0, UB strides breaking the 32 B rule (kValue).
  void copy_ubuf_to_gm_align_v2(uint8_t* gm, const uint8_t* ub, const UbToGm& op, Accesses* acc = nullptr) const;

  // ---- MTE2, GM -> UB ---------------------------------------------------------------------------
  // LOOP_SIZE_OUTTOUB and LOOP{1,2}_STRIDE_OUTTOUB, laid out as the UBTOOUT ones (SetLoopModeParaImpl,
  // asc_set_gm2ub_loop*.md): sizes [20:0] loop1, [41:21] loop2 (reset value 1, 1); strides [60:40] UB (dst),
  // [39:0] GM (src), bytes between loop iterations.
  void set_loop_size_outtoub(uint64_t reg);
  void set_loop1_stride_outtoub(uint64_t reg);
  void set_loop2_stride_outtoub(uint64_t reg);
  // copy_gm_to_ubuf_align_v2 without padding (GMToUB非对齐数据搬运(DataCopyPad).md, asc_copy_gm2ub_align_arch_3510
  // .md): for l2 < loop2, l1 < loop1, b < n_burst: len_burst bytes from gm + l2 * g2 + l1 * g1 + b * src_stride
  // to ub + l2 * u2 + l1 * u1 + b * dst_stride. A UB stride that is a multiple of 32 B (Normal) pads each row
  // to 32 B with dummy data, the row's first element (elem_bytes: the instruction's operand type) repeated
  // (DataCopyPad.md: dummy会默认填充待搬运数据块的第一个元素值, read per block). dst_stride == len_burst, not a
  // multiple of 32 (Compact): the blocks packed, accepted when the n_burst blocks end on a 32 B boundary (no
  // dummy). n_burst or len_burst 0: a no-op. The UB start's 32 B alignment: noted for the access checker.
  // Refused: left / right padding and constant padding (set_mov_pad_val), a Compact tail (kNotImplemented);
  // a UB stride that is neither len_burst nor a multiple of 32 B, rows overlapping (dst_stride below
  // align32(len_burst)), UB loop strides that are not multiples of 32 B, len_burst not a multiple of
  // elem_bytes (kValue); a loop size 0 (kNotImplemented).
  void copy_gm_to_ubuf_align_v2(uint8_t* ub, const uint8_t* gm, size_t elem_bytes, const GmToUb& op,
                                Accesses* acc = nullptr) const;

 private:
  // The loop registers of one direction (UBTOOUT or OUTTOUB): sizes and the UB / GM strides.
  struct Loops {
    uint32_t size1 = 1, size2 = 1;
    uint64_t ub1 = 0, gm1 = 0, ub2 = 0, gm2 = 0;
  };
  static void set_loop_size(Loops& l, uint64_t reg);
  static void set_loop_stride(uint64_t& ub, uint64_t& gm, uint64_t reg);
  static void check_loops(const Loops& l);

  uint16_t pset(Width w, Pattern pattern);
  uint16_t plt(Width w, uint32_t& scalar, Post post);
  bool active(uint16_t mask, size_t element, Width w) const { return pred(mask).test(element * size_t(w)); }
  bool saturating(Sat sat) const;
  // CTRL[50]: a saturating cast to fp8 keeps NaN (1) or makes it 0 (0, the reset value).
  bool saturated_nan_kept() const;
  void set_atomic_op(AtomicOp op);
  void copy_burst(uint8_t* to, const uint8_t* from, uint32_t bytes, Accesses* acc) const;
  template <class F>
  void binary(Vreg& dst, const Vreg& a, const Vreg& b, uint16_t mask, Merge merge, F op) const;
  template <class F>
  void unary_f32(Vreg& dst, const Vreg& src, uint16_t mask, Merge merge, const char* what, F op) const;
  template <class F>
  void narrow_to_b16(Vreg& dst, const Vreg& src, uint16_t mask, Part part, F code) const;
  template <class T>
  uint16_t compare(const Vreg& src, T scalar, Cmp cmp, uint16_t mask);

  std::vector<Pred> preds_;
  std::unordered_map<Pred, uint16_t> handles_;
  uint64_t ctrl_ = kDefaultCtrl;
  Loops out_, in_;  // UB -> GM (MTE3), GM -> UB (MTE2)
};

}  // namespace deepgemm_ascend::npu_model
