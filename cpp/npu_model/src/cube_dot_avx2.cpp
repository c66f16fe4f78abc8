// The cube's dot-product kernel for AVX2 + FMA (compiled with -mavx2 -mfma -ffp-contract=fast on x86,
// cmake/DgaHostIsa.cmake): the products are exact, so the contracted multiply-adds round like the baseline.
#include "cube_dot_body.hpp"

namespace deepgemm_ascend::npu_model {

#if defined(__AVX2__) && defined(__FMA__)
void cube_dot_avx2(const DotPanels& p) { dot_body::run(p); }
#else
void cube_dot_avx2(const DotPanels& p) { dot_body::run(p); }  // a build without the x86 flags
#endif

}  // namespace deepgemm_ascend::npu_model
