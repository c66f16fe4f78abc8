// MoE grouped GEMM entry points: every group becomes one problem of the GEMM kernel.
#include <algorithm>
#include <atomic>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/cube_format.hpp"
#include "gemm_common.hpp"
#include "npu_device.hpp"
#include "validate.hpp"

namespace deepgemm_ascend {

using core::DType;
using core::ErrorKind;

namespace {

constexpr int64_t kDefaultMkAlignment = 128;
constexpr int64_t kKAlignmentUnit = 32;  // K-grouped alignments are multiples of the MX block
std::atomic<int64_t> g_mk_alignment{kDefaultMkAlignment};

TensorView group_view(const TensorView& t, int64_t g) { return api::index_leading(t, g); }

// A contiguous int32 vector of n entries, read on the host.
std::vector<int64_t> read_int32(const TensorView& t, const char* arg, int64_t n) {
  api::require_dtype(t, arg, {DType::kInt32});
  DGA_REQUIRE(t.ndim == 1 && t.shape[0] == n, kValue, arg, "expected shape [", n, "], got ", t.shape_str());
  DGA_REQUIRE(t.is_contiguous(), kValue, arg, "must be contiguous, got strides ", t.strides_str());
  const auto* p = t.as<const int32_t>();
  return std::vector<int64_t>(p, p + n);
}

// Operand formats: bf16 without scales, fp8 / fp4 (api::operand) with them.
struct Formats {
  bool scaled;
  api::Operand a, b;  // b: one group (2-D view)
};

Formats formats(const TensorView& a2, const TensorView* sfa, const TensorView& b2, const TensorView* sfb) {
  DGA_REQUIRE((sfa == nullptr) == (sfb == nullptr), kValue, sfa ? "sfb" : "sfa",
              "give scale factors for both operands (FP8 / FP4) or for neither (BF16)");
  if (sfa) return {true, api::operand(a2, "a"), api::operand(b2, "b")};
  api::require_dtype(a2, "a", {DType::kBF16});
  api::require_dtype(b2, "b", {DType::kBF16});
  return {false, {tile::OperandFormat::kBF16, a2.shape[0], a2.shape[1]},
          {tile::OperandFormat::kBF16, b2.shape[0], b2.shape[1]}};
}

struct Segment {
  int64_t group, start, rows;
};

std::vector<Segment> contiguous_segments(const std::vector<int64_t>& ids, int64_t groups, int64_t align) {
  std::vector<Segment> segs;
  for (int64_t r = 0; r < int64_t(ids.size());) {
    const int64_t g = ids[size_t(r)];
    DGA_REQUIRE(g >= -1 && g < groups, kValue, "grouped_layout", "row ", r, " has group id ", g, ", expected -1 or [0, ",
                groups, ")");
    int64_t e = r + 1;
    while (e < int64_t(ids.size()) && ids[size_t(e)] == g) ++e;
    if (g >= 0) {
      DGA_REQUIRE(r % align == 0, kValue, "grouped_layout", "group ", g, " starts at row ", r,
                  ", which is not a multiple of the alignment ", align);
      segs.push_back({g, r, e - r});
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
    DGA_REQUIRE(end >= prev && end <= m && (end == start || end > start), kValue, "grouped_layout", "end offset ",
                end, " of group ", g, " is out of order or beyond M = ", m);
    if (end > start) segs.push_back({g, start, end - start});
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

void launch(const char* name, const std::vector<kernel::GemmProblem>& problems, const Formats& f, int64_t avg_m,
            int64_t n, int64_t k, int d_bytes, bool acc, int64_t promote_k) {
  kernel::GemmArgs args{.problems = problems.data(), .num_problems = int64_t(problems.size()), .config = {},
                        .operands = {f.a.fmt, f.b.fmt}, .scaled = f.scaled};
  if (problems.empty()) return;
  api::launch_gemm(name,
                   {.m = std::max<int64_t>(avg_m, 1), .n = n, .k = k, .a_bits = tile::operand_bits(f.a.fmt),
                    .b_bits = tile::operand_bits(f.b.fmt), .l0_bits = core::kBf16Bits, .d_bytes = d_bytes,
                    .with_accumulation = acc, .num_cores = 1, .promote_k = f.scaled ? promote_k : 0},
                   args);
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
  DGA_REQUIRE(lay == "nt" || lay == "nn", kValue, "layout", "expected nt or nn, got '", lay, "'");
  api::require_same_device({{"a", &a}, {"sfa", sfa}, {"b", &b}, {"sfb", sfb}, {"d", &d}, {"grouped_layout", &grouped_layout},
                            {"m_row_indices", a_rows}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 3);
  const bool tb = lay[1] == 'n';
  const int64_t groups = b.shape[0];
  const Formats f = formats(a, sfa, group_view(b, 0), sfb);
  const int64_t m = a_rows ? a_rows->shape[0] : f.a.rows, k = f.a.cols, n = tb ? f.b.cols : f.b.rows,
                kb = tb ? f.b.rows : f.b.cols;
  if (a_rows) check_a_rows(*a_rows, npu, f.scaled, use_psum_layout, f.a.rows);
  DGA_REQUIRE(kb == k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", k, " but b ", b.shape_str(),
              " has K=", kb);
  DGA_REQUIRE(groups > 0 && n > 0 && k > 0, kValue, "b", "needs G, N and K > 0, got shape ", b.shape_str());
  api::require_dtype(d, "d", {DType::kBF16});
  api::validate_output(d, nullptr, m, n, {{"a", &a}, {"b", &b}, {"sfa", sfa}, {"sfb", sfb},
                                          {"grouped_layout", &grouped_layout}, {"m_row_indices", a_rows}});
  const int64_t align = get_mk_alignment_for_contiguous_layout();
  layout::ScaleRef sa;
  if (f.scaled) {
    api::check_recipe(ra, "recipe_a");
    api::check_recipe(rb, "recipe_b");
    DGA_REQUIRE(ra.gran_mn == 1, kValue, "recipe_a", "M-grouped GEMMs need per-row A scales (gran_m 1)");
    sa = api::scales(*sfa, "sfa", m, k, ra);
    api::require_rank(*sfb, "sfb", 3);
    DGA_REQUIRE(sfb->shape[0] == groups, kValue, "sfb", "expected ", groups, " groups, got ", sfb->shape_str());
  }
  const auto sfb_of = [&](int64_t g) { return api::scales(group_view(*sfb, g), "sfb", n, k, rb); };
  if (npu) {
    DGA_REQUIRE(!(use_psum_layout && ensure_zero_padding), kNotImplemented, "ensure_zero_padding",
                "zeroing the gap rows of a psum layout has no NPU kernel yet");
    api::require_dtype(grouped_layout, "grouped_layout", {DType::kInt32});
    const int64_t entries = use_psum_layout ? groups : m;
    DGA_REQUIRE(grouped_layout.ndim == 1 && grouped_layout.shape[0] == entries && grouped_layout.is_contiguous(),
                kValue, "grouped_layout", "expected a contiguous int32 [", entries, "], got ",
                grouped_layout.shape_str());
    const int a_bits = tile::operand_bits(f.a.fmt), b_bits = tile::operand_bits(f.b.fmt);
    kernel::ContiguousProblems<kernel::HostRows> problems{.a = api::matrix(a, a_bits, false),
                                                          .b = api::matrix(group_view(b, 0), b_bits, tb),
                                                          .e = api::epilogue(d, nullptr),
                                                          .b_group =
                                                              b.strides[0] * core::itemsize(b.dtype) * 8 / b_bits,
                                                          .groups = groups, .align = align,
                                                          .ids = {grouped_layout.as<const int32_t>()}};
    if (f.scaled) {
      problems.scaling = {true, sa, sfb_of(0)};
      problems.sfb_group = sfb->strides[0] * core::itemsize(sfb->dtype);
    }
    return api::npu_contiguous_gemm(problems, {f.a.fmt, f.b.fmt}, use_psum_layout, grouped_layout, d);
  }
  const auto segs = use_psum_layout ? psum_segments(read_int32(grouped_layout, "grouped_layout", groups), m, align)
                                    : contiguous_segments(read_int32(grouped_layout, "grouped_layout", m), groups, align);
  std::vector<layout::ScaleRef> sb;
  if (f.scaled)
    for (int64_t g = 0; g < groups; ++g) sb.push_back(sfb_of(g));
  if (m == 0) return;
  const int a_bits = tile::operand_bits(f.a.fmt), b_bits = tile::operand_bits(f.b.fmt);
  layout::MatrixRef am = api::matrix(a, a_bits, false);
  if (a_rows) am.gather = a_rows->as<const int32_t>(), am.gather_dim = 0, am.rows = m;
  const block::EpilogueArgs epi = api::epilogue(d, nullptr);
  std::vector<kernel::GemmProblem> problems;
  int64_t covered = 0;
  for (const Segment& seg : segs) {
    // Per-row ids: the padding rows (-1) up to the group's next aligned row are computed with the group too, as
    // upstream computes whole aligned blocks (the next group starts there: validated above).
    const int64_t rows =
        use_psum_layout ? seg.rows : std::min(layout::align_up(seg.start + seg.rows, align), m) - seg.start;
    block::EpilogueArgs e = epi;
    e.d = epi.d.block(seg.start, 0, rows, n);
    block::Scaling sc{};
    if (f.scaled) sc = {true, sa.shifted(seg.start), sb[size_t(seg.group)]};
    problems.push_back({am.block(seg.start, 0, rows, k), api::matrix(group_view(b, seg.group), b_bits, tb), e, sc});
    covered += rows;
  }
  if (use_psum_layout && ensure_zero_padding) {
    // Gap rows between a group's end and the next aligned start.
    for (size_t i = 0; i < segs.size(); ++i) {
      const int64_t end = segs[i].start + segs[i].rows;
      zero_rows(d, end, std::min(m, i + 1 < segs.size() ? segs[i + 1].start : layout::align_up(end, align)));
    }
  }
  // Power-of-two scales fold into the L0 loads (as in fp8_fp4_gemm) when every segment's do; a segment decides
  // by the scales of its group's rows, never by its padding rows' (their output is undefined).
  bool fold = f.scaled;
  for (size_t i = 0; f.scaled && i < problems.size(); ++i) {
    kernel::GemmProblem valid = problems[i];
    valid.a.rows = segs[i].rows;
    fold &= problems[i].scaling.fold = api::scales_fold(valid);
  }
  launch("m_grouped_gemm_contiguous", problems, f, covered / std::max<int64_t>(1, int64_t(segs.size())), n, k, 2,
         false, fold ? 0 : std::min(ra.gran_k, rb.gran_k));
}

void m_grouped_gemm_masked(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                           const TensorView& d, const TensorView& masked_m, int64_t expected_m, ScaleRecipe ra,
                           ScaleRecipe rb) {
  api::require_same_device({{"a", &a}, {"sfa", sfa}, {"b", &b}, {"sfb", sfb}, {"d", &d}, {"masked_m", &masked_m}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  api::require_rank(a, "a", 3);
  api::require_rank(b, "b", 3);
  api::require_rank(d, "d", 3);
  const int64_t groups = a.shape[0];
  DGA_REQUIRE(b.shape[0] == groups, kValue, "b", "expected ", groups, " groups like a, got ", b.shape_str());
  const Formats f = formats(group_view(a, 0), sfa, group_view(b, 0), sfb);
  const int64_t m_max = f.a.rows, k = f.a.cols, n = f.b.rows;
  DGA_REQUIRE(f.b.cols == k, kValue, "b", "K mismatch: a ", a.shape_str(), " has K=", k, " but b ", b.shape_str(),
              " has K=", f.b.cols);
  DGA_REQUIRE(expected_m > 0, kValue, "expected_m", "must be positive, got ", expected_m);
  api::require_dtype(d, "d", {DType::kBF16});
  api::require_shape(d, "d", {groups, m_max, n});
  for (int64_t g = 0; g < groups; ++g)
    api::validate_output(group_view(d, g), nullptr, m_max, n, {{"a", &a}, {"b", &b}, {"sfa", sfa}, {"sfb", sfb},
                                                               {"masked_m", &masked_m}});
  api::require_dtype(masked_m, "masked_m", {DType::kInt32});
  DGA_REQUIRE(masked_m.ndim == 1 && masked_m.shape[0] == groups, kValue, "masked_m", "expected shape [", groups,
              "], got ", masked_m.shape_str());
  DGA_REQUIRE(masked_m.is_contiguous(), kValue, "masked_m", "must be contiguous, got strides ", masked_m.strides_str());
  if (!npu) {  // on the NPU the kernel reads masked_m (no host sync) and clamps each count to [0, M]
    const auto rows = read_int32(masked_m, "masked_m", groups);
    for (int64_t g = 0; g < groups; ++g)
      DGA_REQUIRE(rows[size_t(g)] >= 0 && rows[size_t(g)] <= m_max, kValue, "masked_m", "group ", g, " has ",
                  rows[size_t(g)], " rows, outside [0, ", m_max, "]");
  }
  block::Scaling scaling{};  // group 0's; the groups' scales are a constant stride apart
  int64_t sfa_group = 0, sfb_group = 0;
  if (f.scaled) {
    api::check_recipe(ra, "recipe_a");
    api::check_recipe(rb, "recipe_b");
    api::require_rank(*sfa, "sfa", 3);
    api::require_rank(*sfb, "sfb", 3);
    DGA_REQUIRE(sfa->shape[0] == groups, kValue, "sfa", "expected ", groups, " groups, got ", sfa->shape_str());
    DGA_REQUIRE(sfb->shape[0] == groups, kValue, "sfb", "expected ", groups, " groups, got ", sfb->shape_str());
    scaling = {true, api::scales(group_view(*sfa, 0), "sfa", m_max, k, ra),
               api::scales(group_view(*sfb, 0), "sfb", n, k, rb)};
    sfa_group = sfa->strides[0] * core::itemsize(sfa->dtype);
    sfb_group = sfb->strides[0] * core::itemsize(sfb->dtype);
  }
  const int a_bits = tile::operand_bits(f.a.fmt), b_bits = tile::operand_bits(f.b.fmt);
  // Group strides in values (packed FP4: two per byte).
  const auto values = [](const TensorView& t, int bits) { return t.strides[0] * core::itemsize(t.dtype) * 8 / bits; };
  kernel::MaskedProblems<kernel::HostRows> problems{.a = api::matrix(group_view(a, 0), a_bits, false),
                                                    .b = api::matrix(group_view(b, 0), b_bits, false),
                                                    .e = api::epilogue(group_view(d, 0), nullptr),
                                                    .a_group = values(a, a_bits), .b_group = values(b, b_bits),
                                                    .d_group = values(d, 16), .groups = groups,
                                                    .rows = {masked_m.as<const int32_t>()}, .scaling = scaling,
                                                    .sfa_group = sfa_group, .sfb_group = sfb_group};
  if (npu) return api::npu_masked_gemm(problems, {f.a.fmt, f.b.fmt}, &masked_m, d, expected_m);
  // Power-of-two scales fold (as in fp8_fp4_gemm) per group, over its masked_m rows; promote_k 0 when every
  // group's do.
  std::vector<uint8_t> group_fold(size_t(f.scaled ? groups : 0));
  bool fold = f.scaled;
  for (int64_t g = 0; g < int64_t(group_fold.size()); ++g) {
    group_fold[size_t(g)] = api::scales_fold(problems.get(g));
    fold = fold && group_fold[size_t(g)];
  }
  problems.group_fold = group_fold.data();
  kernel::GemmArgs args{.problems = nullptr, .num_problems = 0, .config = {}, .operands = {f.a.fmt, f.b.fmt},
                        .scaled = f.scaled};
  api::launch_gemm("m_grouped_gemm_masked",
                   {.m = std::max<int64_t>(expected_m, 1), .n = n, .k = k, .a_bits = a_bits, .b_bits = b_bits,
                    .l0_bits = core::kBf16Bits, .d_bytes = 2, .with_accumulation = false, .num_cores = 1,
                    .promote_k = f.scaled && !fold ? std::min(ra.gran_k, rb.gran_k) : 0},
                   args, problems);
}

namespace {

// [start, size) of every K group: packed sizes, or (psum) end offsets with aligned starts.
std::vector<std::pair<int64_t, int64_t>> k_groups(const std::vector<int64_t>& ks, const std::vector<int64_t>* ends,
                                                  int64_t align, int64_t rows) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t pos = 0;
  if (ends) {
    for (size_t g = 0; g < ends->size(); ++g) {
      const int64_t start = layout::align_up(pos, align), end = (*ends)[g];
      DGA_REQUIRE(end >= pos && (end >= start || end == pos), kValue, "grouped_layout", "end offset ", end,
                  " of group ", g, " is out of order");
      out.push_back({start, std::max<int64_t>(end - start, 0)});
      pos = end;
    }
    DGA_REQUIRE(pos <= rows, kValue, "grouped_layout", "the last group ends at ", pos, " but a and b have ", rows,
                " rows");
    return out;
  }
  for (size_t g = 0; g < ks.size(); ++g) {
    DGA_REQUIRE(ks[g] >= 0 && ks[g] % align == 0, kValue, "ks", "group ", g, " has K = ", ks[g],
                ", which is not a non-negative multiple of the alignment ", align);
    out.push_back({pos, ks[g]});
    pos += ks[g];
  }
  DGA_REQUIRE(pos == rows, kValue, "ks", "sums to ", pos, " but a and b have ", rows, " rows");
  return out;
}

}  // namespace

namespace {

// Scales of an NPU K-grouped FP8 GEMM, indexed by global K (KGroupedProblems): MX scale pairs, int16
// [ceil(sum K / 64), MN] (pair p covers K [64p, 64p + 64)), or float32 [sum K / 128, MN] when every
// group's K is a multiple of 128 (then group g's first block row is its start / 128).
block::Scaling npu_k_grouped_scales(const TensorView& sfa, const TensorView& sfb, const std::vector<int64_t>& ks,
                                    int64_t align, ScaleRecipe r, int64_t m, int64_t n, int64_t sum_k) {
  DGA_REQUIRE(!ks.empty(), kNotImplemented, "use_psum_layout",
              "K-grouped FP8 with the psum layout has no NPU kernel yet (its group sizes are only known on the device)");
  const bool fp32 = sfa.dtype == DType::kFP32;
  const int64_t unit = fp32 ? r.gran_k : int64_t(arch::MxFormat::kMxBaseK);  // K per scale row
  DGA_REQUIRE(r.gran_k == (fp32 ? api::kBlockGranK : int64_t(arch::MxFormat::kMxBlockK)), kValue, "recipe",
              "the NPU takes float32 scales per ", api::kBlockGranK, " K values or MX scales (gran_k ",
              arch::MxFormat::kMxBlockK, "), got ", core::name(sfa.dtype), " with gran_k ", r.gran_k);
  for (size_t g = 0; g < ks.size(); ++g)
    DGA_REQUIRE(ks[g] % unit == 0, kNotImplemented, "ks", "group ", g, " has K = ", ks[g], "; K-grouped FP8 on the NPU ",
                "needs every group's K to be a multiple of ", unit, " (alignment ", align, ")");
  const int64_t rows = layout::ceil_div(sum_k, unit);
  const auto ref = [&](const TensorView& sf, const char* arg, int64_t mn) {
    api::require_dtype(sf, arg, {fp32 ? DType::kFP32 : DType::kInt16});
    api::require_shape(sf, arg, {rows, mn});
    if (fp32) return layout::ScaleRef{.base = sf.ptr(), .ue8m0 = false, .pack = 1, .mn_stride = sf.strides[1],
                                      .k_stride = sf.strides[0], .gran_mn = 1, .gran_k = r.gran_k};
    DGA_REQUIRE(sf.strides[1] == 1, kValue, arg, "expected MN-contiguous scale pairs, got strides ", sf.strides_str());
    constexpr int64_t kPair = arch::MxFormat::kMxScalesPerPack;
    return layout::ScaleRef{.base = sf.ptr(), .ue8m0 = true, .pack = int(kPair), .mn_stride = kPair,
                            .k_stride = sf.strides[0] * kPair, .gran_mn = 1, .gran_k = arch::MxFormat::kMxBlockK};
  };
  return {.enabled = true, .a = ref(sfa, "sfa", m), .b = ref(sfb, "sfb", n)};
}

// K-grouped GEMM of NPU tensors: the groups' end offsets are a device tensor the kernel reads (no host
// sync); the checks that need their values are the host's only. MX scales by global K (see api.hpp).
void npu_k_grouped(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                   const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c, ScaleRecipe ra,
                   const TensorView* ends) {
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  api::require_rank(d, "d", 3);
  DGA_REQUIRE(ends != nullptr, kValue, "grouped_layout", "the NPU kernel reads the groups' end offsets from an int32 "
              "device tensor (the Python layer builds it from ks_cpu)");
  api::require_dtype(*ends, "grouped_layout", {DType::kInt32});
  DGA_REQUIRE(ends->ndim == 1 && ends->shape[0] > 0 && ends->is_contiguous(), kValue, "grouped_layout",
              "expected a contiguous int32 [G] of end offsets, got ", ends->shape_str());
  const Formats f = formats(a, sfa, b, sfb);
  const int64_t groups = ends->shape[0], sum_k = f.a.rows, m = f.a.cols, n = f.b.cols;
  DGA_REQUIRE(f.b.rows == sum_k, kValue, "b", "expected ", sum_k, " rows (sum of K) like a, got ", b.shape_str());
  api::require_dtype(d, "d", {DType::kFP32});
  api::require_shape(d, "d", {groups, m, n});
  api::require_dtype(c, "c", {DType::kFP32});
  api::require_shape(c, "c", {groups, m, n});
  DGA_REQUIRE(d.is_contiguous() && c.is_contiguous(), kValue, d.is_contiguous() ? "c" : "d", "must be contiguous");
  api::validate_output(group_view(d, 0), nullptr, m, n, {{"a", &a}, {"b", &b}, {"sfa", sfa}, {"sfb", sfb}});
  const int64_t align = get_mk_alignment_for_contiguous_layout();
  DGA_REQUIRE(align % kKAlignmentUnit == 0, kValue, "alignment", "K-grouped layouts need an alignment that is a ",
              "multiple of ", kKAlignmentUnit, ", got ", align);
  int64_t total = 0;
  for (size_t g = 0; g < ks.size(); ++g) {
    DGA_REQUIRE(ks[g] >= 0 && ks[g] % align == 0, kValue, "ks", "group ", g, " has K = ", ks[g],
                ", which is not a non-negative multiple of the alignment ", align);
    total += ks[g];
  }
  DGA_REQUIRE(ks.empty() || total == sum_k, kValue, "ks", "sums to ", total, " but a and b have ", sum_k, " rows");
  const int a_bits = tile::operand_bits(f.a.fmt), b_bits = tile::operand_bits(f.b.fmt);
  kernel::KGroupedProblems<kernel::HostRows> problems{.a = api::matrix(a, a_bits, true),
                                                      .b = api::matrix(b, b_bits, true),
                                                      .e = api::epilogue(group_view(d, 0), &c), .d_group = d.strides[0],
                                                      .c_group = c.strides[0], .groups = groups, .align = align,
                                                      .ends = {ends->as<const int32_t>()}};
  if (f.scaled) problems.scaling = npu_k_grouped_scales(*sfa, *sfb, ks, align, ra, m, n, sum_k);
  api::npu_k_grouped_gemm(problems, {f.a.fmt, f.b.fmt}, *ends, d, c);
}

}  // namespace

void k_grouped_gemm(const TensorView& a, const TensorView* sfa, const TensorView& b, const TensorView* sfb,
                    const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c, ScaleRecipe ra,
                    ScaleRecipe rb, const std::vector<int64_t>* psum_ends, const TensorView* device_ends) {
  api::require_same_device({{"a", &a}, {"sfa", sfa}, {"b", &b}, {"sfb", sfb}, {"d", &d}, {"c", &c},
                            {"grouped_layout", device_ends}});
  if (api::on_npu_target(a)) return npu_k_grouped(a, sfa, b, sfb, d, ks, c, ra, device_ends);
  api::require_host(a, "a");
  // The psum layout's end offsets in host memory, read here (Python gives them as the grouped_layout tensor).
  std::vector<int64_t> host_ends;
  if (!psum_ends && ks.empty() && device_ends) {
    DGA_REQUIRE(device_ends->ndim == 1, kValue, "grouped_layout", "expected an int32 [G] tensor of end offsets, got ",
                device_ends->shape_str());
    host_ends = read_int32(*device_ends, "grouped_layout", device_ends->shape[0]);
    psum_ends = &host_ends;
  }
  api::require_rank(a, "a", 2);
  api::require_rank(b, "b", 2);
  api::require_rank(d, "d", 3);
  const Formats f = formats(a, sfa, b, sfb);
  const int64_t groups = int64_t(psum_ends ? psum_ends->size() : ks.size()), sum_k = f.a.rows, m = f.a.cols,
                n = f.b.cols;
  DGA_REQUIRE(groups > 0, kValue, psum_ends ? "grouped_layout" : "ks", "needs at least one group");
  DGA_REQUIRE(f.b.rows == sum_k, kValue, "b", "expected ", sum_k, " rows (sum of K) like a, got ", b.shape_str());
  api::require_dtype(d, "d", {DType::kFP32});
  api::require_shape(d, "d", {groups, m, n});
  api::require_dtype(c, "c", {DType::kFP32});
  api::require_shape(c, "c", {groups, m, n});
  const int64_t align = get_mk_alignment_for_contiguous_layout();
  DGA_REQUIRE(align % kKAlignmentUnit == 0, kValue, "alignment", "K-grouped layouts need an alignment that is a ",
              "multiple of ", kKAlignmentUnit, ", got ", align);
  const auto spans = k_groups(ks, psum_ends, align, sum_k);
  int64_t sf_rows = 0;
  if (f.scaled) {
    api::check_recipe(ra, "recipe_a");
    api::check_recipe(rb, "recipe_b");
    DGA_REQUIRE(ra.gran_k == rb.gran_k, kValue, "recipe_b", "K-grouped GEMMs need one gran_k for both sides");
    for (const auto& [start, kg] : spans) sf_rows += layout::ceil_div(kg, ra.gran_k);
    api::require_dtype(*sfa, "sfa", {DType::kFP32});
    api::require_dtype(*sfb, "sfb", {DType::kFP32});
    api::require_shape(*sfa, "sfa", {sf_rows, m});
    api::require_shape(*sfb, "sfb", {sf_rows, n});
  }
  for (int64_t g = 0; g < groups; ++g) {
    api::validate_output(group_view(d, g), nullptr, m, n, {{"a", &a}, {"b", &b}, {"sfa", sfa}, {"sfb", sfb}});
    const TensorView cg = group_view(c, g);
    api::validate_output(group_view(d, g), &cg, m, n, {});
  }
  const int a_bits = tile::operand_bits(f.a.fmt), b_bits = tile::operand_bits(f.b.fmt);
  std::vector<kernel::GemmProblem> problems;
  int64_t r0 = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const auto [k0, kg] = spans[size_t(g)];
    const TensorView dg = group_view(d, g), cg = group_view(c, g);
    if (kg == 0) {  // an empty group leaves D[g] = C[g]
      api::trivial_gemm({m, n, 0}, dg, &cg);
      continue;
    }
    block::Scaling s{};
    if (f.scaled) {
      // Per-group K blocks, rows of the scale tensors; element (mn, kb) at row r0 + kb, column mn.
      const auto ref = [&](const TensorView& sf, int64_t gran_k) {
        return layout::ScaleRef{.base = static_cast<const float*>(sf.ptr()) + r0 * sf.strides[0], .ue8m0 = false,
                                .pack = 1, .mn_stride = sf.strides[1], .k_stride = sf.strides[0], .gran_mn = 1,
                                .gran_k = gran_k};
      };
      s = {.enabled = true, .a = ref(*sfa, ra.gran_k), .b = ref(*sfb, rb.gran_k)};
      r0 += layout::ceil_div(kg, ra.gran_k);
    }
    problems.push_back({api::matrix(a, a_bits, true).block(0, k0, m, kg), api::matrix(b, b_bits, true).block(0, k0, n, kg),
                        api::epilogue(dg, &cg), s});
  }
  const bool fold = f.scaled && api::fold_scales(problems);  // as in m_grouped_gemm_contiguous
  launch("k_grouped_gemm", problems, f, m, n, std::max<int64_t>(1, sum_k / groups), 4, true, fold ? 0 : ra.gran_k);
}

void k_grouped_fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                           const TensorView& d, const std::vector<int64_t>& ks, const TensorView& c) {
  constexpr int64_t kGranK = 128;  // upstream's only recipe for this layout: (1, 1, 128)
  api::require_same_device({{"a", &a}, {"sfa", &sfa}, {"b", &b}, {"sfb", &sfb}, {"d", &d}, {"c", &c}});
  const bool npu = api::on_npu_target(a);
  if (!npu) api::require_host(a, "a");
  api::require_dtype(a, "a", {DType::kFP8E4M3, DType::kFP8E5M2});
  api::require_dtype(b, "b", {DType::kFP8E4M3, DType::kFP8E5M2});
  DGA_REQUIRE(a.is_contiguous() && b.is_contiguous(), kValue, a.is_contiguous() ? "b" : "a",
              "must be a contiguous buffer of per-group K-major blocks");
  api::require_rank(d, "d", 3);
  const int64_t groups = int64_t(ks.size()), m = d.shape[1], n = d.shape[2];
  DGA_REQUIRE(groups > 0 && d.shape[0] == groups, kValue, "d", "expected [", groups, ", M, N], got ", d.shape_str());
  int64_t sum_k = 0;
  for (size_t g = 0; g < ks.size(); ++g) {
    DGA_REQUIRE(ks[g] >= 0 && ks[g] % kGranK == 0, kValue, "ks", "group ", g, " has K = ", ks[g],
                ", which is not a non-negative multiple of ", kGranK);
    sum_k += ks[g];
  }
  DGA_REQUIRE(a.numel() == m * sum_k, kValue, "a", "holds ", a.numel(), " values, expected M * sum(ks) = ", m * sum_k);
  DGA_REQUIRE(b.numel() == n * sum_k, kValue, "b", "holds ", b.numel(), " values, expected N * sum(ks) = ", n * sum_k);
  const layout::ScaleRef sa = api::scales(sfa, "sfa", m, sum_k, {1, kGranK}),
                         sb = api::scales(sfb, "sfb", n, sum_k, {1, kGranK});
  DGA_REQUIRE(sfa.dtype == DType::kFP32 && sfb.dtype == DType::kFP32, kType, sfa.dtype == DType::kFP32 ? "sfb" : "sfa",
              "this layout takes float32 scales");
  api::require_dtype(c, "c", {DType::kFP32});
  for (int64_t g = 0; g < groups; ++g) {
    const TensorView cg = group_view(c, g);
    api::validate_output(group_view(d, g), &cg, m, n, {{"a", &a}, {"b", &b}, {"sfa", &sfa}, {"sfb", &sfb}});
  }
  const Formats f{true, {a.dtype == DType::kFP8E4M3 ? tile::OperandFormat::kE4M3 : tile::OperandFormat::kE5M2, m, 0},
                  {b.dtype == DType::kFP8E4M3 ? tile::OperandFormat::kE4M3 : tile::OperandFormat::kE5M2, n, 0}};
  std::vector<kernel::GemmProblem> problems;
  int64_t k0 = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t kg = ks[size_t(g)];
    const TensorView dg = group_view(d, g), cg = group_view(c, g);
    // Group g: A_g [M, k_g] and B_g [N, k_g] row-major at offsets M * k0 and N * k0.
    const layout::MatrixRef ag{.base = a.data, .origin = a.offset + m * k0, .rows = m, .cols = kg, .row_stride = kg,
                               .col_stride = 1, .bits = core::kFp8Bits}, bg{.base = b.data,
                                                                               .origin = b.offset + n * k0, .rows = n,
                                                                               .cols = kg, .row_stride = kg,
                                                                               .col_stride = 1, .bits = core::kFp8Bits};
    problems.push_back({ag, bg, api::epilogue(dg, &cg), {true, sa.shifted(0, k0 / kGranK), sb.shifted(0, k0 / kGranK)}});
    k0 += kg;
  }
  if (npu) {  // one promoted FP8 GEMM per group on the stream (ks is on the host: no sync), all checked first
    const block::Operands ops{f.a.fmt, f.b.fmt};
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t g = 0; g < groups; ++g) {
        const TensorView dg = group_view(d, g), cg = group_view(c, g);
        const api::GemmShape s{m, n, ks[size_t(g)]};
        if (pass == 0) api::npu_gemm_check(s, problems[size_t(g)], ops, dg, &cg);
        else api::npu_gemm(s, problems[size_t(g)], ops, dg, &cg);
      }
    return;
  }
  for (int64_t g = 0; g < groups; ++g) {
    const TensorView cg = group_view(c, g);
    if (ks[size_t(g)] == 0) api::trivial_gemm({m, n, 0}, group_view(d, g), &cg);
  }
  std::erase_if(problems, [](const kernel::GemmProblem& p) { return p.a.cols == 0; });
  const bool fold = api::fold_scales(problems);  // as in m_grouped_gemm_contiguous
  launch("k_grouped_fp8_gemm_nt", problems, f, m, n, std::max<int64_t>(1, sum_k / groups), 4, true,
         fold ? 0 : kGranK);
}

}  // namespace deepgemm_ascend
