// Fractal layout transforms on tensors (host).
#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/layout/transform.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::ErrorKind;

namespace {

struct Plain {
  int64_t groups, rows, cols;  // logical values
};

// The ND side: [R, C] or [G, R, C]; for 4-bit values C counts values (2 per stored byte).
Plain check_plain(const TensorView& t, const char* arg, int bits) {
  DGA_REQUIRE(bits == 16 || bits == 8 || bits == 4, kValue, "value_bits", "must be 16, 8 or 4, got ", bits);
  const int64_t want_item = bits == 16 ? 2 : 1;
  DGA_REQUIRE(core::itemsize(t.dtype) == want_item, kType, arg, "holds ", core::itemsize(t.dtype),
              "-byte elements, which cannot carry ", bits, "-bit values");
  DGA_REQUIRE(t.ndim == 2 || t.ndim == 3, kValue, arg, "expected a 2-D or 3-D tensor, got ", t.ndim, "-D");
  if (bits == 4)
    DGA_REQUIRE(t.size(-1) <= 1 || t.stride(-1) == 1, kValue, arg,
                "packed 4-bit values need a contiguous last dimension, got strides ", t.strides_str());
  return {t.ndim == 3 ? t.shape[0] : 1, t.size(-2), t.size(-1) * (bits == 4 ? 2 : 1)};
}

layout::NzGeometry geometry(Fractal f, const Plain& p, int bits) {
  return f == Fractal::kNz ? layout::NzGeometry::fit(p.rows, p.cols, bits) : layout::zn_geometry(p.rows, p.cols, bits);
}

// The fractal side: contiguous [.., blocks, rows_pad, C0 storage units].
void check_fractal(const TensorView& t, const char* arg, const Plain& p, const layout::NzGeometry& g,
                   const TensorView& plain) {
  DGA_REQUIRE(core::itemsize(t.dtype) == core::itemsize(plain.dtype), kType, arg, "element size ",
              core::itemsize(t.dtype), " differs from the ND tensor's ", core::itemsize(plain.dtype));
  const int64_t units = layout::kC0Bytes / core::itemsize(t.dtype);
  const int64_t blocks = g.cols_pad / g.c0();
  if (plain.ndim == 3) api::require_shape(t, arg, {p.groups, blocks, g.rows_pad, units});
  else api::require_shape(t, arg, {blocks, g.rows_pad, units});
  DGA_REQUIRE(t.is_contiguous(), kValue, arg, "must be contiguous, got strides ", t.strides_str());
}

template <class Ref>
Ref plain_ref(const TensorView& t, int64_t group, int bits, void* base) {
  const int64_t per = bits == 4 ? 2 : 1;  // values per stored element
  const int64_t origin = (t.offset + (t.ndim == 3 ? group * t.strides[0] : 0)) * per;
  return Ref{.base = base,
             .origin = origin,
             .rows = t.size(-2),
             .cols = t.size(-1) * per,
             .row_stride = t.stride(-2) * per,
             .col_stride = t.size(-1) <= 1 ? 1 : t.stride(-1),
             .bits = bits};
}

}  // namespace

// Argument names follow the Python API: `t` is the input, `out` the output.
void to_fractal(Fractal f, const TensorView& src, const TensorView& dst, int value_bits) {
  api::require_same_device({{"t", &src}, {"out", &dst}});
  api::require_host_memory(src, "t");
  const Plain p = check_plain(src, "t", value_bits);
  const layout::NzGeometry g = geometry(f, p, value_bits);
  check_fractal(dst, "out", p, g, src);
  api::require_no_overlap(dst, "out", src, "t");
  for (int64_t i = 0; i < p.groups; ++i) {
    auto ref = plain_ref<layout::MatrixRef>(src, i, value_bits, src.data);
    void* out = static_cast<char*>(dst.ptr()) + i * g.bytes();
    if (f == Fractal::kNz) layout::nd_to_nz(ref, out, g);
    else layout::nd_to_zn(ref, out, g);
  }
}

void from_fractal(Fractal f, const TensorView& src, const TensorView& dst, int value_bits) {
  api::require_same_device({{"t", &src}, {"out", &dst}});
  api::require_host_memory(src, "t");
  const Plain p = check_plain(dst, "out", value_bits);
  api::require_row_major_output(dst, "out");
  const layout::NzGeometry g = geometry(f, p, value_bits);
  check_fractal(src, "t", p, g, dst);
  api::require_no_overlap(dst, "out", src, "t");
  for (int64_t i = 0; i < p.groups; ++i) {
    auto ref = plain_ref<layout::MutMatrixRef>(dst, i, value_bits, dst.data);
    const void* in = static_cast<const char*>(src.ptr()) + i * g.bytes();
    if (f == Fractal::kNz) layout::nz_to_nd(in, g, ref);
    else layout::zn_to_nd(in, g, ref);
  }
}

}  // namespace deepgemm_ascend
