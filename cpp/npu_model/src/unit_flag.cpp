#include "deepgemm_ascend/npu_model/unit_flag.hpp"

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr size_t kBlockBytes = 512;  // one unit flag per 512 B of L0C
constexpr int kKeep = 2, kChange = 3;
}  // namespace

UnitFlags::UnitFlags(const uint8_t* l0c, size_t bytes)
    : l0c_(l0c), bytes_(bytes), set_(bytes / kBlockBytes, 0), when_(bytes / kBlockBytes) {}

// The L0C blocks of the runs an Mmad writes or a Fixpipe reads.
template <class F>
void UnitFlags::for_blocks(int pipe, const Accesses& runs, F f) const {
  const bool writes = pipe == kPipeM;
  for (const Run& r : runs) {
    if (r.gm || r.write != writes || r.p < l0c_ || r.p >= l0c_ + bytes_ || r.bytes == 0) continue;
    const size_t off = size_t(r.p - l0c_);
    for (size_t b = off / kBlockBytes; b <= (off + r.bytes - 1) / kBlockBytes && b < set_.size(); ++b) f(b);
  }
}

void UnitFlags::before(int pipe, int unit_flag, const Accesses& runs, Hazards& hazards) const {
  if (unit_flag == 0 || l0c_ == nullptr) return;
  DGA_REQUIRE(unit_flag == kKeep || unit_flag == kChange, kNotImplemented, "unitFlag",
              "unitFlag ", unit_flag, " is not documented (0 off, 2 keep, 3 change the L0C unit flags)");
  const bool mmad = pipe == kPipeM;
  for_blocks(pipe, runs, [&](size_t b) {
    DGA_REQUIRE(set_[b] == (mmad ? 0 : 1), kRuntime, "unitFlag",
                mmad ? "an Mmad with unitFlag writes L0C block " : "a Fixpipe with unitFlag reads L0C block ", b,
                " (bytes [", b * kBlockBytes, ", ", (b + 1) * kBlockBytes, ")), whose unit flag is ", int(set_[b]),
                mmad ? ": no Fixpipe with unitFlag 3 has read it since an Mmad set it"
                     : ": no Mmad with unitFlag 3 has written it",
                " (on the 950 it would wait for an instruction later in program order)");
    hazards.order_after(pipe, when_[b]);
  });
}

void UnitFlags::after(int pipe, int unit_flag, const Accesses& runs, const Hazards& hazards) {
  if (unit_flag != kChange || l0c_ == nullptr) return;
  const Hazards::Clock now = hazards.clock_of(pipe);
  for_blocks(pipe, runs, [&](size_t b) {
    set_[b] = pipe == kPipeM ? 1 : 0;
    when_[b] = now;
  });
}

}  // namespace deepgemm_ascend::npu_model
