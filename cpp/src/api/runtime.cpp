#include "deepgemm_ascend/api.hpp"
#include "deepgemm_ascend/runtime/backend.hpp"

namespace deepgemm_ascend {

const char* version() { return DGA_VERSION; }
int get_num_ai_cores() { return runtime::host_backend().num_ai_cores(); }
int get_max_ai_cores() { return runtime::host_backend().max_ai_cores(); }
void set_num_ai_cores(int n) { runtime::host_backend().set_num_ai_cores(n); }

}  // namespace deepgemm_ascend
