// MoE M-grouped GEMM entry points (contiguous and masked): validate, plan the problems (every group, or
// every segment of a group's rows, one problem of the GEMM kernel), dispatch to the host kernel or the NPU.
#include <algorithm>
#include <atomic>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "gemm_common.hpp"
#include "grouped_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using api::Formats;
using api::group_view;
using api::read_int32;
using core::DType;

namespace {

constexpr int64_t kDefaultMkAlignment = 128;
using core::kBf16Bits;
using core::kBf16Bytes;
std::atomic<int64_t> g_mk_alignment{kDefaultMkAlignment};

struct Segment {
  int64_t group, start, rows;
};

std::vector<Segment> contiguous_segments(const std::vector<int64_t>& ids, int64_t groups, int64_t align) {
  std::vector<Segment> segs;
  for (int64_t r = 0; r < int64_t(ids.size());) {
    const int64_t g = ids[size_t(r)];
    DGA_REQUIRE(g >= -1 && g < groups, kValue, "grouped_layout", "row ", r, " has group id ", g,
                ", expected -1 or [0, ", groups, ")");
    int64_t e = r + 1;
    while (e < int64_t(ids.size()) && ids[size_t(e)] == g) ++e;
    if (g >= 0) {
      DGA_REQUIRE(r % align == 0, kValue, "grouped_layout", "group ", g, " starts at row ", r,
                  ", which is not a multiple of the alignment ", align);
      segs.push_back({.group = g, .start = r, .rows = e - r});
    }
    r = e;
  }
  return segs;
}

std::vector<Segment> psum_segments(const std::vector<int64_t>& ends, int64_t m, int64_t align) {
  std::vector<Segment> segs;
  int64_t prev = 0;
  for (int64_t g = 0; g < int64_t(ends.size()); ++g) {
    const int64_t start = layout::align_up(prev, align), end = ends[size_t(g)];
    DGA_REQUIRE(end >= prev && end <= m && (end == start || end > start), kValue, "grouped_layout", "end offset ", end,
                " of group ", g, " is out of order or beyond M = ", m);
    if (end > start) segs.push_back({.group = g, .start = start, .rows = end - start});
    prev = end;
  }
  return segs;
}

// The legacy fused form's row gather: int32 [M] in host memory, each entry -1 (a row of zeros) or a row of A.
void check_a_rows(const TensorView& rows, bool npu, bool scaled, bool psum, int64_t a_rows) {
  DGA_REQUIRE(!npu, kNotImplemented, "m_row_indices", "the gathered (a_fused) legacy GEMM has no NPU kernel yet");
  DGA_REQUIRE(!scaled && !psum, kValue, "m_row_indices", "only the BF16 per-row-id layout gathers A's rows");
  const auto idx = read_int32(rows, "m_row_indices", rows.ndim == 1 ? rows.shape[0] : -1);
  for (size_t r = 0; r < idx.size(); ++r)
    DGA_REQUIRE(idx[r] >= -1 && idx[r] < a_rows, kValue, "m_row_indices", "row ", r, " gathers row ", idx[r],
                " of a, which has ", a_rows, " rows (expected -1 or [0, ", a_rows, "))");
}

void zero_rows(const TensorView& d, int64_t begin, int64_t end) {
  const auto dm = api::mut_matrix(d);
  for (int64_t r = begin; r < end; ++r)
    for (int64_t c = 0; c < dm.cols; ++c) dm.set(r, c, 0u);
}

// Values from one group of `t` to the next (packed FP4: two per byte).
int64_t group_values(const TensorView& t, int bits) { return t.strides[0] * core::itemsize(t.dtype) * 8 / bits; }

// ---- M-grouped contiguous ----------------------------------------------------------------------

struct ContiguousCall {
  const std::string& lay;
  const TensorView &a, *sfa, &b, *sfb, &d, &grouped_layout;
  bool psum, zero_padding;
  ScaleRecipe ra, rb;
  const TensorView* a_rows;
};

// The validated call: G groups of N x K weights, M rows of A (gathered by a_rows when given).
struct ContiguousShape {
  bool npu, tb;
  int64_t groups, m, n, k, align;
  Formats f;
  layout::ScaleRef sa;  // A's scales, when scaled
};

ContiguousShape validate_operands(const ContiguousCall& c) {
  DGA_REQUIRE(c.lay == "nt" || c.lay == "nn", kValue, "layout", "expected nt or nn, got '", c.lay, "'");
  api::require_same_device({{"a", &c.a},
                            {"sfa", c.sfa},
                            {"b", &c.b},
                            {"sfb", c.sfb},
                            {"d", &c.d},
                            {"grouped_layout", &c.grouped_layout},
                            {"m_row_indices", c.a_rows}});
  const bool npu = api::on_npu_target(c.a);
  if (!npu) api::require_host(c.a, "a");
  api::require_rank(c.a, "a", 2);
  api::require_rank(c.b, "b", 3);
  const bool tb = c.lay[1] == 'n';
  const Formats f = api::formats(c.a, c.sfa, group_view(c.b, 0), c.sfb);
  const ContiguousShape sh{.npu = npu,
                           .tb = tb,
                           .groups = c.b.shape[0],
                           .m = c.a_rows ? c.a_rows->shape[0] : f.a.rows,
                           .n = tb ? f.b.cols : f.b.rows,
                           .k = f.a.cols,
                           .align = get_mk_alignment_for_contiguous_layout(),
                           .f = f,
                           .sa = {}};
  const int64_t kb = tb ? f.b.rows : f.b.cols;
  if (c.a_rows) check_a_rows(*c.a_rows, npu, f.scaled, c.psum, f.a.rows);
  DGA_REQUIRE(kb == sh.k, kValue, "b", "K mismatch: a ", c.a.shape_str(), " has K=", sh.k, " but b ", c.b.shape_str(),
              " has K=", kb);
  DGA_REQUIRE(sh.groups > 0 && sh.n > 0 && sh.k > 0, kValue, "b", "needs G, N and K > 0, got shape ", c.b.shape_str());
  api::require_dtype(c.d, "d", {DType::kBF16});
  api::validate_output(c.d, nullptr, sh.m, sh.n,
                       {{"a", &c.a},
                        {"b", &c.b},
                        {"sfa", c.sfa},
                        {"sfb", c.sfb},
                        {"grouped_layout", &c.grouped_layout},
                        {"m_row_indices", c.a_rows}});
  return sh;
}

layout::ScaleRef sfb_of(const ContiguousCall& c, const ContiguousShape& sh, int64_t g) {
  return api::scales(group_view(*c.sfb, g), "sfb", sh.n, sh.k, c.rb);
}

ContiguousShape validate_contiguous(const ContiguousCall& c) {
  ContiguousShape sh = validate_operands(c);
  if (!sh.f.scaled) return sh;
  api::check_recipe(c.ra, "recipe_a");
  api::check_recipe(c.rb, "recipe_b");
  DGA_REQUIRE(c.ra.gran_mn == 1, kValue, "recipe_a", "M-grouped GEMMs need per-row A scales (gran_m 1)");
  sh.sa = api::scales(*c.sfa, "sfa", sh.m, sh.k, c.ra);
  api::require_rank(*c.sfb, "sfb", 3);
  DGA_REQUIRE(c.sfb->shape[0] == sh.groups, kValue, "sfb", "expected ", sh.groups, " groups, got ", c.sfb->shape_str());
  return sh;
}

// NPU target: the kernel reads grouped_layout (per-row ids, or psum end offsets) on the device.
void dispatch_npu_contiguous(const ContiguousCall& c, const ContiguousShape& sh) {
  DGA_REQUIRE(!(c.psum && c.zero_padding), kNotImplemented, "ensure_zero_padding",
              "zeroing the gap rows of a psum layout has no NPU kernel yet");
  api::require_dtype(c.grouped_layout, "grouped_layout", {DType::kInt32});
  const int64_t entries = c.psum ? sh.groups : sh.m;
  DGA_REQUIRE(c.grouped_layout.ndim == 1 && c.grouped_layout.shape[0] == entries && c.grouped_layout.is_contiguous(),
              kValue, "grouped_layout", "expected a contiguous int32 [", entries, "], got ",
              c.grouped_layout.shape_str());
  const int a_bits = tile::operand_bits(sh.f.a.fmt), b_bits = tile::operand_bits(sh.f.b.fmt);
  kernel::ContiguousProblems<kernel::HostRows> problems{.a = api::matrix(c.a, a_bits, false),
                                                        .b = api::matrix(group_view(c.b, 0), b_bits, sh.tb),
                                                        .e = api::epilogue(c.d, nullptr),
                                                        .b_group = group_values(c.b, b_bits),
                                                        .groups = sh.groups,
                                                        .align = sh.align,
                                                        .ids = {c.grouped_layout.as<const int32_t>()}};
  if (sh.f.scaled) {
    problems.scaling = {.enabled = true, .a = sh.sa, .b = sfb_of(c, sh, 0)};
    problems.sfb_group = c.sfb->strides[0] * core::itemsize(c.sfb->dtype);
  }
  api::npu_contiguous_gemm(problems, {.a = sh.f.a.fmt, .b = sh.f.b.fmt}, c.psum, c.grouped_layout, c.d);
}

// Host: the groups' row segments (read from grouped_layout and checked) and every group's B scales.
struct ContiguousPlan {
  std::vector<Segment> segs;
  std::vector<layout::ScaleRef> sb;
  std::vector<kernel::GemmProblem> problems;
  int64_t covered = 0;  // rows computed, padding rows included
  bool fold = false;
};

void validate_host_contiguous(const ContiguousCall& c, const ContiguousShape& sh, ContiguousPlan& p) {
  p.segs = c.psum ? psum_segments(read_int32(c.grouped_layout, "grouped_layout", sh.groups), sh.m, sh.align)
                  : contiguous_segments(read_int32(c.grouped_layout, "grouped_layout", sh.m), sh.groups, sh.align);
  if (sh.f.scaled)
    for (int64_t g = 0; g < sh.groups; ++g) p.sb.push_back(sfb_of(c, sh, g));
}

void plan_contiguous(const ContiguousCall& c, const ContiguousShape& sh, ContiguousPlan& p) {
  const int a_bits = tile::operand_bits(sh.f.a.fmt), b_bits = tile::operand_bits(sh.f.b.fmt);
  layout::MatrixRef am = api::matrix(c.a, a_bits, false);
  if (c.a_rows) am.gather = c.a_rows->as<const int32_t>(), am.gather_dim = 0, am.rows = sh.m;
  const block::EpilogueArgs epi = api::epilogue(c.d, nullptr);
  for (const Segment& seg : p.segs) {
    // Per-row ids: the padding rows (-1) up to the group's next aligned row are computed with the group too, as
    // upstream computes whole aligned blocks (the next group starts there: validated above).
    const int64_t rows =
        c.psum ? seg.rows : std::min(layout::align_up(seg.start + seg.rows, sh.align), sh.m) - seg.start;
    block::EpilogueArgs e = epi;
    e.d = epi.d.block(seg.start, 0, rows, sh.n);
    block::Scaling sc{};
    if (sh.f.scaled) sc = {.enabled = true, .a = sh.sa.shifted(seg.start), .b = p.sb[size_t(seg.group)]};
    p.problems.push_back({.a = am.block(seg.start, 0, rows, sh.k),
                          .b = api::matrix(group_view(c.b, seg.group), b_bits, sh.tb),
                          .epilogue = e,
                          .scaling = sc});
    p.covered += rows;
  }
  // Power-of-two scales fold into the L0 loads (as in fp8_fp4_gemm) when every segment's do; a segment decides
  // by the scales of its group's rows, never by its padding rows' (their output is undefined).
  p.fold = sh.f.scaled;
  for (size_t i = 0; sh.f.scaled && i < p.problems.size(); ++i) {
    kernel::GemmProblem valid = p.problems[i];
    valid.a.rows = p.segs[i].rows;
    p.fold &= p.problems[i].scaling.fold = api::scales_fold(valid);
  }
}

// With the psum layout and ensure_zero_padding: the gap rows between a group's end and the next aligned start.
void zero_gaps(const ContiguousCall& c, const ContiguousShape& sh, const std::vector<Segment>& segs) {
  for (size_t i = 0; i < segs.size(); ++i) {
    const int64_t end = segs[i].start + segs[i].rows;
    zero_rows(c.d, end, std::min(sh.m, i + 1 < segs.size() ? segs[i + 1].start : layout::align_up(end, sh.align)));
  }
}

void dispatch_host_contiguous(const ContiguousCall& c, const ContiguousShape& sh) {
  ContiguousPlan p;
  validate_host_contiguous(c, sh, p);
  if (sh.m == 0) return;
  plan_contiguous(c, sh, p);
  if (c.psum && c.zero_padding) zero_gaps(c, sh, p.segs);
  api::launch_grouped("m_grouped_gemm_contiguous", p.problems, sh.f,
                      {.avg_m = p.covered / std::max<int64_t>(1, int64_t(p.segs.size())),
                       .n = sh.n,
                       .k = sh.k,
                       .d_bytes = kBf16Bytes,
                       .acc = false,
                       .promote_k = p.fold ? 0 : std::min(c.ra.gran_k, c.rb.gran_k)});
}

// ---- M-grouped masked --------------------------------------------------------------------------

struct MaskedCall {
  const TensorView &a, *sfa, &b, *sfb, &d, &masked_m;
  int64_t expected_m;
  ScaleRecipe ra, rb;
};

// The validated call: G groups of at most M rows of K values against N x K weights.
struct MaskedShape {
  bool npu;
  int64_t groups, m_max, n, k;
  Formats f;
};

MaskedShape validate_masked_operands(const MaskedCall& c) {
  api::require_same_device(
      {{"a", &c.a}, {"sfa", c.sfa}, {"b", &c.b}, {"sfb", c.sfb}, {"d", &c.d}, {"masked_m", &c.masked_m}});
  const bool npu = api::on_npu_target(c.a);
  if (!npu) api::require_host(c.a, "a");
  api::require_rank(c.a, "a", 3);
  api::require_rank(c.b, "b", 3);
  api::require_rank(c.d, "d", 3);
  const int64_t groups = c.a.shape[0];
  DGA_REQUIRE(c.b.shape[0] == groups, kValue, "b", "expected ", groups, " groups like a, got ", c.b.shape_str());
  const Formats f = api::formats(group_view(c.a, 0), c.sfa, group_view(c.b, 0), c.sfb);
  const MaskedShape sh{.npu = npu, .groups = groups, .m_max = f.a.rows, .n = f.b.rows, .k = f.a.cols, .f = f};
  DGA_REQUIRE(f.b.cols == sh.k, kValue, "b", "K mismatch: a ", c.a.shape_str(), " has K=", sh.k, " but b ",
              c.b.shape_str(), " has K=", f.b.cols);
  DGA_REQUIRE(c.expected_m > 0, kValue, "expected_m", "must be positive, got ", c.expected_m);
  api::require_dtype(c.d, "d", {DType::kBF16});
  api::require_shape(c.d, "d", {groups, sh.m_max, sh.n});
  for (int64_t g = 0; g < groups; ++g)
    api::validate_output(group_view(c.d, g), nullptr, sh.m_max, sh.n,
                         {{"a", &c.a}, {"b", &c.b}, {"sfa", c.sfa}, {"sfb", c.sfb}, {"masked_m", &c.masked_m}});
  return sh;
}

// masked_m int32 [G]; on the host every count in [0, M] (on the NPU the kernel reads masked_m, with no host
// sync, and clamps each count to [0, M]).
void validate_masked_m(const MaskedCall& c, const MaskedShape& sh) {
  api::require_dtype(c.masked_m, "masked_m", {DType::kInt32});
  DGA_REQUIRE(c.masked_m.ndim == 1 && c.masked_m.shape[0] == sh.groups, kValue, "masked_m", "expected shape [",
              sh.groups, "], got ", c.masked_m.shape_str());
  DGA_REQUIRE(c.masked_m.is_contiguous(), kValue, "masked_m", "must be contiguous, got strides ",
              c.masked_m.strides_str());
  if (sh.npu) return;
  const auto rows = read_int32(c.masked_m, "masked_m", sh.groups);
  for (int64_t g = 0; g < sh.groups; ++g)
    DGA_REQUIRE(rows[size_t(g)] >= 0 && rows[size_t(g)] <= sh.m_max, kValue, "masked_m", "group ", g, " has ",
                rows[size_t(g)], " rows, outside [0, ", sh.m_max, "]");
}

// Group 0's scales (the groups' scales are a constant stride apart) and that stride in bytes.
struct MaskedScales {
  block::Scaling scaling{};
  int64_t sfa_group = 0, sfb_group = 0;
};

MaskedScales validate_masked_scales(const MaskedCall& c, const MaskedShape& sh) {
  if (!sh.f.scaled) return {};
  api::check_recipe(c.ra, "recipe_a");
  api::check_recipe(c.rb, "recipe_b");
  api::require_rank(*c.sfa, "sfa", 3);
  api::require_rank(*c.sfb, "sfb", 3);
  DGA_REQUIRE(c.sfa->shape[0] == sh.groups, kValue, "sfa", "expected ", sh.groups, " groups, got ", c.sfa->shape_str());
  DGA_REQUIRE(c.sfb->shape[0] == sh.groups, kValue, "sfb", "expected ", sh.groups, " groups, got ", c.sfb->shape_str());
  return {.scaling = {.enabled = true,
                      .a = api::scales(group_view(*c.sfa, 0), "sfa", sh.m_max, sh.k, c.ra),
                      .b = api::scales(group_view(*c.sfb, 0), "sfb", sh.n, sh.k, c.rb)},
          .sfa_group = c.sfa->strides[0] * core::itemsize(c.sfa->dtype),
          .sfb_group = c.sfb->strides[0] * core::itemsize(c.sfb->dtype)};
}

kernel::MaskedProblems<kernel::HostRows> plan_masked(const MaskedCall& c, const MaskedShape& sh,
                                                     const MaskedScales& s) {
  const int a_bits = tile::operand_bits(sh.f.a.fmt), b_bits = tile::operand_bits(sh.f.b.fmt);
  return {.a = api::matrix(group_view(c.a, 0), a_bits, false),
          .b = api::matrix(group_view(c.b, 0), b_bits, false),
          .e = api::epilogue(group_view(c.d, 0), nullptr),
          .a_group = group_values(c.a, a_bits),
          .b_group = group_values(c.b, b_bits),
          .d_group = group_values(c.d, kBf16Bits),
          .groups = sh.groups,
          .rows = {c.masked_m.as<const int32_t>()},
          .scaling = s.scaling,
          .sfa_group = s.sfa_group,
          .sfb_group = s.sfb_group};
}

// Host: power-of-two scales fold (as in fp8_fp4_gemm) per group, over its masked_m rows; promote_k 0 when
// every group's do.
void dispatch_host_masked(const MaskedCall& c, const MaskedShape& sh, kernel::MaskedProblems<kernel::HostRows>& p) {
  std::vector<uint8_t> group_fold(size_t(sh.f.scaled ? sh.groups : 0));
  bool fold = sh.f.scaled;
  for (int64_t g = 0; g < int64_t(group_fold.size()); ++g) {
    group_fold[size_t(g)] = api::scales_fold(p.get(g));
    fold = fold && group_fold[size_t(g)];
  }
  p.group_fold = group_fold.data();
  kernel::GemmArgs args{.problems = nullptr,
                        .num_problems = 0,
                        .config = {},
                        .operands = {.a = sh.f.a.fmt, .b = sh.f.b.fmt},
                        .scaled = sh.f.scaled};
  api::launch_gemm("m_grouped_gemm_masked",
                   {.m = std::max<int64_t>(c.expected_m, 1),
                    .n = sh.n,
                    .k = sh.k,
                    .a_bits = tile::operand_bits(sh.f.a.fmt),
                    .b_bits = tile::operand_bits(sh.f.b.fmt),
                    .l0_bits = kBf16Bits,
                    .d_bytes = kBf16Bytes,
                    .with_accumulation = false,
                    .num_cores = 1,
                    .promote_k = sh.f.scaled && !fold ? std::min(c.ra.gran_k, c.rb.gran_k) : 0},
                   args, p);
}

}  // namespace

int64_t get_mk_alignment_for_contiguous_layout() { return g_mk_alignment.load(); }
void set_mk_alignment_for_contiguous_layout(int64_t alignment) {
  constexpr int64_t kMaxAlignment = int64_t(1) << 16;  // rows of one segment's padding; far beyond any tile
  DGA_REQUIRE(alignment > 0 && alignment <= kMaxAlignment && alignment % tile::kCubeBlock == 0, kValue, "alignment",
              "must be a positive multiple of ", tile::kCubeBlock, " up to ", kMaxAlignment, ", got ", alignment);
  g_mk_alignment.store(alignment);
}

void m_grouped_gemm_contiguous(const std::string& lay, const TensorView& a, const TensorView* sfa, const TensorView& b,
                               const TensorView* sfb, const TensorView& d, const TensorView& grouped_layout,
                               bool use_psum_layout, bool ensure_zero_padding, ScaleRecipe ra, ScaleRecipe rb,
                               const TensorView* a_rows) {
  const ContiguousCall c{.lay = lay,
                         .a = a,
                         .sfa = sfa,
                         .b = b,
                         .sfb = sfb,
                         .d = d,
                         .grouped_layout = grouped_layout,
                         .psum = use_psum_layout,
                         .zero_padding = ensure_zero_padding,
                         .ra = ra,
                         .rb = rb,
                         .a_rows = a_rows};
  const ContiguousShape sh = validate_contiguous(c);
  if (sh.npu) return dispatch_npu_contiguous(c, sh);
  dispatch_host_contiguous(c, sh);
}

void m_grouped_gemm_masked(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                           const TensorView& d, const TensorView& masked_m, int64_t expected_m, ScaleRecipe ra,
                           ScaleRecipe rb) {
  const MaskedCall c{.a = a,
                     .sfa = sfa,
                     .b = b,
                     .sfb = sfb,
                     .d = d,
                     .masked_m = masked_m,
                     .expected_m = expected_m,
                     .ra = ra,
                     .rb = rb};
  const MaskedShape sh = validate_masked_operands(c);
  validate_masked_m(c, sh);
  const MaskedScales scales = validate_masked_scales(c, sh);
  kernel::MaskedProblems<kernel::HostRows> problems = plan_masked(c, sh, scales);
  if (sh.npu) return api::npu_masked_gemm(problems, {.a = sh.f.a.fmt, .b = sh.f.b.fmt}, &masked_m, d, expected_m);
  dispatch_host_masked(c, sh, problems);
}

}  // namespace deepgemm_ascend
