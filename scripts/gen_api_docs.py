"""Writes docs/API.md, the API reference, from the docstrings of deepgemm_ascend's public names.

    python scripts/gen_api_docs.py            # regenerate
    python scripts/gen_api_docs.py --check    # exit 1 if docs/API.md is out of date (CI runs this)
"""
import inspect
import pathlib
import sys

import deepgemm_ascend as dg

OUT = pathlib.Path(__file__).resolve().parents[1] / "docs" / "API.md"
SECTIONS = [
    ("Dense GEMMs", ("bf16_gemm_", "fp8_fp4_gemm_", "fp8_gemm_")),
    ("MoE grouped GEMMs", ("m_grouped_", "k_grouped_", "bf16_m_grouped", "fp8_m_grouped", "get_m", "get_k",
                           "get_mk", "set_mk", "get_theoretical")),
    ("Lightning indexer, HyperConnection, einsum", ("fp8_fp4_mqa", "fp8_mqa", "fp8_fp4_paged", "fp8_paged",
                                                    "get_paged", "tf32_hc", "einsum", "fp8_einsum")),
    ("Mega MoE", ("SymmBuffer", "get_symm_buffer", "transform_weights", "fp8_fp4_mega", "bf16_mega")),
    ("Runtime", ("get_num", "set_num", "info", "set_host_isa", "set_checked", "is_checked", "get_cmake_dir")),
]


def public_names():
    return sorted(n for n in dir(dg) if not n.startswith("_") and callable(getattr(dg, n))
                  and getattr(getattr(dg, n), "__module__", "").startswith("deepgemm_ascend"))


def render():
    names = public_names()
    lines = ["# API reference", "",
             "Generated from the docstrings by `python scripts/gen_api_docs.py`; see docs/USER_GUIDE.md for a tour.",
             ""]
    done = set()
    for title, prefixes in SECTIONS + [("Utilities", ("",))]:
        chosen = [n for n in names if n not in done and n.startswith(prefixes)]
        if not chosen:
            continue
        lines += [f"## {title}", ""]
        for n in chosen:
            done.add(n)
            obj = getattr(dg, n)
            try:
                sig = str(inspect.signature(obj))
            except (TypeError, ValueError):
                sig = "(...)"
            doc = inspect.getdoc(obj) or "(undocumented)"
            lines += [f"### `{n}{sig}`", "", "```text", doc, "```", ""]
    return "\n".join(lines)


def main():
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date: run python scripts/gen_api_docs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
