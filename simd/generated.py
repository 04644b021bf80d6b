"""A document generated from code (docs/metrics.md, docs/scenario-file.md): ``python -m <its module>`` prints
it, ``--write`` rewrites the committed file; a test of each checks that the committed file is the output."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def main(argv: list[str], path: Path, render: Callable[[], str], module: str) -> int:
    if argv == ["--write"]:
        path.write_text(render())
        print(f"wrote {path}")
        return 0
    if argv:
        print(f"usage: python -m {module} [--write]", file=sys.stderr)
        return 2
    sys.stdout.write(render())
    return 0
