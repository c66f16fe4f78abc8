// Process-wide knobs.
#pragma once

namespace deepgemm_ascend::runtime {

// Checked mode of the host tile machine: DGA_CHECKED=1 or the DGA_CHECKED CMake option turns it on.
bool checked_mode();
void set_checked_mode(bool on);

// DG_PRINT_CONFIGS=1 prints each chosen kernel config once per shape.
bool print_configs();

}  // namespace deepgemm_ascend::runtime
