#include "deepgemm_ascend/npu_model/data_move_align.hpp"

#include <cstring>

#include "deepgemm_ascend/core/error.hpp"

namespace deepgemm_ascend::npu_model {

namespace {
constexpr uint32_t kL1BlockBytes = 32;
}  // namespace

void copy_gm_to_cbuf_align(uint8_t* dst, const uint8_t* src, const GmToL1Align& op, Accesses* acc) {
  DGA_REQUIRE(op.left_pad == 0 && op.right_pad == 0, kNotImplemented, "padding",
              "GM -> L1 padding is not modelled (left ", int(op.left_pad), ", right ", int(op.right_pad), ")");
  if (op.n_burst == 0 || op.len_burst == 0) return;
  DGA_REQUIRE(op.len_burst % kL1BlockBytes == 0, kNotImplemented, "len_burst",
              "a GM -> L1 burst that is not whole 32 B blocks is not modelled, got ", op.len_burst, " bytes");
  DGA_REQUIRE(op.n_burst == 1 || op.dst_stride % kL1BlockBytes == 0, kValue, "dst_stride",
              "L1 rows must start 32 B apart, got a stride of ", op.dst_stride, " bytes");
  DGA_REQUIRE(op.n_burst == 1 || op.dst_stride >= op.len_burst, kValue, "dst_stride", "L1 rows of ", op.len_burst,
              " bytes every ", op.dst_stride, " bytes overlap");
  for (uint64_t b = 0; b < op.n_burst; ++b) {
    const uint8_t* from = src + b * op.src_stride;
    uint8_t* to = dst + b * op.dst_stride;
    note_gm(acc, from, op.len_burst, false);
    note(acc, to, op.len_burst, true);
    std::memmove(to, from, op.len_burst);
  }
}

}  // namespace deepgemm_ascend::npu_model
