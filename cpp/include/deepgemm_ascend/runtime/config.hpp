// Process-wide knobs.
#pragma once

namespace deepgemm_ascend::runtime {

// Checked mode of the host tile machine: DGA_CHECKED=1 or the DGA_CHECKED CMake option turns it on.
bool checked_mode();
void set_checked_mode(bool on);

// DG_PRINT_CONFIGS=1 prints each chosen kernel config once per shape.
bool print_configs();

// DGA_JIT=1: GEMM launches run the JIT-compiled entry specialised on their tile config.
bool jit_gemm();

}  // namespace deepgemm_ascend::runtime
