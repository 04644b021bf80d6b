"""The benchmarks are not run by the suite (they time things), so nothing else would notice when a module they
import moves: bench/startup.py still imported `simd.precompile` a layer move after it became
`simd.offline.precompile`, and broke at its first measurement. Every `from simd... import ...` in bench/ (in code
or in the code a benchmark hands to a child process) must name a module and names that exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
IMPORT = re.compile(r"from (simd(?:\.\w+)*) import (?:\(([^)]*)\)|([\w, ]+))")


def _imports_of(text: str):
    """(module, the names imported from it) for each ``from simd... import ...`` in ``text``."""
    for m in IMPORT.finditer(text):
        # (``name as alias``: the name is what must exist)
        yield m.group(1), [n.split(" as ")[0].strip() for n in (m.group(2) or m.group(3)).split(",") if n.strip()]


def _imports():
    for path in sorted(BENCH.glob("*.py")):
        for module, names in _imports_of(path.read_text()):
            yield pytest.param(module, names, id=f"{path.name}:{module}")


@pytest.mark.parametrize(("module", "names"), list(_imports()))
def test_what_the_benchmarks_import_exists(module, names):
    mod = importlib.import_module(module)
    assert [n for n in names if not hasattr(mod, n) and importlib.util.find_spec(f"{module}.{n}") is None] == []


def test_the_check_reads_imports_in_strings_too():
    found = [m.groups() for m in IMPORT.finditer('run(["-c", "from simd import precompile; print(1)"])')]
    assert found == [("simd", None, "precompile")]


def test_an_alias_names_the_module_it_renames():
    assert dict(_imports_of("from simd.traces import fit as module")) == {"simd.traces": ["fit"]}
