"""``python -m mixin``: regenerate every generated asset of the mixin from :mod:`mixin.config`.

Writes ``prometheus/rules/*.yml`` (:func:`mixin.rules.render`) and ``grafana/dashboards/simd.json``
(:func:`mixin.dashboard.dashboard`, written by :func:`mixin.dashboard.render`). ``--check`` writes nothing
and exits 1, naming the files whose committed text differs from what the code generates (for CI).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mixin import dashboard, rules

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "prometheus" / "rules"


def assets() -> dict[Path, str]:
    """Every generated file (absolute path) and the text the code generates for it."""
    out = {RULES_DIR / name: text for name, text in rules.render().items()}
    out[dashboard.PATH] = dashboard.render(dashboard.dashboard())
    return out


def _shown(p: Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mixin", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a committed file differs from the generated one")
    args = parser.parse_args(argv)
    generated = assets()
    stale = [p for p, text in generated.items() if not p.is_file() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"{_shown(p)}: differs from what `python -m mixin` generates", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(generated[p])
        print(f"wrote {_shown(p)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
