// Instruction-level functions that the devkit headers call in CPU-debug mode and that the shared
// permissive stub (asc-devkit/stub/stub_fun.h) does not declare yet; the .asc translation units include
// it ahead of kernel_operator.h in CPU-debug mode (bisheng never sees it). Like the stub's, they accept
// anything and do nothing: they only let the headers' templates that the kernels reach be type-checked.
#pragma once

template <class... A>
inline void copy_matrix_cc_to_ub(A&&...) {}
template <class... A>
inline void mad_mx(A&&...) {}
template <class... A>
inline void vrelu(A&&...) {}
