// The `half` of a program npu_run.py builds (included by dga_run.h before any devkit header).
//
// Why: on the device, bisheng's `half` is a built-in binary16 floating type, a literal type, so AscendC
// programs use it in constant expressions and aggregates (`static constexpr half kMin = -65504.0f;`). The
// devkit's CPU-debug stand-in (cpudebug/include/kernel_fp16.h) is a class with user-provided, non-constexpr
// constructors whose conversions live in a closed library, so such programs do not compile in CPU-debug mode.
//
// What: the devkit's header is included here with its class renamed (its other contents - enums and helper
// templates other headers use - stay as they are), and `half` is this class instead: one binary16 value, the
// same layout (16 bits, `val`), the same constructors, operators and conversions as the devkit's class, all
// constexpr. Conversions round to nearest even (binary16.h); arithmetic is done in float and rounded once,
// which is the correctly rounded binary16 result for + - * / (binary32 holds more than 2 x 11 + 2 bits). The
// model's instructions read a half's 16 bits, so a value is exactly what the device would hold.
// The devkit class's members without a device meaning (IsInf, && and || on values) are left out: a program
// that uses them does not compile.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "binary16.h"

#define half dga_devkit_cpu_half
#include "kernel_fp16.h"
#undef half

struct half {
  uint16_t val;

  half() = default;
  constexpr half(const half&) = default;
  constexpr half& operator=(const half&) = default;
  constexpr half(const float& f) : val(dga_run::binary16::from_double(f)) {}
  constexpr half(const double& d) : val(dga_run::binary16::from_double(d)) {}
  constexpr half(const int8_t& i) : val(dga_run::binary16::from_double(i)) {}
  constexpr half(const uint8_t& i) : val(dga_run::binary16::from_double(i)) {}
  constexpr half(const int16_t& i) : val(dga_run::binary16::from_double(i)) {}
  constexpr half(const uint16_t& i) : val(dga_run::binary16::from_double(i)) {}
  constexpr half(const int32_t& i) : val(dga_run::binary16::from_double(i)) {}
  constexpr half(const uint32_t& i) : val(dga_run::binary16::from_double(i)) {}

  constexpr float ToFloat() const { return dga_run::binary16::to_float(val); }
  constexpr double ToDouble() const { return ToFloat(); }
  // To integers: C's conversion of the value (toward zero), as a device scalar cast does.
  constexpr int8_t ToInt8() const { return int8_t(ToFloat()); }
  constexpr uint8_t ToUInt8() const { return uint8_t(ToFloat()); }
  constexpr int16_t ToInt16() const { return int16_t(ToFloat()); }
  constexpr uint16_t ToUInt16() const { return uint16_t(ToFloat()); }
  constexpr int32_t ToInt32() const { return int32_t(ToFloat()); }
  constexpr uint32_t ToUInt32() const { return uint32_t(ToFloat()); }
  constexpr operator float() const { return ToFloat(); }
  constexpr operator double() const { return ToDouble(); }
  constexpr operator int8_t() const { return ToInt8(); }
  constexpr operator uint8_t() const { return ToUInt8(); }
  constexpr operator int16_t() const { return ToInt16(); }
  constexpr operator uint16_t() const { return ToUInt16(); }
  constexpr operator int32_t() const { return ToInt32(); }
  constexpr operator uint32_t() const { return ToUInt32(); }

  constexpr half operator+(const half b) const { return half(ToFloat() + b.ToFloat()); }
  constexpr half operator-(const half b) const { return half(ToFloat() - b.ToFloat()); }
  constexpr half operator*(const half b) const { return half(ToFloat() * b.ToFloat()); }
  constexpr half operator/(const half b) const { return half(ToFloat() / b.ToFloat()); }
  constexpr half operator-() const { return from_bits(uint16_t(val ^ dga_run::binary16::kSign)); }
  constexpr half operator+=(const half b) { return *this = *this + b; }
  constexpr half operator-=(const half b) { return *this = *this - b; }
  constexpr half operator*=(const half b) { return *this = *this * b; }
  constexpr half operator/=(const half b) { return *this = *this / b; }
  constexpr half operator++() { return *this = *this + half(1.0f); }
  constexpr half operator++(int) { const half old = *this; *this = *this + half(1.0f); return old; }
  constexpr half operator--() { return *this = *this - half(1.0f); }
  constexpr half operator--(int) { const half old = *this; *this = *this - half(1.0f); return old; }

  constexpr bool operator==(const half& b) const { return ToFloat() == b.ToFloat(); }
  constexpr bool operator!=(const half& b) const { return ToFloat() != b.ToFloat(); }
  constexpr bool operator<(const half& b) const { return ToFloat() < b.ToFloat(); }
  constexpr bool operator<=(const half& b) const { return ToFloat() <= b.ToFloat(); }
  constexpr bool operator>(const half& b) const { return ToFloat() > b.ToFloat(); }
  constexpr bool operator>=(const half& b) const { return ToFloat() >= b.ToFloat(); }

 private:
  static constexpr half from_bits(uint16_t bits) {
    half h{};
    h.val = bits;
    return h;
  }
};
static_assert(sizeof(half) == 2 && alignof(half) == 2, "half is one binary16 value");
static_assert(half(-65504.0f).val == 0xFBFF && half(1.0f).val == 0x3C00, "half is IEEE binary16");
