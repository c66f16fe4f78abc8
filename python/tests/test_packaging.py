"""What the installed package ships for other tools: type stubs of _C, the CMake package, headers."""
import pathlib

import pytest

import deepgemm_ascend as dg

PKG = pathlib.Path(dg.__file__).parent


def test_stubs_are_generated_for_the_extension():
    stub = (PKG / "_C.pyi").read_text()
    for name in ("def bf16_gemm(", "def mega_moe(", "def jit_build("):
        assert name in stub, name
    assert (PKG / "py.typed").exists()


def test_cmake_package_and_headers_ship_with_the_wheel():
    cmake = pathlib.Path(dg.get_cmake_dir())
    assert (cmake / "deepgemm_ascendConfig.cmake").exists() and (cmake / "deepgemm_ascendConfigVersion.cmake").exists()
    targets = (cmake / "deepgemm_ascendTargets.cmake").read_text()
    assert "deepgemm_ascend::deepgemm_ascend" in targets
    for header in ("api.hpp", "c_api.h", "kernel/gemm.hpp"):
        assert (PKG / "include" / "deepgemm_ascend" / header).exists(), header
    # The NPU JIT compiles its generated entries against the NPU kernel headers.
    for header in ("npu_gemm_launch.hpp", "npu_target.hpp", "npu_primitives.hpp"):
        assert (PKG / "include" / "deepgemm_ascend_npu" / header).exists(), header
    assert pathlib.Path(dg._C.jit_npu_kernel_dir()) == PKG / "include" / "deepgemm_ascend_npu"


def test_npu_jit_source_instantiates_the_kernel_with_constants():
    src = dg._C.jit_npu_gemm_source(256, 256, 128, 64)
    assert src.startswith("// dga-core: cube\n")
    assert "StaticTiling<256, 256, 128, 64>" in src and "run_gemm<bfloat16_t, deepgemm_ascend::tile::npu::Scales::kNone>(p, Tiling{})" in src
    assert "dga_jit_launch_gemm_bf16" in src
    src = dg._C.jit_npu_gemm_source(256, 256, 256, 128, "fp8_mx")
    assert "run_gemm<fp8_e4m3fn_t, deepgemm_ascend::tile::npu::Scales::kMx>(p, Tiling{})" in src and "dga_jit_launch_gemm_fp8_mx" in src
    src = dg._C.jit_npu_gemm_source(128, 256, 256, 128, "fp8_block", "masked")
    assert src.startswith("// dga-core: mix\n") and "KERNEL_TYPE_MIX_AIC_1_2" in src
    assert "run_masked_gemm<fp8_e4m3fn_t, deepgemm_ascend::tile::npu::Scales::kPromoted>(p, Tiling{})" in src
    assert "dga_jit_launch_gemm_fp8_block_masked(uint32_t block_dim, void* stream, const DgaMaskedGemmParams*" in src
    with pytest.raises(ValueError, match="family"):
        dg._C.jit_npu_gemm_source(256, 256, 256, 128, "fp16")
    with pytest.raises(ValueError, match="kind"):
        dg._C.jit_npu_gemm_source(256, 256, 256, 128, "bf16", "dense")


def test_every_public_function_is_documented():
    names = [n for n in dir(dg) if not n.startswith("_") and callable(getattr(dg, n))]
    assert [n for n in names if not (getattr(dg, n).__doc__ or "").strip()] == []
    doc = dg.fp8_gemm_nt.__doc__
    assert "[M, K]" in doc and "[N, K]" in doc and "Raises" in doc and "ValueError" in doc
