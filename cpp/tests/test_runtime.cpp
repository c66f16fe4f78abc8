// The host runtime: the AI-core thread pool behind HostBackend::launch, streams, concurrent
// launches, the core-count knob and the choice of host ISA. No test asserts on speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/arch/host.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"
#include "deepgemm_ascend/runtime/config.hpp"
#include "deepgemm_ascend/core/cpu_features.hpp"
#include "deepgemm_ascend/host/host_isa.hpp"
#include "deepgemm_ascend/runtime/stream.hpp"
#include "reference.hpp"

namespace dga = deepgemm_ascend;
namespace rt = dga::runtime;
using dga::core::DType;
using dga::core::ErrorKind;

namespace {

// Restores "all cores" when a test ends, whatever it set.
struct AllCoresAfter {
  ~AllCoresAfter() { rt::host_backend().set_num_ai_cores(0); }
};

// What the blocks of one launch saw.
struct LaunchRecord {
  std::vector<std::atomic<int>> runs;
  std::atomic<int> bad_block_num{0}, bad_kernel{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::set<const dga::tile::host::Core*> cores;

  explicit LaunchRecord(int dim) : runs(size_t(dim)) {}

  rt::BlockFn body(int dim) {
    return [this, dim](dga::tile::host::Core& core) {
      const int b = core.block_idx();
      if (b >= 0 && b < dim) runs[size_t(b)].fetch_add(1);
      if (core.block_num() != dim) bad_block_num.fetch_add(1);
      if (std::string(core.kernel()) != "count_blocks") bad_kernel.fetch_add(1);
      std::lock_guard<std::mutex> g(mu);
      threads.insert(std::this_thread::get_id());
      cores.insert(&core);
    };
  }
  void expect_each_block_once() {
    for (size_t b = 0; b < runs.size(); ++b) EXPECT_EQ(runs[b].load(), 1) << "block " << b << " of " << runs.size();
    EXPECT_EQ(bad_block_num.load(), 0);
    EXPECT_EQ(bad_kernel.load(), 0);
  }
};

// A small D = A @ B^T (fp32 out) through the public API; returns the largest error beyond tolerance
// against a double reference (0 when every element is within it).
double gemm_error(int64_t m, int64_t n, int64_t k, uint32_t seed) {
  auto a = dga_test::random_bf16(size_t(m * k), seed), b = dga_test::random_bf16(size_t(n * k), seed + 1);
  std::vector<float> d(size_t(m * n), NAN);
  dga::bf16_gemm_nt(dga_test::view2d(a.data(), DType::kBF16, m, k, k, 1),
                    dga_test::view2d(b.data(), DType::kBF16, n, k, k, 1),
                    dga_test::view2d(d.data(), DType::kFP32, m, n, n, 1));
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double p = double(dga::core::bf16_to_float(a[size_t(i * k + l)])) *
                         dga::core::bf16_to_float(b[size_t(j * k + l)]);
        ref += p;
        mag += std::fabs(p);
      }
      const double err = std::fabs(d[size_t(i * n + j)] - ref);  // NaN if never written
      const double tol = 1e-5 * (1 + mag);
      if (!(err <= tol)) worst = std::max(worst, std::isnan(err) ? 1e30 : err);
    }
  return worst;
}

}  // namespace

// ---- launch ----------------------------------------------------------------------------------------

TEST(RuntimeLaunch, EveryBlockRunsExactlyOnce) {
  AllCoresAfter restore;
  auto& backend = rt::host_backend();
  for (int cores : {0, 1}) {
    backend.set_num_ai_cores(cores);
    for (int dim : {1, 2, 3, 7, 100}) {
      SCOPED_TRACE("num_ai_cores " + std::to_string(cores) + ", block_dim " + std::to_string(dim));
      LaunchRecord rec(dim);
      backend.launch("count_blocks", dim, rec.body(dim));
      rec.expect_each_block_once();
      // The blocks are spread over min(block_dim, num_ai_cores()) cores, one tile::host::Core each.
      const size_t used = size_t(std::min(dim, backend.num_ai_cores()));
      EXPECT_EQ(rec.cores.size(), used);
      EXPECT_EQ(rec.threads.size(), used);
      // The calling thread takes part as core 0.
      EXPECT_EQ(rec.threads.count(std::this_thread::get_id()), 1u);
    }
  }
}

// A launch's blocks on its cores run at once (grid-wide syncs rely on it): each block of a launch with one
// block per core waits (at most 10 s) until every block has arrived.
namespace {
void expect_blocks_meet(const char* context) {
  SCOPED_TRACE(context);
  auto& backend = rt::host_backend();
  const int dim = backend.num_ai_cores();
  std::atomic<int> arrived{0}, met{0};
  backend.launch("rendezvous", dim, [&](dga::tile::host::Core&) {
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < dim && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    if (arrived.load() == dim) met.fetch_add(1);
  });
  EXPECT_EQ(met.load(), dim);
}
}  // namespace

TEST(RuntimeLaunch, TheBlocksOfALaunchRunAtOnce) {
  expect_blocks_meet("from the main thread");
  std::thread([] { expect_blocks_meet("from another thread"); }).join();
}

#if defined(_OPENMP)
// Inside a parallel region the OpenMP threads are taken: the launch runs on the library's own pool.
TEST(RuntimeLaunch, LaunchFromInsideAParallelRegionRunsEveryBlockAtOnce) {
  ASSERT_TRUE(rt::HostBackend::uses_openmp());
  auto& backend = rt::host_backend();
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    {
      LaunchRecord rec(7);
      backend.launch("count_blocks", 7, rec.body(7));
      rec.expect_each_block_once();
      expect_blocks_meet("inside a parallel region");
    }
  }
}
#endif

TEST(RuntimeLaunch, BodySeesTheCheckedModeOfTheLaunch) {
  const bool prev = rt::checked_mode();
  for (bool on : {true, false}) {
    rt::set_checked_mode(on);
    std::atomic<int> mismatches{0};
    rt::host_backend().launch("mode", 9, [&](dga::tile::host::Core& core) {
      if (core.checked() != on) mismatches.fetch_add(1);
    });
    EXPECT_EQ(mismatches.load(), 0) << "checked " << on;
  }
  rt::set_checked_mode(prev);
}

TEST(RuntimeLaunch, BlockDimOutOfRangeIsAValueError) {
  auto& backend = rt::host_backend();
  for (int dim : {0, -1, 65536}) {
    try {
      backend.launch("bad_dim", dim, [](dga::tile::host::Core&) {});
      ADD_FAILURE() << "no error for block_dim " << dim;
    } catch (const dga::core::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
      EXPECT_EQ(e.arg(), "block_dim") << e.what();
    }
  }
}

TEST(RuntimeCores, ZeroMeansAllAndOneRunsOnOneCore) {
  AllCoresAfter restore;
  auto& backend = rt::host_backend();
  EXPECT_GE(backend.max_ai_cores(), 1);
  backend.set_num_ai_cores(0);
  EXPECT_EQ(backend.num_ai_cores(), backend.max_ai_cores());
  EXPECT_EQ(dga::get_num_ai_cores(), dga::get_max_ai_cores());
  backend.set_num_ai_cores(backend.max_ai_cores());
  EXPECT_EQ(backend.num_ai_cores(), backend.max_ai_cores());

  dga::set_num_ai_cores(1);
  EXPECT_EQ(backend.num_ai_cores(), 1);
  LaunchRecord rec(100);
  backend.launch("count_blocks", 100, rec.body(100));
  rec.expect_each_block_once();
  EXPECT_EQ(rec.cores.size(), 1u);
  ASSERT_EQ(rec.threads.size(), 1u);
  EXPECT_EQ(*rec.threads.begin(), std::this_thread::get_id());
}

TEST(RuntimeCores, OutOfRangeCountsAreValueErrors) {
  AllCoresAfter restore;
  auto& backend = rt::host_backend();
  backend.set_num_ai_cores(1);
  for (int n : {-1, backend.max_ai_cores() + 1}) {
    try {
      backend.set_num_ai_cores(n);
      ADD_FAILURE() << "no error for num_ai_cores " << n;
    } catch (const dga::core::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
      EXPECT_EQ(e.arg(), "num_ai_cores") << e.what();
    }
    EXPECT_EQ(backend.num_ai_cores(), 1) << "a rejected value must not change the setting";
  }
  EXPECT_THROW(dga::set_num_ai_cores(-1), dga::core::Error);
}

TEST(RuntimeLaunch, ExceptionInABlockIsRethrownAndThePoolKeepsWorking) {
  AllCoresAfter restore;
  auto& backend = rt::host_backend();
  for (int cores : {0, 1}) {
    backend.set_num_ai_cores(cores);
    for (int round = 0; round < 10; ++round) {
      const int bad = round % 7;
      try {
        backend.launch("throws", 7, [bad](dga::tile::host::Core& core) {
          if (core.block_idx() == bad) throw std::runtime_error("boom in block " + std::to_string(bad));
        });
        ADD_FAILURE() << "the exception of block " << bad << " was swallowed";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "boom in block " + std::to_string(bad));
      }
      // A library error keeps its type and kind through the pool.
      try {
        backend.launch("throws", 5, [](dga::tile::host::Core& core) {
          if (core.block_idx() == 4) dga::core::fail(ErrorKind::kNotImplemented, "x", "not here");
        });
        ADD_FAILURE() << "no error";
      } catch (const dga::core::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented);
      }
      LaunchRecord rec(100);
      ASSERT_NO_THROW(backend.launch("count_blocks", 100, rec.body(100)));
      rec.expect_each_block_once();
    }
  }
}

// ---- streams ---------------------------------------------------------------------------------------

TEST(RuntimeStream, SyncStreamRunsInsideSubmit) {
  auto s = rt::make_host_stream(false);
  EXPECT_FALSE(s->is_async());
  EXPECT_FALSE(rt::host_backend().default_stream().is_async());
  std::vector<int> seen;
  s->submit([&] { seen.push_back(1); });
  EXPECT_EQ(seen, std::vector<int>{1});
  EXPECT_THROW(s->submit([] { throw std::runtime_error("sync"); }), std::runtime_error);
  EXPECT_NO_THROW(s->synchronize());
}

TEST(RuntimeStream, AsyncStreamRunsTasksInSubmissionOrder) {
  auto s = rt::host_backend().create_stream(true);
  EXPECT_TRUE(s->is_async());
  std::vector<int> seen;  // touched only by the stream's thread until synchronize()
  for (int i = 0; i < 500; ++i) s->submit([&seen, i] { seen.push_back(i); });
  s->synchronize();
  ASSERT_EQ(seen.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(seen[size_t(i)], i);
}

TEST(RuntimeStream, SynchronizeWaitsForPendingWork) {
  auto s = rt::make_host_stream(true);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> done{false};
  s->submit([open, &done] {
    open.wait();
    done = true;
  });
  // The gate opens from another thread a little later (very likely while synchronize() is waiting);
  // either way, synchronize() may only return after the task has finished.
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.set_value();
  });
  s->synchronize();
  EXPECT_TRUE(done.load());
  opener.join();
}

TEST(RuntimeStream, FirstFailureIsRethrownAtSynchronize) {
  auto s = rt::make_host_stream(true);
  std::vector<int> seen;
  s->submit([&] { seen.push_back(0); });
  s->submit([] { throw std::runtime_error("first"); });
  s->submit([&] { seen.push_back(2); });
  s->submit([] { throw std::logic_error("second"); });
  s->submit([&] { seen.push_back(4); });
  try {
    s->synchronize();
    ADD_FAILURE() << "the failure was not reported";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "first");
  }
  EXPECT_EQ(seen, (std::vector<int>{0, 2, 4}));  // later work still ran, in order
  EXPECT_NO_THROW(s->synchronize());            // reported once
  s->submit([&] { seen.push_back(5); });
  s->synchronize();
  EXPECT_EQ(seen.back(), 5);
}

TEST(RuntimeStream, LaunchOnAnAsyncStreamIsAsynchronousAndOrdered) {
  auto& backend = rt::host_backend();
  auto s = backend.create_stream(true);
  std::mutex mu;
  std::vector<char> order;
  auto log = [&](char c) {
    std::lock_guard<std::mutex> g(mu);
    order.push_back(c);
  };
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<int> blocks{0};
  s->submit([&, open] {
    open.wait();
    log('A');
  });
  backend.launch("async_kernel", 6, [&](dga::tile::host::Core&) {
    blocks.fetch_add(1);
    log('K');
  }, s.get());
  s->submit([&] { log('B'); });
  // The stream is held at the gate, so the launch can only have been queued.
  const int ran_before_gate = blocks.load();
  gate.set_value();
  s->synchronize();
  EXPECT_EQ(ran_before_gate, 0) << "launch() on an async stream ran the kernel synchronously";
  EXPECT_EQ(blocks.load(), 6);
  EXPECT_EQ(std::string(order.begin(), order.end()), "AKKKKKKB");

  // A failing kernel on the stream is reported at synchronize().
  backend.launch("async_fail", 3, [](dga::tile::host::Core& core) {
    if (core.block_idx() == 1) throw std::runtime_error("async block failed");
  }, s.get());
  EXPECT_THROW(s->synchronize(), std::runtime_error);
  EXPECT_NO_THROW(s->synchronize());
}

// ---- GEMMs through the pool ------------------------------------------------------------------------

TEST(RuntimeConcurrency, FourThreadsOfSmallGemms) {
  std::atomic<int> failures{0};
  std::mutex mu;
  std::string first_failure;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const int64_t m = 1 + (i * 7 + t * 5) % 40, n = 1 + (i * 5 + t * 3) % 48, k = 1 + (i * 11 + t) % 90;
        double err = 0;
        std::string what;
        try {
          err = gemm_error(m, n, k, uint32_t(1000 * t + i));
        } catch (const std::exception& e) {
          err = 1e30;
          what = e.what();
        }
        if (err != 0) {
          failures.fetch_add(1);
          std::lock_guard<std::mutex> g(mu);
          if (first_failure.empty())
            first_failure = "thread " + std::to_string(t) + " gemm " + std::to_string(m) + "x" + std::to_string(n) +
                            "x" + std::to_string(k) + ": error " + std::to_string(err) + " " + what;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << first_failure;
}

TEST(RuntimeConcurrency, OneCoreAndAllCoresAreBitIdentical) {
  AllCoresAfter restore;
  auto& backend = rt::host_backend();
  const int64_t m = 333, n = 270, k = 700;
  auto a = dga_test::random_bf16(size_t(m * k), 31), b = dga_test::random_bf16(size_t(n * k), 32);
  auto cv = dga_test::random_bf16(size_t(m * n), 33);
  const auto va = dga_test::view2d(a.data(), DType::kBF16, m, k, k, 1);
  const auto vb = dga_test::view2d(b.data(), DType::kBF16, n, k, k, 1);
  for (DType out : {DType::kFP32, DType::kBF16}) {
    std::vector<uint32_t> d[2];
    for (int run = 0; run < 2; ++run) {
      backend.set_num_ai_cores(run == 0 ? 1 : 0);
      std::vector<uint16_t> d16(size_t(m * n), 0x7FC0), c16(cv);
      std::vector<float> d32(size_t(m * n), NAN), c32(size_t(m * n));
      for (size_t i = 0; i < c32.size(); ++i) c32[i] = dga::core::bf16_to_float(cv[i]);
      const bool f32 = out == DType::kFP32;
      auto vd = dga_test::view2d(f32 ? static_cast<void*>(d32.data()) : d16.data(), out, m, n, n, 1);
      auto vc = dga_test::view2d(f32 ? static_cast<void*>(c32.data()) : c16.data(), out, m, n, n, 1);
      dga::bf16_gemm_nt(va, vb, vd, &vc);
      d[run].resize(size_t(m * n));
      for (size_t i = 0; i < d[run].size(); ++i) {
        if (f32) std::memcpy(&d[run][i], &d32[i], 4);
        else d[run][i] = d16[i];
      }
    }
    size_t diff = 0;
    for (size_t i = 0; i < d[0].size(); ++i) diff += d[0][i] != d[1][i];
    EXPECT_EQ(diff, 0u) << "elements differing between 1 core and " << backend.max_ai_cores() << " cores ("
                        << (out == DType::kFP32 ? "fp32" : "bf16") << " output)";
  }
}

// ---- host ISA ----------------------------------------------------------------------------------------

TEST(RuntimeIsa, SupportedListIsBestFirstAndEndsWithScalar) {
  const auto isas = dga::tile::host::supported_host_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), dga::tile::host::HostIsa::kScalar);
  EXPECT_EQ(std::set<dga::tile::host::HostIsa>(isas.begin(), isas.end()).size(), isas.size());
  if (!std::getenv("DGA_HOST_ISA")) {
    dga::tile::host::reset_host_isa();
    // The best, except avx512 where its FMA loop does not beat AVX2's (RuntimeIsa.Avx512GivesWayWhereItsFmaLoopDoesNotPay).
    const bool gives_way = isas.front() == dga::tile::host::HostIsa::kAvx512 && !dga::tile::host::avx512_pays(dga::tile::host::fma_width_race());
    EXPECT_EQ(dga::tile::host::active_host_isa(), gives_way ? dga::tile::host::HostIsa::kAvx2 : isas.front());
  }
  // The declared features agree with the list.
  const auto& f = dga::core::cpu_features();
  const bool has_avx512 = std::find(isas.begin(), isas.end(), dga::tile::host::HostIsa::kAvx512Bf16) != isas.end();
  if (has_avx512) EXPECT_TRUE(f.avx512f && f.avx512_bf16);
  if (!f.avx512_bf16) EXPECT_FALSE(has_avx512);
  const bool has_avx512f = std::find(isas.begin(), isas.end(), dga::tile::host::HostIsa::kAvx512) != isas.end();
  EXPECT_EQ(has_avx512f, f.avx512f && f.avx512bw && f.avx512vl && f.fma);
  if (has_avx512f && std::find(isas.begin(), isas.end(), dga::tile::host::HostIsa::kAvx2) != isas.end())
    EXPECT_LT(std::find(isas.begin(), isas.end(), dga::tile::host::HostIsa::kAvx512) - isas.begin(),
              std::find(isas.begin(), isas.end(), dga::tile::host::HostIsa::kAvx2) - isas.begin());
}

TEST(RuntimeIsa, Avx512GivesWayWhereItsFmaLoopDoesNotPay) {
  const double gain = dga::arch::Host::kAvx512MinFmaGain;
  EXPECT_TRUE(dga::tile::host::avx512_pays({1.8e11, 1.0e11}));   // two 512-bit FMA units (Ice Lake-class Xeon: 1.6-1.9x)
  EXPECT_TRUE(dga::tile::host::avx512_pays({gain * 1e11, 1e11}));
  EXPECT_FALSE(dga::tile::host::avx512_pays({0.99 * gain * 1e11, 1e11}));
  EXPECT_FALSE(dga::tile::host::avx512_pays({0.9e11, 1.0e11}));  // one 512-bit unit and a lower AVX-512 clock
  // The race ran on this CPU where it has both kernels, and never where it lacks either.
  const dga::tile::host::FmaWidthRace& race = dga::tile::host::fma_width_race();
  if (dga::tile::host::host_isa_runs(dga::tile::host::HostIsa::kAvx512) && dga::tile::host::host_isa_runs(dga::tile::host::HostIsa::kAvx2)) {
    EXPECT_GT(race.avx512, 0.0);
    EXPECT_GT(race.avx2, 0.0);
  } else {
    EXPECT_EQ(race.avx512, 0.0);
    EXPECT_EQ(race.avx2, 0.0);
  }
}

TEST(RuntimeIsa, ParseNamesAndRejectBogus) {
  for (auto isa : {dga::tile::host::HostIsa::kScalar, dga::tile::host::HostIsa::kAvx2, dga::tile::host::HostIsa::kAvx512, dga::tile::host::HostIsa::kAvx512Bf16, dga::tile::host::HostIsa::kAmxBf16})
    EXPECT_EQ(dga::tile::host::parse_host_isa(dga::tile::host::name(isa)), isa) << dga::tile::host::name(isa);
  try {
    dga::tile::host::parse_host_isa("bogus");
    ADD_FAILURE() << "'bogus' was accepted";
  } catch (const dga::core::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos) << e.what();
  }
}

TEST(RuntimeIsa, ForcingAnUnavailableIsaIsARuntimeError) {
  const auto isas = dga::tile::host::supported_host_isas();
  const dga::tile::host::HostIsa before = dga::tile::host::active_host_isa();
  auto supported = [&](dga::tile::host::HostIsa i) { return std::find(isas.begin(), isas.end(), i) != isas.end(); };
  if (!dga::core::cpu_features().amx_bf16) EXPECT_FALSE(supported(dga::tile::host::HostIsa::kAmxBf16));
  int rejected = 0;
  for (auto isa : {dga::tile::host::HostIsa::kAmxBf16, dga::tile::host::HostIsa::kAvx512Bf16, dga::tile::host::HostIsa::kAvx512, dga::tile::host::HostIsa::kAvx2}) {
    if (supported(isa)) continue;
    ++rejected;
    try {
      dga::tile::host::set_host_isa(isa);
      ADD_FAILURE() << dga::tile::host::name(isa) << " was accepted although unsupported";
    } catch (const dga::core::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
      EXPECT_NE(std::string(e.what()).find(dga::tile::host::name(isa)), std::string::npos) << e.what();
    }
    EXPECT_EQ(dga::tile::host::active_host_isa(), before) << "a rejected ISA must not change the active one";
  }
  if (rejected == 0) GTEST_SKIP() << "this CPU and build support every host ISA";
}

TEST(RuntimeIsa, ForcingASupportedIsaTakesEffectAndResetRestores) {
  const dga::tile::host::HostIsa before = dga::tile::host::active_host_isa();
  for (auto isa : dga::tile::host::supported_host_isas()) {
    dga::tile::host::set_host_isa(isa);
    EXPECT_EQ(dga::tile::host::active_host_isa(), isa);
    EXPECT_EQ(gemm_error(37, 29, 65, 77), 0.0) << dga::tile::host::name(isa);
  }
  dga::tile::host::reset_host_isa();
  EXPECT_EQ(dga::tile::host::active_host_isa(), before);
}
