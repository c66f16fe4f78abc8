"""Entry points that are not implemented yet fail loudly and are listed in the README."""
import pathlib

import pytest

import deepgemm_ascend as dg
from deepgemm_ascend._missing import MISSING

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


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
