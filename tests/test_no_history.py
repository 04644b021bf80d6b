"""No history in the code: comments, docstrings and docs say what a thing is and why, never when it changed.

Issue numbers and stages ("issue 22", "stage 3") are history wherever they appear in simd/, mixin/, prometheus/
and docs/ (code, strings and prose alike): none of them names a thing that exists. A date (2026-12-03) is
history in what explains, and can be data elsewhere, so it counts only in Python comments and docstrings, YAML
comments and Markdown prose; string literals, YAML values, fenced code blocks and inline code spans (a log's
example timestamps, a parser's test input) are left alone. Where a past measurement matters it belongs in
bench/README.md or a commit message; a design note says what is true now ("X costs Y, so ...").
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AREAS = ("simd", "mixin", "prometheus", "docs")
SUFFIXES = (".py", ".md", ".yaml", ".yml")

EVERYWHERE = re.compile(r"\bissues? #?[0-9]+|\bstages? [0-9]", re.IGNORECASE)
DATE = re.compile(r"\b20[0-9]{2}-[0-9]{2}-[0-9]{2}\b")


def _python_prose(text: str) -> dict[int, str]:
    """Line number -> the comments and docstrings on it (a docstring: any string that is a statement)."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = out.get(tok.start[0], "") + " " + tok.string
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for n in range(node.lineno, node.end_lineno + 1):
                out[n] = out.get(n, "") + " " + lines[n - 1]
    return out


_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


def _yaml_prose(text: str) -> dict[int, str]:
    """Line number -> its comment (after a '#' at the start or after a blank, outside quotes)."""
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.search(r"(?:^|\s)#(.*)$", _QUOTED.sub("''", line))
        if m:
            out[n] = m.group(1)
    return out


def _markdown_prose(text: str) -> dict[int, str]:
    """Line number -> its text outside fenced code blocks and inline code spans."""
    out, fence = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else fence or m.group(1)
            continue
        if fence is None:
            out[n] = re.sub(r"(`+).*?\1", "", line)
    return out


def history(path: Path) -> list[str]:
    """``path:line: text`` of every history note in one file."""
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    hits = {n for n, line in enumerate(text.splitlines(), 1) if EVERYWHERE.search(line)}
    prose = {".py": _python_prose, ".md": _markdown_prose}.get(path.suffix, _yaml_prose)(text)
    hits |= {n for n, line in prose.items() if DATE.search(line)}
    lines = text.splitlines()
    return [f"{rel}:{n}: {lines[n - 1].strip()[:120]}" for n in sorted(hits)]


def _files(area: str) -> list[Path]:
    return sorted(p for p in (ROOT / area).rglob("*")
                  if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts)


@pytest.mark.parametrize("area", AREAS)
def test_no_history_notes(area):
    assert _files(area), f"{area}/ has no file to check"
    found = [hit for path in _files(area) for hit in history(path)]
    assert found == [], f"{len(found)} history note(s) in {area}/ (say what and why, not when):\n" + "\n".join(found)


def test_the_check_finds_notes_and_leaves_data_alone(tmp_path):
    py = tmp_path / "m.py"
    py.write_text('"""Servers (Issue 21)."""\n\nSTAMP = "2026-12-03T10:00:00"  # a log line\n'
                  'x = 1  # measured 2026-12-03\n\n\ndef f():\n    """Since 2026-12-04."""\n'
                  '    return "stage 2"\n')
    assert [h.split(":")[1] for h in history(py)] == ["1", "4", "8", "9"]
    md = tmp_path / "d.md"
    md.write_text("# Logs (issues 21)\n\n```csv\n2026-12-03T10:00:00,3,start,gpu\n```\n\n"
                  "A time such as `2026-12-03T10:00:00`.\nStatus (2026-12-04).\n~~~\nstage 4\n~~~\n")
    assert [h.split(":")[1] for h in history(md)] == ["1", "8", "10"]
    yml = tmp_path / "r.yml"
    yml.write_text("# built 2026-12-03\nat: '2026-12-03 # not a comment'\nx: 1  # Stage 3\n"
                   "when: 2026-12-03  # a value\n")
    assert [h.split(":")[1] for h in history(yml)] == ["1", "3"]
