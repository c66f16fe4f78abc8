// Helpers shared by the gtests of the NPU model's vector core (test_npu_model_vector*.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "deepgemm_ascend/core/error.hpp"
#include "deepgemm_ascend/npu_model/vector.hpp"

namespace dga_vector_test {

// The fill of registers and buffers an operation must not write.
inline constexpr float kPoison = -12345.0f;
inline constexpr size_t kF32PerReg = deepgemm_ascend::npu_model::kVregBytes / sizeof(float);
inline constexpr size_t kB16PerReg = deepgemm_ascend::npu_model::kVregBytes / sizeof(uint16_t);
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

template <class T>
uint8_t* bytes(T* p) { return reinterpret_cast<uint8_t*>(p); }
template <class T>
const uint8_t* bytes(const T* p) { return reinterpret_cast<const uint8_t*>(p); }
inline float ulps(int n) { return std::ldexp(1.0f, n); }  // 2^n

// f throws core::Error of `kind`.
inline void expect_error(const std::function<void()>& f, deepgemm_ascend::core::ErrorKind kind) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const deepgemm_ascend::core::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
  }
}

// A register of kPoison in every float element.
inline deepgemm_ascend::npu_model::Vreg poisoned() {
  deepgemm_ascend::npu_model::Vreg r;
  for (size_t i = 0; i < kF32PerReg; ++i) r.set<float>(i, kPoison);
  return r;
}

// A register holding v in its first v.size() elements of type T, zero after.
template <class T>
deepgemm_ascend::npu_model::Vreg reg_of(const std::vector<T>& v) {
  deepgemm_ascend::npu_model::Vreg r;
  for (size_t i = 0; i < v.size(); ++i) r.set<T>(i, v[i]);
  return r;
}

// The predicate of the first `count` b32 elements (plt_b32 with POST_UPDATE).
inline uint16_t first(deepgemm_ascend::npu_model::VectorCore& vc, uint32_t count) {
  return vc.plt_b32(count, deepgemm_ascend::npu_model::Post::kUpdate);
}

}  // namespace dga_vector_test
