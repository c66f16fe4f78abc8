// The vector instructions of model_instructions.h on the model (npu_model/vector.hpp) for the current
// vector core: the register micro-ops of Duplicate / Axpy / Cast / LoadAlign / Add / Sub / Mul / MulAddDst / ReduceSum /
// Exp / Abs / Div / Maxs / Mins / ReduceMax / Or / Relu / Muls / Adds / Arange / Compares / Select / MaskAnd /
// MaskOr / MaskNot (V pipe), the UB -> GM
// DataCopyPad (MTE3) and the GM -> UB DataCopyPad (MTE2), with the core's predicate
// file, CTRL and loop registers. Plain C++ (no devkit headers).
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "deepgemm_ascend/npu_model/vector.hpp"
#include "model_core.hpp"
#include "model_runner.hpp"

namespace dga_model {

namespace {

nm::Vreg load_reg(const void* r) {
  nm::Vreg v;
  std::memcpy(v.bytes.data(), r, nm::kVregBytes);
  return v;
}
void store_reg(void* r, const nm::Vreg& v) { std::memcpy(r, v.bytes.data(), nm::kVregBytes); }

nm::VectorCore& vec() {
  Core& c = current();
  DGA_REQUIRE(c.sub >= 0, kRuntime, "core", "a vector instruction on the cube core (", c.name, ")");
  return c.vec;
}

// The mask-merge mode as GetMaskMergeMode passes it (MaskMergeMode: MERGING 1, ZEROING 2).
nm::Merge merge_of(int mode) {
  constexpr int kMerging = 1, kZeroing = 2;
  DGA_REQUIRE(mode == kMerging || mode == kZeroing, kValue, "mode", "unknown mask-merge mode ", mode);
  return mode == kZeroing ? nm::Merge::kZeroing : nm::Merge::kMerging;
}

// Registers vlds last filled with an unpacking distribution, per core, and how many register bytes one UB
// byte spreads over: UNPK_B16 2 (16-bit slot 2 i <- UB element i, odd slots 0), UNPK4_B8 4 (register byte
// 4 j <- UB byte j, the three after it 0). Kept here rather than in Core: an entry is read only with the
// core's loaded_from entry, which the same vlds set.
std::unordered_map<const Core*, std::unordered_map<const void*, size_t>> g_unpacked;
// Registers vlds last filled with a broadcast (BRC_B16 / BRC_B32), per core, and the bytes of the one UB
// value every element holds; kept as g_unpacked is.
std::unordered_map<const Core*, std::unordered_map<const void*, size_t>> g_broadcast;

// Register bytes [off, off + n) of `reg`, if vlds loaded it: the UB bytes they came from, as reads the access
// checker orders (the load itself is checked for bounds only); the zero bytes an unpacking load adds come
// from nowhere.
void note_reg(nm::Accesses* acc, const void* reg, size_t off, size_t n) {
  const auto& from = current().loaded_from;
  const auto it = from.find(reg);
  if (it == from.end() || std::memcmp(it->second.value.bytes.data(), reg, nm::kVregBytes) != 0) return;
  if (const auto b = g_broadcast.find(&current()); b != g_broadcast.end())
    if (const auto f = b->second.find(reg); f != b->second.end()) return nm::note(acc, it->second.from, f->second, false);
  size_t spread = 1;
  if (const auto u = g_unpacked.find(&current()); u != g_unpacked.end())
    if (const auto f = u->second.find(reg); f != u->second.end()) spread = f->second;
  const uint8_t* ub = it->second.from;
  if (spread == 1) return nm::note(acc, ub + off, n, false);
  if (spread == 2) {
    constexpr size_t kSlot = 2;
    for (size_t s = off / kSlot; s < (off + n + kSlot - 1) / kSlot; ++s)
      if (s % 2 == 0) nm::note(acc, ub + s, kSlot, false);  // slot 2 i <- UB bytes [2 i, 2 i + 2)
    return;
  }
  for (size_t b = off; b < off + n; ++b)
    if (b % spread == 0) nm::note(acc, ub + b / spread, 1, false);  // byte 4 j <- UB byte j
}

// The UB bytes of the lanes of `reg` active under `mask` (elements of `width` bytes), if vlds loaded it.
void note_used(nm::Accesses* acc, const void* reg, uint16_t mask, int width) {
  const nm::Pred& p = vec().pred(mask);
  for (size_t e = 0; e < nm::kVregBytes / size_t(width); ++e)
    if (p.test(e * size_t(width))) note_reg(acc, reg, e * size_t(width), size_t(width));
}

// The element width a store's mask governs (NORM_Bn, PK_Bn: n bits).
int element_bytes(nm::StoreDist d) {
  switch (d) {
    case nm::StoreDist::kNormB8: return 1;
    case nm::StoreDist::kNormB16: case nm::StoreDist::kPackB16: return 2;
    default: return 4;
  }
}

void forget(const void* reg) { current().loaded_from.erase(reg); }

}  // namespace

uint16_t v_pset(int width, int pattern) {
  uint16_t h = 0;
  guard(width == 2 ? "pset_b16" : "pset_b32", [&] {
    h = width == 2 ? vec().pset_b16(nm::Pattern(pattern)) : vec().pset_b32(nm::Pattern(pattern));
  });
  return h;
}

uint16_t v_plt(int width, uint32_t& scalar, bool post_update) {
  uint16_t h = 0;
  guard(width == 2 ? "plt_b16" : "plt_b32", [&] {
    const nm::Post p = post_update ? nm::Post::kUpdate : nm::Post::kNoUpdate;
    h = width == 2 ? vec().plt_b16(scalar, p) : vec().plt_b32(scalar, p);
  });
  return h;
}

void v_lds(void* reg, const void* addr, int dist) {
  run("vlds", kPipeV, [&](nm::Accesses* acc) {
    nm::Vreg v;
    vec().vlds(v, static_cast<const uint8_t*>(addr), nm::LoadDist(dist), acc);
    store_reg(reg, v);
    for (nm::Run& r : *acc) r.ordered = false;
    current().loaded_from[reg] = {static_cast<const uint8_t*>(addr), v};
    auto& unpacked = g_unpacked[&current()];
    const nm::LoadDist d = nm::LoadDist(dist);
    if (d == nm::LoadDist::kUnpackB16) unpacked[reg] = 2;
    else if (d == nm::LoadDist::kUnpack4B8) unpacked[reg] = 4;
    else unpacked.erase(reg);
    auto& broadcast = g_broadcast[&current()];
    if (d == nm::LoadDist::kBrcB16) broadcast[reg] = 2;
    else if (d == nm::LoadDist::kBrcB32) broadcast[reg] = 4;
    else broadcast.erase(reg);
  });
}

void v_sts(const void* reg, void* addr, int dist, uint16_t mask) {
  run("vsts", kPipeV, [&](nm::Accesses* acc) {
    vec().vsts(load_reg(reg), static_cast<uint8_t*>(addr), nm::StoreDist(dist), mask, acc);
    note_used(acc, reg, mask, element_bytes(nm::StoreDist(dist)));
  });
}

void v_dup(void* reg, uint32_t bits, int width, uint16_t mask, int mode) {
  run("vdup", kPipeV, [&](nm::Accesses*) {
    forget(reg);
    nm::Vreg v = load_reg(reg);
    vec().vdup(v, bits, nm::Width(width), mask, merge_of(mode));
    store_reg(reg, v);
  });
}

void v_axpy(void* dst, const void* src, float scalar, uint16_t mask, int mode) {
  run("vaxpy", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, dst, mask, kFloat);
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vaxpy(v, load_reg(src), scalar, mask, merge_of(mode));
    store_reg(dst, v);
  });
}

namespace {
// vcvt f32 -> bf16 / f16 (one of VectorCore's two casts): the operands as model_instructions.h hands them.
using NarrowCast = void (nm::VectorCore::*)(nm::Vreg&, const nm::Vreg&, uint16_t, nm::Round, nm::Sat, nm::Part,
                                            nm::Merge) const;
void cvt_f32_b16(NarrowCast cast, void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode) {
  run("vcvt", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    const nm::Sat s = sat == 1 ? nm::Sat::kEnable : nm::Sat::kDisable;  // SatMode: UNKNOWN -1, NO_SAT 0, SAT 1
    (vec().*cast)(v, load_reg(src), mask, nm::Round(round), s, nm::Part(part), merge_of(mode));
    store_reg(dst, v);
  });
}
}  // namespace

void v_cvt_f32_bf16(void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode) {
  cvt_f32_b16(&nm::VectorCore::vcvt_f322bf16, dst, src, mask, round, sat, part, mode);
}

void v_cvt_f32_f16(void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode) {
  cvt_f32_b16(&nm::VectorCore::vcvt_f322f16, dst, src, mask, round, sat, part, mode);
}

void v_cvt_s32_f32(void* dst, const void* src, uint16_t mask, int round, int mode) {
  run("vcvt", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kInt32 = 4;
    note_used(acc, src, mask, kInt32);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vcvt_s322f32(v, load_reg(src), mask, nm::Round(round), merge_of(mode));
    store_reg(dst, v);
  });
}

void v_cvt_bf16_f32(void* dst, const void* src, uint16_t mask, int part, int mode) {
  run("vcvt", kPipeV, [&](nm::Accesses* acc) {
    DGA_REQUIRE(part == 0 || part == 1, kValue, "part", "unknown part ", part);
    constexpr size_t kB16 = 2, kB32 = 4;
    const nm::Pred& p = vec().pred(mask);
    for (size_t i = 0; i < nm::kVregBytes / kB32; ++i) {  // the source slots the mask selects (vector.hpp)
      const size_t slot = 2 * i + size_t(part);
      if (p.test(slot * kB16)) note_reg(acc, src, slot * kB16, kB16);
    }
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vcvt_bf162f32(v, load_reg(src), mask, nm::Part(part), merge_of(mode));
    store_reg(dst, v);
  });
}

void v_arith(char op, void* dst, const void* a, const void* b, uint16_t mask, int mode) {
  const char* name = op == '+' ? "vadd" : op == '-' ? "vsub" : op == '*' ? "vmul" : "vmula";
  run(name, kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, a, mask, kFloat);
    note_used(acc, b, mask, kFloat);
    if (op == 'a') note_used(acc, dst, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    const nm::Vreg x = load_reg(a), y = load_reg(b);
    if (op == '+') vec().vadd(v, x, y, mask, merge_of(mode));
    else if (op == '-') vec().vsub(v, x, y, mask, merge_of(mode));
    else if (op == '*') vec().vmul(v, x, y, mask, merge_of(mode));
    else vec().vmula(v, x, y, mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_cadd(void* dst, const void* src, uint16_t mask, int mode) {
  run("vcadd", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vcadd(v, load_reg(src), mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_relu(void* dst, const void* src, uint16_t mask, int mode) {
  run("vrelu", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vrelu(v, load_reg(src), mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_scalar(char op, void* dst, const void* src, float scalar, uint16_t mask, int mode) {
  run(op == '*' ? "vmuls" : "vadds", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    if (op == '*') vec().vmuls(v, load_reg(src), scalar, mask, merge_of(mode));
    else vec().vadds(v, load_reg(src), scalar, mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_unary(char op, void* dst, const void* src, uint16_t mask, int mode) {
  run(op == 'e' ? "vexp" : "vabs", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    if (op == 'e') vec().vexp(v, load_reg(src), mask, merge_of(mode));
    else vec().vabs(v, load_reg(src), mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_div(void* dst, const void* a, const void* b, uint16_t mask, int mode) {
  run("vdiv", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, a, mask, kFloat);
    note_used(acc, b, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vdiv(v, load_reg(a), load_reg(b), mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_minmax_s(bool max, void* dst, const void* src, float scalar, uint16_t mask, int mode) {
  run(max ? "vmaxs" : "vmins", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    if (max) vec().vmaxs(v, load_reg(src), scalar, mask, merge_of(mode));
    else vec().vmins(v, load_reg(src), scalar, mask, merge_of(mode));
    store_reg(dst, v);
  });
}

void v_cmax(void* dst, const void* src, uint16_t mask, int mode) {
  run("vcmax", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    vec().vcmax(v, load_reg(src), mask, merge_of(mode));
    store_reg(dst, v);
  });
}

// Like v_lds, but the register's bytes come from 8 separate blocks: not traced back to UB (note_reg), the
// load itself is checked.
void v_sldb(void* reg, const void* addr, int elem_bytes, uint32_t block_stride, uint16_t mask) {
  run("vsldb", kPipeV, [&](nm::Accesses* acc) {
    DGA_REQUIRE(elem_bytes == 1 || elem_bytes == 2 || elem_bytes == 4, kValue, "dst", "vsldb of ", elem_bytes,
                "-byte elements");
    const auto* at = static_cast<const uint8_t*>(addr);
    const nm::BufferPos u = buffer_positions(true).at(0);
    DGA_REQUIRE(at < u.base || at >= u.base + u.bytes || size_t(at - u.base) % nm::kUbBlockBytes == 0, kValue, "src",
                "the UB source (offset ", at - u.base, ") must be 32 B aligned (非连续对齐搬入（LoadAlign）.md)");
    nm::Vreg v;
    vec().vsldb(v, at, block_stride, mask, nm::Width(elem_bytes), acc);
    store_reg(reg, v);
    for (nm::Run& r : *acc) r.ordered = false;
    forget(reg);
  });
}

void v_cvt_f32_e4m3(void* dst, const void* src, uint16_t mask, int round, int sat, int part, int mode) {
  run("vcvt", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kFloat = 4;
    DGA_REQUIRE(part >= 0 && part < 4, kValue, "part", "unknown Part_T ", part);
    note_used(acc, src, mask, kFloat);
    forget(dst);
    nm::Vreg v = load_reg(dst);
    const nm::Sat s = sat == 1 ? nm::Sat::kEnable : nm::Sat::kDisable;
    vec().vcvt_f322e4m3(v, load_reg(src), mask, nm::Round(round), s, nm::Part4(part), merge_of(mode));
    store_reg(dst, v);
  });
}

void v_cvt_e2m1_bf16(void* dst, const void* src, uint16_t mask, int part, int mode) {
  run("vcvt", kPipeV, [&](nm::Accesses* acc) {
    DGA_REQUIRE(part >= 0 && part < 4, kValue, "part", "unknown Part_T ", part);
    const nm::Pred& p = vec().pred(mask);
    for (size_t j = 0; j < nm::kVregBytes / 4; ++j)  // the source bytes of the active pairs (vector.hpp)
      if (p.test(4 * j + size_t(part))) note_reg(acc, src, 4 * j + size_t(part), 1);
    forget(dst);
    nm::Vreg v;
    vec().vcvt_e2m12bf16(v, load_reg(src), mask, nm::Part4(part), merge_of(mode));
    store_reg(dst, v);
  });
}

void v_or(void* dst, const void* a, const void* b, int elem_bytes, uint16_t mask, int mode) {
  run("vor", kPipeV, [&](nm::Accesses* acc) {
    note_used(acc, a, mask, elem_bytes);
    note_used(acc, b, mask, elem_bytes);
    forget(dst);
    nm::Vreg v;
    vec().vor(v, load_reg(a), load_reg(b), mask, nm::Width(elem_bytes), merge_of(mode));
    store_reg(dst, v);
  });
}

void v_ci(void* dst, bool is_float, uint32_t bits, int order) {
  run("vci", kPipeV, [&](nm::Accesses*) {
    DGA_REQUIRE(order == 0 || order == 1, kValue, "order", "unknown index order ", order);
    forget(dst);
    nm::Vreg v;
    if (is_float) {
      float start;
      std::memcpy(&start, &bits, sizeof start);
      vec().vci_f32(v, start, nm::Order(order));
    } else {
      vec().vci_s32(v, int32_t(bits), nm::Order(order));
    }
    store_reg(dst, v);
  });
}

uint16_t v_cmps(int cmp, bool is_float, const void* src, uint32_t bits, uint16_t mask) {
  static const char* const kNames[] = {"vcmps_eq", "vcmps_ne", "vcmps_gt", "vcmps_ge", "vcmps_lt", "vcmps_le"};
  uint16_t h = 0;
  run(cmp >= 0 && cmp < 6 ? kNames[cmp] : "vcmps", kPipeV, [&](nm::Accesses* acc) {
    constexpr int kB32 = 4;
    note_used(acc, src, mask, kB32);
    DGA_REQUIRE(cmp >= 0 && cmp < 6, kValue, "cmp", "unknown comparison ", cmp);
    const nm::Vreg s = load_reg(src);
    if (is_float) {
      float scalar;
      std::memcpy(&scalar, &bits, sizeof scalar);
      h = vec().vcmps_f32(s, scalar, nm::Cmp(cmp), mask);
    } else {
      h = vec().vcmps_s32(s, int32_t(bits), nm::Cmp(cmp), mask);
    }
  });
  return h;
}

void v_sel(void* dst, const void* a, const void* b, uint16_t sel) {
  run("vsel", kPipeV, [&](nm::Accesses* acc) {
    constexpr size_t kB32 = 4;
    const nm::Pred& p = vec().pred(sel);
    for (size_t i = 0; i < nm::kVregBytes / kB32; ++i)  // each element reads the register it is taken from
      note_reg(acc, p.test(i * kB32) ? a : b, i * kB32, kB32);
    const nm::Vreg x = load_reg(a), y = load_reg(b);
    forget(dst);
    nm::Vreg v;
    vec().vsel_b32(v, x, y, sel);
    store_reg(dst, v);
  });
}

uint16_t v_plogic(char op, uint16_t a, uint16_t b, uint16_t mask) {
  uint16_t h = 0;
  run(op == '&' ? "pand" : op == '|' ? "por" : "pnot", kPipeV, [&](nm::Accesses*) {
    if (op == '&') h = vec().pand(a, b, mask);
    else if (op == '|') h = vec().por(a, b, mask);
    else h = vec().pnot(a, mask);
  });
  return h;
}

void ub_to_gm(void* gm, const void* ub, uint64_t n_burst, uint64_t len_burst, uint64_t dst_stride,
              uint64_t src_stride) {
  run("copy_ubuf_to_gm_align_v2", kPipeMte3, [&](nm::Accesses* acc) {
    nm::VectorCore& v = vec();
    const Core& c = current();
    if (c.atomic == 1) v.set_atomic_type(nm::AtomicType(c.atomic_type)), v.set_atomic_add();
    else v.set_atomic_none();
    v.copy_ubuf_to_gm_align_v2(static_cast<uint8_t*>(gm), static_cast<const uint8_t*>(ub),
                               {uint16_t(n_burst), uint32_t(len_burst), dst_stride, uint32_t(src_stride)}, acc);
  });
}

void loop_ubtoout(int which, uint64_t reg) {
  guard("set_loop*_ubtoout", [&] {
    if (which == 0) vec().set_loop_size_ubtoout(reg);
    else if (which == 1) vec().set_loop1_stride_ubtoout(reg);
    else vec().set_loop2_stride_ubtoout(reg);
  });
}

void gm_to_ub(void* ub, const void* gm, int elem_bytes, uint64_t n_burst, uint64_t len_burst, int left_pad,
              int right_pad, bool constant_pad, uint64_t src_stride, uint64_t dst_stride) {
  run("copy_gm_to_ubuf_align_v2", kPipeMte2, [&](nm::Accesses* acc) {
    const nm::GmToUb op{.n_burst = uint16_t(n_burst), .len_burst = uint32_t(len_burst), .left_pad = uint8_t(left_pad),
                        .right_pad = uint8_t(right_pad), .constant_pad = constant_pad, .src_stride = src_stride,
                        .dst_stride = uint32_t(dst_stride)};
    vec().copy_gm_to_ubuf_align_v2(static_cast<uint8_t*>(ub), static_cast<const uint8_t*>(gm), size_t(elem_bytes), op,
                                   acc);
  });
}

void loop_outtoub(int which, uint64_t reg) {
  guard("set_loop*_outtoub", [&] {
    if (which == 0) vec().set_loop_size_outtoub(reg);
    else if (which == 1) vec().set_loop1_stride_outtoub(reg);
    else vec().set_loop2_stride_outtoub(reg);
  });
}

void atomic_type(int type) { current().atomic_type = type; }

uint64_t get_ctrl() { return current().vec.ctrl(); }
void set_ctrl(uint64_t value) { current().vec.set_ctrl(value); }

}  // namespace dga_model
