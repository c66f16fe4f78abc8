// The cube instructions of model_instructions.h on the model (deepgemm_ascend::npu_model), with the
// current core's state (model_core.hpp), and the run of one cube core. Plain C++ (no devkit headers).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube.hpp"
#include "deepgemm_ascend/npu_model/data_move.hpp"
#include "deepgemm_ascend/npu_model/data_move_align.hpp"
#include "deepgemm_ascend/npu_model/events.hpp"
#include "deepgemm_ascend/npu_model/fixpipe.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "deepgemm_ascend/npu_model/load2d.hpp"
#include "deepgemm_ascend/npu_model/memory_timing.hpp"
#include "model_core.hpp"
#include "model_runner.hpp"

namespace dga_model {

namespace {
std::unique_ptr<Core> g_single;  // the core of a cube-only run (begin_core / end_core)
}  // namespace

namespace {
nm::UnitFlags l0c_unit_flags(bool vector) {
  if (vector) return {};
  for (const nm::BufferPos& b : buffer_positions(false))
    if (b.name == "L0C") return {b.base, b.bytes};
  return {};
}

// CTRL[46]: the cube's HF32 mode (the devkit's asc_enable_hf32 sets that bit; npu_model::Mad::hf32).
constexpr int kCtrlHf32Bit = 46;
bool hf32_mode() { return ((current().vec.ctrl() >> kCtrlHf32Bit) & 1) != 0; }
}  // namespace

Core::Core(const std::string& k, const std::string& n, int s)
    : kernel(k), name(n), sub(s), events(k, n), hazards(k, n, buffer_positions(s >= 0)), unit_flags(l0c_unit_flags(s >= 0)),
      timing(core_timing(n)) {}

namespace {
const deepgemm_ascend::arch::TimingConstants& kT = deepgemm_ascend::arch::Ascend950::kTiming;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// An Mmad's cycles: one 16 x k0 x 16 block a cycle, k0 by operand type, and its fixed cost.
double mmad_cycles(int ta, uint64_t m, uint64_t k, uint64_t n) {
  int k0 = kT.mmad_k_fp16;
  switch (nm::CubeType(ta)) {
    case nm::CubeType::kFP32: k0 = kT.mmad_k_fp32, k = ceil_div(k, 8) * 8; break;  // fp32's k0 is 8
    case nm::CubeType::kE4M3: case nm::CubeType::kE5M2: case nm::CubeType::kS8: k0 = kT.mmad_k_8bit; break;
    case nm::CubeType::kE2M1: k0 = kT.mmad_k_mx_fp4; break;
    default: break;
  }
  return kT.mmad_fixed_cycles + double(ceil_div(m, 16) * ceil_div(n, 16) * ceil_div(k, uint64_t(k0)));
}
// The L0C bytes an m x n Mmad writes (fp32 / int32 16 x 16 fractals).
size_t l0c_bytes(uint64_t m, uint64_t n) { return size_t(ceil_div(m, 16) * ceil_div(n, 16) * 16 * 16 * 4); }
double mte1_cycles(double bytes, double rate = kT.mte1_bytes_per_cycle) { return kT.mte1_fixed_cycles + bytes / rate; }
// The Fixpipe's cycles for m x n values out of L0C into elements of out_bytes.
double fix_cycles(uint64_t m, uint64_t n, int out_bytes) {
  return kT.fix_fixed_cycles + double(m * n) * double(std::max(out_bytes, 2)) / kT.fix_bytes_per_cycle;
}
// The Fixpipe's cycles writing `gm` from L0C: its values' cycles, or, when more, its GM write requests', each
// taking the port as long as a full request does (fix_gm_granule_bytes at fix_bytes_per_cycle).
double fix_gm_cycles(double value_cycles, const nm::GmSpan& gm) {
  const uint64_t requests = nm::write_requests(gm, kT.fix_gm_granule_bytes, kT.fix_gm_min_request_bytes);
  const double request_cycles = double(kT.fix_gm_granule_bytes) / kT.fix_bytes_per_cycle;
  return std::max(value_cycles, kT.fix_fixed_cycles + double(requests) * request_cycles);
}
bool in_l0b(const void* p) {
  for (const nm::BufferPos& b : buffer_positions(false))
    if (b.name == "L0B") return p >= b.base && p < b.base + b.bytes;
  return false;
}
}  // namespace

void begin_core(const std::string& kernel, int core, bool vector) {
  g_single = std::make_unique<Core>(kernel, (vector ? "AIV core " : "core ") + std::to_string(core), vector ? 0 : -1);
  select(g_single.get());
}

void end_core() {
  Core& c = current();
  guard("end of kernel", [&] { c.events.finish(); });
  const std::string error = c.error;
  const auto kind = c.error_kind;
  select(nullptr);
  g_single.reset();
  if (!error.empty()) deepgemm_ascend::core::fail(kind, "npu_model", error);
}

void abandon_core() {
  select(nullptr);
  g_single.reset();
}

void nz_para(uint64_t reg) { current().nz_para = reg; }

void nd2nz(void* dst, const void* src, int eb, uint64_t loop1, uint64_t n, uint64_t d, uint64_t loop4, bool small,
           bool dn) {
  const nm::GmToL1Nz op{.n = uint16_t(n), .d = uint32_t(d), .row_stride_bytes = loop1, .matrix_stride_bytes = loop4,
                        .small_c0 = small};
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  const nm::Mte2NzPara para = nm::Mte2NzPara::decode(current().nz_para);
  // The GM side: ND rows of d values, DN columns of n values.
  const nm::GmSpan gm{.p = in, .row_bytes = (dn ? n : d) * uint64_t(eb), .rows = dn ? d : n, .row_stride = loop1,
                      .mats = para.count, .mat_stride = loop4};
  run(dn ? "copy_gm_to_cbuf_multi_dn2nz" : "copy_gm_to_cbuf_multi_nd2nz", kPipeMte2, [&](nm::Accesses* acc) {
    if (dn) nm::copy_gm_to_cbuf_dn2nz(out, in, eb, op, para, acc);
    else nm::copy_gm_to_cbuf_nd2nz(out, in, eb, op, para, acc);
  }, 0, {.skippable = true, .gm = &gm});
}

// copy_gm_to_cbuf_align_v2 (asc_copy_gm2l1_align.md) into L1 from a 32 B aligned start.
void gm_to_l1_align(void* dst, const void* src, uint64_t n_burst, uint64_t len_burst, int left_pad, int right_pad,
                    bool data_select, uint64_t src_stride, uint64_t dst_stride) {
  const nm::GmSpan gm{.p = static_cast<const uint8_t*>(src), .row_bytes = len_burst, .rows = n_burst,
                      .row_stride = src_stride};
  run("copy_gm_to_cbuf_align_v2", kPipeMte2, [&](nm::Accesses* acc) {
    auto* out = static_cast<uint8_t*>(dst);
    const nm::BufferPos l1 = buffer_positions(false).front();
    DGA_REQUIRE(out >= l1.base && out < l1.base + l1.bytes, kValue, "dst", "the destination is not in L1");
    DGA_REQUIRE(size_t(out - l1.base) % 32 == 0, kValue, "dst", "the L1 destination must be 32 B aligned, got L1 byte ",
                out - l1.base);
    const nm::GmToL1Align op{.n_burst = uint32_t(n_burst), .len_burst = uint32_t(len_burst),
                             .left_pad = uint8_t(left_pad), .right_pad = uint8_t(right_pad),
                             .data_select = data_select, .src_stride = src_stride, .dst_stride = uint32_t(dst_stride)};
    nm::copy_gm_to_cbuf_align(out, static_cast<const uint8_t*>(src), op, acc);
  }, 0, {.skippable = true, .gm = &gm});
}

// Fill ("Fill" / InitConstValue: the 950 fills L1 only, on MTE2, from a 32 B aligned start): repeatTimes
// iterations, each setting blockNum 32 B blocks to the value and skipping dstGap blocks.
void fill_l1(void* dst, uint64_t repeat_bits, const void* value, int value_bytes) {
  run("create_cbuf_matrix", kPipeMte2, [&](nm::Accesses* acc) {
    constexpr size_t kBlock = 32;
    const uint64_t repeats = repeat_bits & 0xFFFF, blocks = (repeat_bits >> 16) & 0xFFFF, gap = (repeat_bits >> 32) & 0xFFFF;
    auto* out = static_cast<uint8_t*>(dst);
    const nm::BufferPos l1 = buffer_positions(false).front();
    DGA_REQUIRE(out >= l1.base && out < l1.base + l1.bytes, kValue, "dst",
                "on the 950 Fill writes L1 only (the destination is not in L1)");
    DGA_REQUIRE(size_t(out - l1.base) % kBlock == 0, kValue, "dst", "Fill's L1 destination must be 32 B aligned, got L1 byte ",
                out - l1.base);
    DGA_REQUIRE(value_bytes == 2 || value_bytes == 4, kNotImplemented, "initValue", "a ", value_bytes,
                "-byte fill value is not modelled");
    for (uint64_t r = 0; r < repeats; ++r) {
      uint8_t* at = out + r * (blocks + gap) * kBlock;
      for (size_t b = 0; b < blocks * kBlock; b += size_t(value_bytes)) std::memcpy(at + b, value, size_t(value_bytes));
      nm::note(acc, at, blocks * kBlock, true);
    }
  }, 0, {.cycles = double((repeat_bits & 0xFFFF) * ((repeat_bits >> 16) & 0xFFFF) * 32) / kT.dma_core_bytes_per_cycle,
         .skippable = true});
}

void load2d(void* dst, const void* src, int elem_bits, uint64_t ms, uint64_t ks, uint64_t mst, uint64_t kst, int64_t ss,
            uint64_t ds, bool tr) {
  // A transposing load into L0B runs at half rate (looked up only when the timing mode is on).
  const bool half = tr && current().timing != nullptr && in_l0b(dst);
  const double rate = half ? kT.mte1_transposed_l0b_bytes_per_cycle : kT.mte1_bytes_per_cycle;
  run("load_cbuf_to_ca/cb", kPipeMte1, [&](nm::Accesses* acc) {
    nm::load_cbuf_to_l0(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src),
                        {.m_start = uint16_t(ms), .k_start = uint16_t(ks), .m_step = uint16_t(mst),
                         .k_step = uint16_t(kst), .src_stride = int32_t(ss), .dst_stride = uint16_t(ds),
                         .transpose = tr, .elem_bits = elem_bits},
                        acc);
  }, 0, {.cycles = mte1_cycles(double(ms * ks * nm::kFractalBytes), rate), .skippable = true});
}

void mad(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n, bool gemv_off,
         bool c_from_bias, bool init, int unit_flag) {
  run("mad", kPipeM, [&](nm::Accesses* acc) {
    if (m == 1 && !gemv_off) {  // GEMV.md: the 1 x K vector A from a 512 B aligned address
      for (const nm::BufferPos& l0a : buffer_positions(false)) {
        const auto* at = static_cast<const uint8_t*>(a);
        if (l0a.name == "L0A" && at >= l0a.base && at < l0a.base + l0a.bytes)
          DGA_REQUIRE(size_t(at - l0a.base) % 512 == 0, kValue, "a", "GEMV's A must start 512 B aligned, got L0A byte ",
                      at - l0a.base);
      }
    }
    const nm::Mad op{.m = uint16_t(m), .k = uint16_t(k), .n = uint16_t(n), .disable_gemv = gemv_off,
                     .c_from_bias = c_from_bias, .init = init, .hf32 = hf32_mode()};
    const auto* a8 = static_cast<const uint8_t*>(a);
    const auto* b8 = static_cast<const uint8_t*>(b);
    if (nm::CubeType(ta) == nm::CubeType::kS8 || nm::CubeType(tb) == nm::CubeType::kS8) {
      DGA_REQUIRE(ta == tb, kValue, "b", "the integer Mmad takes int8_t x int8_t (Mmad.md's 950 table)");
      nm::mad_s8(reinterpret_cast<int32_t*>(c), a8, b8, op, acc);  // C's storage holds int32
    } else {
      nm::mad(c, a8, nm::CubeType(ta), b8, nm::CubeType(tb), op, acc);
    }
  }, unit_flag, {.cycles = mmad_cycles(ta, m, k, n), .skippable = true, .l0c = c, .l0c_bytes = l0c_bytes(m, n)});
}

void fixpipe_out(void* dst, int dst_bytes, const float* src, uint64_t n, uint64_t m, uint64_t ds, uint64_t ss,
                 int quant, bool nz2nd, int unit_flag, bool src_s32) {
  // NZ2ND: m rows of n values, ds values apart in D (the Nz layout out: n / 16 blocks of m 16-value rows).
  const nm::GmSpan gm = nz2nd ? nm::GmSpan{.p = static_cast<const uint8_t*>(dst), .row_bytes = n * uint64_t(dst_bytes),
                                           .rows = m, .row_stride = ds * uint64_t(dst_bytes), .write = true}
                              : nm::GmSpan{.p = static_cast<const uint8_t*>(dst),
                                           .row_bytes = ceil_div(n, 16) * m * 16 * uint64_t(dst_bytes), .write = true};
  const Timed t{.cycles = fix_gm_cycles(fix_cycles(m, n, dst_bytes), gm), .skippable = true, .gm = &gm,
                .granule = kT.fix_gm_min_request_bytes, .l0c = src, .l0c_bytes = l0c_bytes(m, n)};
  run("copy_matrix_cc_to_gm", kPipeFix, [&](nm::Accesses* acc) {
    nm::Fixpipe op;
    op.n = uint16_t(n), op.m = uint16_t(m), op.src_stride = uint16_t(ss), op.dst_stride = uint32_t(ds), op.nz2nd = nz2nd;
    DGA_REQUIRE(quant >= 0, kNotImplemented, "quantPre", "only NoQuant, F322F16 and F322BF16 are modelled");
    op.quant = nm::FixQuant(quant);
    DGA_REQUIRE((dst_bytes == 4) == (op.quant == nm::FixQuant::kNone), kValue, "quantPre",
                "the Fixpipe's conversion does not match its destination type (", dst_bytes, "-byte elements)");
    op.atomic_add = current().atomic == 1;
    op.src_s32 = src_s32;
    if (op.quant != nm::FixQuant::kNone) op.saturate = nm::fixpipe_saturates(current().vec.ctrl());
    require_one_nd(current().loop3);
    uint8_t* out[2] = {static_cast<uint8_t*>(dst), nullptr};
    nm::fixpipe(out, src, op, acc);
    for (nm::Run& r : *acc) r.gm = r.gm || r.write;  // its writes are D's rows in GM
  }, unit_flag, t);
}

void mx_load(bool b, uint64_t mx_dst, const void* src, uint64_t xs, uint64_t ys, uint64_t xst, uint64_t yst,
             uint64_t ss, uint64_t ds) {
  run(b ? "load_cbuf_to_cb_mx" : "load_cbuf_to_ca_mx", kPipeMte1, [&](nm::Accesses* acc) {
    uint8_t* dst = mx_destination(mx_dst, b);
    DGA_REQUIRE(dst != nullptr, kValue, "mx_dst", "is neither an ", b ? "L0B_MX" : "L0A_MX", " address nor an ",
                b ? "L0B" : "L0A", " address divided by 16");
    nm::load_mx_scales(dst, static_cast<const uint8_t*>(src),
                       {.x_start = uint16_t(xs), .y_start = uint16_t(ys), .x_step = uint16_t(xst),
                        .y_step = uint16_t(yst), .src_stride = uint16_t(ss), .dst_stride = uint16_t(ds)}, acc);
  }, 0, {.cycles = mte1_cycles(double(xs * ys * nm::kMxUnitBytes), kT.mte1_mx_scale_bytes_per_cycle),
         .skippable = true});
}

void mad_mx(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n, bool gemv_off,
            bool c_from_bias, bool init, int unit_flag) {
  run("mad_mx", kPipeM, [&](nm::Accesses* acc) {
    nm::mad_mx(c, static_cast<const uint8_t*>(a), nm::CubeType(ta), mx_scales_of(a, false),
               static_cast<const uint8_t*>(b), nm::CubeType(tb), mx_scales_of(b, true),
               {.m = uint16_t(m), .k = uint16_t(k), .n = uint16_t(n), .disable_gemv = gemv_off,
                .c_from_bias = c_from_bias, .init = init}, acc);
  }, unit_flag, {.cycles = mmad_cycles(ta, m, k, n), .skippable = true, .l0c = c, .l0c_bytes = l0c_bytes(m, n)});
}

void unmodelled(const char* instruction) {
  guard(instruction, [&] {
    DGA_REQUIRE(false, kNotImplemented, "npu_model", instruction, " is not modelled");
  });
}

void atomic(int mode) { current().atomic = mode; }

void loop3_para(uint64_t reg) { current().loop3 = reg; }

// SetStoreAtomicConfig<type, op>: the atomic type of later stores; ATOMIC_NONE (0) turns atomics off. The
// only op is ATOMIC_SUM.
void store_atomic(int type, int op) {
  guard("set_st_atomic_cfg", [&] {
    DGA_REQUIRE(op == 0, kNotImplemented, "op", "store atomics other than ATOMIC_SUM are not modelled");
    current().atomic_type = type;
    current().atomic = type == 0 ? 0 : 1;
  });
}

void require_one_nd(uint64_t loop3) {
  constexpr uint64_t kNdMask = 0xFFFF;
  DGA_REQUIRE((loop3 & kNdMask) == 1, kNotImplemented, "LOOP3_PARA", "a Fixpipe of ", loop3 & kNdMask,
              " ND matrices is not modelled (1)");
}

void flag(bool set, int src, int dst, int id) {
  guard(set ? "set_flag" : "wait_flag", [&] {
    Core& c = current();
    if (set) c.events.set_flag(nm::pipe_name(src), nm::pipe_name(dst), id);
    else c.events.wait_flag(nm::pipe_name(src), nm::pipe_name(dst), id);
    if (set) c.hazards.set_flag(src, dst, id);
    else c.hazards.wait_flag(src, dst, id);
    if (c.timing == nullptr) return;
    if (set) c.timing->set_flag(src, dst, id);
    else c.timing->wait_flag(src, dst, id);
  });
}

void barrier(int pipe) {
  guard("pipe_barrier", [&] {
    Core& c = current();
    c.hazards.barrier(pipe);
    if (c.timing != nullptr) c.timing->barrier(pipe);
  });
}

}  // namespace dga_model
