"""Helpers shared with upstream DeepGEMM's ``deep_gemm.utils``: integer helpers, quantisation
(``utils.math``) and the Ascend scale-factor layouts (``utils.layout``)."""
from .layout import (get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor, get_mn_major_packed_ue8m0x2_tensor,
                     get_mn_major_tma_aligned_packed_ue8m0_tensor,
                     get_mn_major_tma_aligned_tensor, get_tma_aligned_size, is_ascend_sf_layout,
                     transform_sf_into_required_layout)
from .dist import init_dist, uneven_all_gather
from .math import (align, cast_back_from_fp4, ceil_div, ceil_to_ue8m0, dequant_fp4, dequant_fp8,
                   pack_ue8m0_to_int, per_block_cast_to_fp8, per_channel_cast_to_fp8, per_custom_dims_cast_to_fp8,
                   per_token_cast_to_fp4, per_token_cast_to_fp8, transpose_packed_fp4, unpack_ue8m0_from_int)



def set_mk_alignment_for_contiguous_layout(alignment):
    """As deepgemm_ascend.set_mk_alignment_for_contiguous_layout (upstream exposes it in utils too)."""
    from ..grouped_gemm import set_mk_alignment_for_contiguous_layout as set_alignment
    set_alignment(alignment)


def get_mk_alignment_for_contiguous_layout():
    """As deepgemm_ascend.get_mk_alignment_for_contiguous_layout."""
    from ..grouped_gemm import get_mk_alignment_for_contiguous_layout as get_alignment
    return get_alignment()


__all__ = [
    "align", "ceil_div",
    "ceil_to_ue8m0", "pack_ue8m0_to_int", "unpack_ue8m0_from_int",
    "per_token_cast_to_fp8", "per_channel_cast_to_fp8", "per_block_cast_to_fp8", "per_custom_dims_cast_to_fp8",
    "per_token_cast_to_fp4", "transpose_packed_fp4", "cast_back_from_fp4", "dequant_fp8", "dequant_fp4",
    "get_tma_aligned_size", "get_mn_major_tma_aligned_tensor", "get_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
    "get_mn_major_packed_ue8m0x2_tensor", "transform_sf_into_required_layout", "is_ascend_sf_layout",
    "init_dist", "uneven_all_gather",
]
