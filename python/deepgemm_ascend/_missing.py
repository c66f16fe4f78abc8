"""Upstream DeepGEMM entry points this release does not implement yet.

Each raises NotImplementedError naming the issue that tracks it, so `import deepgemm_ascend as
deep_gemm` fails loudly instead of silently falling back to torch. The README lists them too.
"""

# name -> the issue that tracks it
MISSING = {}


def _make(name, issue):
    def missing(*args, **kwargs):
        raise NotImplementedError(
            f"deepgemm_ascend.{name} is not implemented yet (tracked in issue {issue}); "
            "see the feature table in README.md"
        )

    missing.__name__ = name
    missing.__qualname__ = name
    missing.__doc__ = f"Not implemented yet (issue {issue}): raises NotImplementedError."
    return missing


def install(namespace):
    for name, issue in MISSING.items():
        namespace.setdefault(name, _make(name, issue))
