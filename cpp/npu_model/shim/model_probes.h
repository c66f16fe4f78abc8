// The model's self-test launchers (entries_probes.cpp): launched like the kernels' (dga_npu_model_launch),
// they issue one instruction in a form no kernel of ours uses, for the model tests
// (cpp/tests/npu_model/test_probes_on_model.cpp). Plain C.
#pragma once

#include <stdint.h>

// dga_npu_launch_probe_mx_scale_load: on one cube core, 32 bytes at L1 byte 0 loaded by the MX scale load
// (load_cbuf_to_ca_mx, or _cb_mx with b) into the scale unit of L0A / L0B byte 512, that is L0A_MX /
// L0B_MX byte 32, named by mx_dst in one of its forms; the 32 bytes there copied to `out` afterwards.
enum DgaMxDstForm { kDgaMxDstWrapper = 0, kDgaMxDstL0Over16 = 1, kDgaMxDstOther = 2 };
struct DgaMxProbeParams {
  uint64_t in;   // 32 bytes written to L1 byte 0 first
  uint64_t out;  // 32 bytes read from the MX buffer's byte 32 after the load
  int32_t form;  // DgaMxDstForm: the CPU wrapper's L0A_MX / L0B_MX address, the L0A / L0B address / 16, 12345
  int32_t b;     // 1: the L0B side
};
