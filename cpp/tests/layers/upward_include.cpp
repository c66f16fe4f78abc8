// A translation unit of the layout layer that includes a header of a layer above it (heuristics): compiled
// in the layout layer's view of the include tree (cmake/DgaLayers.cmake) it must fail.
#include "deepgemm_ascend/layout/matrix_ref.hpp"
#include "deepgemm_ascend/heuristics/gemm_heuristics.hpp"
