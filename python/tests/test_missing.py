"""Every upstream entry point exists; one not implemented yet fails loudly (NotImplementedError naming its
issue) and is listed in the README."""
import pathlib

import pytest

import deepgemm_ascend as dg
from deepgemm_ascend import _missing
from deepgemm_ascend._missing import MISSING

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"

# The public names of upstream DeepGEMM (deep_gemm/__init__.py and deep_gemm.utils at 54e2261).
UPSTREAM = """
set_num_sms get_num_sms set_tc_util get_tc_util set_ignore_compile_dims set_block_size_multiple_of set_pdl get_pdl
cublaslt_gemm_nt cublaslt_gemm_nn cublaslt_gemm_tn cublaslt_gemm_tt
fp8_fp4_gemm_nt fp8_fp4_gemm_nn fp8_fp4_gemm_tn fp8_fp4_gemm_tt m_grouped_fp8_fp4_gemm_nt_contiguous
m_grouped_fp8_fp4_gemm_nn_contiguous m_grouped_fp8_fp4_gemm_nt_masked fp8_gemm_nt fp8_gemm_nn fp8_gemm_tn fp8_gemm_tt
fp8_gemm_nt_skip_head_mid m_grouped_fp8_gemm_nt_contiguous m_grouped_fp8_gemm_nn_contiguous m_grouped_fp8_gemm_nt_masked
k_grouped_fp8_gemm_nt_contiguous k_grouped_fp8_gemm_tn_contiguous bf16_gemm_nt bf16_gemm_nn bf16_gemm_tn bf16_gemm_tt
m_grouped_bf16_gemm_nt_contiguous m_grouped_bf16_gemm_nn_contiguous m_grouped_bf16_gemm_nt_masked
k_grouped_bf16_gemm_tn_contiguous einsum fp8_einsum fp8_fp4_mqa_logits get_paged_mqa_logits_metadata
fp8_fp4_paged_mqa_logits fp8_mqa_logits fp8_paged_mqa_logits tf32_hc_prenorm_gemm transform_sf_into_required_layout
fp8_m_grouped_gemm_nt_masked bf16_m_grouped_gemm_nt_masked
SymmBuffer get_symm_buffer_for_mega_moe transform_weights_for_mega_moe fp8_fp4_mega_moe bf16_mega_moe
get_tma_aligned_size get_mn_major_tma_aligned_tensor get_mn_major_tma_aligned_packed_ue8m0_tensor
get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor set_mk_alignment_for_contiguous_layout
get_mk_alignment_for_contiguous_layout init_dist uneven_all_gather
""".split()


@pytest.mark.parametrize("name", UPSTREAM)
def test_upstream_name_exists_and_is_implemented_unless_listed(name):
    for where in (dg, dg.utils) if name in dir(dg.utils) else (dg,):
        fn = getattr(where, name, None)
        assert fn is not None, f"{where.__name__}.{name} is missing"
        stub = getattr(fn, "__doc__", "") or ""
        assert (name in MISSING) == stub.startswith("Not implemented yet"), name


def test_a_missing_entry_point_raises_naming_its_issue(monkeypatch):
    """The mechanism on a scratch namespace (MISSING itself may be empty): install() adds a stub for every
    listed name that raises NotImplementedError naming the issue, and leaves an existing name alone."""
    monkeypatch.setitem(MISSING, "future_kernel", 99)
    monkeypatch.setitem(MISSING, "kept", 98)
    scratch = {"kept": len}
    _missing.install(scratch)
    with pytest.raises(NotImplementedError, match=r"future_kernel is not implemented yet \(tracked in issue 99\)"):
        scratch["future_kernel"](1, x=2)
    assert scratch["future_kernel"].__name__ == "future_kernel" and scratch["kept"] is len


@pytest.mark.parametrize("name", sorted(MISSING))
def test_missing_entry_point_raises(name):
    for where in (dg, dg.utils):
        with pytest.raises(NotImplementedError, match=rf"{name} is not implemented yet \(tracked in issue {MISSING[name]}\)"):
            getattr(where, name)()


@pytest.mark.skipif(not README.exists(), reason="README not shipped next to an installed package")
def test_readme_lists_every_missing_entry_point():
    text = README.read_text()
    absent = [name for name in MISSING if f"`{name}`" not in text]
    assert not absent, f"README does not list as missing: {absent}"
