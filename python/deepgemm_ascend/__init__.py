"""deepgemm_ascend: DeepGEMM-compatible kernels for Huawei Ascend 950 NPUs, with a host (CPU) backend.

`import deepgemm_ascend as deep_gemm` is meant as a drop-in for DeepSeek's DeepGEMM. CPU tensors run
on the host backend; `npu` tensors run on the NPU backend when the library is built with CANN.
"""
from . import _C
from . import layout, testing, utils
from .gemm import bf16_gemm_nn, bf16_gemm_nt, bf16_gemm_tn, bf16_gemm_tt
from .vendor_blas import cublaslt_gemm_nn, cublaslt_gemm_nt, cublaslt_gemm_tn, cublaslt_gemm_tt
from .fp8_gemm import (fp8_fp4_gemm_nn, fp8_fp4_gemm_nt, fp8_fp4_gemm_tn, fp8_fp4_gemm_tt, fp8_gemm_nn, fp8_gemm_nt,
                       fp8_gemm_nt_skip_head_mid, fp8_gemm_tn, fp8_gemm_tt)
from .grouped_gemm import (bf16_m_grouped_gemm_nt_masked, fp8_m_grouped_gemm_nt_masked,
                           get_k_alignment_for_contiguous_layout, get_m_alignment_for_contiguous_layout,
                           get_mk_alignment_for_contiguous_layout, get_theoretical_mk_alignment_for_contiguous_layout,
                           k_grouped_bf16_gemm_tn_contiguous, k_grouped_fp8_gemm_nt_contiguous,
                           k_grouped_fp8_gemm_tn_contiguous,
                           m_grouped_bf16_gemm_nn_contiguous, m_grouped_bf16_gemm_nt_contiguous,
                           m_grouped_bf16_gemm_nt_masked, m_grouped_fp8_fp4_gemm_nn_contiguous,
                           m_grouped_fp8_fp4_gemm_nt_contiguous, m_grouped_fp8_fp4_gemm_nt_masked,
                           m_grouped_fp8_gemm_nn_contiguous, m_grouped_fp8_gemm_nt_contiguous,
                           m_grouped_fp8_gemm_nt_masked, set_mk_alignment_for_contiguous_layout)
from .einsum import einsum, fp8_einsum
from .hc_prenorm import tf32_hc_prenorm_gemm
from . import legacy, mega
from .mega import (SymmBuffer, bf16_mega_moe, fp8_fp4_mega_moe, get_symm_buffer_for_mega_moe,
                   transform_weights_for_mega_moe)
from .mqa_logits import (fp8_fp4_mqa_logits, fp8_fp4_paged_mqa_logits, fp8_mqa_logits, fp8_paged_mqa_logits,
                         get_paged_mqa_logits_metadata)
from .runtime import (get_num_ai_cores, get_num_sms, get_pdl, get_tc_util, info, is_checked_mode,
                      set_block_size_multiple_of, set_checked_mode, set_host_isa, set_ignore_compile_dims,
                      set_num_ai_cores, set_num_sms, set_pdl, set_tc_util)
from .utils import *  # noqa: F401,F403  (upstream re-exports every public name of deep_gemm.utils)
from .utils import align, ceil_div
from ._missing import install as _install_missing

__version__ = _C.__version__


def get_cmake_dir():
    """Folder holding deepgemm_ascendConfig.cmake: pass it as deepgemm_ascend_DIR to CMake, then
    find_package(deepgemm_ascend CONFIG REQUIRED) and link deepgemm_ascend::deepgemm_ascend."""
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmake")

_install_missing(globals())
_install_missing(vars(utils))  # upstream's utils names too
