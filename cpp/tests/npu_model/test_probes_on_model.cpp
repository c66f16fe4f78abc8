// The model's self-test launchers (cpp/npu_model/shim/model_probes.h): instruction forms that only Huawei's
// code reaches, run on the model like a kernel. The MX scale load's destination (LoadData_2D_MX.md: the
// L0A_MX / L0B_MX address is the L0A / L0B address / 16): the devkit's CPU-debug wrapper passes an address in
// its CPU L0A_MX / L0B_MX buffer, its device branch (and CATLASS, calling the instruction directly) the L0
// address divided by 16; both reach the same scale unit, and any other value is refused naming mx_dst.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../../npu_model/shim/model_probes.h"
#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/runtime/npu_model.hpp"

namespace runtime = deepgemm_ascend::runtime;

namespace {

// The 32 bytes the probe finds at the scale unit of L0 byte 512 after loading `in` with destination form
// `form`; the model error's message when the load is refused (the bytes then unread).
struct Probe {
  std::vector<uint8_t> out;
  std::string error;
};
Probe probe(int form, bool b, const std::vector<uint8_t>& in) {
  Probe r{std::vector<uint8_t>(32, 0xEE), ""};
  const DgaMxProbeParams p{uint64_t(uintptr_t(in.data())), uint64_t(uintptr_t(r.out.data())), form, b ? 1 : 0};
  try {
    runtime::npu_model_launch("dga_npu_launch_probe_mx_scale_load", 1, &p);
  } catch (const deepgemm_ascend::core::Error& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

TEST(NpuModelProbes, MxScaleLoadTakesBothDestinationForms) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  for (bool b : {false, true}) {
    for (int form : {kDgaMxDstWrapper, kDgaMxDstL0Over16}) {
      std::vector<uint8_t> in(32);  // bytes of their own per call: a load that wrote elsewhere is seen
      for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(100 + i + (b ? 50 : 0) + 3 * form);
      const Probe r = probe(form, b, in);
      EXPECT_EQ(r.error, "") << "form " << form << " b " << b;
      EXPECT_EQ(r.out, in) << "form " << form << " b " << b;
    }
  }
}

TEST(NpuModelProbes, MxScaleLoadRefusesAnyOtherDestination) {
  if (!runtime::npu_model_available()) GTEST_SKIP() << runtime::npu_model_unavailable_reason();
  for (bool b : {false, true}) {
    const Probe r = probe(kDgaMxDstOther, b, std::vector<uint8_t>(32, 7));
    EXPECT_NE(r.error.find(b ? "load_cbuf_to_cb_mx: mx_dst: is neither an L0B_MX address nor an L0B address divided "
                               "by 16"
                             : "load_cbuf_to_ca_mx: mx_dst: is neither an L0A_MX address nor an L0A address divided "
                               "by 16"),
              std::string::npos)
        << r.error;
  }
}
