// ND <-> Nz / Zn fractal transforms: the tensor API (to_fractal / from_fractal) and the low-level
// layout functions, against an independent reference built from the plain index formula
//   Nz: value (r, c) of an [R, C] matrix lives at value index (c / C0) * Rp * C0 + r * C0 + c % C0,
//       Rp = align(R, 16), C0 = 256 / bits;   Zn of X = Nz of X^T.
// Every comparison is bit-exact, destinations are filled with garbage first so padding must be
// written as zero, and bytes outside a destination view must stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/layout/scale_ref.hpp"
#include "deepgemm_ascend/layout/fractal.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/layout/transform.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
using dga::Fractal;
using dga::core::DType;
using dga::core::Error;
using dga::core::ErrorKind;
using dga::core::TensorView;
using dga_test::cdiv;

namespace {

constexpr uint8_t kGarbage = 0xAB;
constexpr uint8_t kNdGarbage = 0xEE;
// Argument names used in errors. api.hpp documents that errors name the input `t` and the output
// `out` (the Python API's names), for both directions: to_fractal(t = ND, out = fractal) and
// from_fractal(t = fractal, out = ND).
const std::string kIn = "t", kOut = "out";

int64_t up16(int64_t a) { return cdiv(a, 16) * 16; }
int64_t c0_of(int bits) { return 256 / bits; }
int64_t unit_bytes(int bits) { return bits == 16 ? 2 : 1; }
int64_t values_per_unit(int bits) { return bits == 4 ? 2 : 1; }
DType dtype_of(int bits) { return bits == 16 ? DType::kBF16 : bits == 8 ? DType::kFP8E4M3 : DType::kFP4E2M1x2; }

// Raw value access by value index (little endian for 16-bit; 4-bit: low nibble first).
void put(uint8_t* p, int64_t i, int bits, uint32_t v) {
  if (bits == 16) {
    p[2 * i] = uint8_t(v);
    p[2 * i + 1] = uint8_t(v >> 8);
  } else if (bits == 8) {
    p[i] = uint8_t(v);
  } else {
    uint8_t& b = p[i / 2];
    b = i % 2 ? uint8_t((b & 0x0F) | (v & 0xF) << 4) : uint8_t((b & 0xF0) | (v & 0xF));
  }
}
uint32_t get(const uint8_t* p, int64_t i, int bits) {
  if (bits == 16) return uint32_t(p[2 * i]) | uint32_t(p[2 * i + 1]) << 8;
  if (bits == 8) return p[i];
  return (p[i / 2] >> (i % 2 * 4)) & 0xF;
}

// A logical matrix of codes; never zero so a forgotten copy cannot pass as padding.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<uint32_t> v;
  uint32_t operator()(int64_t r, int64_t c) const { return v[size_t(r * cols + c)]; }
};
Mat random_mat(int64_t rows, int64_t cols, int bits, uint32_t seed) {
  std::mt19937 g(seed);
  Mat m{rows, cols, std::vector<uint32_t>(size_t(rows * cols))};
  const uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  for (auto& x : m.v) {
    do x = g() & mask;
    while (x == 0);
  }
  return m;
}

// Reference fractal bytes of one matrix.
std::vector<uint8_t> ref_fractal(const Mat& x, Fractal f, int bits) {
  const bool nz = f == Fractal::kNz;
  const int64_t rows = nz ? x.rows : x.cols, cols = nz ? x.cols : x.rows;  // the Nz-ed matrix
  const int64_t c0 = c0_of(bits), rp = up16(rows);
  std::vector<uint8_t> out(size_t(cdiv(cols, c0) * rp * c0 * bits / 8), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) put(out.data(), (c / c0) * rp * c0 + r * c0 + c % c0, bits, nz ? x(r, c) : x(c, r));
  return out;
}

TensorView make_view(void* data, DType dt, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides,
                     int64_t offset = 0) {
  TensorView t;
  t.data = data;
  t.dtype = dt;
  t.offset = offset;
  t.ndim = int(shape.size());
  int i = 0;
  for (int64_t s : shape) t.shape[i++] = s;
  i = 0;
  for (int64_t s : strides) t.strides[i++] = s;
  return t;
}

enum class Src { kContiguous, kColumnMajor, kPaddedRows };

// G matrices of R x C values stored as a 2-D (G == 0) or 3-D tensor with the given storage kind.
struct Nd {
  int bits;
  int64_t groups, rows, cols;  // cols counts values
  std::vector<uint8_t> buf;
  TensorView view;

  // Storage-unit index of the unit holding value (g, r, c).
  int64_t unit(int64_t g, int64_t r, int64_t c) const {
    const int64_t gs = view.ndim == 3 ? view.strides[0] : 0;
    return view.offset + g * gs + r * view.stride(-2) + (c / values_per_unit(bits)) * view.stride(-1);
  }
  int64_t value_index(int64_t g, int64_t r, int64_t c) const {
    return unit(g, r, c) * values_per_unit(bits) + (bits == 4 ? c % 2 : 0);
  }
  uint32_t at(int64_t g, int64_t r, int64_t c) const { return get(buf.data(), value_index(g, r, c), bits); }
  void set(int64_t g, int64_t r, int64_t c, uint32_t v) { put(buf.data(), value_index(g, r, c), bits, v); }
};

Nd make_nd(int bits, int64_t groups, int64_t rows, int64_t cols, Src kind, uint8_t fill) {
  Nd nd{.bits = bits, .groups = groups, .rows = rows, .cols = cols, .buf = {}, .view = {}};
  const int64_t cs = cols / values_per_unit(bits);  // storage units per row
  const int64_t g = std::max<int64_t>(groups, 1);
  int64_t rs = cs, ks = 1, gs = rows * cs, offset = 0;
  if (kind == Src::kColumnMajor) rs = 1, ks = rows, gs = rows * cs;
  if (kind == Src::kPaddedRows) rs = cs + 7, gs = rows * rs + 5, offset = 3;
  nd.buf.assign(size_t((offset + g * gs + 8) * unit_bytes(bits)), fill);
  const DType dt = dtype_of(bits);
  nd.view = groups ? make_view(nd.buf.data(), dt, {groups, rows, cs}, {gs, rs, ks}, offset)
                   : make_view(nd.buf.data(), dt, {rows, cs}, {rs, ks}, offset);
  return nd;
}

std::vector<Mat> fill_nd(Nd& nd, uint32_t seed) {
  std::vector<Mat> mats;
  for (int64_t g = 0; g < std::max<int64_t>(nd.groups, 1); ++g) {
    mats.push_back(random_mat(nd.rows, nd.cols, nd.bits, seed + uint32_t(g)));
    for (int64_t r = 0; r < nd.rows; ++r)
      for (int64_t c = 0; c < nd.cols; ++c) nd.set(g, r, c, mats.back()(r, c));
  }
  return mats;
}

// The fractal tensor the API expects: [.., blocks, align(rows', 16), 32 bytes in storage units].
struct Frac {
  std::vector<uint8_t> buf;
  TensorView view;
};
Frac make_frac(Fractal f, int bits, int64_t groups, int64_t rows, int64_t cols, uint8_t fill = kGarbage) {
  const bool nz = f == Fractal::kNz;
  const int64_t blocks = cdiv(nz ? cols : rows, c0_of(bits)), rp = up16(nz ? rows : cols);
  const int64_t units = 32 / unit_bytes(bits);
  const int64_t per_group = blocks * rp * units;
  Frac fr;
  fr.buf.assign(size_t(std::max<int64_t>(groups, 1) * per_group * unit_bytes(bits)), fill);
  const DType dt = dtype_of(bits);
  fr.view = groups ? make_view(fr.buf.data(), dt, {groups, blocks, rp, units}, {per_group, rp * units, units, 1})
                   : make_view(fr.buf.data(), dt, {blocks, rp, units}, {rp * units, units, 1});
  return fr;
}

std::string describe(Fractal f, int bits, int64_t groups, int64_t rows, int64_t cols, Src kind) {
  const char* k = kind == Src::kContiguous ? "contiguous" : kind == Src::kColumnMajor ? "column-major" : "padded-rows";
  return std::string(f == Fractal::kNz ? "Nz" : "Zn") + " bits=" + std::to_string(bits) + " G=" + std::to_string(groups) +
         " " + std::to_string(rows) + "x" + std::to_string(cols) + " (values) " + k;
}

// Forward transform vs reference, then the inverse into a fresh ND tensor of the same kind.
void check_case(Fractal f, int bits, int64_t groups, int64_t rows, int64_t cols_units, Src kind) {
  const int64_t cols = cols_units * values_per_unit(bits);
  SCOPED_TRACE(describe(f, bits, groups, rows, cols, kind));
  Nd src = make_nd(bits, groups, rows, cols, kind, 0xCD);
  const auto mats = fill_nd(src, uint32_t(rows * 131 + cols * 7 + bits));
  Frac dst = make_frac(f, bits, groups, rows, cols);
  dga::to_fractal(f, src.view, dst.view, bits);

  std::vector<uint8_t> want;
  for (const Mat& m : mats) {
    auto one = ref_fractal(m, f, bits);
    want.insert(want.end(), one.begin(), one.end());
  }
  ASSERT_EQ(dst.buf.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(int(dst.buf[i]), int(want[i])) << "fractal byte " << i << " of " << want.size();

  // Inverse (row-major kinds only: the API's ND output needs a unit last stride).
  const Src back_kind = kind == Src::kColumnMajor ? Src::kContiguous : kind;
  Nd back = make_nd(bits, groups, rows, cols, back_kind, kNdGarbage);
  dga::from_fractal(f, dst.view, back.view, bits);
  std::vector<bool> is_element(back.buf.size() * 2, false);  // per nibble
  for (int64_t g = 0; g < std::max<int64_t>(groups, 1); ++g)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        ASSERT_EQ(back.at(g, r, c), mats[size_t(g)](r, c)) << "round trip at g=" << g << " r=" << r << " c=" << c;
        const int64_t vi = back.value_index(g, r, c), nib = bits / 4;
        for (int64_t k = 0; k < nib; ++k) is_element[size_t(vi * nib + k)] = true;
      }
  for (size_t b = 0; b < back.buf.size(); ++b)
    if (!is_element[2 * b] && !is_element[2 * b + 1]) {
      ASSERT_EQ(int(back.buf[b]), int(kNdGarbage)) << "from_fractal wrote byte " << b << " outside the ND view";
    }
}

const std::pair<int64_t, int64_t> kShapes[] = {{1, 1},   {15, 17}, {16, 16},  {33, 65}, {100, 300},
                                               {17, 33}, {31, 63}, {1, 129}, {129, 1}, {48, 96}, {64, 40}};

// ---- the tensor API ------------------------------------------------------------------------------

TEST(LayoutApi, ContiguousSources) {
  for (Fractal f : {Fractal::kNz, Fractal::kZn})
    for (int bits : {16, 8, 4})
      for (auto [r, c] : kShapes) check_case(f, bits, 0, r, c, Src::kContiguous);
}

TEST(LayoutApi, ColumnMajorSources) {
  for (Fractal f : {Fractal::kNz, Fractal::kZn})
    for (int bits : {16, 8})  // packed 4-bit needs a contiguous last dimension (see LayoutErrors)
      for (auto [r, c] : kShapes) check_case(f, bits, 0, r, c, Src::kColumnMajor);
}

TEST(LayoutApi, PaddedRowStridesAndOffset) {
  for (Fractal f : {Fractal::kNz, Fractal::kZn})
    for (int bits : {16, 8, 4})
      for (auto [r, c] : kShapes) check_case(f, bits, 0, r, c, Src::kPaddedRows);
}

TEST(LayoutApi, GroupedTensors) {
  for (Fractal f : {Fractal::kNz, Fractal::kZn})
    for (int bits : {16, 8, 4})
      for (Src kind : {Src::kContiguous, Src::kPaddedRows, Src::kColumnMajor}) {
        if (bits == 4 && kind == Src::kColumnMajor) continue;
        check_case(f, bits, 3, 33, 65, kind);
        check_case(f, bits, 2, 1, 1, kind);
        check_case(f, bits, 1, 16, 16, kind);
        check_case(f, bits, 4, 15, 17, kind);
      }
}

TEST(LayoutApi, TransposedViewOfRowMajorStorageMatchesReference) {
  // dga::core::transposed of a contiguous [C, R] tensor is a column-major [R, C] source.
  for (Fractal f : {Fractal::kNz, Fractal::kZn}) {
    const int64_t R = 37, C = 70;
    const Mat x = random_mat(R, C, 16, 5);
    std::vector<uint16_t> storage(size_t(R * C));
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) storage[size_t(c * R + r)] = uint16_t(x(r, c));
    const TensorView src = dga::core::transposed(make_view(storage.data(), DType::kBF16, {C, R}, {R, 1}));
    Frac dst = make_frac(f, 16, 0, R, C);
    dga::to_fractal(f, src, dst.view, 16);
    const auto want = ref_fractal(x, f, 16);
    ASSERT_EQ(dst.buf, want);
  }
}

// The same 16-bit matrix as Nz is the same bytes whichever 2-byte dtype carries it.
TEST(LayoutApi, DtypeOnlyMattersThroughItemsize) {
  const int64_t R = 20, C = 40;
  const Mat x = random_mat(R, C, 16, 11);
  std::vector<uint16_t> s(size_t(R * C));
  for (int64_t i = 0; i < R * C; ++i) s[size_t(i)] = uint16_t(x.v[size_t(i)]);
  for (DType dt : {DType::kBF16, DType::kFP16, DType::kInt16}) {
    Frac dst = make_frac(Fractal::kNz, 16, 0, R, C);
    dst.view.dtype = dt;
    dga::to_fractal(Fractal::kNz, make_view(s.data(), dt, {R, C}, {C, 1}), dst.view, 16);
    EXPECT_EQ(dst.buf, ref_fractal(x, Fractal::kNz, 16)) << dga::core::name(dt);
  }
}

// Whatever from_fractal does with a column-major ND destination, it must not produce wrong data:
// either a clear error naming the output or the exact matrix.
TEST(LayoutApi, FromFractalIntoColumnMajorIsCorrectOrRejected) {
  const int64_t R = 33, C = 65;
  Nd src = make_nd(16, 0, R, C, Src::kContiguous, 0);
  const auto mats = fill_nd(src, 3);
  Frac fr = make_frac(Fractal::kNz, 16, 0, R, C);
  dga::to_fractal(Fractal::kNz, src.view, fr.view, 16);
  Nd back = make_nd(16, 0, R, C, Src::kColumnMajor, kNdGarbage);
  try {
    dga::from_fractal(Fractal::kNz, fr.view, back.view, 16);
  } catch (const Error& e) {
    EXPECT_EQ(e.arg(), kOut);
    return;
  }
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) ASSERT_EQ(back.at(0, r, c), mats[0](r, c));
}

// ---- the low-level layout functions ------------------------------------------------------------

TEST(LayoutGeometry, FitOffsetAndZn) {
  namespace L = dga::layout;
  EXPECT_EQ(L::c0_values(16), 16);
  EXPECT_EQ(L::c0_values(8), 32);
  EXPECT_EQ(L::c0_values(4), 64);
  for (int bits : {16, 8, 4})
    for (auto [r, c] : kShapes) {
      const auto g = L::NzGeometry::fit(r, c, bits);
      const int64_t c0 = c0_of(bits);
      EXPECT_EQ(g.rows_pad, up16(r));
      EXPECT_EQ(g.cols_pad, cdiv(c, c0) * c0);
      EXPECT_EQ(g.bytes(), up16(r) * cdiv(c, c0) * c0 * bits / 8);
      for (int64_t i = 0; i < r; i += 7)
        for (int64_t j = 0; j < c; j += 5) EXPECT_EQ(g.offset(i, j), (j / c0) * up16(r) * c0 + i * c0 + j % c0);
      const auto z = L::zn_geometry(r, c, bits);
      EXPECT_EQ(z.rows_pad, up16(c));
      EXPECT_EQ(z.cols_pad, cdiv(r, c0) * c0);
    }
}

// Arbitrary strided MatrixRefs (including column-major packed 4-bit, which the tensor API cannot
// express) through nd_to_nz / nd_to_zn and back through nz_to_nd / zn_to_nd.
TEST(LayoutTransform, StridedMatrixRefsAllBits) {
  namespace L = dga::layout;
  for (int bits : {16, 8, 4})
    for (auto [R, C] : kShapes)
      for (int kind = 0; kind < 3; ++kind) {  // 0 row-major, 1 column-major, 2 both strides padded
        SCOPED_TRACE("bits=" + std::to_string(bits) + " " + std::to_string(R) + "x" + std::to_string(C) +
                     " kind=" + std::to_string(kind));
        const Mat x = random_mat(R, C, bits, uint32_t(R * 1000 + C + bits + kind));
        const int64_t origin = 5;
        int64_t rs = C, cs = 1;
        if (kind == 1) rs = 1, cs = R;
        if (kind == 2) rs = 3 * C + 2, cs = 3;
        const int64_t n_values = origin + (R - 1) * rs + (C - 1) * cs + 1;
        std::vector<uint8_t> mem(size_t((n_values * bits + 7) / 8 + 4), 0xCD);
        for (int64_t r = 0; r < R; ++r)
          for (int64_t c = 0; c < C; ++c) put(mem.data(), origin + r * rs + c * cs, bits, x(r, c));
        const L::MatrixRef src{.base = mem.data(), .origin = origin, .rows = R, .cols = C, .row_stride = rs,
                               .col_stride = cs, .bits = bits};

        for (Fractal f : {Fractal::kNz, Fractal::kZn}) {
          const bool nz = f == Fractal::kNz;
          const auto g = nz ? L::NzGeometry::fit(R, C, bits) : L::zn_geometry(R, C, bits);
          std::vector<uint8_t> fr(size_t(g.bytes()), kGarbage);
          if (nz) L::nd_to_nz(src, fr.data(), g);
          else L::nd_to_zn(src, fr.data(), g);
          ASSERT_EQ(fr, ref_fractal(x, f, bits)) << (nz ? "Nz" : "Zn");

          std::vector<uint8_t> back(mem.size(), kNdGarbage);
          const L::MutMatrixRef dst{.base = back.data(), .origin = origin, .rows = R, .cols = C, .row_stride = rs,
                                    .col_stride = cs, .bits = bits};
          if (nz) L::nz_to_nd(fr.data(), g, dst);
          else L::zn_to_nd(fr.data(), g, dst);
          for (int64_t r = 0; r < R; ++r)
            for (int64_t c = 0; c < C; ++c)
              ASSERT_EQ(get(back.data(), origin + r * rs + c * cs, bits), x(r, c)) << (nz ? "Nz" : "Zn") << " r=" << r
                                                                                   << " c=" << c;
          // Values that are not matrix elements keep the garbage pattern.
          std::vector<bool> used(size_t(back.size() * 8 / bits), false);
          for (int64_t r = 0; r < R; ++r)
            for (int64_t c = 0; c < C; ++c) used[size_t(origin + r * rs + c * cs)] = true;
          const uint32_t garbage = bits == 16 ? 0xEEEEu : bits == 8 ? 0xEEu : 0xEu;
          for (size_t i = 0; i < used.size(); ++i)
            if (!used[i]) {
              ASSERT_EQ(get(back.data(), int64_t(i), bits), garbage) << "value " << i << " written outside the view";
            }
        }
      }
}

// ---- argument validation ----------------------------------------------------------------------

void expect_error(const std::function<void()>& fn, ErrorKind kind, const std::string& arg, const char* what) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(int(e.kind()), int(kind)) << what << ": " << e.what();
    EXPECT_EQ(e.arg(), arg) << what << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(arg, 0), 0u) << what << ": message should start with the argument name";
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": expected core::Error, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << what << ": no error raised";
}

bool untouched(const std::vector<uint8_t>& b, uint8_t fill) {
  for (uint8_t x : b)
    if (x != fill) return false;
  return true;
}

TEST(LayoutErrors, ToFractalBadArguments) {
  const int64_t R = 33, C = 70;  // Nz [5, 48, 16] and Zn [3, 80, 16] differ
  Nd src = make_nd(16, 0, R, C, Src::kContiguous, 0);
  fill_nd(src, 1);
  auto to = [&](const TensorView& s, const TensorView& d, int bits) {
    return [=] { dga::to_fractal(Fractal::kNz, s, d, bits); };
  };

  for (int bad_bits : {5, 0, 32, 12, -16}) {
    Frac dst = make_frac(Fractal::kNz, 16, 0, R, C);
    expect_error(to(src.view, dst.view, bad_bits), ErrorKind::kValue, "value_bits", "value_bits");
    EXPECT_TRUE(untouched(dst.buf, kGarbage));
  }
  {  // Wrong dst shapes: extra rows, Zn's shape for an Nz transform, a missing group dimension.
    Frac dst = make_frac(Fractal::kNz, 16, 0, R + 16, C);
    expect_error(to(src.view, dst.view, 16), ErrorKind::kValue, kOut, "dst rows");
    EXPECT_TRUE(untouched(dst.buf, kGarbage));
    Frac zn = make_frac(Fractal::kZn, 16, 0, R, C);
    expect_error(to(src.view, zn.view, 16), ErrorKind::kValue, kOut, "Zn-shaped dst for Nz");
    Nd src3 = make_nd(16, 2, R, C, Src::kContiguous, 0);
    Frac dst2 = make_frac(Fractal::kNz, 16, 0, R, C);
    expect_error(to(src3.view, dst2.view, 16), ErrorKind::kValue, kOut, "2-D dst for 3-D src");
    Frac dst3 = make_frac(Fractal::kNz, 16, 3, R, C);
    expect_error(to(src3.view, dst3.view, 16), ErrorKind::kValue, kOut, "group count");
  }
  {  // Right shape but not contiguous.
    const int64_t blocks = cdiv(C, 16), rp = up16(R);
    std::vector<uint8_t> big(size_t(blocks * rp * 32 * 2), kGarbage);
    const TensorView d = make_view(big.data(), DType::kBF16, {blocks, rp, 16}, {rp * 32, 32, 1});
    expect_error(to(src.view, d, 16), ErrorKind::kValue, kOut, "non-contiguous dst");
    EXPECT_TRUE(untouched(big, kGarbage));
  }
  {  // Element sizes that cannot carry the values.
    Frac dst = make_frac(Fractal::kNz, 16, 0, R, C);
    TensorView s32 = src.view;
    s32.dtype = DType::kFP32;
    expect_error(to(s32, dst.view, 16), ErrorKind::kType, kIn, "fp32 src for 16-bit values");
    expect_error(to(src.view, dst.view, 8), ErrorKind::kType, kIn, "bf16 src for 8-bit values");
    expect_error(to(src.view, dst.view, 4), ErrorKind::kType, kIn, "bf16 src for 4-bit values");
    TensorView d8 = dst.view;
    d8.dtype = DType::kUInt8;
    expect_error(to(src.view, d8, 16), ErrorKind::kType, kOut, "1-byte dst for a bf16 src");
    EXPECT_TRUE(untouched(dst.buf, kGarbage));
  }
  {  // Rank and packed 4-bit stride.
    Frac dst = make_frac(Fractal::kNz, 16, 0, R, C);
    TensorView s1 = src.view;
    s1.ndim = 1;
    s1.shape[0] = R * C;
    s1.strides[0] = 1;
    expect_error(to(s1, dst.view, 16), ErrorKind::kValue, kIn, "1-D src");
    Nd fp4 = make_nd(4, 0, R, C, Src::kContiguous, 0);
    fp4.view.strides[0] = 1;
    fp4.view.strides[1] = R;  // column-major bytes: the packed pairs would not be contiguous
    Frac d4 = make_frac(Fractal::kNz, 4, 0, R, C);
    expect_error(to(fp4.view, d4.view, 4), ErrorKind::kValue, kIn, "4-bit src with non-unit last stride");
    EXPECT_TRUE(untouched(d4.buf, kGarbage));
  }
  {  // Output aliasing the input.
    std::vector<uint16_t> mem(size_t(4096), 0);
    const TensorView s = make_view(mem.data(), DType::kBF16, {16, 16}, {16, 1});
    const TensorView d = make_view(mem.data(), DType::kBF16, {1, 16, 16}, {256, 16, 1}, 128);
    expect_error(to(s, d, 16), ErrorKind::kValue, kOut, "dst overlapping src");
  }
}

TEST(LayoutErrors, FromFractalBadArguments) {
  const int64_t R = 20, C = 70;
  Nd src = make_nd(8, 0, R, C, Src::kContiguous, 0);
  fill_nd(src, 2);
  Frac fr = make_frac(Fractal::kZn, 8, 0, R, C);
  dga::to_fractal(Fractal::kZn, src.view, fr.view, 8);
  auto from = [&](const TensorView& s, const TensorView& d, int bits) {
    return [=] { dga::from_fractal(Fractal::kZn, s, d, bits); };
  };
  Nd out = make_nd(8, 0, R, C, Src::kContiguous, kNdGarbage);
  expect_error(from(fr.view, out.view, 5), ErrorKind::kValue, "value_bits", "value_bits=5");
  Frac nz_shaped = make_frac(Fractal::kNz, 8, 0, R, C);
  expect_error(from(nz_shaped.view, out.view, 8), ErrorKind::kValue, kIn, "Nz-shaped src for Zn");
  TensorView o16 = out.view;
  o16.dtype = DType::kBF16;
  o16.shape[1] = C / 2;
  expect_error(from(fr.view, o16, 8), ErrorKind::kType, kOut, "2-byte dst for 8-bit values");
  TensorView s16 = fr.view;
  s16.dtype = DType::kInt16;
  expect_error(from(s16, out.view, 8), ErrorKind::kType, kIn, "2-byte fractal src for 8-bit values");
  {  // Right shape, padded rows: not contiguous.
    const int64_t blocks = fr.view.shape[0], rp = fr.view.shape[1];
    std::vector<uint8_t> big(size_t(blocks * rp * 64), 1);
    const TensorView strided = make_view(big.data(), DType::kFP8E4M3, {blocks, rp, 32}, {rp * 64, 64, 1});
    expect_error(from(strided, out.view, 8), ErrorKind::kValue, kIn, "non-contiguous fractal src");
  }
  {  // 3-D ND dst needs a 4-D fractal src.
    Nd out3 = make_nd(8, 2, R, C, Src::kContiguous, kNdGarbage);
    expect_error(from(fr.view, out3.view, 8), ErrorKind::kValue, kIn, "3-D fractal src for a 3-D dst");
    EXPECT_TRUE(untouched(out3.buf, kNdGarbage));
  }
  EXPECT_TRUE(untouched(out.buf, kNdGarbage));
}

}  // namespace

TEST(ScaleRef, Ue8m0CodesDecodeToExactPowersOfTwo) {
  for (int e = 0; e < 256; ++e) {
    const float v = dga::layout::ScaleRef::exp2_code(uint8_t(e));
    if (e == 255) {
      EXPECT_TRUE(std::isnan(v));
    } else {
      EXPECT_EQ(v, std::ldexp(1.0f, e - 127)) << e;
    }
  }
}

TEST(MatrixRef, GatheredRowsAndColumnsFollowTheirTableThroughBlocksAndTransposes) {
  // A 4 x 3 matrix of 16-bit values v(r, c) = 10 r + c, read through row and column tables.
  std::vector<uint16_t> v(12);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) v[size_t(r * 3 + c)] = uint16_t(10 * r + c);
  const int32_t rows[5] = {3, -1, 0, 2, 3};
  dga::layout::MatrixRef g{.base = v.data(), .origin = 0, .rows = 5, .cols = 3, .row_stride = 3, .col_stride = 1,
                           .bits = 16, .gather = rows, .gather_dim = 0};
  EXPECT_EQ(g.get(0, 1), 31u);
  EXPECT_TRUE(g.zero(1, 2));
  EXPECT_EQ(g.get(1, 2), 0u);
  const auto blk = g.block(2, 1, 3, 2);  // rows 2.. of the table, columns 1..
  EXPECT_EQ(blk.get(0, 0), 1u);
  EXPECT_EQ(blk.get(1, 1), 22u);
  EXPECT_EQ(blk.get(2, 0), 31u);
  const auto t = blk.transposed();  // the table now indexes the columns
  EXPECT_EQ(t.get(1, 1), 22u);
  EXPECT_EQ(t.get(0, 2), 31u);
  const int32_t cols[2] = {2, -1};
  const dga::layout::MatrixRef gc{.base = v.data(), .origin = 0, .rows = 4, .cols = 2, .row_stride = 3, .col_stride = 1,
                                  .bits = 16, .gather = cols, .gather_dim = 1};
  EXPECT_EQ(gc.block(1, 0, 3, 2).get(2, 0), 32u);
  EXPECT_TRUE(gc.block(1, 1, 3, 1).zero(0, 0));
}
