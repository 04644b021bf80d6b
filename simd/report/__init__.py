"""`simd report`: seed 001's five scenarios, computed from ``simd.models``.

Scenarios 1 and 2 are closed form and match the seed's printed numbers exactly; scenarios 3 to 5 draw
random numbers from ``--seed`` (one independent stream per scenario), so their output is deterministic for
a given seed. Each scenario is computed once into a frozen dataclass (compute.py); the sentences are written
once (prose.py); one renderer per format lays them out (render.py).

Interface for the CLI (simd.cli.offline, which defines the flags): ``run(args) -> exit code``; ``build(scenarios,
seed)`` and ``render(results, fmt)`` for callers that want the results or the text.
"""

from __future__ import annotations

import argparse
import sys

from simd.report.compute import SCENARIOS, build
from simd.report.render import RENDERERS, render

DEFAULT_SEED = 7  # the seed the seed-001 demo prints its sampled scenarios with
FORMATS = tuple(RENDERERS)

__all__ = ["DEFAULT_SEED", "FORMATS", "SCENARIOS", "build", "render", "run"]


def run(args: argparse.Namespace) -> int:
    """Print the report to stdout; exit code 0 (2 for an invalid seed)."""
    seed = getattr(args, "seed", DEFAULT_SEED)
    if seed is None:
        seed = DEFAULT_SEED
    if seed < 0:
        print(f"simd report: --seed must be >= 0, got {seed}", file=sys.stderr)
        return 2
    selected = sorted(set(getattr(args, "scenario", None) or SCENARIOS))
    fmt = getattr(args, "format", "text") or "text"
    sys.stdout.write(render(build(selected, seed), fmt))
    return 0
