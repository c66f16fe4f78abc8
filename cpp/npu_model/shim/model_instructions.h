// The instruction-level functions the devkit's CPU-debug headers call, for the instructions the model
// implements (gen_stub.py leaves them out of the permissive stub and includes this header instead): each
// forwards to model_glue.cpp, which runs deepgemm_ascend::npu_model. The argument order is that of the
// call sites in asc-devkit/impl/basic_api/dav_3510/*_impl.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace dga_model {
template <class T> struct CubeTypeOf;  // specialised after kernel_operator.h (model_types.h)
void nz_para(uint64_t reg);
void fill_l1(void* dst, uint64_t repeat_bits, const void* value, int value_bytes);
void nd2nz(void* dst, const void* src, int eb, uint64_t loop1, uint64_t n, uint64_t d, uint64_t loop4, bool small, bool dn);
void gm_to_l1_align(void* dst, const void* src, uint64_t n_burst, uint64_t len_burst, int left_pad, int right_pad,
                    bool data_select, uint64_t src_stride, uint64_t dst_stride);
void load2d(void* dst, const void* src, int elem_bits, uint64_t m_start, uint64_t k_start, uint64_t m_step, uint64_t k_step,
            int64_t src_stride, uint64_t dst_stride, bool transpose);
void mad(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n, bool disable_gemv,
         bool c_from_bias, bool init, int unit_flag);
// quant: 0 NoQuant, 1 F322F16, 2 F322BF16, -1 any other mode (refused)
// src_s32: the L0C source holds int32 (the integer Mmad's C)
void fixpipe_out(void* dst, int dst_bytes, const float* src, uint64_t n, uint64_t m, uint64_t dst_stride,
                 uint64_t src_stride, int quant, bool nz2nd, int unit_flag, bool src_s32);
void mx_load(bool b, uint64_t mx_dst, const void* src, uint64_t xs, uint64_t ys, uint64_t xst, uint64_t yst,
             uint64_t ss, uint64_t ds);
void mad_mx(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n,
            bool disable_gemv, bool c_from_bias, bool init, int unit_flag);
void unmodelled(const char* instruction);
void atomic(int mode);  // 0 none, 1 add (the output type is the fixpipe's)
void loop3_para(uint64_t reg);         // the Fixpipe's ND parameters (LOOP3_PARA)
void store_atomic(int type, int op);   // SetStoreAtomicConfig: atomic_type_t, atomic_op_t
void flag(bool set, int src, int dst, int id);
void barrier(int pipe);
void cross_set(int pipe, uint64_t msg);
void cross_wait(int pipe, int id);
void intra_set(int pipe, int id);   // mode 4 (set_intra_block)
void intra_wait(int pipe, int id);  // mode 4 (wait_intra_block)
// dual: dualDstCtl (0 one UB: sub's, 1 rows split over both); quant as for fixpipe_out
void fixpipe_ub(void* dst, const float* src, uint64_t n, uint64_t m, uint64_t dst_stride, uint64_t src_stride, int dual,
                int sub, int quant, bool nz2nd, int unit_flag, bool src_s32);
// The vector core (model_vector.cpp): registers as their 256 bytes; enum operands as the stub numbers them.
uint16_t v_pset(int width, int pattern);
uint16_t v_plt(int width, uint32_t& scalar, bool post_update);
void v_lds(void* reg, const void* addr, int dist);
void v_sts(const void* reg, void* addr, int dist, uint16_t mask);
void v_dup(void* reg, uint32_t bits, int width, uint16_t mask, int mode);
void v_axpy(void* dst, const void* src, float scalar, uint16_t mask, int mode);
void v_cvt_f32_bf16(void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode);
void v_cvt_bf16_f32(void* dst, const void* src, uint16_t mask, int part, int mode);
void v_cvt_f32_f16(void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode);
void v_cvt_s32_f32(void* dst, const void* src, uint16_t mask, int round, int mode);
// op: '+', '-', '*', or 'a': dst = a * b + dst (vmula)
void v_arith(char op, void* dst, const void* a, const void* b, uint16_t mask, int mode);
void v_cadd(void* dst, const void* src, uint16_t mask, int mode);
void v_relu(void* dst, const void* src, uint16_t mask, int mode);
void v_scalar(char op, void* dst, const void* src, float scalar, uint16_t mask, int mode);  // op: '*', '+'
void v_unary(char op, void* dst, const void* src, uint16_t mask, int mode);  // op: 'e' vexp, 'a' vabs
void v_div(void* dst, const void* a, const void* b, uint16_t mask, int mode);
void v_minmax_s(bool max, void* dst, const void* src, float scalar, uint16_t mask, int mode);  // vmaxs / vmins
void v_cmax(void* dst, const void* src, uint16_t mask, int mode);
void v_sldb(void* reg, const void* addr, int elem_bytes, uint32_t block_stride, uint16_t mask);
void v_cvt_f32_e4m3(void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode);
void v_cvt_e2m1_bf16(void* dst, const void* src, uint16_t mask, int part, int mode);
void v_or(void* dst, const void* a, const void* b, int elem_bytes, uint16_t mask, int mode);
void v_ci(void* dst, bool is_float, uint32_t bits, int order);  // order: ::Order (0 increasing, 1 decreasing)
// cmp: npu_model::Cmp (0 eq, 1 ne, 2 gt, 3 ge, 4 lt, 5 le); bits: the int32 or float scalar; the new predicate
uint16_t v_cmps(int cmp, bool is_float, const void* src, uint32_t bits, uint16_t mask);
void v_sel(void* dst, const void* a, const void* b, uint16_t sel);
uint16_t v_plogic(char op, uint16_t a, uint16_t b, uint16_t mask);  // op: '&' pand, '|' por, '~' pnot (b unused)
void gm_to_ub(void* ub, const void* gm, int elem_bytes, uint64_t n_burst, uint64_t len_burst, int left_pad,
              int right_pad, bool constant_pad, uint64_t src_stride, uint64_t dst_stride);
void loop_outtoub(int which, uint64_t reg);  // 0 LOOP_SIZE, 1 LOOP1_STRIDE, 2 LOOP2_STRIDE
void ub_to_gm(void* gm, const void* ub, uint64_t n_burst, uint64_t len_burst, uint64_t dst_stride, uint64_t src_stride);
void loop_ubtoout(int which, uint64_t reg);  // 0 LOOP_SIZE, 1 LOOP1_STRIDE, 2 LOOP2_STRIDE
void atomic_type(int type);                  // npu_model::AtomicType
uint64_t get_ctrl();
void set_ctrl(uint64_t value);

// A vector register's bytes and element type: Reg::RegTensor<T> (its reg[0]) or the stub's std::array.
template <class R, class = void>
struct HasReg : std::false_type {};
template <class R>
struct HasReg<R, std::void_t<decltype(std::declval<R&>().reg)>> : std::true_type {};
template <class R>
void* reg_bytes(R& r) {
  if constexpr (HasReg<R>::value) return static_cast<void*>(r.reg[0].data());
  else return static_cast<void*>(r.data());
}
template <class R>
struct RegElem {
  using type = typename std::remove_cv_t<R>::value_type;
};
template <class R>
using reg_elem_t = typename std::conditional_t<HasReg<R>::value, std::decay<decltype(std::declval<R&>().reg[0][0])>,
                                               RegElem<R>>::type;
template <class... R>
inline constexpr bool all_float = (std::is_same_v<reg_elem_t<R>, float> && ...);
// The scalar operand of an int32 or float instruction (vci, vcmps_*) as the element's 32 bits, and whether the
// model takes it: float registers any arithmetic scalar (converted as the intrinsic's float parameter would
// convert it), int32 registers integral ones; other element types are not modelled.
template <class E, class S>
inline constexpr bool s32_or_f32_scalar =
    (std::is_same_v<E, float> && std::is_arithmetic_v<S>) || (std::is_same_v<E, int32_t> && std::is_integral_v<S>);
template <class E, class S>
uint32_t scalar_bits(S s) {
  const E v = E(s);
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}
template <int Cmp, class R, class S, class M>
inline void cmps(vector_bool& dst, R& src, S scalar, M mask) {
  using E = reg_elem_t<R>;
  if constexpr (s32_or_f32_scalar<E, S>)
    dst = v_cmps(Cmp, std::is_same_v<E, float>, reg_bytes(src), scalar_bits<E>(scalar), uint16_t(mask));
  else
    unmodelled("vcmps (not int32 or float)");
}
}  // namespace dga_model

inline void set_mte2_nz_para(uint64_t reg) { dga_model::nz_para(reg); }
template <class T, class U, class... R>
inline void copy_gm_to_cbuf_multi_nd2nz(T* dst, U* src, int, uint64_t loop1, uint8_t, uint16_t n, uint32_t d,
                                        uint64_t loop4, bool small) {
  dga_model::nd2nz(dst, src, int(sizeof(T)), loop1, n, d, loop4, small, false);
}
// (dst, src, sid, n_burst, len_burst, left_pad, right_pad, data_select_bit, l2_cache_ctl, src_stride, dst_stride),
// as CopyGmToCbufAlignV2 passes them.
template <class T, class U, class Sid, class N, class L, class LP, class RP, class Sel, class C, class SS, class DS>
inline void copy_gm_to_cbuf_align_v2(T* dst, U* src, Sid, N n_burst, L len_burst, LP left, RP right, Sel select, C,
                                     SS src_stride, DS dst_stride) {
  dga_model::gm_to_l1_align(dst, src, uint64_t(n_burst), uint64_t(len_burst), int(left), int(right), bool(select),
                            uint64_t(src_stride), uint64_t(dst_stride));
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void copy_gm_to_cbuf_multi_dn2nz(T* dst, U* src, A, B loop1, C, D n, E d, F loop4, G small) {
  dga_model::nd2nz(dst, src, int(sizeof(T)), uint64_t(loop1), uint64_t(n), uint64_t(d), uint64_t(loop4), bool(small), true);
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_ca(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  dga_model::load2d(dst, src, int(sizeof(T) * 8), uint64_t(ms), uint64_t(ks), uint64_t(mst), uint64_t(kst), int64_t(ss), uint64_t(ds), bool(tr));
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_cb(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  dga_model::load2d(dst, src, int(sizeof(T) * 8), uint64_t(ms), uint64_t(ks), uint64_t(mst), uint64_t(kst), int64_t(ss), uint64_t(ds), bool(tr));
}
template <class C, class A, class B, class... R>
inline void mad(C* c, A* a, B* b, uint16_t m, uint16_t k, uint16_t n, uint8_t unit_flag, bool disable_gemv,
                bool c_from_bias, bool init) {
  dga_model::mad(reinterpret_cast<float*>(c), a, dga_model::CubeTypeOf<A>::value, b, dga_model::CubeTypeOf<B>::value, m,
                 k, n, disable_gemv, c_from_bias, init, int(unit_flag));
}
template <class D, class S, class... R>
inline void copy_matrix_cc_to_gm(D* dst, S* src, uint8_t, uint16_t n, uint16_t m, uint32_t dst_stride,
                                 uint16_t src_stride, uint8_t, uint8_t, uint8_t unit_flag, uint64_t quant, uint8_t, bool,
                                 bool nz2nd, R...) {
  const int q = quant == uint64_t(QuantMode_t::NoQuant)    ? 0
                : quant == uint64_t(QuantMode_t::F322F16)  ? 1
                : quant == uint64_t(QuantMode_t::F322BF16) ? 2
                                                           : -1;
  if (q == 0 && std::is_same_v<D, int32_t> != std::is_same_v<S, int32_t>)  // the tables: no fp32 <-> int32 copy
    return dga_model::unmodelled("copy_matrix_cc_to_gm with NoQuant between an fp32 and an int32 type");
  dga_model::fixpipe_out(dst, int(sizeof(D)), reinterpret_cast<const float*>(src), n, m, dst_stride, src_stride, q,
                         nz2nd, int(unit_flag), std::is_same_v<S, int32_t>);
}
// InitConstValue / Fill on L1 (InitL1BufferCal): repeat_bits [15:0] repeatTimes, [31:16] blockNum, [47:32] dstGap.
template <class T, class V>
inline void create_cbuf_matrix(T* dst, int64_t repeat_bits, V value) {
  dga_model::fill_l1(dst, uint64_t(repeat_bits), &value, int(sizeof(V)));
}
template <class T, class V>
inline void create_cbuf_matrix_bf16(T* dst, int64_t repeat_bits, V value) {
  dga_model::fill_l1(dst, uint64_t(repeat_bits), &value, int(sizeof(V)));
}
template <class... A> inline void set_atomic_none(A...) { dga_model::atomic(0); }
template <class... A> inline void set_atomic_add(A...) { dga_model::atomic(1); }
template <class P>
inline void pipe_barrier(P pipe) { dga_model::barrier(int(pipe)); }
// The devkit's CPU-debug parameter checks read the register from g_fixpipeNdNzParam (its stub sets it too).
template <class V>
inline void set_loop3_para(V v) {
  g_fixpipeNdNzParam = uint64_t(v);
  dga_model::loop3_para(uint64_t(v));
}
template <class T, class O>
inline void set_st_atomic_cfg(T type, O op) { dga_model::store_atomic(int(type), int(op)); }
// The one-operand form: the raw reset value InitSplitArchSpr writes (kernel_utils_base.h): no atomics.
template <class V>
inline void set_st_atomic_cfg(V) { dga_model::store_atomic(0, 0); }
template <class P, class Q, class E>
inline void set_flag(P src, Q dst, E id) { dga_model::flag(true, int(src), int(dst), int(id)); }
template <class P, class Q, class E>
inline void wait_flag(P src, Q dst, E id) { dga_model::flag(false, int(src), int(dst), int(id)); }

template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_ca_s4(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  dga_model::load2d(dst, src, 4, uint64_t(ms), uint64_t(ks), uint64_t(mst), uint64_t(kst), int64_t(ss), uint64_t(ds),
                    bool(tr));  // the same 512 B fractals; 4-bit values
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_cb_s4(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  dga_model::load2d(dst, src, 4, uint64_t(ms), uint64_t(ks), uint64_t(mst), uint64_t(kst), int64_t(ss), uint64_t(ds),
                    bool(tr));
}
template <class S, class A, class B, class C, class D, class E, class F>
inline void load_cbuf_to_ca_mx(uint64_t mx_dst, S* src, A xs, B ys, C xst, D yst, E ss, F ds) {
  dga_model::mx_load(false, mx_dst, src, uint64_t(xs), uint64_t(ys), uint64_t(xst), uint64_t(yst), uint64_t(ss),
                     uint64_t(ds));
}
template <class S, class A, class B, class C, class D, class E, class F>
inline void load_cbuf_to_cb_mx(uint64_t mx_dst, S* src, A xs, B ys, C xst, D yst, E ss, F ds) {
  dga_model::mx_load(true, mx_dst, src, uint64_t(xs), uint64_t(ys), uint64_t(xst), uint64_t(yst), uint64_t(ss),
                     uint64_t(ds));
}
template <class C, class A, class B, class M, class K, class N, class U, class G, class S, class I>
inline void mad_mx(C* c, A* a, B* b, M m, K k, N n, U unit_flag, G gemv_off, S c_from_bias, I init) {
  dga_model::mad_mx(reinterpret_cast<float*>(c), a, dga_model::CubeTypeOf<A>::value, b, dga_model::CubeTypeOf<B>::value,
                    uint64_t(m), uint64_t(k), uint64_t(n), bool(gemv_off), bool(c_from_bias), bool(init), int(unit_flag));
}
template <class D, class S, class... R>
inline void copy_matrix_cc_to_ub(D* dst, S* src, uint8_t, uint16_t n, uint16_t m, uint32_t dst_stride,
                                 uint16_t src_stride, uint8_t dual, uint8_t sub, uint8_t, uint8_t unit_flag, uint64_t quant,
                                 uint8_t, bool, bool nz2nd, R...) {
  static_assert(sizeof(D) == 4, "the model's Fixpipe to UB writes fp32 or int32");
  if (quant == uint64_t(QuantMode_t::NoQuant) && std::is_same_v<D, int32_t> != std::is_same_v<S, int32_t>)
    return dga_model::unmodelled("copy_matrix_cc_to_ub with NoQuant between an fp32 and an int32 type");
  dga_model::fixpipe_ub(dst, reinterpret_cast<const float*>(src), n, m, dst_stride, src_stride, dual, sub,
                        quant == uint64_t(QuantMode_t::NoQuant) ? 0 : -1, nz2nd, int(unit_flag),
                        std::is_same_v<S, int32_t>);
}
// ---- the vector core -------------------------------------------------------------------------------
template <class P>
inline vector_bool pset_b32(P pattern) { return dga_model::v_pset(4, int(pattern)); }
template <class P>
inline vector_bool pset_b16(P pattern) { return dga_model::v_pset(2, int(pattern)); }
template <class P>
inline vector_bool plt_b32(uint32_t& scalar, P post) { return dga_model::v_plt(4, scalar, int(post) == int(POST_UPDATE)); }
template <class P>
inline vector_bool plt_b16(uint32_t& scalar, P post) { return dga_model::v_plt(2, scalar, int(post) == int(POST_UPDATE)); }
// The distribution as LoadAlign passes it (a ::Dist holding the Reg API's LoadDist value); a Literal is refused.
template <class R, class T, class O, class D>
inline void vlds(R& reg, T* addr, O offset, D dist) {
  if constexpr (std::is_convertible_v<D, Dist>)
    dga_model::v_lds(dga_model::reg_bytes(reg), addr + offset, int(dist));
  else
    dga_model::unmodelled("vlds (a distribution that is not a Dist)");
}
template <class R, class T, class O, class D, class M>
inline void vsts(R& reg, T* addr, O offset, D dist, M mask) {
  dga_model::v_sts(dga_model::reg_bytes(reg), addr + offset, int(dist), uint16_t(mask));
}
template <class R, class S, class M, class Mode>
inline void vdup(R& reg, S scalar, M mask, Mode mode) {
  using E = dga_model::reg_elem_t<R>;
  if constexpr (std::is_convertible_v<S, E> && sizeof(E) <= sizeof(uint32_t)) {
    const E v = E(scalar);
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof(E));
    dga_model::v_dup(dga_model::reg_bytes(reg), bits, int(sizeof(E)), uint16_t(mask), int(mode));
  } else {
    dga_model::unmodelled("vdup (from a register, or 64-bit elements)");
  }
}
template <class R, class Q, class S, class M, class Mode>
inline void vaxpy(R& dst, Q& src, S scalar, M mask, Mode mode) {
  if constexpr (std::is_same_v<dga_model::reg_elem_t<R>, float>)
    dga_model::v_axpy(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), float(scalar), uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vaxpy (not float)");
}
template <class R, class Q, class M, class Rd, class Sat, class Part, class Mode>
inline void vcvt(R& dst, Q& src, M mask, Rd round, Sat sat, Part part, Mode mode) {
  if constexpr (std::is_same_v<dga_model::reg_elem_t<Q>, float> && std::is_same_v<dga_model::reg_elem_t<R>, bfloat16_t>)
    dga_model::v_cvt_f32_bf16(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(round),
                              int(sat), int(part), int(mode));
  else if constexpr (std::is_same_v<dga_model::reg_elem_t<Q>, float> &&
                     std::is_same_v<dga_model::reg_elem_t<R>, fp8_e4m3fn_t> && std::is_convertible_v<Part, Part_T>)
    dga_model::v_cvt_f32_e4m3(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(round),
                              int(sat), int(part), int(mode));
  else if constexpr (std::is_same_v<dga_model::reg_elem_t<Q>, float> && std::is_same_v<dga_model::reg_elem_t<R>, half> &&
                     std::is_convertible_v<Part, ::Part>)
    dga_model::v_cvt_f32_f16(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(round),
                             int(sat), int(part), int(mode));
  else
    dga_model::unmodelled("vcvt (other than float -> bf16 / half / e4m3 with a rounding)");
}
// vcvt(dst, src, mask, part, mode): the widening casts of CastOperator; bf16 -> float modelled. With a
// rounding in place of the part, vcvt(dst, src, mask, round, mode): s322f32 modelled (s162f16 and f162bf16
// not).
template <class R, class Q, class M, class P, class Mode>
inline void vcvt(R& dst, Q& src, M mask, P part, Mode mode) {
  if constexpr (std::is_convertible_v<P, ROUND>) {
    if constexpr (std::is_same_v<dga_model::reg_elem_t<Q>, int32_t> && std::is_same_v<dga_model::reg_elem_t<R>, float>)
      dga_model::v_cvt_s32_f32(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(part),
                               int(mode));
    else
      dga_model::unmodelled("vcvt with a rounding and no saturation (other than int32 -> float)");
  } else if constexpr (dga_model::all_float<R> && std::is_same_v<dga_model::reg_elem_t<Q>, bfloat16_t> &&
                std::is_convertible_v<P, Part>)
    dga_model::v_cvt_bf16_f32(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(part),
                              int(mode));
  else if constexpr (std::is_same_v<dga_model::reg_elem_t<R>, bfloat16_t> &&
                     std::is_same_v<dga_model::reg_elem_t<Q>, fp4x2_e2m1_t> && std::is_convertible_v<P, Part_T>)
    dga_model::v_cvt_e2m1_bf16(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(part),
                               int(mode));
  else
    dga_model::unmodelled("vcvt (a widening cast other than bf16 -> float, fp4x2 e2m1 -> bf16)");
}
// vor: integer elements of 1, 2 or 4 bytes (Or's non-bool, non-64-bit form).
template <class R, class Q, class P, class M, class Mode>
inline void vor(R& dst, Q& a, P& b, M mask, Mode mode) {
  using E = dga_model::reg_elem_t<R>;
  if constexpr (std::is_integral_v<E> && sizeof(E) <= sizeof(uint32_t) && std::is_same_v<E, dga_model::reg_elem_t<Q>> &&
                std::is_same_v<E, dga_model::reg_elem_t<P>>)
    dga_model::v_or(dga_model::reg_bytes(dst), dga_model::reg_bytes(a), dga_model::reg_bytes(b), int(sizeof(E)),
                    uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vor (not 8 / 16 / 32-bit integers)");
}
// vadd / vsub / vmul / vmula: float elements only, through v_arith with the instruction's op.
namespace dga_model {
template <char Op, class R, class Q, class P, class M, class Mode>
inline void v_float_arith(const char* name, R& dst, Q& a, P& b, M mask, Mode mode) {
  if constexpr (all_float<R, Q, P>)
    v_arith(Op, reg_bytes(dst), reg_bytes(a), reg_bytes(b), uint16_t(mask), int(mode));
  else
    unmodelled(name);
}
}  // namespace dga_model
template <class R, class Q, class P, class M, class Mode>
inline void vadd(R& dst, Q& a, P& b, M mask, Mode mode) {
  dga_model::v_float_arith<'+'>("vadd (not float)", dst, a, b, mask, mode);
}
template <class R, class Q, class P, class M, class Mode>
inline void vsub(R& dst, Q& a, P& b, M mask, Mode mode) {
  dga_model::v_float_arith<'-'>("vsub (not float)", dst, a, b, mask, mode);
}
template <class R, class Q, class P, class M, class Mode>
inline void vmul(R& dst, Q& a, P& b, M mask, Mode mode) {
  dga_model::v_float_arith<'*'>("vmul (not float)", dst, a, b, mask, mode);
}
template <class R, class Q, class P, class M, class Mode>
inline void vmula(R& dst, Q& a, P& b, M mask, Mode mode) {
  dga_model::v_float_arith<'a'>("vmula (not float)", dst, a, b, mask, mode);
}
template <class R, class Q, class M, class Mode>
inline void vcadd(R& dst, Q& src, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q>)
    dga_model::v_cadd(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vcadd (not float)");
}
template <class R, class Q, class M, class Mode>
inline void vexp(R& dst, Q& src, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q>)
    dga_model::v_unary('e', dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vexp (not float)");
}
template <class R, class Q, class M, class Mode>
inline void vabs(R& dst, Q& src, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q>)
    dga_model::v_unary('a', dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vabs (not float)");
}
template <class R, class Q, class P, class M, class Mode>
inline void vdiv(R& dst, Q& a, P& b, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q, P>)
    dga_model::v_div(dga_model::reg_bytes(dst), dga_model::reg_bytes(a), dga_model::reg_bytes(b), uint16_t(mask),
                     int(mode));
  else
    dga_model::unmodelled("vdiv (not float)");
}
template <class R, class Q, class S, class M, class Mode>
inline void vmaxs(R& dst, Q& src, S scalar, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q> && std::is_arithmetic_v<S>)
    dga_model::v_minmax_s(true, dga_model::reg_bytes(dst), dga_model::reg_bytes(src), float(scalar), uint16_t(mask),
                          int(mode));
  else
    dga_model::unmodelled("vmaxs (not float)");
}
template <class R, class Q, class S, class M, class Mode>
inline void vmins(R& dst, Q& src, S scalar, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q> && std::is_arithmetic_v<S>)
    dga_model::v_minmax_s(false, dga_model::reg_bytes(dst), dga_model::reg_bytes(src), float(scalar), uint16_t(mask),
                          int(mode));
  else
    dga_model::unmodelled("vmins (not float)");
}
template <class R, class Q, class M, class Mode>
inline void vcmax(R& dst, Q& src, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q>)
    dga_model::v_cmax(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vcmax (not float)");
}
// vsldb(dst, src, block_stride << 16, mask): LoadAlign's DATA_BLOCK_COPY form, without post-update.
template <class R, class T, class S, class M>
inline void vsldb(R& dst, T* src, S config, M mask) {
  constexpr int kStrideShift = 16;
  if constexpr (std::is_integral_v<S> && !std::is_void_v<T>)
    dga_model::v_sldb(dga_model::reg_bytes(dst), src, int(sizeof(dga_model::reg_elem_t<R>)),
                      uint32_t(uint64_t(config) >> kStrideShift), uint16_t(mask));
  else
    dga_model::unmodelled("vsldb (this form)");
}
// vrelu is not in the devkit's stub lists (stub/funcs.txt): the model declares it, so that Reg::Relu compiles.
template <class R, class Q, class M, class Mode>
inline void vrelu(R& dst, Q& src, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q>)
    dga_model::v_relu(dga_model::reg_bytes(dst), dga_model::reg_bytes(src), uint16_t(mask), int(mode));
  else
    dga_model::unmodelled("vrelu (not float)");
}
template <class R, class Q, class S, class M, class Mode>
inline void vmuls(R& dst, Q& src, S scalar, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q> && std::is_arithmetic_v<S>)
    dga_model::v_scalar('*', dga_model::reg_bytes(dst), dga_model::reg_bytes(src), float(scalar), uint16_t(mask),
                        int(mode));
  else
    dga_model::unmodelled("vmuls (not float)");
}
template <class R, class Q, class S, class M, class Mode>
inline void vadds(R& dst, Q& src, S scalar, M mask, Mode mode) {
  if constexpr (dga_model::all_float<R, Q> && std::is_arithmetic_v<S>)
    dga_model::v_scalar('+', dga_model::reg_bytes(dst), dga_model::reg_bytes(src), float(scalar), uint16_t(mask),
                        int(mode));
  else
    dga_model::unmodelled("vadds (not float)");
}
// vci(dst, start, order): order as ArangeImpl passes it (a std::integral_constant of ::Order).
template <class R, class S, class O>
inline void vci(R& dst, S start, O order) {
  using E = dga_model::reg_elem_t<R>;
  if constexpr (dga_model::s32_or_f32_scalar<E, S>)
    dga_model::v_ci(dga_model::reg_bytes(dst), std::is_same_v<E, float>, dga_model::scalar_bits<E>(start), int(order));
  else
    dga_model::unmodelled("vci (not int32 or float)");
}
template <class R, class S, class M>
inline void vcmps_eq(vector_bool& dst, R& src, S scalar, M mask) { dga_model::cmps<0>(dst, src, scalar, mask); }
template <class R, class S, class M>
inline void vcmps_ne(vector_bool& dst, R& src, S scalar, M mask) { dga_model::cmps<1>(dst, src, scalar, mask); }
template <class R, class S, class M>
inline void vcmps_gt(vector_bool& dst, R& src, S scalar, M mask) { dga_model::cmps<2>(dst, src, scalar, mask); }
template <class R, class S, class M>
inline void vcmps_ge(vector_bool& dst, R& src, S scalar, M mask) { dga_model::cmps<3>(dst, src, scalar, mask); }
template <class R, class S, class M>
inline void vcmps_lt(vector_bool& dst, R& src, S scalar, M mask) { dga_model::cmps<4>(dst, src, scalar, mask); }
template <class R, class S, class M>
inline void vcmps_le(vector_bool& dst, R& src, S scalar, M mask) { dga_model::cmps<5>(dst, src, scalar, mask); }
// vsel(dst, src0, src1, mask): SelectImpl passes b32 registers as RegTensor<uint32_t>; other widths refused.
template <class R, class Q, class P, class M>
inline void vsel(R& dst, Q& a, P& b, M mask) {
  if constexpr (!std::is_class_v<R> || !std::is_class_v<Q> || !std::is_class_v<P>)
    dga_model::unmodelled("vsel (predicate operands)");
  else if constexpr (sizeof(dga_model::reg_elem_t<R>) == 4 && sizeof(dga_model::reg_elem_t<Q>) == 4 &&
                     sizeof(dga_model::reg_elem_t<P>) == 4)
    dga_model::v_sel(dga_model::reg_bytes(dst), dga_model::reg_bytes(a), dga_model::reg_bytes(b), uint16_t(mask));
  else
    dga_model::unmodelled("vsel (not b32)");
}
template <class M>
inline void pand(vector_bool& dst, vector_bool a, vector_bool b, M mask) {
  dst = dga_model::v_plogic('&', a, b, uint16_t(mask));
}
template <class M>
inline void por(vector_bool& dst, vector_bool a, vector_bool b, M mask) {
  dst = dga_model::v_plogic('|', a, b, uint16_t(mask));
}
template <class M>
inline void pnot(vector_bool& dst, vector_bool src, M mask) { dst = dga_model::v_plogic('~', src, 0, uint16_t(mask)); }
// Other forms of these instructions (post-update addressing, two registers, other conversions, other
// operand lists): refused.
template <class... A> inline void vlds(A&&...) { dga_model::unmodelled("vlds (this form)"); }
template <class... A> inline void vsts(A&&...) { dga_model::unmodelled("vsts (this form)"); }
template <class... A> inline void vcvt(A&&...) { dga_model::unmodelled("vcvt (this form)"); }
template <class... A> inline void vdup(A&&...) { dga_model::unmodelled("vdup (this form)"); }
template <class... A> inline void vaxpy(A&&...) { dga_model::unmodelled("vaxpy (this form)"); }
template <class... A> inline void vadd(A&&...) { dga_model::unmodelled("vadd (this form)"); }
template <class... A> inline void vsub(A&&...) { dga_model::unmodelled("vsub (this form)"); }
template <class... A> inline void vmul(A&&...) { dga_model::unmodelled("vmul (this form)"); }
template <class... A> inline void vmula(A&&...) { dga_model::unmodelled("vmula (this form)"); }
template <class... A> inline void vcadd(A&&...) { dga_model::unmodelled("vcadd (this form)"); }
template <class... A> inline void vrelu(A&&...) { dga_model::unmodelled("vrelu (this form)"); }
template <class... A> inline void vmuls(A&&...) { dga_model::unmodelled("vmuls (this form)"); }
template <class... A> inline void vadds(A&&...) { dga_model::unmodelled("vadds (this form)"); }
template <class... A> inline void vci(A&&...) { dga_model::unmodelled("vci (this form)"); }
template <class... A> inline void vexp(A&&...) { dga_model::unmodelled("vexp (this form)"); }
template <class... A> inline void vabs(A&&...) { dga_model::unmodelled("vabs (this form)"); }
template <class... A> inline void vdiv(A&&...) { dga_model::unmodelled("vdiv (this form)"); }
template <class... A> inline void vmaxs(A&&...) { dga_model::unmodelled("vmaxs (this form)"); }
template <class... A> inline void vmins(A&&...) { dga_model::unmodelled("vmins (this form)"); }
template <class... A> inline void vcmax(A&&...) { dga_model::unmodelled("vcmax (this form)"); }
template <class... A> inline void vsldb(A&&...) { dga_model::unmodelled("vsldb (this form)"); }
template <class... A> inline void vor(A&&...) { dga_model::unmodelled("vor (this form)"); }
template <class... A> inline void vcmps_eq(A&&...) { dga_model::unmodelled("vcmps_eq (this form)"); }
template <class... A> inline void vcmps_ne(A&&...) { dga_model::unmodelled("vcmps_ne (this form)"); }
template <class... A> inline void vcmps_gt(A&&...) { dga_model::unmodelled("vcmps_gt (this form)"); }
template <class... A> inline void vcmps_ge(A&&...) { dga_model::unmodelled("vcmps_ge (this form)"); }
template <class... A> inline void vcmps_lt(A&&...) { dga_model::unmodelled("vcmps_lt (this form)"); }
template <class... A> inline void vcmps_le(A&&...) { dga_model::unmodelled("vcmps_le (this form)"); }
template <class... A> inline void vsel(A&&...) { dga_model::unmodelled("vsel (this form)"); }
template <class... A> inline void pand(A&&...) { dga_model::unmodelled("pand (this form)"); }
template <class... A> inline void por(A&&...) { dga_model::unmodelled("por (this form)"); }
template <class... A> inline void pnot(A&&...) { dga_model::unmodelled("pnot (this form)"); }
template <class G, class U, class... R>
inline void copy_ubuf_to_gm_align_v2(G* gm, U* ub, uint8_t, uint16_t n_burst, uint32_t len_burst, uint8_t,
                                     uint64_t dst_stride, uint32_t src_stride) {
  dga_model::ub_to_gm(gm, ub, n_burst, len_burst, dst_stride, src_stride);
}
// (ub, gm, sid, n_burst, len_burst, left_pad, right_pad, data_select_bit, l2_cache_ctl, src_stride, dst_stride),
// as CopyGmToUbufAlignV2 passes them; the element size is the operand type's (uint8/16/32_t).
template <class U, class G, class Sid, class N, class L, class LP, class RP, class Sel, class C, class SS, class DS>
inline void copy_gm_to_ubuf_align_v2(U* ub, G* gm, Sid, N n_burst, L len_burst, LP left, RP right, Sel select, C,
                                     SS src_stride, DS dst_stride) {
  if constexpr (std::is_void_v<U>)
    dga_model::unmodelled("copy_gm_to_ubuf_align_v2 (untyped UB pointer)");
  else
    dga_model::gm_to_ub(ub, gm, int(sizeof(U)), uint64_t(n_burst), uint64_t(len_burst), int(left), int(right),
                        bool(select), uint64_t(src_stride), uint64_t(dst_stride));
}
template <class... A>
inline void copy_gm_to_ubuf_align_v2(A&&...) { dga_model::unmodelled("copy_gm_to_ubuf_align_v2 (this form)"); }
template <class V> inline void set_loop_size_outtoub(V v) { dga_model::loop_outtoub(0, uint64_t(v)); }
template <class V> inline void set_loop1_stride_outtoub(V v) { dga_model::loop_outtoub(1, uint64_t(v)); }
template <class V> inline void set_loop2_stride_outtoub(V v) { dga_model::loop_outtoub(2, uint64_t(v)); }
template <class V> inline void set_loop_size_ubtoout(V v) { dga_model::loop_ubtoout(0, uint64_t(v)); }
template <class V> inline void set_loop1_stride_ubtoout(V v) { dga_model::loop_ubtoout(1, uint64_t(v)); }
template <class V> inline void set_loop2_stride_ubtoout(V v) { dga_model::loop_ubtoout(2, uint64_t(v)); }
inline void set_atomic_f32() { dga_model::atomic_type(1); }
inline void set_atomic_bf16() { dga_model::atomic_type(6); }
inline uint64_t get_ctrl() { return dga_model::get_ctrl(); }
template <class V> inline void set_ctrl(V v) { dga_model::set_ctrl(uint64_t(v)); }

template <class P, class M>
inline void ffts_cross_core_sync(P pipe, M msg) { dga_model::cross_set(int(pipe), uint64_t(msg)); }
template <class P, class I>
inline void wait_flag_dev(P pipe, I id) { dga_model::cross_wait(int(pipe), int(id)); }
template <class P, class I>
inline void set_intra_block(P pipe, I id) { dga_model::intra_set(int(pipe), int(id)); }
template <class P, class I>
inline void wait_intra_block(P pipe, I id) { dga_model::intra_wait(int(pipe), int(id)); }
