// Checked mode of the host tile machine. Every check that stands in for a silent NPU failure
// (buffer capacity, alignment, buffer position, extent, the event protocol and the stage protocol)
// must fire with a core::Error of kind kRuntime whose message names the kernel, the block and, for
// stage-protocol violations, the ring and the stage. A kernel that follows the protocol must stay
// silent, and an unchecked kernel only keeps the capacity check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/arch.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/host/primitives.hpp"
#include "deepgemm_ascend/host/stage_ring.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
namespace tile = dga::tile;
namespace layout = dga::layout;
using dga::core::DType;
using dga::core::ErrorKind;
using tile::Pipe;
using tile::Pos;

namespace {

constexpr const char* kKernel = "tile_check_kernel";
constexpr int kBlock = 5;
constexpr int kBlocks = 8;

// Runs f, which must throw a core::Error of kind kRuntime; returns its message ("" if none).
template <class F>
std::string violation_of(F&& f) {
  try {
    f();
  } catch (const dga::core::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a checked-mode violation, got none";
  return "";
}

void expect_contains(const std::string& msg, std::initializer_list<std::string> parts) {
  if (msg.empty()) return;  // violation_of() already reported the missing error
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' missing in: " << msg;
}

// Every violation names the kernel and the block it happened in.
void expect_context(const std::string& msg) { expect_contains(msg, {"'tile_check_kernel'", "block 5"}); }

// Deterministic bf16 operands: A [m, k] and B [n, k], row-major.
struct Operands {
  int64_t m, n, k;
  std::vector<uint16_t> a, b;
  Operands(int64_t m_, int64_t n_, int64_t k_)
      : m(m_), n(n_), k(k_), a(dga_test::random_bf16(size_t(m_ * k_), 11)), b(dga_test::random_bf16(size_t(n_ * k_), 12)) {}
  layout::MatrixRef ra() const { return {.base = a.data(), .origin = 0, .rows = m, .cols = k, .row_stride = k,
                                         .col_stride = 1, .bits = 16}; }
  layout::MatrixRef rb() const { return {.base = b.data(), .origin = 0, .rows = n, .cols = k, .row_stride = k,
                                         .col_stride = 1, .bits = 16}; }
};

// A Core of the given Arch inside a kernel bracket (block 5 of 8).
template <class Arch = dga::arch::Host>
struct Kernel {
  tile::host::Core core{tile::host::BufferSpec::of<Arch>()};
  explicit Kernel(bool checked = true) { core.begin_kernel(kKernel, kBlock, kBlocks, checked); }
};

// Sets the process-wide checked mode for one scope and restores the previous value.
struct CheckedModeScope {
  bool prev = dga::runtime::checked_mode();
  explicit CheckedModeScope(bool on) { dga::runtime::set_checked_mode(on); }
  ~CheckedModeScope() { dga::runtime::set_checked_mode(prev); }
};

}  // namespace

// ---- buffer capacity -----------------------------------------------------------------------------

TEST(TileCheckCapacity, AllocBeyondL0AFailsEvenUnchecked) {
  for (bool checked : {true, false}) {
    Kernel<> k(checked);
    const std::string msg = violation_of([&] { k.core.alloc(Pos::kL0A, dga::arch::Host::kL0ABytes + 1, "big_a"); });
    expect_context(msg);
    expect_contains(msg, {"L0A", "overflow", "'big_a'", "Host"});
    // Filling the buffer exactly is fine; one more byte is not.
    k.core.begin_kernel(kKernel, kBlock, kBlocks, checked);
    EXPECT_NO_THROW(k.core.alloc(Pos::kL0A, dga::arch::Host::kL0ABytes, "all_of_l0a"));
    EXPECT_EQ(k.core.used(Pos::kL0A), dga::arch::Host::kL0ABytes);
    expect_contains(violation_of([&] { k.core.alloc(Pos::kL0A, 1, "one_more"); }), {"'one_more'", "L0A"});
  }
}

TEST(TileCheckCapacity, CapacityComesFromTheArchTag) {
  // 768 KB of L1 fits the host's 1 MB but not the 512 KB of an Ascend950.
  constexpr uint32_t kBytes = 768 * 1024;
  Kernel<dga::arch::Host> host;
  EXPECT_NO_THROW(host.core.alloc(Pos::kL1, kBytes, "panel"));
  Kernel<dga::arch::Ascend950> npu;
  const std::string msg = violation_of([&] { npu.core.alloc(Pos::kL1, kBytes, "panel"); });
  expect_context(msg);
  expect_contains(msg, {"L1", "Ascend950", std::to_string(dga::arch::Ascend950::kL1Bytes)});
}

TEST(TileCheckCapacity, StageRingWhoseStagesDoNotFit) {
  for (bool checked : {true, false}) {
    Kernel<> k(checked);
    // Two stages of more than half of L0A cannot share it.
    const uint32_t stage = k.core.spec().bytes[int(Pos::kL0A)] / 2 + 1024;
    const std::string msg = violation_of([&] {
      tile::host::StageRing<2> ring(k.core, Pos::kL0A, stage, Pipe::kMTE1, Pipe::kM, "fat_l0a");
    });
    expect_context(msg);
    expect_contains(msg, {"'fat_l0a'", "L0A", "overflow"});
  }
  // Two 384 KB L1 stages fit the host but not an Ascend950.
  Kernel<dga::arch::Host> host;
  EXPECT_NO_THROW((tile::host::StageRing<2>(host.core, Pos::kL1, 384 * 1024, Pipe::kMTE2, Pipe::kMTE1, "l1_ring")));
  Kernel<dga::arch::Ascend950> npu;
  const std::string msg = violation_of([&] {
    tile::host::StageRing<2> ring(npu.core, Pos::kL1, 384 * 1024, Pipe::kMTE2, Pipe::kMTE1, "l1_ring");
  });
  expect_context(msg);
  expect_contains(msg, {"'l1_ring'", "Ascend950"});
}

// ---- alignment, position, extent -----------------------------------------------------------------

TEST(TileCheckAlignment, MisalignedL0AOperandOfMmad) {
  Kernel<> k;
  const tile::host::LocalTile a = k.core.alloc(Pos::kL0A, 2048, "a");
  const tile::host::LocalTile b = k.core.alloc(Pos::kL0B, 1024, "b");
  const tile::host::LocalTile c = k.core.alloc(Pos::kL0C, 1024, "c");
  std::memset(a.addr, 0, a.bytes);
  std::memset(b.addr, 0, b.bytes);
  const tile::L0CGeometry c_g{16, 16};
  const std::string msg = violation_of([&] { tile::host::mmad(k.core, c, c_g, a.sub(256, 1024), b, 32, true); });
  expect_context(msg);
  expect_contains(msg, {"mmad (a)", "L0A", "offset 256", "512-byte aligned"});
  // The next 512-byte boundary inside the same tile is accepted.
  EXPECT_NO_THROW(tile::host::mmad(k.core, c, c_g, a.sub(512, 1024), b, 32, true));
}

TEST(TileCheckAlignment, MisalignedOperandsOfLoadL1ToL0A) {
  Kernel<> k;
  const Operands ops(16, 16, 32);
  const auto g = layout::NzGeometry::fit(16, 32, 16);
  const tile::host::LocalTile l1 = k.core.alloc(Pos::kL1, 2048, "l1");
  const tile::host::LocalTile l0a = k.core.alloc(Pos::kL0A, 2048, "l0a");
  tile::host::copy_gm_to_l1(k.core, l1, g, ops.ra());

  std::string msg = violation_of([&] { tile::host::load_l1_to_l0a(k.core, l0a.sub(32, 1024), l1, g, 0, 32); });
  expect_context(msg);
  expect_contains(msg, {"load_l1_to_l0a (dst)", "L0A", "offset 32", "512-byte aligned"});

  // L1 needs 32-byte alignment.
  msg = violation_of([&] { tile::host::load_l1_to_l0a(k.core, l0a, l1.sub(16, 1024), g, 0, 32); });
  expect_context(msg);
  expect_contains(msg, {"load_l1_to_l0a (src)", "L1", "offset 16", "32-byte aligned"});
  EXPECT_NO_THROW(tile::host::load_l1_to_l0a(k.core, l0a.sub(512, 1024), l1, g, 0, 32));
}

TEST(TileCheckPosition, L1TileWhereMmadExpectsL0A) {
  Kernel<> k;
  const tile::host::LocalTile l1 = k.core.alloc(Pos::kL1, 1024, "l1");
  const tile::host::LocalTile a = k.core.alloc(Pos::kL0A, 1024, "a");
  const tile::host::LocalTile b = k.core.alloc(Pos::kL0B, 1024, "b");
  const tile::host::LocalTile c = k.core.alloc(Pos::kL0C, 1024, "c");
  std::string msg = violation_of([&] { tile::host::mmad(k.core, c, {16, 16}, l1, b, 32, true); });
  expect_context(msg);
  expect_contains(msg, {"mmad (a)", "lives in L1", "expected L0A"});
  msg = violation_of([&] { tile::host::mmad(k.core, c, {16, 16}, a, a, 32, true); });
  expect_contains(msg, {"mmad (b)", "lives in L0A", "expected L0B"});
  msg = violation_of([&] { tile::host::mmad(k.core, a, {16, 16}, a, b, 32, true); });
  expect_contains(msg, {"mmad (c)", "lives in L0A", "expected L0C"});
  const Operands ops(16, 16, 16);
  msg = violation_of([&] { tile::host::copy_gm_to_l1(k.core, a, layout::NzGeometry::fit(16, 16, 16), ops.ra()); });
  expect_context(msg);
  expect_contains(msg, {"copy_gm_to_l1", "lives in L0A", "expected L1"});
}

TEST(TileCheckExtent, MmadGeometryExceedsOperandTile) {
  Kernel<> k;
  const tile::host::LocalTile a = k.core.alloc(Pos::kL0A, 512, "a");  // 16 x 16 bf16
  const tile::host::LocalTile b = k.core.alloc(Pos::kL0B, 4096, "b");
  const tile::host::LocalTile c = k.core.alloc(Pos::kL0C, 4096, "c");
  std::string msg = violation_of([&] { tile::host::mmad(k.core, c, {16, 16}, a, b, 32, true); });
  expect_context(msg);
  expect_contains(msg, {"mmad (a)", "1024 bytes exceed the 512-byte tile", "L0A"});
  // An L0C geometry larger than the C tile.
  msg = violation_of([&] { tile::host::mmad(k.core, c.sub(0, 1024), {16, 32}, a, b, 16, true); });
  expect_contains(msg, {"mmad (c)", "2048 bytes exceed the 1024-byte tile"});
  // A GM -> L1 copy whose Nz geometry does not fit the L1 tile.
  const tile::host::LocalTile l1 = k.core.alloc(Pos::kL1, 1024, "l1");
  const Operands ops(32, 32, 32);
  msg = violation_of([&] { tile::host::copy_gm_to_l1(k.core, l1, layout::NzGeometry::fit(32, 32, 16), ops.ra()); });
  expect_context(msg);
  expect_contains(msg, {"copy_gm_to_l1", "2048 bytes exceed the 1024-byte tile"});
}

TEST(TileCheckExtent, LoadReadsBeyondItsL1SourceTile) {
  // primitives.hpp: "in checked mode each verifies ... extent ... before touching memory". The L1
  // source tile holds 16 x 32 values (1 KB), but the geometry claims 16 x 64 and the K range
  // [32, 64) lies in the next allocation of L1 (another stage on the NPU).
  Kernel<> k;
  const tile::host::LocalTile l1 = k.core.alloc(Pos::kL1, 1024, "l1");
  const tile::host::LocalTile neighbour = k.core.alloc(Pos::kL1, 1024, "neighbour");
  std::memset(l1.addr, 0, l1.bytes);
  std::memset(neighbour.addr, 0, neighbour.bytes);
  const tile::host::LocalTile l0a = k.core.alloc(Pos::kL0A, 1024, "l0a");
  const tile::host::LocalTile l0b = k.core.alloc(Pos::kL0B, 1024, "l0b");
  const auto wide = layout::NzGeometry::fit(16, 64, 16);
  std::string msg = violation_of([&] { tile::host::load_l1_to_l0a(k.core, l0a, l1, wide, 32, 32); });
  expect_context(msg);
  expect_contains(msg, {"load_l1_to_l0a", "L1"});
  msg = violation_of([&] { tile::host::load_l1_to_l0b(k.core, l0b, {32, 16}, l1, wide, 32); });
  expect_context(msg);
  expect_contains(msg, {"load_l1_to_l0b", "L1"});
}

// ---- event protocol ------------------------------------------------------------------------------

TEST(TileCheckFlags, WaitWithoutSetIsADeadlock) {
  Kernel<> k;
  const std::string msg = violation_of([&] { k.core.wait_flag(Pipe::kMTE2, Pipe::kMTE1, 2); });
  expect_context(msg);
  expect_contains(msg, {"WaitFlag MTE2->MTE1 id 2", "deadlock"});
}

TEST(TileCheckFlags, SetTwiceWithoutWaitHangs) {
  Kernel<> k;
  k.core.set_flag(Pipe::kM, Pipe::kFIX, 1);
  const std::string msg = violation_of([&] { k.core.set_flag(Pipe::kM, Pipe::kFIX, 1); });
  expect_context(msg);
  expect_contains(msg, {"SetFlag M->FIX id 1", "twice", "hangs"});
}

TEST(TileCheckFlags, FlagLeftSetAtKernelEnd) {
  Kernel<> k;
  k.core.set_flag(Pipe::kMTE2, Pipe::kMTE1, 3);
  const std::string msg = violation_of([&] { k.core.end_kernel(); });
  expect_context(msg);
  expect_contains(msg, {"MTE2->MTE1 id 3", "still set at kernel end"});
}

TEST(TileCheckFlags, BalancedSetAndWaitAreSilent) {
  Kernel<> k;
  for (int round = 0; round < 3; ++round)
    for (int id = 0; id < 6; ++id) {
      k.core.set_flag(Pipe::kMTE1, Pipe::kM, id);
      k.core.wait_flag(Pipe::kMTE1, Pipe::kM, id);
    }
  EXPECT_NO_THROW(k.core.end_kernel());
}

TEST(TileCheckEventIds, MoreRingsThanUserEventIds) {
  static_assert(dga::arch::Host::kUserEventIds == 6);
  Kernel<> k;
  {
    // Rings between different pipe pairs draw from different id pools; freed ids are reused.
    tile::host::StageRing<6> r1(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "l1_ring");
    tile::host::StageRing<6> r2(k.core, Pos::kL0A, 1024, Pipe::kMTE1, Pipe::kM, "l0a_ring");
  }
  {
    tile::host::StageRing<6> again(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "l1_ring_again");
  }
  EXPECT_NO_THROW(k.core.end_kernel());

  k.core.begin_kernel(kKernel, kBlock, kBlocks, true);
  const std::string msg = violation_of([&] {
    tile::host::StageRing<4> first(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "ring_a");
    tile::host::StageRing<3> second(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "ring_b");  // 7 > 6
  });
  expect_context(msg);
  expect_contains(msg, {"out of event ids", "MTE1->MTE2", "6 usable ids", "Host"});
}

// ---- stage protocol ------------------------------------------------------------------------------

namespace {

// A producer (MTE2) -> consumer (MTE1) L1 ring of two stages, each holding one 16 x 32 bf16 tile.
struct L1RingKernel : Kernel<> {
  Operands ops{16, 16, 32};
  layout::NzGeometry g = layout::NzGeometry::fit(16, 32, 16);
  tile::host::LocalTile l0a = core.alloc(Pos::kL0A, 1024, "l0a");
  tile::host::StageRing<2> ring{core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "l1_ring"};

  void produce() {
    tile::host::copy_gm_to_l1(core, ring.acquire(), g, ops.ra());
    ring.commit();
  }
  void consume_and_release() {
    tile::host::load_l1_to_l0a(core, l0a, ring.consume(), g, 0, 32);
    ring.release();
  }
};

}  // namespace

TEST(TileCheckStage, WriteToACommittedStageBeforeItsRelease) {
  L1RingKernel k;
  k.produce();
  k.consume_and_release();  // stage 0 done correctly
  const tile::host::LocalTile& t = k.ring.acquire();  // stage 1
  tile::host::copy_gm_to_l1(k.core, t, k.g, k.ops.ra());
  k.ring.commit();
  const std::string msg = violation_of([&] { tile::host::copy_gm_to_l1(k.core, t, k.g, k.ops.ra()); });
  expect_context(msg);
  expect_contains(msg, {"copy_gm_to_l1", "pipe MTE2", "stage 1", "'l1_ring'", "released"});
}

TEST(TileCheckStage, ProducerWritesWhileTheConsumerHoldsTheStage) {
  L1RingKernel k;
  k.produce();
  const tile::host::LocalTile& t = k.ring.consume();  // MTE1 now owns stage 0
  const std::string msg = violation_of([&] { tile::host::copy_gm_to_l1(k.core, t, k.g, k.ops.ra()); });
  expect_context(msg);
  expect_contains(msg, {"copy_gm_to_l1", "pipe MTE2", "stage 0", "'l1_ring'", "owned by MTE1"});
}

TEST(TileCheckStage, ReadBeforeConsume) {
  L1RingKernel k;
  const tile::host::LocalTile& t = k.ring.acquire();
  tile::host::copy_gm_to_l1(k.core, t, k.g, k.ops.ra());
  // Before commit the producer still owns the stage.
  std::string msg = violation_of([&] { tile::host::load_l1_to_l0a(k.core, k.l0a, t, k.g, 0, 32); });
  expect_context(msg);
  expect_contains(msg, {"load_l1_to_l0a (src)", "pipe MTE1", "stage 0", "'l1_ring'", "owned by MTE2"});
  // After commit it is in flight: nobody may touch it until consume().
  k.ring.commit();
  msg = violation_of([&] { tile::host::load_l1_to_l0a(k.core, k.l0a, t.sub(0, 1024), k.g, 0, 32); });
  expect_context(msg);
  expect_contains(msg, {"load_l1_to_l0a (src)", "stage 0", "'l1_ring'", "owned by none"});
}

TEST(TileCheckStage, MmadReadsAnL0AStageItDidNotConsume) {
  Kernel<> k;
  tile::host::StageRing<2> l0a(k.core, Pos::kL0A, 1024, Pipe::kMTE1, Pipe::kM, "l0a_ring");
  const tile::host::LocalTile b = k.core.alloc(Pos::kL0B, 1024, "b");
  const tile::host::LocalTile c = k.core.alloc(Pos::kL0C, 1024, "c");
  const tile::host::LocalTile& a = l0a.acquire();
  const std::string msg = violation_of([&] { tile::host::mmad(k.core, c, {16, 16}, a, b, 32, true); });
  expect_context(msg);
  expect_contains(msg, {"mmad (a)", "pipe M", "stage 0", "'l0a_ring'", "owned by MTE1"});
}

TEST(TileCheckStage, RingDestroyedWithAnUnreleasedStageIsReportedAtKernelEnd) {
  L1RingKernel k;
  {
    tile::host::StageRing<2> ring(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "leaky_ring");
    ring.acquire();
    ring.commit();
    ring.consume();  // never released
  }
  k.produce();
  k.consume_and_release();
  const std::string msg = violation_of([&] { k.core.end_kernel(); });
  expect_context(msg);
  expect_contains(msg, {"deadlock"});
}

TEST(TileCheckStage, RingDestroyedWithAnUnreleasedStageNamesRingAndStage) {
  Kernel<> k;
  {
    tile::host::StageRing<2> ring(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "leaky_ring");
    for (int i = 0; i < 2; ++i) {  // stage 0 completes, stage 1 is consumed but never released
      ring.acquire();
      ring.commit();
      ring.consume();
      if (i == 0) ring.release();
    }
  }
  const std::string msg = violation_of([&] { k.core.end_kernel(); });
  expect_context(msg);
  expect_contains(msg, {"'leaky_ring'", "stage 1"});
}

TEST(TileCheckStage, ReacquiringAStageBeforeItsReleaseNamesRingAndStage) {
  Kernel<> k;
  tile::host::StageRing<1> ring(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "single_ring");
  ring.acquire();
  ring.commit();
  const std::string msg = violation_of([&] { ring.acquire(); });  // stage 0 is still in flight
  expect_context(msg);
  expect_contains(msg, {"deadlock", "'single_ring'", "stage 0"});
  k.core.begin_kernel(kKernel, kBlock, kBlocks, false);  // let the ring's destructor run unchecked
}

// ---- a correct pipeline is silent ----------------------------------------------------------------

// D[m, n] = A[m, k] B[n, k]^T through L1 / L0A / L0B / L0C rings, K in steps of 32; returns D.
std::vector<float> run_pipeline(tile::host::Core& core, const Operands& ops) {
  constexpr int64_t kStep = 32;
  const auto a_g = layout::NzGeometry::fit(ops.m, kStep, 16), b_g = layout::NzGeometry::fit(ops.n, kStep, 16);
  const auto a_bytes = uint32_t(a_g.bytes()), b_bytes = uint32_t(b_g.bytes());
  const tile::L0CGeometry c_g{a_g.rows_pad, b_g.rows_pad};
  std::vector<float> d(size_t(ops.m * ops.n), NAN);
  {
    tile::host::StageRing<2> l1(core, Pos::kL1, a_bytes + b_bytes, Pipe::kMTE2, Pipe::kMTE1, "l1");
    tile::host::StageRing<2> l0a(core, Pos::kL0A, a_bytes, Pipe::kMTE1, Pipe::kM, "l0a");
    tile::host::StageRing<2> l0b(core, Pos::kL0B, b_bytes, Pipe::kMTE1, Pipe::kM, "l0b");
    tile::host::StageRing<1> l0c(core, Pos::kL0C, uint32_t(c_g.bytes()), Pipe::kM, Pipe::kFIX, "l0c");
    const tile::host::LocalTile& c = l0c.acquire();
    for (int64_t k0 = 0; k0 < ops.k; k0 += kStep) {
      const tile::host::LocalTile& s = l1.acquire();
      tile::host::copy_gm_to_l1(core, s.sub(0, a_bytes), a_g, ops.ra().block(0, k0, ops.m, kStep));
      tile::host::copy_gm_to_l1b(core, s.sub(a_bytes, b_bytes), b_g, ops.rb().block(0, k0, ops.n, kStep));
      l1.commit();
      const tile::host::LocalTile& r = l1.consume();
      tile::host::load_l1_to_l0a(core, l0a.acquire(), r.sub(0, a_bytes), a_g, 0, kStep);
      l0a.commit();
      tile::host::load_l1_to_l0b(core, l0b.acquire(), {kStep, c_g.n_pad}, r.sub(a_bytes, b_bytes), b_g, 0);
      l0b.commit();
      l1.release();
      tile::host::mmad(core, c, c_g, l0a.consume(), l0b.consume(), kStep, k0 == 0);
      l0a.release();
      l0b.release();
    }
    l0c.commit();
    const layout::MutMatrixRef out{.base = d.data(), .origin = 0, .rows = ops.m, .cols = ops.n, .row_stride = ops.n,
                                   .col_stride = 1, .bits = 32};
    tile::host::fixpipe(core, {out, DType::kFP32, nullptr}, l0c.consume(), c_g);
    l0c.release();
  }
  return d;
}

void expect_matches_reference(const Operands& ops, const std::vector<float>& d) {
  for (int64_t i = 0; i < ops.m; ++i)
    for (int64_t j = 0; j < ops.n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t l = 0; l < ops.k; ++l) {
        const double p = double(dga::core::bf16_to_float(ops.a[size_t(i * ops.k + l)])) *
                         dga::core::bf16_to_float(ops.b[size_t(j * ops.k + l)]);
        ref += p;
        mag += std::fabs(p);
      }
      ASSERT_NEAR(d[size_t(i * ops.n + j)], ref, 1e-5 * (1 + mag)) << "at (" << i << ", " << j << ")";
    }
}

TEST(TileCheckSilent, CorrectPipelineRaisesNothing) {
  for (const auto& arch : {tile::host::BufferSpec::of<dga::arch::Host>(), tile::host::BufferSpec::of<dga::arch::Ascend950>()}) {
    tile::host::Core core(arch);
    core.begin_kernel(kKernel, kBlock, kBlocks, true);
    const Operands ops(20, 24, 96);  // padded M / N, three K steps through the 2-stage rings
    std::vector<float> d;
    ASSERT_NO_THROW(d = run_pipeline(core, ops)) << arch.arch;
    EXPECT_NO_THROW(core.end_kernel()) << arch.arch;
    expect_matches_reference(ops, d);
  }
}

TEST(TileCheckUnchecked, ProtocolViolationsAreNotReported) {
  Kernel<> k(/*checked=*/false);
  EXPECT_FALSE(k.core.checked());
  const Operands ops(16, 16, 32);
  const auto g = layout::NzGeometry::fit(16, 32, 16);
  const tile::host::LocalTile l0a = k.core.alloc(Pos::kL0A, 1024, "l0a");
  EXPECT_NO_THROW({
    tile::host::StageRing<1> ring(k.core, Pos::kL1, 1024, Pipe::kMTE2, Pipe::kMTE1, "l1_ring");
    const tile::host::LocalTile& t = ring.acquire();
    tile::host::copy_gm_to_l1(k.core, t, g, ops.ra());
    ring.commit();
    tile::host::copy_gm_to_l1(k.core, t, g, ops.ra());        // reuse before release
    tile::host::load_l1_to_l0a(k.core, l0a, t, g, 0, 32);     // read before consume
    ring.acquire();                                      // re-acquire an in-flight stage
    ring.consume();                                      // destroyed unreleased below
  });
  EXPECT_NO_THROW(k.core.wait_flag(Pipe::kMTE2, Pipe::kMTE1, 4));  // wait without set
  EXPECT_NO_THROW(k.core.set_flag(Pipe::kM, Pipe::kFIX, 0));
  EXPECT_NO_THROW(k.core.set_flag(Pipe::kM, Pipe::kFIX, 0));  // set twice, and left set
  EXPECT_NO_THROW(k.core.end_kernel());
  // Capacity is still checked.
  expect_contains(violation_of([&] { k.core.alloc(Pos::kL0B, dga::arch::Host::kL0BBytes + 512, "b"); }),
                  {"L0B", "overflow"});
}

// ---- through the launcher and the real GEMM kernel -----------------------------------------------

TEST(TileCheckLaunch, ViolationInABlockNamesKernelAndBlock) {
  CheckedModeScope checked(true);
  auto& backend = dga::runtime::host_backend();
  const std::string msg = violation_of([&] {
    backend.launch("faulty_kernel", 4, [](tile::host::Core& core) {
      if (core.block_idx() == 2) core.wait_flag(Pipe::kMTE2, Pipe::kMTE1, 0);
    });
  });
  expect_contains(msg, {"'faulty_kernel'", "block 2", "deadlock"});
  // Unchecked, the same kernel runs through.
  dga::runtime::set_checked_mode(false);
  EXPECT_NO_THROW(backend.launch("faulty_kernel", 4, [](tile::host::Core& core) {
    if (core.block_idx() == 2) core.wait_flag(Pipe::kMTE2, Pipe::kMTE1, 0);
  }));
}

TEST(TileCheckGemm, RealBf16GemmRunsCleanInCheckedMode) {
  CheckedModeScope checked(true);
  ASSERT_TRUE(dga::runtime::checked_mode());
  struct Shape {
    int64_t m, n, k;
  };
  // Tiny, padded, multi-K-step and multi-tile (persistent loop) shapes.
  for (const Shape s : {Shape{1, 64, 32}, Shape{17, 33, 15}, Shape{129, 257, 384}, Shape{64, 96, 1000},
                        Shape{300, 520, 700}}) {
    for (const char* lay : {"nt", "tt"}) {  // B is [N, K] in both
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " + lay);
      const bool ta = lay[0] == 't';
      auto a = dga_test::random_bf16(size_t(s.m * s.k), 21), b = dga_test::random_bf16(size_t(s.n * s.k), 22);
      auto va = ta ? dga_test::view2d(a.data(), DType::kBF16, s.k, s.m, s.m, 1)
                   : dga_test::view2d(a.data(), DType::kBF16, s.m, s.k, s.k, 1);
      auto vb = dga_test::view2d(b.data(), DType::kBF16, s.n, s.k, s.k, 1);
      std::vector<float> d(size_t(s.m * s.n), NAN);
      auto vd = dga_test::view2d(d.data(), DType::kFP32, s.m, s.n, s.n, 1);
      ASSERT_NO_THROW(dga::bf16_gemm(lay, va, vb, vd));
      std::vector<double> got(d.begin(), d.end()), ref(got.size());
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double acc = 0;
          for (int64_t l = 0; l < s.k; ++l)
            acc += double(dga::core::bf16_to_float(ta ? a[size_t(l * s.m + i)] : a[size_t(i * s.k + l)])) *
                   dga::core::bf16_to_float(b[size_t(j * s.k + l)]);
          ref[size_t(i * s.n + j)] = acc;
        }
      EXPECT_LT(dga_test::calc_diff(got, ref), 1e-5);
    }
  }
}
