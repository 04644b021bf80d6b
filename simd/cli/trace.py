"""``simd trace``: a cluster's fault log (docs/traces.md). ``simd trace stats FILE``: what the log says;
``simd trace fit FILE --servers N``: the server model fitted to it, written as a scenario file, and how well it
reproduces the log."""

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


def _replicas(text: str) -> int:
    n = int(text) if text.strip().isdigit() else -1
    if not 0 <= n <= 10_000:
        raise ValueError(f"must be a whole number from 0 to 10000, got {text!r}")
    return n


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

    f = tsub.add_parser("fit", help="the server model fitted to a fault log (maximum likelihood, 95%% intervals), "
                        "as a scenario file, with a goodness-of-fit table")
    f.add_argument("file", help="InfiniteHBD's JSON, or CSV with the header time,server,event,class")
    f.add_argument("--servers", type=checked(_servers), required=True,
                   help="the cluster's servers (a log names only those that failed)")
    f.add_argument("--burst-seconds", type=checked(_seconds), default=0.0,
                   help="faults starting at most this long after the one before form a burst (default 0)")
    f.add_argument("--gpus-per-server", type=checked(_servers), default=8, help="GPUs per server (default 8)")
    f.add_argument("--n-gpus", type=checked(_servers), help="the written job's GPUs (default: every server's)")
    f.add_argument("--name", default="fitted", help="the written scenario's name (default: fitted)")
    f.add_argument("--replicas", type=checked(_replicas), default=200,
                   help="synthetic logs of the fitted model for the goodness of fit (default 200; 0: none)")
    f.add_argument("--out", help="write the scenario file here (simd check-config accepts it)")
    f.add_argument("--json", action="store_true", help="the fit and the goodness of fit as one JSON object")
    f.set_defaults(func=cmd_fit)


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


def cmd_fit(args) -> int:
    import dataclasses
    from pathlib import Path

    from simd.traces.fit import fit
    from simd.traces.log import LogError, load
    from simd.traces.scenario import Job, goodness, goodness_table, scenario_text

    try:
        log = load(args.file)
        result = fit(log, args.servers, args.burst_seconds)
        if args.n_gpus is not None and args.n_gpus % args.gpus_per_server:
            raise ValueError(f"--n-gpus {args.n_gpus} is not a multiple of --gpus-per-server {args.gpus_per_server}")
        if args.name and not args.name.replace("-", "").replace("_", "").isalnum() or args.name != args.name.lower():
            raise ValueError(f"--name must be lower-case letters, digits, - and _, got {args.name!r}")
    except (LogError, ValueError) as exc:
        for line in getattr(exc, "errors", [str(exc)]):
            print(f"error: {args.file}: {line}" if isinstance(exc, LogError) else f"error: {line}", file=sys.stderr)
        return EXIT_USAGE
    job = Job(name=args.name, gpus_per_server=args.gpus_per_server, n_gpus=args.n_gpus)
    text = scenario_text(result, job, Path(args.file).name)
    rows = goodness(result, log, args.replicas) if args.replicas else []
    if args.json:
        print(json.dumps({"fit": dataclasses.asdict(result),
                          "goodness": [dict(zip(("statistic", "log", "model_mean", "model_low", "model_high"), r,
                                                strict=True)) for r in rows]}))
    else:
        print(fit_table(result))
        if rows:
            print(f"\nthe log against {args.replicas} synthetic logs of the fitted model (its servers and span):")
            print(goodness_table(rows))
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    elif not args.json:
        print("\n" + text, end="")
    return 0


def fit_table(f) -> str:
    lines = [f"{f.faults} faults ({f.independent_faults} independent, {f.faults - f.independent_faults} in "
             f"{f.bursts} bursts) on {f.servers} servers over {f.span_days:.1f} days; 95% intervals",
             f"lifetimes: {f.lifetime} (AIC: " + ", ".join(f"{k} {v:.1f}" for k, v in f.aic.items()) + ")",
             f"  rate per server-day (frailty 1): {f.rate_per_server_day}",
             f"  scale (days): {f.lifetime_scale_days}"]
    if f.lifetime_shape:
        lines.append(f"  Weibull shape: {f.lifetime_shape}")
    lines.append(f"  gamma frailty shape: {f.gamma_shape}" if f.gamma_shape else
                 "  gamma frailty: none (the servers' counts are not over-dispersed beyond the lifetimes')")
    if f.burst_per_day:
        lines += [f"bursts per day (the cluster): {f.burst_per_day}", f"  mean size: {f.burst_mean_size}"]
    lines.append(f"repairs: {f.repair} (AIC: " + ", ".join(f"{k} {v:.1f}" for k, v in f.repair_aic.items()) + ")")
    if f.repair_median_days:
        lines += [f"  median (days): {f.repair_median_days}", f"  sigma: {f.repair_sigma}"]
    lines.append(f"  mean (days): {f.repair_mean_days}")
    lines.append("causes: " + ", ".join(f"{k} {v:.1%}" for k, v in f.causes.items()))
    return "\n".join(lines)
