"""``simd trace``: a cluster's fault log (issue 22; docs/traces.md). ``simd trace stats FILE``: what the log says."""

from __future__ import annotations

import json
import math
import sys

from simd.cli.common import EXIT_USAGE, checked, positive_int

MAX_SERVERS = 1 << 20  # a cluster's servers (--servers): beyond any log simd reads (the cap keeps a typo cheap)


def _servers(text: str) -> int:
    n = positive_int(text)
    if n > MAX_SERVERS:
        raise ValueError(f"must be at most {MAX_SERVERS}, got {n}")
    return n


def _seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(x) or not 0 <= x <= 86400:
        raise ValueError(f"must be between 0 and 86400 seconds, got {text}")
    return x


def add_commands(sub) -> None:
    t = sub.add_parser("trace", help="a cluster's fault log: its statistics")
    tsub = t.add_subparsers(dest="trace_command", required=True, parser_class=type(t))
    s = tsub.add_parser("stats", help="what a fault log says: rates, classes, gaps, bursts, faults per server, "
                        "repair times")
    s.add_argument("file", help="InfiniteHBD's JSON, or CSV with the header time,server,event,class")
    s.add_argument("--servers", type=checked(_servers),
                   help="the cluster's servers (a log names only those that failed); without it the rate and "
                        "the faults per server are left out")
    s.add_argument("--burst-seconds", type=checked(_seconds), default=0.0,
                   help="faults starting at most this long after the one before form a burst (default 0: the "
                        "same instant)")
    s.add_argument("--json", action="store_true", help="one JSON object")
    s.add_argument("--out", help="also write PNGs here: faults per server, the gaps against the exponential, "
                                 "repair times")
    s.set_defaults(func=cmd_stats)


def cmd_stats(args) -> int:
    from simd.traces.log import LogError, load
    from simd.traces.stats import stats, table

    try:
        log = load(args.file)
        result = stats(log, args.servers, args.burst_seconds)
    except (LogError, ValueError) as exc:
        for line in getattr(exc, "errors", [str(exc)]):
            print(f"error: {args.file}: {line}" if isinstance(exc, LogError) else f"error: {line}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(result.as_json()) if args.json else table(result))
    if args.out:
        from simd.traces.plots import write

        for path in write(log, result, args.out):
            print(f"wrote {path}", file=sys.stderr)
    return 0
