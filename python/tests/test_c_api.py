"""The C ABI (deepgemm_ascend/c_api.h) through ctypes: results, status codes, messages, untouched outputs."""
import ctypes
import pathlib

import pytest
import torch

import deepgemm_ascend as dg

DGA_OK, DGA_ERROR_TYPE, DGA_ERROR_VALUE = 0, 1, 2
DTYPES = {torch.bfloat16: 0, torch.float32: 2, torch.float8_e4m3fn: 3}


@pytest.fixture(scope="module")
def lib():
    path = pathlib.Path(dg.__file__).parent / "libdeepgemm_ascend.so"
    lib = ctypes.CDLL(str(path))
    lib.dga_tensor_create.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                                      ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p)]
    lib.dga_tensor_destroy.argtypes = [ctypes.c_void_p]
    lib.dga_bf16_gemm.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 4
    lib.dga_fp8_fp4_gemm.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 6 + [ctypes.c_int64] * 4
    lib.dga_last_error.restype = ctypes.c_char_p
    lib.dga_version.restype = ctypes.c_char_p
    return lib


class Handles:
    def __init__(self, lib):
        self.lib, self.handles = lib, []

    def __call__(self, t):
        shape = (ctypes.c_int64 * t.dim())(*t.shape)
        strides = (ctypes.c_int64 * t.dim())(*t.stride())
        out = ctypes.c_void_p()
        rc = self.lib.dga_tensor_create(ctypes.c_void_p(t.data_ptr()), DTYPES[t.dtype], t.dim(), shape, strides,
                                        ctypes.byref(out))
        assert rc == DGA_OK, self.lib.dga_last_error()
        self.handles.append(out)
        return out

    def close(self):
        for h in self.handles:
            self.lib.dga_tensor_destroy(h)


def test_version_and_bf16_gemm_match_the_python_api(lib):
    assert lib.dga_version().decode() == dg.__version__
    h = Handles(lib)
    a, b = torch.randn(70, 96).bfloat16(), torch.randn(50, 96).bfloat16()
    d, d_py = torch.full((70, 50), float("nan")), torch.empty(70, 50)
    assert lib.dga_bf16_gemm(b"nt", h(a), h(b), h(d), None) == DGA_OK, lib.dga_last_error()
    dg.bf16_gemm_nt(a, b, d_py)
    assert torch.equal(d, d_py) and lib.dga_last_error() == b""
    # strided (transposed) views travel as strides
    at = a.t().contiguous().t()
    d2 = torch.empty(70, 50)
    assert lib.dga_bf16_gemm(b"nt", h(at), h(b), h(d2), None) == DGA_OK
    assert torch.equal(d2, d_py)
    h.close()


def test_fp8_gemm(lib):
    h = Handles(lib)
    a = (torch.randn(64, 256) * 50).to(torch.float8_e4m3fn)
    b = (torch.randn(128, 256) * 50).to(torch.float8_e4m3fn)
    sfa, sfb = torch.rand(64, 2) / 100, torch.rand(1, 2) / 100
    d = torch.empty(64, 128)
    assert lib.dga_fp8_fp4_gemm(b"nt", h(a), h(sfa), h(b), h(sfb), h(d), None, 1, 128, 128, 128) == DGA_OK, \
        lib.dga_last_error()
    ref = (a.double() * sfa.double().repeat_interleave(128, 1)) @ (b.double() * sfb.double().repeat_interleave(
        128, 0).repeat_interleave(128, 1)).T
    assert dg.testing.calc_diff(d, ref) < 1e-6
    h.close()


def test_refused_calls_name_the_argument_and_write_nothing(lib):
    h = Handles(lib)
    a, b = torch.randn(8, 32).bfloat16(), torch.randn(4, 32).bfloat16()
    d = torch.full((8, 5), 7.0)
    assert lib.dga_bf16_gemm(b"nt", h(a), h(b), h(d), None) == DGA_ERROR_VALUE
    assert lib.dga_last_error().startswith(b"d:") and torch.all(d == 7.0)
    assert lib.dga_bf16_gemm(b"nt", h(a.float()), h(b), h(torch.empty(8, 4)), None) == DGA_ERROR_TYPE
    assert lib.dga_last_error().startswith(b"a:")
    out = ctypes.c_void_p(1)
    shape = (ctypes.c_int64 * 1)(-3)
    assert lib.dga_tensor_create(None, 0, 1, shape, None, ctypes.byref(out)) == DGA_ERROR_VALUE
    assert out.value is None and b"shape" in lib.dga_last_error()
    h.close()
