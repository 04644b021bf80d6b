"""The packages of simd form layers, and imports go one way: no module of an inner package imports an outer one.

From the inside out (docs/design.md 2): two standard-library leaves (the kernel cache the engine compiles
into, the generated documents' command line); the closed-form models (the engine takes the normal quantile
from them); the pure engine; the scenario file; seed 001's report and the metrics (each on the layers below,
not on each other); the offline tools; the live simulation; the daemon process that serves it; the command
line. Every import counts, at module level or in a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SIMD = Path(__file__).resolve().parents[1] / "simd"

LAYERS = (
    ("kernelcache", "generated", "regularfile"),
    ("models",),
    ("engine",),
    ("scenario",),
    ("report", "metrics"),
    ("offline",),
    ("live",),
    ("daemon",),
    ("cli",),
    ("__main__",),
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def _part(module: str) -> str | None:
    """The top-level part of simd a dotted module name belongs to (None for simd itself: its version)."""
    names = module.split(".")
    if names[0] != "simd" or len(names) == 1 or names[1].startswith("__") and names[1] != "__main__":
        return None
    return names[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every simd module the file imports."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "simd":  # from simd import engine, __version__
                found += [(node.lineno, f"simd.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
    return [(line, m) for line, m in found if m.split(".")[0] == "simd"]


def _violations(path: Path, own: str) -> list[str]:
    """The imports of one module of part ``own`` that reach a part in its own layer or further out."""
    return [f"line {line}: {module} ({_part(module)}, layer {RANK[_part(module)]})"
            for line, module in _imports(path)
            if _part(module) not in (None, own) and RANK[_part(module)] >= RANK[own]]


def _modules():
    return sorted(p for p in SIMD.rglob("*.py") if p.name != "__init__.py" or p.parent != SIMD)


def test_every_part_of_simd_has_a_layer():
    parts = {p.relative_to(SIMD).parts[0].removesuffix(".py") for p in _modules()}
    assert parts - set(RANK) == set()


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SIMD)))
def test_no_module_imports_an_outer_layer(path):
    own = path.relative_to(SIMD).parts[0].removesuffix(".py")
    assert _violations(path, own) == [], f"{own} (layer {RANK[own]}) imports an outer or sibling layer"


def test_the_check_finds_outer_and_sibling_imports_anywhere_in_a_module(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from simd import __version__, engine\nfrom simd.metrics import table\n\n\n"
                   "def f():\n    from simd.daemon import server\n    import simd.cli\n")
    assert _violations(bad, "report") == ["line 2: simd.metrics (metrics, layer 4)",
                                          "line 6: simd.daemon (daemon, layer 7)",
                                          "line 7: simd.cli (cli, layer 8)"]
    assert _violations(bad, "cli") == []


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
    """simd/engine/__init__ is the engine's only import surface (issue 20): its modules are its inside."""
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
