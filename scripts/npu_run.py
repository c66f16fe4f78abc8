#!/usr/bin/env python3
"""Builds an unmodified AscendC program for the Ascend 950 (a CATLASS example directory, say) against the devkit
in CPU-debug mode and runs it on the instruction model: its kernels run core by core on the model
(libdga_npu_model), its ACL and platform calls on the project's stand-ins (cpp/kernels/model/runner).

    python scripts/npu_run.py EXAMPLE_DIR [--target NAME] [--build BUILD_DIR] [--gen-args ARGS] [-- PROGRAM ARGS]

The program's sources are the directory's *.cpp (its CMakeLists.txt names the targets and their kernel type,
cube / vector / mix, as `catlass_example_add_executable(name type sources)`), compiled with clang++ against
CATLASS's include/ and examples/common beside the directory (or --catlass). The `<<<blocks, l2ctrl, stream>>>`
launch syntax is lowered as bisheng's front end does, in copies of the files that use it (the tree itself is
not changed): into dga_run::launch (runner/dga_run.h). An example that makes its inputs with a gen_data*.py
gets them from it first (--gen-args: the README's arguments), written into a scratch tree that mirrors the
relative paths the program reads. Each target is run with the program arguments; the run
passes when the program exits 0, prints none of FAIL_MARKS and prints one of PASS_MARKS (the examples report
their golden check so). The exit status is 0 when every target passed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "cpp", "kernels", "model", "runner")
MODEL = os.path.join(ROOT, "cpp", "kernels", "model")
PASS_MARKS = ("Compare success", "compare success", "Accuracy verification passed", "test pass")
FAIL_MARKS = ("Compare failed", "compare failed", "Error count", "[ERROR]", "aclError:")
CORES = {"cube": 0, "mix": 1, "vector": 2}
DEVKIT_DIRS = ("", "include", "include/basic_api", "include/basic_api/reg_compute", "include/simt_api",
               "include/simt_api/cpp", "include/c_api", "include/utils", "impl", "impl/basic_api",
               "impl/basic_api/reg_compute", "impl/simt_api", "impl/c_api", "impl/utils", "cpudebug/include",
               "stub", "cpudebug/utils", "cpudebug/utils/include")
# `kernel<<<blocks, l2ctrl, stream>>>(` : the kernel expression (a qualified name with template arguments).
LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^;{}()]*?>)?)\s*<<<\s*(.*?)\s*>>>\s*\(\s*(\)?)", re.S)


def lower_launches(text):
    """The text with every `K<<<b, l2, s>>>(args)` as dga_run::launch(b, l2, s, "K", <K as a lambda>, args)."""
    def repl(m):
        kernel, dims, empty = m.group(1), m.group(2), m.group(3)
        name = " ".join(kernel.split())
        call = f'::dga_run::launch({dims}, "{name}", [](auto&&... dga_a) {{ {kernel}(dga_a...); }}'
        return call + (")" if empty else ", ")
    return LAUNCH.sub(repl, text)


def overlay(trees, out):
    """Copies of the files under `trees` (include roots) that use the launch syntax, lowered, at the same
    relative paths under `out` (which precedes the trees on the include path); returns how many."""
    n = 0
    for tree in trees:
        for dirpath, _, files in os.walk(tree):
            for f in files:
                path = os.path.join(dirpath, f)
                if not f.endswith((".h", ".hpp", ".cpp", ".inl")):
                    continue
                with open(path, errors="replace") as fh:
                    text = fh.read()
                if "<<<" not in text:
                    continue
                dst = os.path.join(out, os.path.relpath(path, tree))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                with open(dst, "w") as fh:
                    fh.write(lower_launches(text))
                n += 1
    return n


def targets(example):
    """[(name, kernel type, [sources])] from the directory's CMakeLists.txt."""
    with open(os.path.join(example, "CMakeLists.txt")) as fh:
        text = fh.read()
    out = []
    for m in re.finditer(r"catlass_example_add_executable\(\s*([^\s)]+)\s+(\w+)\s+([^)]*)\)", text):
        name, kind, srcs = m.group(1), m.group(2), m.group(3).split()
        if name.startswith("${"):
            name = os.path.basename(os.path.normpath(example))
        if kind not in CORES:
            raise SystemExit(f"npu_run: {name}: kernel type {kind!r} is not cube, vector or mix")
        out.append((name, kind, srcs))
    if not out:
        raise SystemExit(f"npu_run: no catlass_example_add_executable in {example}/CMakeLists.txt")
    return out


def build(name, kind, srcs, example, opts):
    """Compiles one target; returns the executable's path."""
    out_dir = os.path.join(opts.build, "npu_run", name)
    shutil.rmtree(out_dir, ignore_errors=True)
    lowered = os.path.join(out_dir, "lowered")
    catlass_inc = os.path.join(opts.catlass, "include")
    common = os.path.join(opts.catlass, "examples", "common")
    overlay([catlass_inc, common], lowered)
    sources = []
    for s in srcs:
        src = os.path.join(example, s)
        with open(src) as fh:
            text = fh.read()
        dst = os.path.join(lowered, "src", s)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as fh:
            fh.write(f'#line 1 "{src}"\n' + lower_launches(text))
        sources.append(dst)
    data_types_shim(opts.devkit, os.path.join(lowered, "dga_run_data_types.h"))
    core_type = "AscendC::AIV" if kind == "vector" else "AscendC::AIC"
    incs = [RUNNER, os.path.join(opts.lib, "npu_model_stub"), MODEL]
    incs += [os.path.join(opts.devkit, d) for d in DEVKIT_DIRS]
    incs += [os.path.join(ROOT, "cpp", "include"), lowered, catlass_inc, common, example]
    defs = ["ASCENDC_CPU_DEBUG=1", "__NPU_ARCH__=3510", "__DAV_C310__", f"DGA_RUN_CORE_TYPE={core_type}",
            f"DGA_RUN_CORES={CORES[kind]}", "CATLASS_ARCH=3510", "L2_CACHE_HINT"]
    if kind == "vector":
        defs.append("DGA_RUN_DAV_VEC=1")  # bisheng's __DAV_VEC__ (else __DAV_CUBE__): runner/dga_run.h
    exe = os.path.join(out_dir, name)
    # C++17, as bisheng compiles AscendC programs (its --std=c++17 is required): CATLASS's argument structs
    # with a defaulted constructor are aggregates only before C++20.
    # -Wno-c++11-narrowing: the devkit's CPU-debug-only parameter checks (kernel_check_copy.h) narrow in brace
    # initialisers, which g++ only warns about and clang refuses; bisheng's builds do not compile them.
    prog = [opts.cxx, "-std=c++17", "-O1", "-g0", "-w", "-Wno-c++11-narrowing",
            "-include", os.path.join(RUNNER, "dga_run.h"),
            "-include", os.path.join(lowered, "dga_run_data_types.h")]
    prog += [f"-D{d}" for d in defs] + [f"-I{i}" for i in incs]
    print(f"npu_run: building {name} ({kind}) from {example}", flush=True)
    libs = [f"-L{opts.lib}", "-ldga_npu_model", "-ldeepgemm_ascend", f"-Wl,-rpath,{opts.lib}", "-lm", "-ldl"]
    objs = runner_objects(opts)
    program_objs = compile_pass(prog, sources, os.path.join(out_dir, "cube"), name)
    # Exported for the vector pass's library: its registration hook, and the ACL stand-in its (never run) host
    # code refers to.
    exports = ["-Wl,--export-dynamic-symbol=dga_run_register_aiv", "-Wl,--export-dynamic-symbol=acl*"]
    compile_or_exit([opts.cxx, "-o", exe] + exports + program_objs + objs + libs, name, out_dir)
    if kind == "mix":
        # The vector pass: the same sources with the AIV constant, CATLASS's namespaces renamed (same lengths:
        # launch.cpp names them back in the launch sites' keys) so that its kernels stay apart from the cube
        # pass's, as a library the program loads (DGA_RUN_AIV_LIB).
        aiv = [a.replace("DGA_RUN_CORE_TYPE=AscendC::AIC", "DGA_RUN_CORE_TYPE=AscendC::AIV") for a in prog]
        aiv += ["-DDGA_RUN_AIV_PASS=1", "-DDGA_RUN_DAV_VEC=1", "-DCatlass=CatlasZ", "-Dtla=tlZ",
                "-Dmain=dga_run_vector_pass_main", "-fPIC"]
        aiv_objs = compile_pass(aiv, sources, os.path.join(out_dir, "vector"), name)
        compile_or_exit([opts.cxx, "-shared", "-o", exe + "_aiv.so"] + aiv_objs + libs, name, out_dir)
    return exe


def compile_pass(prog, sources, out_dir, name):
    """Objects of one pass (one per source, in out_dir)."""
    os.makedirs(out_dir, exist_ok=True)
    objs = []
    for src in sources:
        obj = os.path.join(out_dir, os.path.splitext(os.path.basename(src))[0] + ".o")
        compile_or_exit(prog + ["-c", src, "-o", obj], name, out_dir)
        objs.append(obj)
    return objs


def data_types_shim(devkit, out):
    """The devkit's kernel_type.h gives CPU-debug builds its data types as DT_* macros and bisheng's builds the
    enum AscendC::DataType with the same values, which programs name as AscendC::DT_FLOAT: a header that
    replaces the macros by that enum, generated from kernel_type.h."""
    with open(os.path.join(devkit, "include", "basic_api", "kernel_type.h")) as fh:
        types = re.findall(r"^#define (DT_\w+) (\d+)", fh.read(), re.M)
    lines = ["#pragma once", "// generated by npu_run.py from the devkit's kernel_type.h"]
    lines += [f"#undef {n}" for n, _ in types]
    lines += ["namespace AscendC {", "enum DataType {"] + [f"  {n} = {v}," for n, v in types] + ["};", "}"]
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def compile_or_exit(cmd, name, cwd):
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-20000:])
        raise SystemExit(f"npu_run: {name}: the build failed")


def runner_objects(opts):
    """The stand-ins' objects (launch.cpp, acl_stand_in.cpp), built once per build directory."""
    out = os.path.join(opts.build, "npu_run", "_runner")
    os.makedirs(out, exist_ok=True)
    objs = []
    for src in ("launch.cpp", "acl_stand_in.cpp"):  # (dga_run_api.h: launch.cpp's declarations)
        obj = os.path.join(out, src.replace(".cpp", ".o"))
        path = os.path.join(RUNNER, src)
        newest = max(os.path.getmtime(path), os.path.getmtime(os.path.join(RUNNER, "dga_run_api.h")))
        if not os.path.exists(obj) or os.path.getmtime(obj) < newest:
            compile_or_exit([opts.cxx, "-std=c++20", "-O1", "-c", path, "-o", obj, f"-I{RUNNER}", f"-I{MODEL}",
                             f"-I{os.path.join(ROOT, 'cpp', 'include')}"], src, out)
        objs.append(obj)
    return objs


def generate(example, exe, gen_args, timeout):
    """Runs the example's input generator (gen_data*.py) as its README does, into a scratch tree beside the
    executable that mirrors CATLASS's: the program runs in <run>/output/bin and reads
    ../../examples/<example>/data, which the generator writes through --data-root. Returns the run directory."""
    gens = sorted(f for f in os.listdir(example) if f.startswith("gen_data") and f.endswith(".py"))
    run_dir = os.path.join(os.path.dirname(exe), "run")
    bin_dir = os.path.join(run_dir, "output", "bin")
    os.makedirs(bin_dir, exist_ok=True)
    if gen_args is None:
        if gens:
            raise SystemExit(f"npu_run: {os.path.basename(example)} makes its inputs with {gens[0]}: pass its "
                             "arguments (the README's command line) with --gen-args")
        return bin_dir
    if not gens:
        raise SystemExit(f"npu_run: --gen-args given, but {example} has no gen_data*.py")
    data_root = os.path.join(run_dir, "examples", os.path.basename(os.path.normpath(example)))
    cmd = [sys.executable, os.path.join(example, gens[0])] + gen_args.split() + ["--data-root", data_root]
    print(f"npu_run: generating inputs: {' '.join(cmd[1:])}", flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=bin_dir)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-5000:] + r.stderr[-5000:])
        raise SystemExit(f"npu_run: {gens[0]} failed")
    return bin_dir


def run(name, exe, args, timeout, cwd):
    print(f"npu_run: running {name} {' '.join(args)}", flush=True)
    try:
        env = dict(os.environ, DGA_RUN_AIV_LIB=exe + "_aiv.so")
        r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        print(f"npu_run: {name}: over {timeout} s")
        return False
    out = r.stdout + r.stderr
    sys.stdout.write(out)
    ok = r.returncode == 0 and any(m in out for m in PASS_MARKS) and not any(m in out for m in FAIL_MARKS)
    print(f"npu_run: {name}: {'PASS' if ok else 'FAIL'} (exit status {r.returncode})", flush=True)
    return ok


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    prog_args = []
    if "--" in argv:
        i = argv.index("--")
        argv, prog_args = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("example", help="the program's directory (its CMakeLists.txt and sources)")
    p.add_argument("--target", default="", help="build and run only this target")
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                   help="the project's build directory (libdga_npu_model.so, npu_model_stub/)")
    p.add_argument("--lib", default="", help="where libdga_npu_model.so is (default: --build)")
    p.add_argument("--devkit", default=os.path.join(ROOT, "..", "shared", "third_party", "asc-devkit"))
    p.add_argument("--catlass", default="", help="CATLASS's root (default: two levels above the example)")
    p.add_argument("--cxx", default=os.environ.get("DGA_NPU_RUN_CXX", "clang++"))
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--gen-args", default=None,
                   help="arguments of the example's gen_data*.py (its README's command line), run first")
    opts = p.parse_args(argv)
    example = os.path.abspath(opts.example)
    opts.lib = os.path.abspath(opts.lib or opts.build)
    opts.build = os.path.abspath(opts.build)
    opts.catlass = os.path.abspath(opts.catlass or os.path.join(example, "..", ".."))
    opts.devkit = os.path.abspath(opts.devkit)
    if not os.path.isfile(os.path.join(opts.lib, "libdga_npu_model.so")):
        raise SystemExit(f"npu_run: no libdga_npu_model.so in {opts.lib} (build the project first)")
    ok = True
    for name, kind, srcs in targets(example):
        if opts.target and name != opts.target:
            continue
        exe = build(name, kind, srcs, example, opts)
        cwd = generate(example, exe, opts.gen_args, opts.timeout)
        ok = run(name, exe, prog_args, opts.timeout, cwd) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
