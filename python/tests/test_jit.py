"""The JIT module on the host compiler: cache keys (source, included headers, flags), cache hits,
concurrent builders, corrupt entries, compiler errors, and GEMMs run through JIT-specialised entries."""
import os
import pathlib
import subprocess
import sys

import pytest
import torch

from deepgemm_ascend import _C

TWICE = 'extern "C" int twice(int x) { return 2 * x; }\n'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "jit_cache"
    monkeypatch.setenv("DG_JIT_CACHE_DIR", str(d))
    return d


def run_python(code, cache_dir, **env):
    full = dict(os.environ, DG_JIT_CACHE_DIR=str(cache_dir), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=300)


def entries(cache_dir, prefix):
    return sorted(p for p in pathlib.Path(cache_dir).glob(prefix + "_*") if p.is_dir())


def test_build_and_call(cache):
    assert _C.jit_cache_dir() == str(cache)
    assert _C.jit_call_int("twice", TWICE, "twice", 21) == 42
    (entry,) = entries(cache, "twice")
    assert {p.name for p in entry.iterdir()} == {"kernel.cpp", "kernel.so", "kernel.so.sum", "command.txt"}
    assert list((cache / "tmp").iterdir()) == []  # nothing left behind


def test_second_process_hits_the_cache(cache):
    code = ("from deepgemm_ascend import _C\n"
            f"path, key, hit = _C.jit_build('twice', {TWICE!r}, [], [])\n"
            "print(hit, key)\n")
    first, second = run_python(code, cache), run_python(code, cache)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    hit1, key1 = first.stdout.split()
    hit2, key2 = second.stdout.split()
    assert (hit1, hit2) == ("False", "True") and key1 == key2


def test_key_changes_with_every_included_header(tmp_path, cache):
    inc = tmp_path / "inc"
    (inc / "sub").mkdir(parents=True)
    (inc / "a.h").write_text('#pragma once\n#include "sub/b.h"\n#include <vector>\nconstexpr int kA = kB + 1;\n')
    (inc / "sub" / "b.h").write_text("#pragma once\nconstexpr int kB = 1;\n")
    src = '#include "a.h"\nextern "C" int f(int x) { return x + kA; }\n'
    files = _C.jit_included_files(src, [str(inc)])
    assert [pathlib.Path(f).name for f in files] == ["a.h", "b.h"]  # <vector> is the compiler's, not hashed
    key = _C.jit_cache_key("f", src, [str(inc)], [])
    assert _C.jit_cache_key("f", src, [str(inc)], []) == key
    (inc / "sub" / "b.h").write_text("#pragma once\nconstexpr int kB = 2;\n")  # a nested header changes
    key_b = _C.jit_cache_key("f", src, [str(inc)], [])
    assert key_b != key
    assert _C.jit_cache_key("f", src, [str(inc)], ["-DX=1"]) != key_b  # flags
    assert _C.jit_cache_key("f", src + "\n", [str(inc)], []) != key_b  # source
    path, _, hit = _C.jit_build("f", src, [str(inc)], [])
    assert not hit and pathlib.Path(path).is_file()


def test_concurrent_processes_building_one_key(cache):
    code = ("from deepgemm_ascend import _C\n"
            f"print(_C.jit_call_int('race', {TWICE!r}, 'twice', 5))\n")
    env = dict(os.environ, DG_JIT_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for _ in range(6)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert all(o[0].strip() == "10" for o in outs)
    assert len(entries(cache, "race")) == 1 and list((cache / "tmp").iterdir()) == []


@pytest.mark.parametrize("damage", ["truncate_so", "bad_checksum", "missing_so"])
def test_corrupt_entry_is_rebuilt(cache, damage):
    code = ("from deepgemm_ascend import _C\n"
            f"path, key, hit = _C.jit_build('fix', {TWICE!r}, [], [])\n"
            f"print(hit, _C.jit_call_int('fix', {TWICE!r}, 'twice', 4))\n")
    out = run_python(code, cache)
    assert out.returncode == 0 and out.stdout.split() == ["False", "8"], out.stderr
    (entry,) = entries(cache, "fix")
    so = entry / "kernel.so"
    if damage == "truncate_so":
        so.write_bytes(so.read_bytes()[:100])
    elif damage == "bad_checksum":
        (entry / "kernel.so.sum").write_text("0" * 32)
    else:
        so.unlink()
    out = run_python(code, cache, DG_JIT_DEBUG="1")
    assert out.returncode == 0 and out.stdout.split() == ["False", "8"], out.stderr
    assert "corrupt entry" in out.stderr and "built fix" in out.stderr


def test_compiler_errors_are_reported_and_leave_nothing(cache):
    with pytest.raises(RuntimeError, match=r"(?s)^jit: compiling kernel 'broken' failed \(exit status 1\).*error"):
        _C.jit_build("broken", "int f( {\n", [], [])
    assert entries(cache, "broken") == [] and list((cache / "tmp").iterdir()) == []
    with pytest.raises(ValueError, match="^name"):
        _C.jit_build("bad name!", TWICE, [], [])


def test_print_compiler_command(cache):
    code = f"from deepgemm_ascend import _C\n_C.jit_build('cmd', {TWICE!r}, [], ['-DFOO=1'])\n"
    out = run_python(code, cache, DG_JIT_PRINT_COMPILER_COMMAND="1")
    assert out.returncode == 0, out.stderr
    line = [l for l in out.stderr.splitlines() if "[deepgemm_ascend jit]" in l][0]
    assert "-std=c++20" in line and "-DFOO=1" in line and "kernel.cpp -o" in line


def test_gemm_through_jit_specialised_entries(cache):
    code = ("import torch, deepgemm_ascend as dg\n"
            "torch.manual_seed(0)\n"
            "a = torch.randn(300, 200).bfloat16(); b = torch.randn(170, 200).bfloat16(); d = torch.empty(300, 170)\n"
            "dg.bf16_gemm_nt(a, b, d)\n"
            "torch.save(d, 'out.pt')\n")
    work = cache.parent
    jit = subprocess.run([sys.executable, "-c", code], cwd=work / ".", capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, DG_JIT_CACHE_DIR=str(cache), DGA_JIT="1", DG_JIT_DEBUG="1"))
    assert jit.returncode == 0, jit.stderr
    assert "built gemm" in jit.stderr and len(entries(cache, "gemm")) == 1
    d_jit = torch.load(work / "out.pt")
    plain = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True, timeout=300,
                           env={k: v for k, v in os.environ.items() if k != "DGA_JIT"})
    assert plain.returncode == 0, plain.stderr
    assert torch.equal(d_jit, torch.load(work / "out.pt"))
    source = (entries(cache, "gemm")[0] / "kernel.cpp").read_text()
    # The whole kernel is instantiated with the config as constants, not handed a run-time tiling.
    assert "StaticTiling<" in source and "Tiling{}" in source
    assert '#include "deepgemm_ascend/kernel/gemm.hpp"' in source
