// The control of upward_include.cpp: the same layer's view compiles the layer's own headers and those of
// the layers it uses.
#include "deepgemm_ascend/core/dtype.hpp"
#include "deepgemm_ascend/layout/matrix_ref.hpp"
