"""One renderer per format, each reading the scenarios' dataclasses (compute.py): text, markdown, JSON.

Text and markdown lay out the same blocks (prose.py) with their own headings and tables; JSON writes each
dataclass's JSON fields (compute.in_json) under their names, in field order, after the scenario's number
and title.
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass

from simd.report.compute import Result, in_json
from simd.report.prose import Bullets, Line, Table, blocks, title


def text(results: list[Result]) -> str:
    return _layout(results, lambda t: [t, "=" * len(t), ""], _text_table)


def markdown(results: list[Result]) -> str:
    return _layout(results, lambda t: [f"## {t}", ""], _md_table)


def json(results: list[Result]) -> str:
    doc = {"scenarios": [{"scenario": r.number, "title": title(r), **_plain(r)} for r in results]}
    return _json.dumps(doc, indent=2, sort_keys=False) + "\n"


RENDERERS: dict[str, Callable[[list[Result]], str]] = {"text": text, "markdown": markdown, "json": json}


def render(results: list[Result], fmt: str) -> str:
    """The report as text, markdown or JSON (one document)."""
    return RENDERERS[fmt](results)


def _plain(value):
    """A dataclass's JSON fields as a dict, recursively; tuples as lists, mappings as dicts."""
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value) if in_json(f)}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _layout(results: list[Result], heading: Callable[[str], list[str]],
            table: Callable[[Table], list[str]]) -> str:
    out: list[str] = []
    for r in results:
        if out:
            out.append("")
        out += heading(title(r))
        for block in blocks(r):
            if isinstance(block, Line):
                out += [block.text, ""]
            elif isinstance(block, Bullets):
                out += [f"- {b}" for b in block.items] + [""]
            else:
                out += table(block) + [""]
        while out and out[-1] == "":
            out.pop()
    return "\n".join(out) + "\n"


def _text_table(t: Table) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in t.rows)) for i, h in enumerate(t.headers)]
    # Columns of text (the strategies of scenario 3) are left-aligned, columns of numbers right-aligned.
    left = [not (t.rows and t.rows[0][i][:1].isdigit()) for i in range(len(t.headers))]

    def fmt(cells):
        return "  ".join(
            c.ljust(w) if lft else c.rjust(w) for c, w, lft in zip(cells, widths, left, strict=True)
        ).rstrip()

    return [fmt(t.headers), "  ".join("-" * w for w in widths), *(fmt(r) for r in t.rows)]


def _md_table(t: Table) -> list[str]:
    return [
        "| " + " | ".join(t.headers) + " |",
        "|" + "|".join("---" for _ in t.headers) + "|",
        *("| " + " | ".join(r) + " |" for r in t.rows),
    ]
