// Element types understood by the library.
#pragma once

#include <cstdint>
#include <string_view>

namespace deepgemm_ascend::core {

// NOTE: kFP4E2M1x2 is one byte holding two E2M1 values (element 2i in the low nibble, 2i+1 in the high
// nibble). Tensor shapes count bytes along the packed axis, as torch's int8 / float4_e2m1fn_x2 tensors do.
enum class DType : uint8_t {
  kBF16,
  kFP16,
  kFP32,
  kFP8E4M3,
  kFP8E5M2,
  kFP4E2M1x2,
  kUE8M0,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
};

// Bytes per stored element (one packed byte for kFP4E2M1x2).
constexpr int64_t itemsize(DType t) {
  switch (t) {
    case DType::kBF16: case DType::kFP16: case DType::kInt16: return 2;
    case DType::kFP32: case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    default: return 1;
  }
}

// Bits of one logical value: 4 for packed FP4, otherwise 8 * itemsize.
constexpr int value_bits(DType t) { return t == DType::kFP4E2M1x2 ? 4 : int(itemsize(t) * 8); }

// Value bits of the operand and accumulator formats, for configurations written by hand (GemmDesc,
// MatrixRef): named, so a reader sees which format a width stands for.
inline constexpr int kBf16Bits = value_bits(DType::kBF16);
inline constexpr int kFp8Bits = value_bits(DType::kFP8E4M3);
inline constexpr int kFp4Bits = value_bits(DType::kFP4E2M1x2);
inline constexpr int kFp32Bits = value_bits(DType::kFP32);
// Bytes of one value of the unpacked formats.
inline constexpr int kBf16Bytes = int(itemsize(DType::kBF16));
inline constexpr int kFp32Bytes = int(itemsize(DType::kFP32));

constexpr std::string_view name(DType t) {
  switch (t) {
    case DType::kBF16: return "bfloat16";
    case DType::kFP16: return "float16";
    case DType::kFP32: return "float32";
    case DType::kFP8E4M3: return "float8_e4m3fn";
    case DType::kFP8E5M2: return "float8_e5m2";
    case DType::kFP4E2M1x2: return "float4_e2m1fn_x2";
    case DType::kUE8M0: return "float8_e8m0fnu";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "unknown";
}

}  // namespace deepgemm_ascend::core
