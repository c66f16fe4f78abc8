// The documented per-instruction rules of the NPU instruction model: every rule is broken once by an
// instruction and must raise an error naming the parameter (and, for a start address, the instruction, the
// buffer offset and the rule's page, through the access checker that knows where each buffer starts), and the
// nearest legal call must pass. The pages (cannmirror/asc-devkit, docs/zh/api/SIMD-API/): GMToL1随路转换-ND2NZ /
// -DN2NZ搬运（DataCopy）.md, LoadData_2D_V2.md, LoadData_2D_MX.md, Mmad.md, MmadMx.md, L0C到GM / L0C到UB数据搬运
// （Fixpipe）.md, C-API asc_copy_gm2ub_align_arch_3510.md / asc_copy_ub2gm_align_arch_3510.md, 通用说明和约束.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube.hpp"
#include "deepgemm_ascend/npu_model/data_move.hpp"
#include "deepgemm_ascend/npu_model/fixpipe.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "deepgemm_ascend/npu_model/load2d.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"

namespace nm = deepgemm_ascend::npu_model;
namespace core = deepgemm_ascend::core;

namespace {

constexpr int kPipe = 3;

// One core's buffers (sizes enough for the calls below) and its access checker.
struct Chip {
  std::vector<uint8_t> l1 = std::vector<uint8_t>(64 * 1024), l0a = std::vector<uint8_t>(8192),
                       l0b = std::vector<uint8_t>(8192), ub = std::vector<uint8_t>(8192),
                       mx = std::vector<uint8_t>(512);
  std::vector<float> l0c = std::vector<float>(8192);
  std::vector<uint8_t> gm = std::vector<uint8_t>(64 * 1024);
  nm::Hazards h{"k", "core 0",
                {{"L1", l1.data(), l1.size()},
                 {"L0A", l0a.data(), l0a.size()},
                 {"L0B", l0b.data(), l0b.size()},
                 {"L0C", reinterpret_cast<const uint8_t*>(l0c.data()), l0c.size() * sizeof(float)},
                 {"UB", ub.data(), ub.size()},
                 {"L0A_MX", mx.data(), mx.size()}}};
  uint8_t* c_bytes(size_t off) { return reinterpret_cast<uint8_t*>(l0c.data()) + off; }
  float* c_at(size_t off) { return reinterpret_cast<float*>(c_bytes(off)); }

  // Runs `f(acc)` as instruction `name` through the checker.
  void run(const char* name, const std::function<void(nm::Accesses*)>& f) {
    nm::Accesses acc;
    f(&acc);
    h.instruction(kPipe, name, acc);
  }
};

// The error `f` raises (kind, argument, message); an empty argument when it raises none.
struct Raised {
  core::ErrorKind kind = core::ErrorKind::kRuntime;
  std::string arg, what;
};
Raised raised(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::Error& e) {
    return {e.kind(), e.arg(), e.what()};
  }
  return {};
}
void expect_value_error(const std::function<void()>& f, const std::string& arg, const std::string& part = "") {
  const Raised r = raised(f);
  EXPECT_EQ(r.arg, arg) << r.what;
  EXPECT_EQ(r.kind, core::ErrorKind::kValue) << r.what;
  EXPECT_NE(r.what.find(part), std::string::npos) << r.what;
}
void expect_passes(const std::function<void()>& f) { EXPECT_EQ(raised(f).what, ""); }

nm::Mte2NzPara nz_para(uint16_t count, uint16_t row_stride, uint16_t c0_stride) {
  return {count, row_stride, c0_stride, 0};
}

}  // namespace

// ND2NZ / DN2NZ: the L1 destination 32 B aligned; the parameter ranges.
TEST(NpuModelRules, Nd2NzDestinationAndRanges) {
  Chip c;
  const nm::GmToL1Nz op{.n = 16, .d = 16, .row_stride_bytes = 32, .matrix_stride_bytes = 0, .small_c0 = false};
  const auto nd = [&](size_t off, const nm::GmToL1Nz& o, const nm::Mte2NzPara& p) {
    c.run("copy_gm_to_cbuf_multi_nd2nz",
          [&](nm::Accesses* a) { nm::copy_gm_to_cbuf_nd2nz(c.l1.data() + off, c.gm.data(), 2, o, p, a); });
  };
  expect_passes([&] { nd(32, op, nz_para(1, 1, 16)); });
  expect_value_error([&] { nd(48, op, nz_para(1, 1, 16)); }, "dst",
                     "copy_gm_to_cbuf_multi_nd2nz: the dst starts at L1 byte 48, which is not 32 B aligned");
  expect_value_error([&] { nd(0, {16385, 16, 32, 0, false}, nz_para(1, 1, 16)); }, "nValue");
  expect_value_error([&] { nd(0, {16, 65536, 32, 0, false}, nz_para(1, 1, 16)); }, "dValue");
  expect_value_error([&] { nd(0, op, nz_para(4096, 1, 16)); }, "ndNum");
  expect_value_error([&] { nd(0, op, nz_para(1, 0, 16)); }, "dstNzNStride");
  expect_value_error([&] { nd(0, op, nz_para(1, 1, 16385)); }, "dstNzC0Stride");
  // DN2NZ: the same destination rule; dValue up to 2^21 - 1.
  const auto dn = [&](size_t off, const nm::GmToL1Nz& o) {
    c.run("copy_gm_to_cbuf_multi_dn2nz",
          [&](nm::Accesses* a) { nm::copy_gm_to_cbuf_dn2nz(c.l1.data() + off, c.gm.data(), 2, o, nz_para(1, 1, 16), a); });
  };
  expect_value_error([&] { dn(16, op); }, "dst", "DN2NZ");
  expect_value_error([&] { dn(0, {16, 1u << 21, 32, 0, false}); }, "dValue");
}

// LoadData 2D V2: the L1 source 32 B and the L0A / L0B destination 512 B aligned, in those buffers; steps up to
// 255. The MX scale load: its steps, the L1 source 32 B and the L0A_MX destination 32 B aligned.
TEST(NpuModelRules, LoadDataStartsAndSteps) {
  Chip c;
  const auto load = [&](uint8_t* dst, size_t src_off, nm::Load2d op) {
    c.run("load_cbuf_to_ca", [&](nm::Accesses* a) { nm::load_cbuf_to_l0(dst, c.l1.data() + src_off, op, a); });
  };
  const nm::Load2d op{.m_start = 0, .k_start = 0, .m_step = 2, .k_step = 2, .src_stride = 2, .dst_stride = 2,
                      .transpose = false};
  expect_passes([&] { load(c.l0a.data() + 512, 32, op); });
  expect_value_error([&] { load(c.l0a.data() + 256, 0, op); }, "dst", "L0A byte 256, which is not 512 B aligned");
  expect_value_error([&] { load(c.l0b.data(), 16, op); }, "src", "L1 byte 16");
  expect_value_error([&] { load(c.l1.data() + 8192, 0, op); }, "dst", "must be in L0A/L0B, not in L1");
  expect_value_error([&] { load(c.l0a.data(), 0, {0, 0, 256, 1, 256, 1, false}); }, "mStep");
  expect_value_error([&] { load(c.l0a.data(), 0, {0, 0, 1, 256, 1, 1, false}); }, "kStep");
  const auto mx = [&](size_t dst_off, size_t src_off, nm::LoadMx o) {
    c.run("load_cbuf_to_ca_mx",
          [&](nm::Accesses* a) { nm::load_mx_scales(c.mx.data() + dst_off, c.l1.data() + src_off, o, a); });
  };
  const nm::LoadMx mop{.x_start = 0, .y_start = 0, .x_step = 2, .y_step = 2, .src_stride = 2, .dst_stride = 2};
  expect_passes([&] { mx(32, 64, mop); });
  expect_value_error([&] { mx(16, 0, mop); }, "mx_dst", "L0A_MX byte 16");
  expect_value_error([&] { mx(0, 8, mop); }, "src", "L1 byte 8");
  expect_value_error([&] { mx(0, 0, {0, 0, 256, 1, 1, 1}); }, "xStep");
  expect_value_error([&] { mx(0, 0, {0, 0, 1, 256, 1, 1}); }, "yStep");
}

// Mmad: m / k / n up to 4095; C 1024 B, A and B 512 B aligned. MmadMx: fp8 A and B 1024 B aligned, fp4 512 B.
TEST(NpuModelRules, MmadRangesAndStarts) {
  Chip c;
  const auto mad = [&](size_t c_off, size_t a_off, size_t b_off, nm::Mad op) {
    c.run("mad", [&](nm::Accesses* a) {
      nm::mad(c.c_at(c_off), c.l0a.data() + a_off, nm::CubeType::kBF16, c.l0b.data() + b_off, nm::CubeType::kBF16, op, a);
    });
  };
  const nm::Mad op{.m = 16, .k = 16, .n = 16, .disable_gemv = true, .c_from_bias = false, .init = true};
  expect_passes([&] { mad(1024, 512, 512, op); });
  expect_value_error([&] { mad(512, 0, 0, op); }, "c", "L0C byte 512, which is not 1024 B aligned (Mmad.md)");
  expect_value_error([&] { mad(0, 256, 0, op); }, "a", "L0A byte 256");
  expect_value_error([&] { mad(0, 0, 64, op); }, "b", "L0B byte 64");
  expect_value_error([&] { mad(0, 0, 0, {4096, 16, 16, true, false, true}); }, "m", "4095");
  expect_value_error([&] { mad(0, 0, 0, {16, 4096, 16, true, false, true}); }, "k");
  expect_value_error([&] { mad(0, 0, 0, {16, 16, 4096, true, false, true}); }, "n");
  std::vector<uint8_t> scales(4096, 127);
  const auto mad_mx = [&](size_t a_off, size_t b_off, nm::CubeType t) {
    c.run("mad_mx", [&](nm::Accesses* a) {
      nm::mad_mx(c.c_at(0), c.l0a.data() + a_off, t, scales.data(), c.l0b.data() + b_off, t, scales.data(),
                 {.m = 16, .k = 64, .n = 16, .disable_gemv = true, .c_from_bias = false, .init = true}, a);
    });
  };
  expect_passes([&] { mad_mx(1024, 1024, nm::CubeType::kE4M3); });
  expect_passes([&] { mad_mx(512, 512, nm::CubeType::kE2M1); });
  expect_value_error([&] { mad_mx(512, 1024, nm::CubeType::kE4M3); }, "a", "not 1024 B aligned (MmadMx.md)");
  expect_value_error([&] { mad_mx(1024, 512, nm::CubeType::kE5M2); }, "b", "not 1024 B aligned");
}

// Fixpipe: nSize up to 4095 (an N tail with NZ2ND is legal), srcStride at least align16(mSize), dstStride not 0,
// the L0C source 64 B aligned; to UB the destination 32 B aligned and nSize * sizeof(out) a multiple of 32 B.
TEST(NpuModelRules, FixpipeSizesAndStarts) {
  Chip c;
  const auto fix = [&](size_t src_off, uint8_t* dst, nm::Fixpipe op) {
    uint8_t* out[2] = {dst, nullptr};
    c.run("copy_matrix_cc_to_gm",
          [&](nm::Accesses* a) { nm::fixpipe(out, reinterpret_cast<const float*>(c.c_bytes(src_off)), op, a); });
  };
  nm::Fixpipe op;
  op.n = 17, op.m = 20, op.src_stride = 32, op.dst_stride = 17;  // an N tail of 17 columns
  expect_passes([&] { fix(64, c.gm.data(), op); });
  expect_value_error([&] { fix(32, c.gm.data(), op); }, "src", "L0C byte 32, which is not 64 B aligned");
  nm::Fixpipe bad = op;
  bad.src_stride = 16;
  expect_value_error([&] { fix(0, c.gm.data(), bad); }, "srcStride", "align16(mSize) = 32");
  bad = op, bad.dst_stride = 0;
  expect_value_error([&] { fix(0, c.gm.data(), bad); }, "dstStride");
  bad = op, bad.n = 4096, bad.dst_stride = 4096;
  expect_value_error([&] { fix(0, c.gm.data(), bad); }, "nSize", "4095");
  nm::Fixpipe ub = op;
  ub.to_ub = true, ub.n = 8, ub.dst_stride = 8;
  expect_passes([&] { fix(0, c.ub.data() + 64, ub); });
  expect_value_error([&] { fix(0, c.ub.data() + 16, ub); }, "dst", "UB byte 16");
  ub.n = 4;
  expect_value_error([&] { fix(0, c.ub.data(), ub); }, "nSize", "multiple of 32 B");
}

// The Fixpipe casts under CTRL (L0C到GM数据搬运（Fixpipe）.md, 约束说明; SetCtrlSpr(ISASI).md): at the reset value
// (CTRL[60] 1, CTRL[48] 0) they saturate, inf -> +-max and NaN -> 0; CTRL[48] = 1 keeps inf and NaN; CTRL[60] = 0
// is refused.
TEST(NpuModelRules, FixpipeCastSaturationFollowsCtrl) {
  constexpr uint64_t kReset = nm::kDefaultCtrl, kNoSat = uint64_t(1) << 48, kGlobal = uint64_t(1) << 60;
  EXPECT_TRUE(nm::fixpipe_saturates(kReset));
  EXPECT_FALSE(nm::fixpipe_saturates(kReset | kNoSat));
  const Raised r = raised([&] { nm::fixpipe_saturates(kReset & ~kGlobal); });
  EXPECT_EQ(r.kind, core::ErrorKind::kNotImplemented) << r.what;
  EXPECT_EQ(r.arg, "CTRL");
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> src(256, 0.0f);
  src[0] = inf, src[1] = -inf, src[2] = nan, src[3] = 3.4e38f;  // past the largest bf16 (rounds to inf)
  for (nm::FixQuant q : {nm::FixQuant::kF322BF16, nm::FixQuant::kF322F16}) {
    const bool bf16 = q == nm::FixQuant::kF322BF16;
    const uint16_t inf_bits = bf16 ? 0x7F80 : 0x7C00, max_bits = bf16 ? 0x7F7F : 0x7BFF;
    for (bool saturate : {true, false}) {
      std::vector<uint16_t> dst(16, 0x1234);
      uint8_t* out[2] = {reinterpret_cast<uint8_t*>(dst.data()), nullptr};
      nm::Fixpipe op;
      op.n = 4, op.m = 1, op.src_stride = 16, op.dst_stride = 4, op.quant = q, op.saturate = saturate;
      nm::fixpipe(out, src.data(), op);
      EXPECT_EQ(dst[0], saturate ? max_bits : inf_bits) << bf16;
      EXPECT_EQ(dst[1], uint16_t((saturate ? max_bits : inf_bits) | 0x8000)) << bf16;
      if (saturate) EXPECT_EQ(dst[2], 0) << bf16;
      else EXPECT_EQ(dst[2] & inf_bits, inf_bits) << bf16;  // a NaN: all exponent bits set
      if (!saturate) EXPECT_NE(dst[2] & ~(inf_bits | 0x8000), 0) << bf16;
      EXPECT_EQ(dst[3], saturate ? max_bits : inf_bits) << bf16;  // an overflow rounds to inf, saturated to max
    }
  }
}

// DataCopyPad's instructions: n_burst up to 4095, len_burst up to 2097151 B; the UB start 32 B aligned (UB -> GM
// source, GM -> UB destination); the GM -> UB source aligned to its element.
TEST(NpuModelRules, DataCopyPadBurstsAndStarts) {
  Chip c;
  nm::VectorCore vc;
  const auto out = [&](size_t ub_off, nm::UbToGm op) {
    c.run("copy_ubuf_to_gm_align_v2",
          [&](nm::Accesses* a) { vc.copy_ubuf_to_gm_align_v2(c.gm.data(), c.ub.data() + ub_off, op, a); });
  };
  expect_passes([&] { out(32, {2, 64, 64, 64}); });
  expect_value_error([&] { out(8, {2, 64, 64, 64}); }, "src", "UB byte 8, which is not 32 B aligned");
  expect_value_error([&] { out(0, {4096, 1, 1, 32}); }, "n_burst", "4095");
  expect_value_error([&] { out(0, {1, 2097152, 0, 0}); }, "len_burst", "2097151");
  const auto in = [&](size_t ub_off, size_t gm_off, nm::GmToUb op) {
    c.run("copy_gm_to_ubuf_align_v2",
          [&](nm::Accesses* a) { vc.copy_gm_to_ubuf_align_v2(c.ub.data() + ub_off, c.gm.data() + gm_off, 4, op, a); });
  };
  expect_passes([&] { in(64, 4, {2, 64, 0, 0, false, 64, 64}); });
  expect_value_error([&] { in(16, 0, {2, 64, 0, 0, false, 64, 64}); }, "dst", "UB byte 16");
  expect_value_error([&] { in(0, 2, {2, 64, 0, 0, false, 64, 64}); }, "src", "4-byte element");
  expect_value_error([&] { in(0, 0, {4096, 32, 0, 0, false, 32, 32}); }, "n_burst");
  expect_value_error([&] { in(0, 0, {1, 2097152, 0, 0, false, 0, 0}); }, "len_burst");
}
