// The host target of the HC pre-norm vector pass (kernel/hc_prenorm.hpp): each step's element work as
// plain loops over host memory (the NPU's is cpp/npu/npu_hc_vector.hpp).
#pragma once

#include <cstdint>

#include "deepgemm_ascend/core/convert.hpp"
#include "deepgemm_ascend/kernel/launch_abi.hpp"
#include "deepgemm_ascend/host/core.hpp"

namespace deepgemm_ascend::tile::host {

struct HostHcVector {
  using Ctx = Core;
  static int64_t core_idx(const Core& c) { return c.block_idx(); }
  static int64_t core_num(const Core& c) { return c.block_num(); }

  class HcPrenorm {
   public:
    static constexpr int64_t kSqrRows = 64, kZeroRows = 256;

    HcPrenorm(Core&, const DgaHcPrenormParams& p) : p_(p) {}
    int64_t chunk() const { return p_.b.cols > 0 ? p_.b.cols : 1; }  // a whole row of B per step
    int64_t sqr_rows() const { return kSqrRows; }
    int64_t zero_rows() const { return kZeroRows; }

    // hi = bf16(b), lo = bf16(b - hi) for B's row r, columns [c0, c0 + n).
    void split(int64_t r, int64_t c0, int64_t n) const {
      const float* b = at_address<const float>(p_.b.addr) + r * p_.b.row_stride + c0;
      uint16_t* hi = at_address<uint16_t>(p_.hi) + r * p_.b.cols + c0;
      uint16_t* lo = at_address<uint16_t>(p_.lo) + r * p_.b.cols + c0;
      for (int64_t c = 0; c < n; ++c) {
        hi[c] = core::float_to_bf16(b[c]);
        lo[c] = core::float_to_bf16(b[c] - core::bf16_to_float(hi[c]));
      }
    }
    // sqr_sum[s, r] = sum of a[r, k]^2 over k in [k0, k0 + ks), for rows [r0, r0 + rows).
    void sqr_sums(int64_t s, int64_t r0, int64_t rows, int64_t k0, int64_t ks) const {
      for (int64_t r = r0; r < r0 + rows; ++r) {
        const uint16_t* row = at_address<const uint16_t>(p_.a.addr) + r * p_.a.row_stride + k0;
        float acc = 0.0f;
        for (int64_t c = 0; c < ks; ++c) {
          const float v = core::bf16_to_float(row[c]);
          acc += v * v;
        }
        at_address<float>(p_.sqr_sum)[s * p_.a.rows + r] = acc;
      }
    }
    void zero_d(int64_t s, int64_t r0, int64_t rows) const {
      float* d = at_address<float>(p_.d.addr) + s * p_.d_split;
      for (int64_t r = r0; r < r0 + rows; ++r)
        for (int64_t c = 0; c < p_.d.cols; ++c) d[r * p_.d.row_stride + c] = 0.0f;
    }
    void set_end(int64_t s, int64_t end) const { at_address<int32_t>(p_.ends)[s] = int32_t(end); }
    void store_ends() const {}

   private:
    DgaHcPrenormParams p_;
  };
};

}  // namespace deepgemm_ascend::tile::host
