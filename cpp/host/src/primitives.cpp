#include "deepgemm_ascend/host/primitives.hpp"

#include <cstring>
#include <type_traits>
#include <vector>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/layout/transform.hpp"
#include "deepgemm_ascend/host/micro_kernels.hpp"
#include "deepgemm_ascend/host/pair_panels.hpp"
#include "deepgemm_ascend/host/widen.hpp"

namespace deepgemm_ascend::tile::host {

using layout::NzGeometry;

namespace {

// Checked mode: a load reads columns [k_off, k_off + k_pad) of an L1 tile of geometry g.
void check_source(const Core& core, const LocalTile& src, const NzGeometry& g, int64_t k_off, int64_t k_pad,
                  const char* op) {
  core.check_extent(src, uint64_t(g.bytes()), op);
  if (core.checked() && (k_off < 0 || k_off + k_pad > g.cols_pad))
    core.violation(core::concat(op, ": columns [", k_off, ", ", k_off + k_pad, ") lie outside the L1 tile's ",
                                g.cols_pad, " columns"));
}

// A gathered GM tile (MatrixRef::gather) read row by row into a row-major staging buffer of this thread, so
// that the Nz / pair-panel copies see a plain strided tile; rows or columns of zeros read as 0.
layout::MatrixRef staged(const layout::MatrixRef& src) {
  if (src.gather == nullptr) return src;
  thread_local std::vector<uint8_t> buf;
  const int64_t row_bytes = src.cols * src.bits / 8;
  buf.assign(size_t(src.rows * row_bytes), 0);
  const layout::MutMatrixRef out{.base = buf.data(), .origin = 0, .rows = src.rows, .cols = src.cols,
                                 .row_stride = src.cols, .col_stride = 1, .bits = src.bits};
  for (int64_t r = 0; r < src.rows; ++r) {
    if (src.gather_dim == 0 && src.zero(r, 0)) continue;
    if (src.gather_dim == 0 && src.col_stride == 1 && src.bits % 8 == 0)  // a gathered row: one run
      std::memcpy(out.at<uint8_t>(r, 0), src.at<const uint8_t>(r, 0), size_t(row_bytes));
    else
      for (int64_t c = 0; c < src.cols; ++c) out.set(r, c, src.get(r, c));
  }
  return {.base = buf.data(), .origin = 0, .rows = src.rows, .cols = src.cols, .row_stride = src.cols, .col_stride = 1,
          .bits = src.bits};
}

}  // namespace

void copy_gm_to_l1(Core& core, const LocalTile& dst, const NzGeometry& g, const layout::MatrixRef& src) {
  core.check_access(dst, Pos::kL1, Pipe::kMTE2, "copy_gm_to_l1");
  core.check_extent(dst, uint64_t(g.bytes()), "copy_gm_to_l1");
  core.l0_views().before_write(dst.addr, dst.addr + g.bytes());
  layout::nd_to_nz(staged(src), dst.addr, g);
}

void copy_gm_to_l1b(Core& core, const LocalTile& dst, const NzGeometry& g, const layout::MatrixRef& src) {
  core.check_access(dst, Pos::kL1, Pipe::kMTE2, "copy_gm_to_l1b");
  core.check_extent(dst, uint64_t(g.bytes()), "copy_gm_to_l1b");
  core.l0_views().before_write(dst.addr, dst.addr + g.bytes());
  nd_to_pair_panels(staged(src), dst.addr, g);
}

namespace {

// Widens rows [0, rows) of the 16 values starting at column k (a multiple of 16) of an L1 tile:
// Nz keeps a row's C0 run contiguous, and consecutive rows C0 bytes apart.
inline void widen_block(const LocalTile& src, const NzGeometry& g, int64_t row0, int64_t rows, int64_t k,
                        OperandFormat fmt, uint16_t* out, int64_t out_stride) {
  const auto* in = src.as<const uint8_t>() + g.offset(row0, k) * g.bits / 8;
  widen_rows(fmt, in, layout::kC0Bytes, rows, out, out_stride);
}

}  // namespace

void load_l1_to_l0a(Core& core, const LocalTile& dst, const LocalTile& src, const NzGeometry& src_g, int64_t k_off,
                    int64_t k_pad, OperandFormat fmt, const FoldScales& fold) {
  core.check_access(src, Pos::kL1, Pipe::kMTE1, "load_l1_to_l0a (src)");
  core.check_access(dst, Pos::kL0A, Pipe::kMTE1, "load_l1_to_l0a (dst)");
  const int64_t bytes = src_g.rows_pad * k_pad * int64_t(sizeof(uint16_t));
  core.check_extent(dst, uint64_t(bytes), "load_l1_to_l0a");
  check_source(core, src, src_g, k_off, k_pad, "load_l1_to_l0a");
  const int group = host::l0a_k_group();
  core.l0_views().drop(dst.addr);
  if (fmt == OperandFormat::kBF16 && group == host::kNzKGroup) {
    // Nz keeps each C0 column block contiguous over all rows, so a K range is one contiguous run: copied, or
    // (unchecked runs) left in L1 for mmad (host/l0_views.hpp).
    const auto* run = src.as<const uint16_t>() + src_g.offset(0, k_off);
    if (!core.checked()) return core.l0_views().set({.tile = dst.addr, .data = run, .panel = 0,
                                                     .run = bytes / int64_t(sizeof(uint16_t)), .panels = 1});
    std::memcpy(dst.addr, run, size_t(bytes));
    return;
  }
  auto* out = dst.as<uint16_t>();
  if (fold.s && fmt != OperandFormat::kBF16)
    return widen_folded_l0a(src.as<const uint8_t>(), src_g, k_off, k_pad, fmt, out, fold);
  for (int64_t kb = 0; kb < k_pad / kCubeBlock; ++kb) {
    const host::L0AFractal f = host::l0a_fractal(kb, src_g.rows_pad, k_pad, group);
    const int64_t k = k_off + kb * kCubeBlock;
    if (fmt != OperandFormat::kBF16) {
      widen_block(src, src_g, 0, src_g.rows_pad, k, fmt, out + f.offset, f.row_stride);
      continue;
    }
    const auto* in = src.as<const uint16_t>() + src_g.offset(0, k);  // rows of 16 values, C0 apart
    for (int64_t r = 0; r < src_g.rows_pad; ++r)
      std::memcpy(out + f.offset + r * f.row_stride, in + r * kCubeBlock, kCubeBlock * sizeof(uint16_t));
  }
}

void load_l1_to_l0b(Core& core, const LocalTile& dst, const L0BGeometry& dst_g, const LocalTile& src,
                    const NzGeometry& src_g, int64_t k_off, OperandFormat fmt, const FoldScales& fold) {
  core.check_access(src, Pos::kL1, Pipe::kMTE1, "load_l1_to_l0b (src)");
  core.check_access(dst, Pos::kL0B, Pipe::kMTE1, "load_l1_to_l0b (dst)");
  core.check_extent(dst, uint64_t(dst_g.bytes(sizeof(uint16_t))), "load_l1_to_l0b");
  check_source(core, src, src_g, k_off, dst_g.k_pad, "load_l1_to_l0b");
  if (core.checked() && dst_g.n_pad > src_g.rows_pad)
    core.violation(core::concat("load_l1_to_l0b: ", dst_g.n_pad, " rows requested from an L1 tile of ", src_g.rows_pad));
  // L1 holds B as K-pair panels (host/pair_panels.hpp): per 16 columns of N, the K range is one contiguous
  // run in L0B's order, copied (bf16; unchecked runs leave it in L1: host/l0_views.hpp) or widened value by value.
  const auto* in = src.as<const uint8_t>();
  auto* out = dst.as<uint16_t>();
  core.l0_views().drop(dst.addr);
  if (fold.s && fmt != OperandFormat::kBF16) return widen_folded_l0b(in, src_g, k_off, dst_g, fmt, out, fold);
  const L0BGeometry panels = pair_panels(src_g);
  const int64_t run = dst_g.k_pad * kCubeBlock;  // values per 16 columns of N
  if (fmt == OperandFormat::kBF16 && !core.checked())
    return core.l0_views().set({.tile = dst.addr,
                                .data = reinterpret_cast<const uint16_t*>(in) + panels.offset(k_off, 0),
                                .panel = panels.offset(0, kCubeBlock), .run = run, .panels = dst_g.n_pad / kCubeBlock});
  for (int64_t n = 0; n < dst_g.n_pad; n += kCubeBlock) {
    const uint8_t* from = in + panels.offset(k_off, n) * src_g.bits / 8;
    uint16_t* to = out + dst_g.offset(0, n);
    if (fmt == OperandFormat::kBF16) std::memcpy(to, from, size_t(run) * sizeof(uint16_t));
    else widen_rows(fmt, from, kWidenRun * src_g.bits / 8, run / kWidenRun, to, kWidenRun);
  }
}

void mmad(Core& core, const LocalTile& c, const L0CGeometry& c_g, const LocalTile& a, const LocalTile& b,
          int64_t k_pad, bool init, const float* row_scale, const float* col_scale) {
  core.check_access(a, Pos::kL0A, Pipe::kM, "mmad (a)");
  core.check_access(b, Pos::kL0B, Pipe::kM, "mmad (b)");
  core.check_access(c, Pos::kL0C, Pipe::kM, "mmad (c)");
  core.check_extent(c, uint64_t(c_g.bytes()), "mmad (c)");
  core.check_extent(a, uint64_t(c_g.m_pad * k_pad * 2), "mmad (a)");
  core.check_extent(b, uint64_t(c_g.n_pad * k_pad * 2), "mmad (b)");
  const L0View *va = core.l0_views().find(a.addr), *vb = core.l0_views().find(b.addr);
  host::mmad_bf16()({.c = c.as<float>(), .a = va ? va->data : a.as<const uint16_t>(),
                     .b = vb ? vb->data : b.as<const uint16_t>(), .m_pad = c_g.m_pad, .n_pad = c_g.n_pad,
                     .k_pad = k_pad, .init = init, .row_scale = row_scale, .col_scale = col_scale,
                     .b_panel = vb ? vb->panel : 0});
}

namespace {

// One row segment of up to 16 columns: out[j] = cast(src[j] (+ c[j])). Plain loops over raw pointers
// so that the compiler vectorises them.
template <class Out, class Cast, class Widen>
void store_segment(Out* out, const float* src, const Out* c, int64_t len, Cast cast, Widen widen) {
  if (c)
    for (int64_t j = 0; j < len; ++j) out[j] = cast(src[j] + widen(c[j]));
  else
    for (int64_t j = 0; j < len; ++j) out[j] = cast(src[j]);
}

// The bf16 case of a whole fractal row, the common one: with clones for the wider x86 vectors, picked at
// load time (the conversion needs 32 -> 16-bit packing that baseline x86-64 does not vectorise).
DGA_VECTOR_CLONES void store_bf16_row16(uint16_t* __restrict out, const float* __restrict src,
                                        const uint16_t* __restrict c) {
  if (c)
    for (int64_t j = 0; j < kCubeBlock; ++j) out[j] = core::float_to_bf16(src[j] + core::bf16_to_float(c[j]));
  else
    for (int64_t j = 0; j < kCubeBlock; ++j) out[j] = core::float_to_bf16(src[j]);
}

template <class Out, class Cast, class Widen>
void store_segment_or_row(Out* out, const float* src, const Out* c, int64_t len, Cast cast, Widen widen) {
  if constexpr (std::is_same_v<Out, uint16_t>)
    if (len == kCubeBlock) return store_bf16_row16(out, src, c);
  store_segment(out, src, c, len, cast, widen);
}

template <class Out, class Cast, class Widen>
void fixpipe_rows(const FixpipeDst& dst, const float* l0c, const L0CGeometry& g, Cast cast, Widen widen) {
  const auto& d = dst.d;
  for (int64_t m = 0; m < d.rows; ++m) {
    Out* out = d.at<Out>(m, 0);
    const Out* c = dst.c ? dst.c->at<const Out>(m, 0) : nullptr;
    for (int64_t n0 = 0; n0 < d.cols; n0 += kCubeBlock)
      store_segment_or_row(out + n0, l0c + g.offset(m, n0), c ? c + n0 : nullptr, std::min(kCubeBlock, d.cols - n0), cast,
                    widen);
  }
}

}  // namespace

void fixpipe(Core& core, const FixpipeDst& dst, const LocalTile& c, const L0CGeometry& c_g) {
  core.check_access(c, Pos::kL0C, Pipe::kFIX, "fixpipe");
  core.check_extent(c, uint64_t(c_g.bytes()), "fixpipe");
  // Rows of D and C are contiguous (the API requires a unit last stride).
  const auto* src = c.as<const float>();
  if (dst.dtype == core::DType::kFP32)
    fixpipe_rows<float>(dst, src, c_g, [](float v) { return v; }, [](float v) { return v; });
  else
    fixpipe_rows<uint16_t>(dst, src, c_g, core::float_to_bf16, core::bf16_to_float);
}

}  // namespace deepgemm_ascend::tile::host
