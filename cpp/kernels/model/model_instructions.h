// The instruction-level functions the devkit's CPU-debug headers call, for the instructions the model
// implements (gen_stub.py leaves them out of the permissive stub and includes this header instead): each
// forwards to model_glue.cpp, which runs deepgemm_ascend::npu_model. The argument order is that of the
// call sites in asc-devkit/impl/basic_api/dav_3510/*_impl.h.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dga_model {
template <class T> struct CubeTypeOf;  // specialised after kernel_operator.h (model_types.h)
void nz_para(uint64_t reg);
void nd2nz(void* dst, const void* src, int eb, uint64_t loop1, uint64_t n, uint64_t d, uint64_t loop4, bool small, bool dn);
void load2d(void* dst, const void* src, uint64_t m_start, uint64_t k_start, uint64_t m_step, uint64_t k_step,
            int64_t src_stride, uint64_t dst_stride, bool transpose);
void mad(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n, bool disable_gemv,
         bool c_from_bias, bool init);
// quant: 0 NoQuant, 1 F322F16, 2 F322BF16, -1 any other mode (refused)
void fixpipe_out(void* dst, int dst_bytes, const float* src, uint64_t n, uint64_t m, uint64_t dst_stride,
                 uint64_t src_stride, int quant, bool nz2nd);
void mx_load(bool b, uint64_t mx_dst, const void* src, uint64_t xs, uint64_t ys, uint64_t xst, uint64_t yst,
             uint64_t ss, uint64_t ds);
void mad_mx(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n,
            bool disable_gemv, bool c_from_bias, bool init);
void unmodelled(const char* instruction);
void atomic(int mode);  // 0 none, 1 add (the output type is the fixpipe's)
void flag(bool set, int src, int dst, int id);
void barrier(int pipe);
void cross_set(int pipe, uint64_t msg);
void cross_wait(int pipe, int id);
// dual: dualDstCtl (0 one UB: sub's, 1 rows split over both); quant as for fixpipe_out
void fixpipe_ub(void* dst, const float* src, uint64_t n, uint64_t m, uint64_t dst_stride, uint64_t src_stride, int dual,
                int sub, int quant, bool nz2nd);
}  // namespace dga_model

inline void set_mte2_nz_para(uint64_t reg) { dga_model::nz_para(reg); }
template <class T, class U, class... R>
inline void copy_gm_to_cbuf_multi_nd2nz(T* dst, U* src, int, uint64_t loop1, uint8_t, uint16_t n, uint32_t d,
                                        uint64_t loop4, bool small) {
  dga_model::nd2nz(dst, src, int(sizeof(T)), loop1, n, d, loop4, small, false);
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void copy_gm_to_cbuf_multi_dn2nz(T* dst, U* src, A, B loop1, C, D n, E d, F loop4, G small) {
  dga_model::nd2nz(dst, src, int(sizeof(T)), uint64_t(loop1), uint64_t(n), uint64_t(d), uint64_t(loop4), bool(small), true);
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_ca(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  dga_model::load2d(dst, src, uint64_t(ms), uint64_t(ks), uint64_t(mst), uint64_t(kst), int64_t(ss), uint64_t(ds), bool(tr));
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_cb(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  dga_model::load2d(dst, src, uint64_t(ms), uint64_t(ks), uint64_t(mst), uint64_t(kst), int64_t(ss), uint64_t(ds), bool(tr));
}
template <class C, class A, class B, class... R>
inline void mad(C* c, A* a, B* b, uint16_t m, uint16_t k, uint16_t n, uint8_t, bool disable_gemv, bool c_from_bias,
                bool init) {
  dga_model::mad(reinterpret_cast<float*>(c), a, dga_model::CubeTypeOf<A>::value, b, dga_model::CubeTypeOf<B>::value, m,
                 k, n, disable_gemv, c_from_bias, init);
}
template <class D, class S, class... R>
inline void copy_matrix_cc_to_gm(D* dst, S* src, uint8_t, uint16_t n, uint16_t m, uint32_t dst_stride,
                                 uint16_t src_stride, uint8_t, uint8_t, uint8_t, uint64_t quant, uint8_t, bool, bool nz2nd,
                                 R...) {
  const int q = quant == uint64_t(QuantMode_t::NoQuant)    ? 0
                : quant == uint64_t(QuantMode_t::F322F16)  ? 1
                : quant == uint64_t(QuantMode_t::F322BF16) ? 2
                                                           : -1;
  dga_model::fixpipe_out(dst, int(sizeof(D)), reinterpret_cast<const float*>(src), n, m, dst_stride, src_stride, q,
                         nz2nd);
}
template <class... A> inline void set_atomic_none(A...) { dga_model::atomic(0); }
template <class... A> inline void set_atomic_add(A...) { dga_model::atomic(1); }
template <class P>
inline void pipe_barrier(P pipe) { dga_model::barrier(int(pipe)); }
template <class P, class Q, class E>
inline void set_flag(P src, Q dst, E id) { dga_model::flag(true, int(src), int(dst), int(id)); }
template <class P, class Q, class E>
inline void wait_flag(P src, Q dst, E id) { dga_model::flag(false, int(src), int(dst), int(id)); }

template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_ca_s4(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  load_cbuf_to_ca(dst, src, ms, ks, mst, kst, ss, ds, tr);  // the same 512 B fractals; 4-bit values
}
template <class T, class U, class A, class B, class C, class D, class E, class F, class G>
inline void load_cbuf_to_cb_s4(T* dst, U* src, A ms, B ks, C mst, D kst, E ss, F ds, G tr) {
  load_cbuf_to_cb(dst, src, ms, ks, mst, kst, ss, ds, tr);
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
inline void mad_mx(C* c, A* a, B* b, M m, K k, N n, U, G gemv_off, S c_from_bias, I init) {
  dga_model::mad_mx(reinterpret_cast<float*>(c), a, dga_model::CubeTypeOf<A>::value, b, dga_model::CubeTypeOf<B>::value,
                    uint64_t(m), uint64_t(k), uint64_t(n), bool(gemv_off), bool(c_from_bias), bool(init));
}
template <class D, class S, class... R>
inline void copy_matrix_cc_to_ub(D* dst, S* src, uint8_t, uint16_t n, uint16_t m, uint32_t dst_stride,
                                 uint16_t src_stride, uint8_t dual, uint8_t sub, uint8_t, uint8_t, uint64_t quant, uint8_t,
                                 bool, bool nz2nd, R...) {
  static_assert(sizeof(D) == 4, "the model's Fixpipe to UB writes fp32");
  dga_model::fixpipe_ub(dst, reinterpret_cast<const float*>(src), n, m, dst_stride, src_stride, dual, sub,
                        quant == uint64_t(QuantMode_t::NoQuant) ? 0 : -1, nz2nd);
}
template <class P, class M>
inline void ffts_cross_core_sync(P pipe, M msg) { dga_model::cross_set(int(pipe), uint64_t(msg)); }
template <class P, class I>
inline void wait_flag_dev(P pipe, I id) { dga_model::cross_wait(int(pipe), int(id)); }
