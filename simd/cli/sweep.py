"""``simd sweep``'s flags; the run itself is simd.offline.sweep.command."""

from __future__ import annotations

import argparse

from simd.cli.common import add_executor_flags, at_most, checked, whole_number
from simd.offline.sweep.command import DEFAULT_REPLICAS, MAX_REPLICAS, MAX_REPLICAS_PER_POINT


def add_commands(sub) -> None:
    w = sub.add_parser("sweep", help="replicas of a scenario over a grid of one or two parameters, with 95%% CIs")
    configure_parser(w)
    w.set_defaults(func=cmd_sweep)


def cmd_sweep(args) -> int:
    from simd.offline.sweep import command

    return command.run(args)


def _seed_value(text: str) -> int:
    n = whole_number(text)
    if not 0 <= n < 2**63:  # the scenario model's range of seeds (simd.scenario.ScenarioBody.seed)
        raise ValueError(f"must be 0 to 2^63 - 1, got {n}")
    return n


_seed = checked(_seed_value)


def _half_width(text: str) -> float:
    """A fraction of 1 (0.002) or percentage points with a % sign (0.2%)."""
    t = text.strip()
    try:
        x = float(t[:-1]) / 100.0 if t.endswith("%") else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number like 0.002 or 0.2%, got {text!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (a fraction of utilization), got {text!r}")
    return x


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="scenario file (default: the embedded configuration)")
    p.add_argument("--scenario", required=True,
                   help="the scenario to vary (a name from the file; a sweep's name means its template)")
    p.add_argument("--param", action="append", required=True, metavar="KEY=SPEC",
                   help="a dotted scenario key and its values: A:B:N (N points, linear), A:B:Nlog (N points, "
                        "log-spaced) or a,b,c; integer keys are rounded and de-duplicated. Once or twice")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--replicas", type=at_most(MAX_REPLICAS_PER_POINT, "per grid point"),
                     help=f"replicas per grid point (default {DEFAULT_REPLICAS})")
    how.add_argument("--ci", type=_half_width, metavar="HALF_WIDTH",
                     help="add replicas until the 95%% confidence half-width of mean utilization is at most this "
                          "at every point (0.002 or 0.2%%)")
    p.add_argument("--max-replicas", type=at_most(MAX_REPLICAS_PER_POINT, "per grid point"),
                   help=f"with --ci: stop a point at this many replicas (default {MAX_REPLICAS})")
    p.add_argument("--seed-base", type=_seed,
                   help="first seed (default: the scenario's seed); every point uses the same seeds")
    p.add_argument("--out", help="directory for sweep.csv, sweep.json and sweep.png (default: print only)")
    add_executor_flags(p, "the tasks")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
