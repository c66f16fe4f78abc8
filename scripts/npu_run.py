#!/usr/bin/env python3
"""Builds an unmodified AscendC program for the Ascend 950 (a CATLASS example directory, say) against the devkit
in CPU-debug mode and runs it on the instruction model: its kernels run core by core on the model
(libdga_npu_model), its ACL and platform calls on the project's stand-ins (cpp/npu_model/runner).

    python scripts/npu_run.py EXAMPLE_DIR [--target NAME] [--build BUILD_DIR] [--gen-args ARGS] [-- PROGRAM ARGS]

The program's sources are the directory's *.cpp (its CMakeLists.txt names the targets and their kernel type,
cube / vector / mix, as `catlass_example_add_executable(name type sources)`), compiled with clang++ against
CATLASS's include/ and examples/common beside the directory (or --catlass). The `<<<blocks, l2ctrl, stream>>>`
launch syntax is lowered as bisheng's front end does, in copies of the files that use it (the tree itself is
not changed): into dga_run::launch (runner/dga_run.h). An example that makes its inputs with a gen_data*.py
gets them from it first (--gen-args: the README's arguments), written into a scratch tree that mirrors the
relative paths the program reads; a generator that itself runs the program (from CATLASS's output/bin) and
compares its result runs instead of the program, each target in turn under the name it calls. Each target is
run with the program arguments (the targets' compile definitions, also those a CMake function of the
directory adds, are its CMakeLists.txt's); the run passes when the program exits 0, prints none of FAIL_MARKS
and prints one of PASS_MARKS (the examples report their golden check so). The exit status is 0 when every
target passed. Objects stay in the build directory and are compiled again only when something they read changed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "cpp", "npu_model", "runner")
MODEL = os.path.join(ROOT, "cpp", "npu_model", "shim")
MODEL_INCLUDE = os.path.join(ROOT, "cpp", "npu_model", "include")
PASS_MARKS = ("Compare success", "compare success", "Accuracy verification passed", "test pass")
FAIL_MARKS = ("Compare failed", "Compare false", "compare failed", "Error count", "[ERROR]", "aclError:")
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


def write_if_changed(path, text):
    """Writes a generated file unless it already holds `text` (its time then stays, for compile_cached)."""
    if os.path.exists(path):
        with open(path) as fh:
            if fh.read() == text:
                return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


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
                write_if_changed(os.path.join(out, os.path.relpath(path, tree)), lower_launches(text))
                n += 1
    return n


def cmake_calls(text, command):
    """The argument lists of every `command(...)` call in CMake text (comments dropped)."""
    text = re.sub(r"#[^\n]*", "", text)
    return [m.group(1).split() for m in re.finditer(rf"\b{command}\(([^)]*)\)", text)]


def expand_functions(text):
    """CMake text with each call of a `function(name param) ... endfunction()` it defines replaced by the body,
    `${param}` and `${ARGN}` substituted (the forms a CMakeLists.txt uses to make variants of one program)."""
    for m in list(re.finditer(r"function\(\s*(\w+)\s+(\w+)\s*\)(.*?)endfunction\(\s*\)", text, re.S)):
        name, param, body = m.group(1), m.group(2), m.group(3)
        text = text.replace(m.group(0), "")
        for args in cmake_calls(text, name):
            text += body.replace(f"${{{param}}}", args[0]).replace("${ARGN}", " ".join(args[1:]))
        text = re.sub(rf"\b{name}\([^)]*\)", "", text)
    for args in cmake_calls(text, "set"):
        text = text.replace(f"${{{args[0]}}}", " ".join(args[1:]))
    return text


def targets(example):
    """[(name, kernel type, [sources], [definitions])] from the directory's CMakeLists.txt."""
    with open(os.path.join(example, "CMakeLists.txt")) as fh:
        text = expand_functions(fh.read())
    defs = {}
    for args in cmake_calls(text, "target_compile_definitions"):
        defs.setdefault(args[0], []).extend(a for a in args[1:] if a not in ("PRIVATE", "PUBLIC", "INTERFACE"))
    out = []
    for m in re.finditer(r"catlass_example_add_executable\(\s*([^\s)]+)\s+(\w+)\s+([^)]*)\)", text):
        name, kind, srcs = m.group(1), m.group(2), m.group(3).split()
        if name.startswith("${"):
            name = os.path.basename(os.path.normpath(example))
        if kind not in CORES:
            raise SystemExit(f"npu_run: {name}: kernel type {kind!r} is not cube, vector or mix")
        out.append((name, kind, srcs, defs.get(name, [])))
    if not out:
        raise SystemExit(f"npu_run: no catlass_example_add_executable in {example}/CMakeLists.txt")
    return out


def build(name, kind, srcs, defs, example, opts):
    """Compiles one target; returns the executable's path."""
    out_dir = os.path.join(opts.build, "npu_run", name)
    shutil.rmtree(os.path.join(out_dir, "run"), ignore_errors=True)  # (objects stay: compile_cached)
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
        write_if_changed(dst, f'#line 1 "{src}"\n' + lower_launches(text))
        sources.append(dst)
    data_types_shim(opts.devkit, os.path.join(lowered, "dga_run_data_types.h"))
    core_type = "AscendC::AIV" if kind == "vector" else "AscendC::AIC"
    incs = [RUNNER, os.path.join(opts.lib, "npu_model_stub"), MODEL]
    incs += [os.path.join(opts.devkit, d) for d in DEVKIT_DIRS]
    incs += [os.path.join(ROOT, "cpp", "include"), MODEL_INCLUDE, lowered, catlass_inc, common, example]
    defs = ["ASCENDC_CPU_DEBUG=1", "__NPU_ARCH__=3510", "__DAV_C310__", f"DGA_RUN_CORE_TYPE={core_type}",
            f"DGA_RUN_CORES={CORES[kind]}", "CATLASS_ARCH=3510"] + defs
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
        compile_cached(prog + ["-c", src, "-o", obj], obj, name, out_dir)
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
    write_if_changed(out, "\n".join(lines) + "\n")


def compile_cached(cmd, obj, name, cwd):
    """Compiles unless obj was built by the same command and no file it included changed since (the
    compiler's dependency list, obj.d), as make does: a CI run that builds an example for several shapes
    compiles it once."""
    stamp, dep = obj + ".cmd", obj + ".d"
    if os.path.exists(obj) and os.path.exists(stamp) and os.path.exists(dep):
        with open(stamp) as fh, open(dep) as fd:
            same = fh.read() == "\0".join(cmd)
            deps = fd.read().replace("\\\n", " ").split(":", 1)[-1].split()
        built = os.path.getmtime(obj)
        if same and all(os.path.exists(d) and os.path.getmtime(d) <= built for d in deps):
            return
    for f in (obj, stamp):
        if os.path.exists(f):
            os.remove(f)
    compile_or_exit(cmd + ["-MMD", "-MF", dep], name, cwd)
    with open(stamp, "w") as fh:
        fh.write("\0".join(cmd))


def compile_or_exit(cmd, name, cwd):
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-20000:])
        raise SystemExit(f"npu_run: {name}: the build failed")


def runner_objects(opts):
    """The stand-ins' objects (launch.cpp, acl_stand_in.cpp, devkit_bf16.cpp), kept in the build directory."""
    out = os.path.join(opts.build, "npu_run", "_runner")
    os.makedirs(out, exist_ok=True)
    objs = []
    for src in ("launch.cpp", "acl_stand_in.cpp", "devkit_bf16.cpp"):
        obj = os.path.join(out, src.replace(".cpp", ".o"))
        compile_cached([opts.cxx, "-std=c++20", "-O1", "-c", os.path.join(RUNNER, src), "-o", obj, f"-I{RUNNER}",
                        f"-I{MODEL}", f"-I{os.path.join(ROOT, 'cpp', 'include')}", f"-I{MODEL_INCLUDE}",
                        f"-I{os.path.join(opts.devkit, 'cpudebug', 'include')}"], obj, src, out)
        objs.append(obj)
    return objs


def generate(example, exe, gen_args, timeout):
    """Runs the example's input generator (gen_data*.py) as its README does, into a scratch tree beside the
    executable that mirrors CATLASS's: the program runs in <run>/output/bin and reads
    ../../examples/<example>/data, or ./examples/<example>/data as from CATLASS's root (<run>/output/bin/examples
    links to <run>/examples), which the generator writes through --data-root, or, if it has no such option,
    beside itself (a copy of it in <run>/examples/<example>). Returns the run directory."""
    gens = sorted(f for f in os.listdir(example) if f.startswith("gen_data") and f.endswith(".py"))
    run_dir = os.path.join(os.path.dirname(exe), "run")
    bin_dir = os.path.join(run_dir, "output", "bin")
    os.makedirs(bin_dir, exist_ok=True)
    if not os.path.lexists(os.path.join(bin_dir, "examples")):
        os.symlink(os.path.join("..", "..", "examples"), os.path.join(bin_dir, "examples"))
    if gen_args is None:
        if gens:
            raise SystemExit(f"npu_run: {os.path.basename(example)} makes its inputs with {gens[0]}: pass its "
                             "arguments (the README's command line) with --gen-args")
        return bin_dir
    if not gens:
        raise SystemExit(f"npu_run: --gen-args given, but {example} has no gen_data*.py")
    data_root = os.path.join(run_dir, "examples", os.path.basename(os.path.normpath(example)))
    gen = os.path.join(example, gens[0])
    with open(gen) as fh:
        takes_root = "--data-root" in fh.read()
    if not takes_root:
        os.makedirs(data_root, exist_ok=True)
        gen = shutil.copy(gen, data_root)
    cmd = [sys.executable, gen] + gen_args.split() + (["--data-root", data_root] if takes_root else [])
    print(f"npu_run: generating inputs: {' '.join(cmd[1:])}", flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=bin_dir)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-5000:] + r.stderr[-5000:])
        raise SystemExit(f"npu_run: {gens[0]} failed")
    return bin_dir


def generator_runs_program(example):
    """The example's gen_data*.py when it runs the program itself (from CATLASS's output/bin, beside its
    examples/) and compares the result (the README's only command line), else None."""
    for f in sorted(os.listdir(example)):
        if f.startswith("gen_data") and f.endswith(".py"):
            with open(os.path.join(example, f)) as fh:
                text = fh.read()
            if "subprocess" in text and re.search(r'"output",\s*"bin"', text):
                return os.path.join(example, f)
    return None


def run_generator(name, example, exe, gen, gen_args, timeout):
    """Runs a generator that runs the program (generator_runs_program), in a scratch tree that mirrors
    CATLASS's: a copy of it at <run>/examples/<example>/, the program it calls by the example's name at
    <run>/output/bin/ as a wrapper that runs this target and keeps its exit status and stderr (the generator
    discards them) for the pass decision. Inputs and result go to ./data in <run>."""
    run_dir = os.path.join(os.path.dirname(exe), "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    ex = os.path.basename(os.path.normpath(example))
    os.makedirs(os.path.join(run_dir, "examples", ex))
    os.makedirs(os.path.join(run_dir, "output", "bin"))
    copy = shutil.copy(gen, os.path.join(run_dir, "examples", ex))
    status, err = os.path.join(run_dir, "program.status"), os.path.join(run_dir, "program.stderr")
    wrapper = os.path.join(run_dir, "output", "bin", ex)
    with open(wrapper, "w") as fh:
        fh.write(f'#!/bin/sh\n"{exe}" "$@" 2>"{err}"\necho $? >"{status}"\n')
    os.chmod(wrapper, 0o755)
    cmd = [sys.executable, copy] + (gen_args or "").split()
    print(f"npu_run: running {name} through {' '.join(cmd[1:])}", flush=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=run_dir, env=model_env(exe))
    except subprocess.TimeoutExpired:
        print(f"npu_run: {name}: over {timeout} s")
        return False
    program_status = open(status).read().strip() if os.path.exists(status) else "not run"
    out = r.stdout + r.stderr + (open(err).read() if os.path.exists(err) else "")
    sys.stdout.write(out)
    print_reached(name, exe)
    ok = r.returncode == 0 and program_status == "0" and reports_success(out)
    print(f"npu_run: {name}: {'PASS' if ok else 'FAIL'} (program exit status {program_status})", flush=True)
    return ok


def reports_success(out):
    """Whether a program's output reports its golden check passing (one of PASS_MARKS, none of FAIL_MARKS)."""
    return any(m in out for m in PASS_MARKS) and not any(m in out for m in FAIL_MARKS)


def model_env(exe):
    """The program's environment: its vector-pass library, and the file the model lists the instructions it
    reached in (emptied first)."""
    reached = exe + ".reached"
    if os.path.exists(reached):
        os.remove(reached)
    return dict(os.environ, DGA_RUN_AIV_LIB=exe + "_aiv.so", DGA_NPU_MODEL_REACHED=reached)


def print_reached(name, exe):
    """Prints the modelled instructions the program reached (each process of the run appended its own)."""
    path = exe + ".reached"
    names = sorted({n.strip() for n in open(path)} - {"", "end of kernel"}) if os.path.exists(path) else []
    print(f"npu_run: {name}: instructions reached: {' '.join(names) or '(none)'}", flush=True)


def run(name, exe, args, timeout, cwd):
    print(f"npu_run: running {name} {' '.join(args)}", flush=True)
    try:
        r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=model_env(exe))
    except subprocess.TimeoutExpired:
        print(f"npu_run: {name}: over {timeout} s")
        return False
    out = r.stdout + r.stderr
    sys.stdout.write(out)
    print_reached(name, exe)
    ok = r.returncode == 0 and reports_success(out)
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
    for name, kind, srcs, defs in targets(example):
        if opts.target and name != opts.target:
            continue
        exe = build(name, kind, srcs, defs, example, opts)
        gen = generator_runs_program(example)
        if gen and prog_args:
            raise SystemExit(f"npu_run: {os.path.basename(gen)} runs the program with its own arguments: "
                             "pass only --gen-args")
        if gen:
            ok = run_generator(name, example, exe, gen, opts.gen_args, opts.timeout) and ok
            continue
        cwd = generate(example, exe, opts.gen_args, opts.timeout)
        ok = run(name, exe, prog_args, opts.timeout, cwd) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
