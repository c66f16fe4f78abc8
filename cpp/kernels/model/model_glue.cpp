// The instruction calls of model_instructions.h on the model (deepgemm_ascend::npu_model), with the
// per-core state the instructions read: MTE2_NZ_PARA, the atomic mode, the core's events. Compiled as
// plain C++ (no devkit headers).
#include <cstdint>
#include <memory>
#include <string>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/cube.hpp"
#include "deepgemm_ascend/npu_model/data_move.hpp"
#include "deepgemm_ascend/npu_model/events.hpp"
#include "deepgemm_ascend/npu_model/fixpipe.hpp"
#include "deepgemm_ascend/npu_model/hazards.hpp"
#include "deepgemm_ascend/npu_model/load2d.hpp"
#include "model_runner.hpp"

namespace nm = deepgemm_ascend::npu_model;

namespace dga_model {

namespace {
uint64_t g_nz_para = 0;
int g_atomic = 0;
std::unique_ptr<nm::EventModel> g_events;
std::unique_ptr<nm::Hazards> g_hazards;
// The core's first model error (instructions also run in destructors: no throwing).
std::string g_error, g_kernel;
int g_core = 0;
deepgemm_ascend::core::ErrorKind g_error_kind = deepgemm_ascend::core::ErrorKind::kRuntime;

// Runs one modelled instruction; a model error is kept for end_core and the instruction skipped.
template <class F>
void guard(const char* instr, F&& f) {
  try {
    f();
  } catch (const deepgemm_ascend::core::Error& e) {
    if (!g_error.empty()) return;
    g_error_kind = e.kind();
    // The event and hazard checkers' messages name kernel and core themselves.
    g_error = (e.arg() == "event" || e.arg() == "hazard" ? std::string() : "kernel " + g_kernel + ", core " + std::to_string(g_core) + ": ") +
              instr + ": " + e.what();
  }
}

// Pipes of the instructions (the devkit's pipe_t numbers).
constexpr int kPipeV = 1, kPipeM = 2, kPipeMte1 = 3, kPipeMte2 = 4, kPipeFix = 10;

// Runs instruction `instr` on `pipe`: `f(acc)` moves or computes and notes its on-chip runs, which the
// checker then checks against the buffer bounds and the pipe order.
template <class F>
void run(const char* instr, int pipe, F&& f) {
  guard(instr, [&] {
    nm::Accesses acc;
    f(&acc);
    if (g_hazards) g_hazards->instruction(pipe, instr, acc);
  });
}
}  // namespace

void begin_core(const std::string& kernel, int core) {
  g_error.clear();
  g_kernel = kernel;
  g_core = core;
  g_nz_para = 0;
  g_atomic = 0;
  g_events = std::make_unique<nm::EventModel>(kernel, core);
  g_hazards = std::make_unique<nm::Hazards>(kernel, core, buffer_positions());
}

void end_core() {
  if (g_events) guard("end of kernel", [] { g_events->finish(); });
  g_events.reset();
  g_hazards.reset();
  if (!g_error.empty()) deepgemm_ascend::core::fail(g_error_kind, "npu_model", g_error);
}

void nz_para(uint64_t reg) { g_nz_para = reg; }

void nd2nz(void* dst, const void* src, int eb, uint64_t loop1, uint64_t n, uint64_t d, uint64_t loop4, bool small,
           bool dn) {
  const nm::GmToL1Nz op{uint16_t(n), uint32_t(d), loop1, loop4, small};
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  run(dn ? "copy_gm_to_cbuf_multi_dn2nz" : "copy_gm_to_cbuf_multi_nd2nz", kPipeMte2, [&](nm::Accesses* acc) {
    if (dn) nm::copy_gm_to_cbuf_dn2nz(out, in, eb, op, nm::Mte2NzPara::decode(g_nz_para), acc);
    else nm::copy_gm_to_cbuf_nd2nz(out, in, eb, op, nm::Mte2NzPara::decode(g_nz_para), acc);
  });
}

void load2d(void* dst, const void* src, uint64_t ms, uint64_t ks, uint64_t mst, uint64_t kst, int64_t ss, uint64_t ds,
            bool tr) {
  run("load_cbuf_to_ca/cb", kPipeMte1, [&](nm::Accesses* acc) {
    nm::load_cbuf_to_l0(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src),
                        {uint16_t(ms), uint16_t(ks), uint16_t(mst), uint16_t(kst), int32_t(ss), uint16_t(ds), tr}, acc);
  });
}

void mad(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n, bool gemv_off,
         bool c_from_bias, bool init) {
  run("mad", kPipeM, [&](nm::Accesses* acc) {
    nm::mad(c, static_cast<const uint8_t*>(a), nm::CubeType(ta), static_cast<const uint8_t*>(b), nm::CubeType(tb),
            {uint16_t(m), uint16_t(k), uint16_t(n), gemv_off, c_from_bias, init}, acc);
  });
}

void fixpipe_out(void* dst, int dst_bytes, const float* src, uint64_t n, uint64_t m, uint64_t ds, uint64_t ss,
                 int quant, bool nz2nd) {
  run("copy_matrix_cc_to_gm", kPipeFix, [&](nm::Accesses* acc) {
    nm::Fixpipe op;
    op.n = uint16_t(n), op.m = uint16_t(m), op.src_stride = uint16_t(ss), op.dst_stride = uint32_t(ds), op.nz2nd = nz2nd;
    DGA_REQUIRE(quant >= 0, kNotImplemented, "quantPre", "only NoQuant, F322F16 and F322BF16 are modelled");
    op.quant = nm::FixQuant(quant);
    DGA_REQUIRE((dst_bytes == 4) == (op.quant == nm::FixQuant::kNone), kValue, "quantPre",
                "the Fixpipe's conversion does not match its destination type (", dst_bytes, "-byte elements)");
    op.atomic_add = g_atomic == 1;
    uint8_t* out[2] = {static_cast<uint8_t*>(dst), nullptr};
    nm::fixpipe(out, src, op, acc);
  });
}

void mx_load(bool b, uint64_t mx_dst, const void* src, uint64_t xs, uint64_t ys, uint64_t xst, uint64_t yst,
             uint64_t ss, uint64_t ds) {
  run(b ? "load_cbuf_to_cb_mx" : "load_cbuf_to_ca_mx", kPipeMte1, [&](nm::Accesses* acc) {
    nm::load_mx_scales(reinterpret_cast<uint8_t*>(uintptr_t(mx_dst)), static_cast<const uint8_t*>(src),
                       {uint16_t(xs), uint16_t(ys), uint16_t(xst), uint16_t(yst), uint16_t(ss), uint16_t(ds)}, acc);
  });
}

void mad_mx(float* c, const void* a, int ta, const void* b, int tb, uint64_t m, uint64_t k, uint64_t n, bool gemv_off,
            bool c_from_bias, bool init) {
  run("mad_mx", kPipeM, [&](nm::Accesses* acc) {
    nm::mad_mx(c, static_cast<const uint8_t*>(a), nm::CubeType(ta), mx_scales_of(a, false),
               static_cast<const uint8_t*>(b), nm::CubeType(tb), mx_scales_of(b, true),
               {uint16_t(m), uint16_t(k), uint16_t(n), gemv_off, c_from_bias, init}, acc);
  });
}

void unmodelled(const char* instruction) {
  guard(instruction, [&] {
    DGA_REQUIRE(false, kNotImplemented, "npu_model", instruction, " is not modelled");
  });
}

void atomic(int mode) { g_atomic = mode; }

void flag(bool set, int src, int dst, int id) {
  guard(set ? "set_flag" : "wait_flag", [&] {
    DGA_REQUIRE(g_events != nullptr, kRuntime, "event", "a flag outside a core run");
    if (set) g_events->set_flag(nm::pipe_name(src), nm::pipe_name(dst), id);
    else g_events->wait_flag(nm::pipe_name(src), nm::pipe_name(dst), id);
    if (set) g_hazards->set_flag(src, dst, id);
    else g_hazards->wait_flag(src, dst, id);
  });
}

void barrier(int pipe) {
  guard("pipe_barrier", [&] {
    if (g_hazards) g_hazards->barrier(pipe);
  });
}

}  // namespace dga_model
