"""Helpers shared with upstream DeepGEMM's ``deep_gemm.utils``: integer helpers, quantisation
(``utils.math``) and the Ascend scale-factor layouts (``utils.layout``)."""
from .layout import (get_mn_major_packed_ue8m0x2_tensor, get_mn_major_tma_aligned_packed_ue8m0_tensor,
                     get_mn_major_tma_aligned_tensor, get_tma_aligned_size, is_ascend_sf_layout,
                     transform_sf_into_required_layout)
from .math import (align, cast_back_from_fp4, ceil_div, ceil_to_ue8m0, dequant_fp4, dequant_fp8,
                   pack_ue8m0_to_int, per_block_cast_to_fp8, per_channel_cast_to_fp8, per_custom_dims_cast_to_fp8,
                   per_token_cast_to_fp4, per_token_cast_to_fp8, transpose_packed_fp4, unpack_ue8m0_from_int)

__all__ = [
    "align", "ceil_div",
    "ceil_to_ue8m0", "pack_ue8m0_to_int", "unpack_ue8m0_from_int",
    "per_token_cast_to_fp8", "per_channel_cast_to_fp8", "per_block_cast_to_fp8", "per_custom_dims_cast_to_fp8",
    "per_token_cast_to_fp4", "transpose_packed_fp4", "cast_back_from_fp4", "dequant_fp8", "dequant_fp4",
    "get_tma_aligned_size", "get_mn_major_tma_aligned_tensor", "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_mn_major_packed_ue8m0x2_tensor", "transform_sf_into_required_layout", "is_ascend_sf_layout",
]
