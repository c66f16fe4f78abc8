"""The package works with exactly its declared dependencies: a subprocess in which only the standard
library, deepgemm-ascend and the distributions its requirements reach can be imported (every other
installed module, and the user site, is hidden, in the subprocess and in the ranks it spawns) imports
every public module and runs one Mega MoE call on two ranks."""
import os
import subprocess
import sys
import textwrap

import pytest

# sitecustomize of the subprocess (and of the ranks it spawns): a meta-path finder that refuses every
# top-level module outside the standard library and the dependency closure of deepgemm-ascend.
_BLOCKER = textwrap.dedent('''
    import importlib.metadata as md
    import re
    import sys


    def _closure(root):
        seen, todo = {}, [root]
        while todo:
            name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
            if name in seen:
                continue
            try:
                dist = md.distribution(name)
            except md.PackageNotFoundError:
                continue  # an unmet requirement (platform marker): not importable anyway
            seen[name] = dist
            for req in dist.requires or []:
                if "extra ==" not in req.replace("extra==", "extra =="):
                    todo.append(re.match(r"[A-Za-z0-9_.-]+", req).group(0))
        return seen.values()


    def _top_levels(dist):
        names = set()
        for f in dist.files or []:
            head = f.parts[0]
            if head != ".." and not head.endswith((".dist-info", ".data")):
                names.add(head.split(".")[0])
        return names


    ALLOWED = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | set(sys.modules)
    for _dist in _closure("deepgemm-ascend"):
        ALLOWED |= _top_levels(_dist)


    class _DeclaredOnly:
        @staticmethod
        def find_spec(name, path=None, target=None):
            top = name.partition(".")[0]
            if top not in ALLOWED and not top.startswith("_sitebuiltins"):
                raise ModuleNotFoundError(f"{top} is not a declared dependency of deepgemm-ascend", name=name)
            return None


    sys.meta_path.insert(0, _DeclaredOnly())
''')

_PROGRAM = textwrap.dedent('''
    import importlib
    import pkgutil

    import deepgemm_ascend
    from deepgemm_ascend.testing import mega_moe as tm
    from deepgemm_ascend.testing.distributed import run_ranks

    try:
        import pytest  # installed here, but not declared: the finder must hide it
        raise SystemExit("the finder let an undeclared module through")
    except ModuleNotFoundError:
        pass

    # Python modules and the extension _C (libdeepgemm_ascend and libdga_npu_model are C++ libraries beside
    # it, not modules).
    modules = [m.name for m in pkgutil.walk_packages(deepgemm_ascend.__path__, "deepgemm_ascend.")
               if not m.name.endswith(("__main__", "libdeepgemm_ascend", "libdga_npu_model"))]
    for name in modules:
        importlib.import_module(name)
    print("imported", len(modules), "modules")

    if __name__ == "__main__":
        scenario = tm.Scenario(num_experts=8, topk=6, tokens=(24, 9), calls=1)
        reports = run_ranks(2, tm.check_rank, [scenario], timeout=300)
        for report in reports:
            for r in report:
                assert r["equal"] and r["stats_equal"] and r["finite"] and r["diff"] < 2e-2, r
        print("two-rank mega moe ok")
''')


def test_declared_dependencies_suffice(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(_BLOCKER)
    (tmp_path / "program.py").write_text(_PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PYTHONPATH=str(tmp_path), PYTHONNOUSERSITE="1")
    proc = subprocess.run([sys.executable, str(tmp_path / "program.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "two-rank mega moe ok" in proc.stdout, out
    assert "Failed to initialize NumPy" not in out, out
