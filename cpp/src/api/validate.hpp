// Argument checks shared by the API entry points. Each throws core::Error naming the argument.
#pragma once

#include <initializer_list>
#include <string>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/core/tensor_view.hpp"

namespace deepgemm_ascend::api {

using core::DType;
using core::TensorView;

void require_dtype(const TensorView& t, const char* arg, std::initializer_list<DType> allowed);
void require_rank(const TensorView& t, const char* arg, int ndim);
void require_shape(const TensorView& t, const char* arg, std::initializer_list<int64_t> shape);
void require_row_major_output(const TensorView& t, const char* arg);  // unit last stride, no self-overlap
void require_same_device(std::initializer_list<std::pair<const char*, const TensorView*>> ts);
// A kernel with no NPU version yet: `t` must be host memory, and the npu-model backend not selected.
void require_host(const TensorView& t, const char* arg);
// Host memory (layout transforms, which are not NPU kernels).
void require_host_memory(const TensorView& t, const char* arg);
void require_no_overlap(const TensorView& out, const char* out_arg, const TensorView& in, const char* in_arg);

}  // namespace deepgemm_ascend::api
