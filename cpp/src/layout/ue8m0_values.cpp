// UE8M0 value checks of scale factors (layout/ue8m0_values.hpp).
#include "deepgemm_ascend/layout/ue8m0_values.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/core/macros.hpp"

namespace deepgemm_ascend::layout {

namespace {

using core::DType;
using core::ErrorKind;

constexpr uint8_t kNaNExponent = 0xFF;
constexpr uint32_t kSignBit = 0x80000000u, kMantissaBits = 0x007FFFFFu;
constexpr int kExponentShift = 23;

bool fp32_is_ue8m0(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, sizeof bits);
  const uint32_t exponent = (bits >> kExponentShift) & kNaNExponent;
  return !(bits & kSignBit) && !(bits & kMantissaBits) && exponent != kNaNExponent;
}

bool element_ok(const uint8_t* e, DType dtype, int64_t item) {
  if (dtype == DType::kFP32) return fp32_is_ue8m0(e);
  for (int64_t b = 0; b < item; ++b)
    if (e[b] == kNaNExponent) return false;
  return true;
}

// Bad fp32 values / NaN bytes among n contiguous ones: branch-free loops with 32-bit counts, in vector clones.
DGA_VECTOR_CLONES uint32_t bad_fp32(const uint8_t* __restrict p, int64_t n) {
  uint32_t bad = 0;
  for (int64_t c = 0; c < n; ++c) bad += !fp32_is_ue8m0(p + c * int64_t(sizeof(float)));
  return bad;
}
DGA_VECTOR_CLONES uint32_t nan_bytes(const uint8_t* __restrict p, int64_t n) {
  uint32_t bad = 0;
  for (int64_t c = 0; c < n; ++c) bad += p[c] == kNaNExponent;
  return bad;
}

// Bad elements of one row (`cols` elements `col_stride` bytes apart, `item` bytes each): one pass over
// contiguous rows (what the kernels take; UE8M0 packed in int16 / int32 read as their bytes), element by
// element otherwise.
int64_t count_bad(const uint8_t* row, int64_t cols, int64_t col_stride, DType dtype, int64_t item) {
  if (col_stride == item && dtype == DType::kFP32) return bad_fp32(row, cols);
  if (col_stride == item && nan_bytes(row, cols * item) == 0) return 0;  // else counted per element below
  int64_t bad = 0;
  for (int64_t c = 0; c < cols; ++c) bad += !element_ok(row + c * col_stride, dtype, item);
  return bad;
}

// Bad values of one row: their count, and the first one's column.
struct RowScan {
  int64_t bad = 0, first_col = -1;
};

RowScan scan_row(const uint8_t* row, int64_t cols, int64_t col_stride, DType dtype) {
  const int64_t item = core::itemsize(dtype);
  RowScan s{count_bad(row, cols, col_stride, dtype, item)};
  for (int64_t c = 0; s.bad && s.first_col < 0; ++c)
    if (!element_ok(row + c * col_stride, dtype, item)) s.first_col = c;
  return s;
}

std::string value_text(const uint8_t* e, DType dtype) {
  std::ostringstream os;
  if (dtype == DType::kFP32) {
    float f;
    std::memcpy(&f, e, sizeof f);
    os << f;
  } else {
    os << "exponent byte 255 (NaN)";
  }
  return os.str();
}

}  // namespace

void require_ue8m0_values(const core::TensorView& sf, const char* arg, const ScaleRows* rows) {
  DGA_REQUIRE(sf.dtype == DType::kFP32 || sf.dtype == DType::kUInt8 || sf.dtype == DType::kUE8M0 ||
                  sf.dtype == DType::kInt16 || sf.dtype == DType::kInt32,
              kType, arg, "expected float32 powers of two, uint8 / float8_e8m0fnu exponents or UE8M0 packed in ",
              "int16 / int32, got ", core::name(sf.dtype));
  DGA_REQUIRE(sf.ndim >= 1 && sf.ndim <= 3, kValue, arg, "expected a 1-D to 3-D tensor, got ", sf.ndim, "-D");
  DGA_REQUIRE(sf.device.kind == core::DeviceKind::kHost, kValue, arg, "UE8M0 values are checked in host memory");
  if (sf.numel() == 0) return;
  const int64_t item = core::itemsize(sf.dtype);
  const int64_t groups = sf.ndim == 3 ? sf.shape[0] : 1, nrows = sf.ndim >= 2 ? sf.size(-2) : 1;
  const int64_t cols = sf.size(-1), group_stride = sf.ndim == 3 ? sf.strides[0] : 0;
  const int64_t row_stride = sf.ndim >= 2 ? sf.stride(-2) : 0, col_stride = sf.stride(-1);
  DGA_REQUIRE(!rows || rows->groups.size() == 1 || int64_t(rows->groups.size()) == groups, kValue, arg,
              "row ranges for ", rows ? rows->groups.size() : 0, " groups, the scales have ", groups);
  const ScaleRows all{{{{0, nrows}}}};
  const ScaleRows& checked = rows ? *rows : all;
  for (const RowRanges& ranges : checked.groups)
    for (const auto& [begin, end] : ranges)
      DGA_REQUIRE(0 <= begin && begin <= end && end <= nrows, kValue, arg, "row range [", begin, ", ", end,
                  ") outside the scales' ", nrows, " rows");
  const auto* base = static_cast<const uint8_t*>(sf.ptr());
  // Rows back to back (the usual layout): each group's row ranges are counted as one run, and scanned row by row
  // only to report what is wrong.
  if (col_stride == 1 && row_stride == cols) {
    int64_t runs_bad = 0;
    for (int64_t g = 0; g < groups; ++g)
      for (const auto& [begin, end] : checked.of(g))
        runs_bad += count_bad(base + (g * group_stride + begin * row_stride) * item, (end - begin) * cols, item,
                              sf.dtype, item);
    if (runs_bad == 0) return;
  }
  int64_t bad = 0, first[3] = {};
  for (int64_t g = 0; g < groups; ++g)
    for (const auto& [begin, end] : checked.of(g))
      for (int64_t r = begin; r < end; ++r) {
        const RowScan s = scan_row(base + (g * group_stride + r * row_stride) * item, cols, col_stride * item, sf.dtype);
        if (s.bad && bad == 0) first[0] = g, first[1] = r, first[2] = s.first_col;
        bad += s.bad;
      }
  if (bad == 0) return;
  std::ostringstream where;
  for (int d = 3 - sf.ndim; d < 3; ++d) where << (d > 3 - sf.ndim ? ", " : "") << first[d];
  const uint8_t* e = base + (first[0] * group_stride + first[1] * row_stride + first[2] * col_stride) * item;
  if (sf.dtype == DType::kFP32)
    core::fail(ErrorKind::kValue, arg, bad, " of ", sf.numel(), " values are not a power of two (first: ", arg, "[",
               where.str(), "] = ", value_text(e, sf.dtype), "); UE8M0 needs exact positive powers of two (or 0) - ",
               "round with ceil_to_ue8m0, or keep FP32 scales with disable_ue8m0_cast=True");
  core::fail(ErrorKind::kValue, arg, bad, " of ", sf.numel(), " elements hold ", value_text(e, sf.dtype),
             ", which is not a valid scale (first: ", arg, "[", where.str(), "])");
}

RowRanges psum_rows(const std::vector<int64_t>& ends, int64_t rows, int64_t alignment, const char* arg) {
  RowRanges out;
  int64_t prev = 0;
  for (size_t g = 0; g < ends.size(); ++g) {
    const int64_t end = ends[g], start = (prev + alignment - 1) / alignment * alignment;
    DGA_REQUIRE(end >= prev && end <= rows, kValue, arg, "end offset ", end, " of group ", g,
                " is out of order or beyond ", rows, " rows");
    if (end > start) out.emplace_back(start, end);
    prev = end;
  }
  return out;
}

RowRanges id_rows(const int32_t* ids, int64_t rows) {
  RowRanges out;
  for (int64_t r = 0; r < rows;) {
    if (ids[r] < 0) {
      ++r;
      continue;
    }
    const int64_t begin = r;
    while (r < rows && ids[r] >= 0) ++r;
    out.emplace_back(begin, r);
  }
  return out;
}

ScaleRows masked_rows(const int32_t* masked_m, int64_t groups, int64_t rows) {
  ScaleRows out;
  out.groups.resize(size_t(groups));
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r = std::clamp<int64_t>(masked_m[g], 0, rows);
    if (r > 0) out.groups[size_t(g)].emplace_back(0, r);
  }
  return out;
}

}  // namespace deepgemm_ascend::layout
