// Host cube micro-kernels, one per ISA, chosen at run time (runtime/cpu_features).
//   c[L0C, m_pad x n_pad] (=|+=) a[L0A Nz, m_pad x k_pad] * b[L0B, k_pad x n_pad]   (bf16 in, fp32 acc)
#pragma once

#include <cstdint>

namespace deepgemm_ascend::tile::host {

using MmadBf16Fn = void (*)(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad,
                            int64_t k_pad, bool init);

void mmad_bf16_scalar(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad, int64_t k_pad,
                      bool init);
void mmad_bf16_avx2(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad, int64_t k_pad,
                    bool init);
void mmad_bf16_avx512bf16(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad,
                          int64_t k_pad, bool init);
void mmad_bf16_amx(float* c, const uint16_t* a, const uint16_t* b, int64_t m_pad, int64_t n_pad, int64_t k_pad,
                   bool init);

// The micro-kernel of the active host ISA.
MmadBf16Fn mmad_bf16();

}  // namespace deepgemm_ascend::tile::host
