"""The packages of simd form layers, and imports go one way: no module of an inner package imports an outer one.

From the inside out (docs/design.md 2): the leaves (the kernel cache the engine compiles into and numba's
locator for it, the generated documents' command line); the closed-form models (the engine takes the normal quantile
from them); the pure engine; fault logs (the scenario file replays them); the scenario file; seed 001's report and
the metrics (each on the layers below, not on each other); the offline tools; the live simulation; the daemon
process that serves it; the command line. Every import counts, at module level or in a function.

The layers and the engine's acyclic imports are import-linter contracts (pyproject.toml, [tool.importlinter]),
run here; grimp, under it, reads every import statement, in a function or under TYPE_CHECKING too. The engine's
import surface stays a check of its own: import-linter sees modules, not names, so it cannot tell that
``from simd.engine import f`` takes a name ``simd.engine.__all__`` does not export.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SIMD = ROOT / "simd"


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """import-linter's contracts of pyproject.toml on the package ``simd`` found in ``cwd`` (it goes first on
    sys.path), in a process of its own so that the simd this process imported does not stand in for it."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, no_cache=True, no_logo=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold():
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Contracts: 2 kept, 0 broken." in run.stdout


def test_the_contracts_find_outer_sibling_unlisted_and_cyclic_imports_anywhere(tmp_path):
    shutil.copytree(SIMD, tmp_path / "simd", ignore=shutil.ignore_patterns("__pycache__"))
    plant = {"models/planted.py": "def f():\n    import simd.cli\n",  # outward, in a function
             "report/planted.py": "def f():\n    from .. import metrics\n",  # a sibling, relative
             "kernelcache_planted.py": "",  # a part of simd with no layer
             "scenario/planted.py": "import typing\n\nif typing.TYPE_CHECKING:\n    from simd import daemon\n",
             "engine/planted_a.py": "from simd.engine import planted_b\n",  # a cycle through a function's import
             "engine/planted_b.py": "def f():\n    from simd.engine import planted_a\n"}
    for name, text in plant.items():
        (tmp_path / "simd" / name).write_text(text)
    run = _lint_imports(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    out = " ".join(run.stdout.split())  # rich wraps long lines
    for broken in ("simd.models.planted -> simd.cli", "simd.report.planted -> simd.metrics",
                   "- simd.kernelcache_planted", "simd.scenario.planted -> simd.daemon",
                   ".planted_b -> .planted_a", "Contracts: 0 kept, 2 broken."):
        assert broken in out, run.stdout


def _modules():
    return sorted(p for p in SIMD.rglob("*.py") if p.name != "__init__.py" or p.parent != SIMD)


def _engine_surface_violations(path: Path) -> list[str]:
    """Imports of the engine's inside (a module under simd.engine, or a name simd.engine does not export)."""
    import simd.engine

    out = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith("simd.engine.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("simd.engine."):
                out.append(f"line {node.lineno}: from {node.module} import ...")
            elif node.module == "simd.engine":
                out += [f"line {node.lineno}: simd.engine.{a.name} is not exported" for a in node.names
                        if a.name not in simd.engine.__all__]
    return out


@pytest.mark.parametrize("path", [p for p in _modules() if p.relative_to(SIMD).parts[0] != "engine"],
                         ids=lambda p: str(p.relative_to(SIMD)))
def test_the_rest_of_simd_uses_the_engine_through_its_surface(path):
    """simd/engine/__init__ is the engine's only import surface: its modules are its inside, free to change."""
    assert _engine_surface_violations(path) == []


def test_the_surface_check_finds_imports_of_the_engines_inside(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import simd.engine.core\nfrom simd.engine.spec import Plan\nfrom simd.engine import walk\n"
                   "def f():\n    from simd.engine import advance, batch\n")
    assert _engine_surface_violations(bad) == [
        "line 1: import simd.engine.core", "line 2: from simd.engine.spec import ...",
        "line 3: simd.engine.walk is not exported", "line 5: simd.engine.batch is not exported"]


def test_every_name_the_engine_exports_exists():
    import simd.engine

    assert [n for n in simd.engine.__all__ if getattr(simd.engine, n, None) is None] == []
