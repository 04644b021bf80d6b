"""The packages of simd form layers, and imports go one way: no module of an inner package imports an outer one.

From the inside out (docs/design.md 2): the leaves (the kernel cache the engine compiles into and numba's
locator for it, the generated documents' command line); the closed-form models (the engine takes the normal quantile
from them); the pure engine; fault logs (the scenario file replays them); the scenario file; seed 001's report and
the metrics (each on the layers below, not on each other); the offline tools; the live simulation; the daemon
process that serves it; the command line. Every import counts, at module level or in a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SIMD = Path(__file__).resolve().parents[1] / "simd"

LAYERS = (
    ("kernelcache", "kernellocator", "generated", "regularfile"),
    ("models",),
    ("engine",),
    ("traces",),
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
    assert _violations(bad, "report") == ["line 2: simd.metrics (metrics, layer 5)",
                                          "line 6: simd.daemon (daemon, layer 8)",
                                          "line 7: simd.cli (cli, layer 9)"]
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


def _engine_cycles(root: Path) -> list[tuple[str, ...]]:
    """The import cycles among the modules of ``root`` (imports at module level or in a function)."""
    mods = {p.stem: p for p in root.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for _line, module in _imports(path):
            name = module.removeprefix("simd.engine.").split(".")[0]
            if module.startswith("simd.engine.") and name in mods:
                graph[m].add(name)
        for node in ast.walk(ast.parse(path.read_text())):  # from simd.engine import <module>
            if isinstance(node, ast.ImportFrom) and node.module == "simd.engine":
                graph[m] |= {a.name for a in node.names if a.name in mods}
    cycles = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt == start:
                cycles.append((*path, start))
            elif nxt > start and nxt not in path:
                walk(start, nxt, [*path, nxt])

    for m in sorted(graph):
        walk(m, m, [m])
    return cycles


def test_the_engine_has_no_import_cycle():
    """core -> single -> replicas -> core was one (issue 20; single.py is now core.advance): the replica
    kernel's plan marshalling moved to replplan.py, which both use."""
    assert _engine_cycles(SIMD / "engine") == []


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import(tmp_path):
    (tmp_path / "a.py").write_text("from simd.engine.b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from simd.engine import a\n")
    (tmp_path / "c.py").write_text("from simd.engine.a import y\n")
    assert _engine_cycles(tmp_path) == [("a", "b", "a")]
