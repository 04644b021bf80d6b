"""``simd trace``: a cluster's fault log (docs/traces.md). ``simd trace stats FILE``: what the log says;
``simd trace fit FILE --servers N``: the server model fitted to it, written as a scenario file, and how well it
reproduces the log."""

from __future__ import annotations

import json
import math
import sys

from simd.cli.common import EXIT_USAGE, add_executor_flags, checked, positive_int
from simd.quoting import warning

MAX_SERVERS = 1 << 20  # a cluster's servers (--servers): beyond any log simd reads (the cap keeps a typo cheap)
STATS, FIT, CHECK = "simd trace stats", "simd trace fit", "simd trace check"


def _fail(prog: str, message: str, code: int = EXIT_USAGE) -> int:
    """One error line (bounded and printable by simd.quoting: it may hold a path or a flag as given); ``code``."""
    from simd.quoting import bounded

    print(bounded(f"{prog}: error: {message}"), file=sys.stderr)
    return code


def _scenario_name(text: str) -> str:
    """--name checked by the schema's own rule for a scenario's name."""
    from typing import Annotated

    from simd.scenario import Scenario, parse_value

    field = Scenario.model_fields["name"]
    return parse_value(Annotated[field.annotation, *field.metadata], text)


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


def _refits(text: str) -> int:
    n = int(text) if text.strip().isdigit() else -1
    if n != 0 and not 2 <= n <= 1000:
        raise ValueError(f"must be 0 or a whole number from 2 to 1000, got {text!r}")
    return n


def _positive_replicas(text: str) -> int:
    n = _replicas(text)
    if not n:
        raise ValueError("must be at least 1")
    return n


def _columns(text: str) -> dict[str, str]:
    """--columns NAME=COLUMN,...: simd's name of a CSV column (simd.traces.log.COLUMNS) -> the file's."""
    from simd.quoting import quoted
    from simd.traces.log import columns_map

    pairs = [tuple(x.strip() for x in pair.partition("=")) for pair in text.split(",")]
    if any(not eq for _, eq, _ in pairs):
        raise ValueError(f"expected NAME=COLUMN pairs separated by commas, got {quoted(text)}")
    return columns_map((name, theirs) for name, _, theirs in pairs)


def _timezone(text: str):
    """--timezone: simd.traces.log.zone's (a scenario's replay.timezone reads it the same way)."""
    from simd.traces.log import zone

    return zone(text)


def _time_format(text: str) -> str:
    """--time-format: simd.traces.log.time_format's (as a scenario's replay.time_format)."""
    from simd.traces.log import time_format

    return time_format(text)


FORMAT_HELP = "InfiniteHBD's JSON, a CSV of events (time,server,event,class) or of faults (start,end,server,class)"


def _format_flags(p) -> None:
    p.add_argument("--columns", type=checked(_columns),
                   help="a CSV's own column names: NAME=COLUMN pairs, e.g. start=begin,end=finish,server=node,"
                        "class=cause (names: start, end, server, class, level, desc, time, event)")
    p.add_argument("--timezone", type=checked(_timezone),
                   help="the zone of a CSV's dates without an offset: a tz database name (Europe/Berlin) or an "
                        "offset (+05:30); default UTC")
    p.add_argument("--time-format", type=checked(_time_format),
                   help="a strptime format every time of a CSV is read with, e.g. '%%m/%%d/%%Y %%H:%%M' (LANL's "
                        "6/21/2005 10:54); default: seconds or ISO 8601")


def add_commands(sub) -> None:
    t = sub.add_parser("trace", help="a cluster's fault log: its statistics")
    tsub = t.add_subparsers(dest="trace_command", required=True, parser_class=type(t))
    s = tsub.add_parser("stats", help="what a fault log says: rates, classes, gaps, bursts, faults per server, "
                        "repair times")
    s.add_argument("file", help=FORMAT_HELP)
    _format_flags(s)
    s.add_argument("--servers", type=checked(_servers),
                   help="the cluster's servers (a log names only those that failed); without it the rate and "
                        "the faults per server are left out")
    s.add_argument("--burst-seconds", type=checked(_seconds), default=0.0,
                   help="faults starting at most this long after the one before form a burst (default 0: the "
                        "same instant)")
    s.add_argument("--json", action="store_true", help="one JSON object")
    s.add_argument("--out", help="also write PNGs in this directory (created if missing): faults per server, the "
                                 "gaps against the exponential, repair times")
    s.set_defaults(func=cmd_stats)

    f = tsub.add_parser("fit", help="the server model fitted to a fault log (maximum likelihood, 95%% intervals), "
                        "as a scenario file, with a goodness-of-fit table")
    f.add_argument("file", help=FORMAT_HELP)
    _format_flags(f)
    f.add_argument("--servers", type=checked(_servers), required=True,
                   help="the cluster's servers (a log names only those that failed)")
    f.add_argument("--burst-seconds", type=checked(_seconds), default=0.0,
                   help="faults starting at most this long after the one before form a burst (default 0)")
    f.add_argument("--gpus-per-server", type=checked(_servers), default=8, help="GPUs per server (default 8)")
    f.add_argument("--n-gpus", type=checked(_servers), help="the written job's GPUs (default: every server's)")
    f.add_argument("--name", type=checked(_scenario_name), default="fitted",
                   help="the written scenario's name (default: fitted)")
    f.add_argument("--replicas", type=checked(_replicas), default=200,
                   help="synthetic logs of the fitted model for the goodness of fit (default 200; 0: none)")
    f.add_argument("--out", help="write the scenario file here (simd check-config accepts it; a regular file, "
                                 "replaced whole)")
    f.add_argument("--json", action="store_true", help="the fit and the goodness of fit as one JSON object")
    f.add_argument("--plots", help="also write the goodness of fit as PNGs in this directory (created if missing): "
                                   "the gaps, the faults per server and the repair times of the log against the "
                                   "fitted model's")
    f.add_argument("--until", metavar="WHEN",
                   help="fit the part of the log before WHEN only: days since its start, or a date read as its "
                        "times (simd trace check LOG --from WHEN then compares the rest)")
    f.add_argument("--joint-regimes", action="store_true",
                   help="also fit the regimes joined with the lifetimes, frailty and schedule (a Monte Carlo EM: "
                        "seconds more), written when its AIC is the lowest")
    f.add_argument("--relapse", action="store_true",
                   help="also fit repairs that do not hold (after each repair, with a probability a short "
                        "exponential lifetime: seconds more), written when its AIC is the lowest")
    f.add_argument("--bootstrap", metavar="N", type=checked(_refits), default=0,
                   help="with --joint-regimes, when the regimes joined with the lifetimes are written: their 95%% "
                        "intervals from N logs of the fitted model fitted back (a parametric bootstrap: N times the "
                        "fit's time; 20 is a good N; default 0, the fit's own intervals)")
    add_executor_flags(f, "the bootstrap's refits")
    f.set_defaults(func=cmd_fit)

    c = tsub.add_parser("check", help="a scenario's server model against a fault log (or its part from --from on): "
                        "the goodness-of-fit table of simd trace fit")
    c.add_argument("config", help="the scenario file (simd trace fit's, or any whose servers a synthetic log "
                                  "simulates)")
    c.add_argument("file", help=FORMAT_HELP)
    _format_flags(c)
    c.add_argument("--servers", type=checked(_servers), required=True,
                   help="the log's cluster: its servers (a log names only those that failed)")
    c.add_argument("--scenario", help="the scenario of the file to check (default: its only one)")
    c.add_argument("--from", dest="after", metavar="WHEN",
                   help="compare the part of the log from WHEN on (days since its start, or a date read as its "
                        "times): the model simulated over the log's whole span, the same part read out of each "
                        "synthetic log")
    c.add_argument("--burst-seconds", type=checked(_seconds), default=0.0,
                   help="faults starting at most this long after the one before form a burst (default 0)")
    c.add_argument("--replicas", type=checked(_positive_replicas), default=200,
                   help="synthetic logs of the scenario's model (default 200)")
    c.add_argument("--json", action="store_true", help="the rows as one JSON object")
    c.set_defaults(func=cmd_check)


def cmd_stats(args) -> int:
    from simd import regularfile
    from simd.traces.log import LogError, load
    from simd.traces.stats import stats, table

    if args.out:
        try:
            regularfile.writable_dir(args.out)  # before any work, as simd sweep --out
        except OSError as exc:
            return _fail(STATS, f"--out {args.out}: cannot write there: {exc.strerror or exc}")
    try:
        log = load(args.file, args.columns, args.timezone, args.time_format)
        result = stats(log, args.servers, args.burst_seconds, over_time=True)
    except (LogError, ValueError) as exc:
        for line in getattr(exc, "errors", [str(exc)]):
            _fail(STATS, f"{args.file}: {line}" if isinstance(exc, LogError) else line)
        return EXIT_USAGE
    print(json.dumps(result.as_json()) if args.json else table(result))
    if args.out:
        from pathlib import Path

        from simd.traces.plots import write

        try:
            paths = write(log, result, args.out)
        except OSError as exc:  # the disk filled up, the directory went away: the statistics above stand
            return _fail(STATS, f"--out {args.out}: cannot write {Path(exc.filename or '').name or 'the PNGs'}: "
                                f"{exc.strerror or exc}", 1)
        for path in paths:
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _bounds(step_seconds: float) -> dict[str, tuple[float, float]]:
    """The range the scenario file accepts for each key `trace fit` fills from the fit, read from the schema."""
    from simd.scenario import schema
    from simd.traces.scenario import FITTED_KEYS

    fields = {"failures.hard_per_gpu_hour": (schema.Failures, "hard_per_gpu_hour"),
              "servers.lifetime.shape": (schema.WeibullLifetime, "shape"),
              "servers.rates.gamma_shape": (schema.ServerRates, "gamma_shape"),
              "servers.bursts.per_day": (schema.Bursts, "per_day"),
              "servers.bursts.mean_size": (schema.Bursts, "mean_size"),
              "servers.repair.automatic.median_seconds": (schema.LognormalRepair, "median_seconds"),
              "servers.repair.automatic.sigma": (schema.LognormalRepair, "sigma"),
              "servers.repair.automatic.mean_seconds": (schema.ExponentialRepair, "mean_seconds"),
              "servers.repair.automatic.components[].weight": (schema.RepairComponent, "weight"),
              "servers.repair.automatic.components[].time.median_seconds": (schema.LognormalRepair,
                                                                            "median_seconds"),
              "servers.repair.automatic.components[].time.sigma": (schema.LognormalRepair, "sigma"),
              "servers.rate_schedule[].multiplier": (schema.RatePiece, "multiplier")}
    out = {key: _range(*fields[key]) for key in FITTED_KEYS}
    lo, hi = out["failures.hard_per_gpu_hour"]
    # and the rule ScenarioBody._probabilities adds: hard_per_gpu_hour * step_seconds / 3600 is a GPU's
    # probability of failing in a step (at most 1)
    out["failures.hard_per_gpu_hour"] = (lo, min(hi, 3600.0 / step_seconds))
    return out


def _range(model, name: str) -> tuple[float, float]:
    """(least, most) of a schema field's value: its ge/gt and le/lt, through Optional and Annotated."""
    import typing

    lo, hi = -math.inf, math.inf
    pending = [model.model_fields[name]]
    while pending:
        item = pending.pop()
        for m in getattr(item, "metadata", None) or typing.get_args(item):
            if not isinstance(m, type | str | int | float) or isinstance(m, bool):
                pending.append(m)
        if hasattr(item, "annotation"):
            pending.append(item.annotation)
        for attr in ("ge", "gt"):
            if isinstance(getattr(item, attr, None), int | float):
                lo = max(lo, getattr(item, attr))
        for attr in ("le", "lt"):
            if isinstance(getattr(item, attr, None), int | float):
                hi = min(hi, getattr(item, attr))
    return lo, hi


def _refused(text: str) -> str | None:
    """What `simd check-config` says against a scenario file's text (its first line), or None if it accepts it."""
    from simd.scenario import ConfigError, parse_config, summary

    try:
        for s in parse_config(text, "the scenario").all_scenarios:
            summary(s)
    except ConfigError as exc:
        return exc.errors[0] if exc.errors else str(exc)
    return None


def _replay(args) -> dict:
    """The written scenario's servers.replay of the log: its path from the folder of --out (without it, as given:
    from the working directory, where `> my.yaml` writes), the cluster's servers and the options it was read with
    (their names and meanings the flags')."""
    import os

    from simd.traces.log import zone_name

    path = args.file
    if args.out and not os.path.isabs(path):
        path = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(args.out)))
    out = {"log": path, "servers": args.servers}
    if args.columns:
        out["columns"] = args.columns
    if args.timezone is not None:
        out["timezone"] = zone_name(args.timezone)
    if args.time_format:
        out["time_format"] = args.time_format
    return out


def cmd_fit(args) -> int:
    from simd import regularfile
    from simd.executors import refused
    from simd.traces.scenario import Job, job_text

    if args.n_gpus is not None and args.n_gpus % args.gpus_per_server:
        return _fail(FIT, f"--n-gpus {args.n_gpus} is not a multiple of --gpus-per-server {args.gpus_per_server}")
    job = Job(name=args.name, gpus_per_server=args.gpus_per_server, n_gpus=args.n_gpus)
    if why := _refused(job_text(job, args.servers)):  # the job the flags make, before any work
        return _fail(FIT, f"the written scenario's job (--servers, --n-gpus, --gpus-per-server) is one the "
                          f"scenario file refuses: {why}")
    if args.out:
        try:
            regularfile.writable_file(args.out)  # before any work, as simd sweep --out
        except OSError as exc:
            return _fail(FIT, f"--out {args.out}: cannot write there: {exc.strerror or exc}")
    if args.bootstrap and not args.joint_regimes:
        return _fail(FIT, "--bootstrap refits the regimes joined with the lifetimes: it needs --joint-regimes")
    if (args.workers or args.scheduler) and not args.bootstrap:
        return _fail(FIT, f"{'--workers' if args.workers else '--scheduler'} runs the bootstrap's refits: it needs "
                          "--bootstrap N")
    if why := refused(args.scheduler, args.workers):
        return _fail(FIT, why)
    if args.plots:
        if not args.replicas:
            return _fail(FIT, "--plots draws the log against the fitted model's synthetic logs: --replicas 0 has none")
        try:
            regularfile.writable_dir(args.plots)
        except OSError as exc:
            return _fail(FIT, f"--plots {args.plots}: cannot write there: {exc.strerror or exc}")
    if args.bootstrap:
        from simd.executors import ExecutorError, MissingDask, choose

        try:  # before any work: dask installed, the scheduler reached
            execute = choose(args.scheduler, args.workers)
        except ExecutorError as exc:  # dask missing: a usage error; the scheduler unreachable: a failure
            return _fail(FIT, str(exc), EXIT_USAGE if isinstance(exc, MissingDask) else 1)
        try:
            return _fit(args, job, execute)
        except ExecutorError as exc:  # a refit failed on the cluster, a local worker died
            return _fail(FIT, str(exc), 1)
        finally:
            execute.close()
    return _fit(args, job, None)


def _fit(args, job, execute) -> int:
    """simd trace fit's work once its flags are checked; ``execute``: the bootstrap's executor (None without
    --bootstrap)."""
    import dataclasses
    from pathlib import Path

    from simd import regularfile
    from simd.traces.fit import fit
    from simd.traces.log import LogError, before, load, when
    from simd.traces.scenario import budget_note, goodness, goodness_table, scenario_text

    try:
        log = load(args.file, args.columns, args.timezone, args.time_format)
        if args.until is not None:
            try:
                log = before(log, when(args.until, log, args.timezone, args.time_format))
            except ValueError as exc:
                return _fail(FIT, f"--until: {exc}")
        result = fit(log, args.servers, args.burst_seconds, joint_regimes=args.joint_regimes, relapse=args.relapse)
    except (LogError, ValueError) as exc:
        for line in getattr(exc, "errors", [str(exc)]):
            _fail(FIT, f"{args.file}: {line}")
        return EXIT_USAGE
    if args.bootstrap:
        result = _bootstrapped(result, args.bootstrap, execute)
    text = scenario_text(result, job, Path(args.file).name, _bounds(job.step_seconds), _replay(args))
    if why := _refused(text):  # never: every fitted value is clamped to the schema's bounds
        return _fail(FIT, f"the fitted scenario is one check-config refuses (a bug): {why}", 1)
    g = goodness(result, log, args.replicas, curves=bool(args.plots)) if args.replicas else None
    note = budget_note(g) if g else None
    if args.json:
        print(json.dumps({"fit": dataclasses.asdict(result),
                          "goodness": _rows_json(g.rows if g else []),
                          "goodness_without_schedule": [
                              dict(zip(("statistic", "model_mean", "model_low", "model_high"), (r[0], *w),
                                       strict=True)) for r, w in zip(g.rows, g.without_schedule, strict=True)]
                          if g and g.without_schedule else None,
                          "goodness_budget": {"faults_per_log": g.budget if g else None,
                                              "logs_stopped": g.stopped if g else 0}}))
    else:
        # without --out, standard output is the scenario file alone (`simd trace fit FILE > my.yaml`): the tables
        # go to standard error; with --out, they are standard output's
        report = sys.stdout if args.out else sys.stderr
        print(fit_table(result), file=report)
        if g:
            print(f"\nthe log against {args.replicas} synthetic logs of the fitted model (its servers and span):",
                  file=report)
            if g.rows:
                # (the regimes joined with the lifetimes and a schedule: the column without both; with the
                # relapses inside them, without those too)
                label = "without the schedule"
                if result.regimes and result.rate_schedule:
                    label = "without schedule, relapse, regimes" if result.relapse_probability else \
                        "without schedule, regimes"
                print(goodness_table(g.rows, g.without_schedule, label), file=report)
            if note:
                print(note, file=report)
    if args.out:
        try:
            regularfile.write(args.out, text.encode())
        except OSError as exc:  # the disk filled up, the folder went away: the fit above stands
            return _fail(FIT, f"--out {args.out}: cannot write it: {exc.strerror or exc}", 1)
        print(f"wrote {args.out}", file=sys.stderr)
    elif not args.json:
        print(text, end="")
    if args.plots and g.curves:
        from simd.traces.plots import write_fit

        try:
            paths = write_fit(g.curves, args.replicas - g.stopped, args.plots)
        except OSError as exc:  # the disk filled up, the directory went away: the fit above stands
            return _fail(FIT, f"--plots {args.plots}: cannot write {Path(exc.filename or '').name or 'the PNGs'}: "
                              f"{exc.strerror or exc}", 1)
        for path in paths:
            print(f"wrote {path}", file=sys.stderr)
    elif args.plots:
        warning(FIT, f"--plots {args.plots}: no PNG: every synthetic log reached the budget (above)")
    return 0


def _bootstrapped(result, refits: int, execute):
    """The fit with the joint family's intervals from ``refits`` refits (simd.traces.bootstrap) on ``execute``
    (simd.executors: ExecutorError when a refit fails there), a progress line on standard error as simd simulate's;
    the fit's own, and a warning why, when that family is not written or too few refits fit back."""
    from simd.cli.progress import CountLine
    from simd.traces.bootstrap import FEW_REFITS, bootstrap

    if result.regimes is None or result.regimes_family == "regimes":
        written = "regimes" if result.regimes else (result.schedule_aic or result.lifetime) + (
            ", relapse" if result.relapse_probability else "")
        warning(FIT, f"--bootstrap {refits}: not run: the AIC wrote the family {written!r}, not the regimes joined "
                     "with the lifetimes; its intervals are its own")
        return result
    if refits < FEW_REFITS:
        warning(FIT, f"--bootstrap {refits}: fewer than {FEW_REFITS} refits: their spread is itself rough (an interval "
                     "of so few can be far too narrow or wide); 20 is a good N")
    line = CountLine("simd trace fit: bootstrap refit")
    try:
        return bootstrap(result, refits, progress=line, execute=execute)
    except ValueError as exc:
        line.clear()
        warning(FIT, f"--bootstrap {refits}: {exc}; the intervals are the fit's own")
        return result
    finally:
        line.clear()


def _rows_json(rows) -> list[dict]:
    """The goodness-of-fit table's rows as simd trace fit --json and simd trace check --json write them."""
    return [dict(zip(("statistic", "log", "model_mean", "model_low", "model_high"), r, strict=True)) for r in rows]


def cmd_check(args) -> int:
    from simd.scenario import ConfigError, load_config
    from simd.traces.log import LogError, load, when
    from simd.traces.scenario import budget_note, check, goodness_table, model_of

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _fail(CHECK, f"{args.config}: {exc.errors[0] if exc.errors else exc}")
    scenarios = config.all_scenarios
    chosen = [s for s in scenarios if args.scenario in (None, s.name)]
    if len(chosen) != 1:
        from simd.quoting import quoted

        return _fail(CHECK, f"{args.config}: no scenario named {quoted(args.scenario)}" if not chosen else
                     f"{args.config} has {len(chosen)} scenarios: --scenario names the one to check")
    scenario = chosen[0]
    try:
        model = model_of(scenario, args.servers)
    except ValueError as exc:
        return _fail(CHECK, f"{args.config}: {exc}")
    try:
        log = load(args.file, args.columns, args.timezone, args.time_format)
    except LogError as exc:
        for line in exc.errors:
            _fail(CHECK, f"{args.file}: {line}")
        return EXIT_USAGE
    if args.servers < len(log.servers):
        return _fail(CHECK, f"--servers {args.servers} is fewer than the {len(log.servers)} servers the log names")
    after = 0.0
    if args.after is not None:
        try:
            after = when(args.after, log, args.timezone, args.time_format)
        except ValueError as exc:
            return _fail(CHECK, f"--from: {exc}")
    g = check(model, log, args.servers, args.replicas, after, args.burst_seconds)
    part = f"from day {after / 86400:.4g} to its end ({log.span_days - after / 86400:.4g} days)" if after else \
        f"whole ({log.span_days:.4g} days)"
    if args.json:
        print(json.dumps({"scenario": scenario.name, "from_day": after / 86400, "span_days": log.span_days,
                          "goodness": _rows_json(g.rows),
                          "goodness_budget": {"faults_per_log": g.budget, "logs_stopped": g.stopped}}))
        return 0
    print(f"the log {part} against {args.replicas} synthetic logs of scenario {scenario.name}'s server model "
          f"(its servers new at the log's start, over the log's whole span, read over the same part):")
    if g.rows:
        print(goodness_table(g.rows))
    if note := budget_note(g):
        print(note)
    return 0


def _test(f) -> str:
    """The rate schedules' likelihood ratio test as the fit's table says it (docs/traces.md)."""
    from simd.traces.fit import SCHEDULE_LEVEL

    return (f"likelihood ratio test against none p = {f.schedule_p:.2g} (written below {SCHEDULE_LEVEL:g} / "
            f"{f.schedule_tests} tried)")


def joint_paths() -> int:
    from simd.traces.joint import FINAL_PATHS

    return FINAL_PATHS


def fit_table(f) -> str:
    from simd.traces.fit import SCHEDULE_LEVEL

    lines = [f"{f.faults} faults ({f.independent_faults} independent, {f.faults - f.independent_faults} in "
             f"{f.bursts} bursts) on {f.servers} servers over {f.span_days:.1f} days; 95% intervals" + (
                 f" (the regimes joined with the lifetimes': a parametric bootstrap of {f.bootstrap_refits} refits"
                 + (f", {len(f.bootstrap_failures)} more left out: {f.bootstrap_failures[0]}"
                    if f.bootstrap_failures else "") + ", docs/traces.md)" if f.bootstrap_refits else ""),
             f"lifetimes: {f.lifetime} (AIC: " + ", ".join(f"{k} {v:.1f}" for k, v in f.aic.items()) + ")",
             f"  rate per server-day (frailty 1): {f.rate_per_server_day}",
             f"  scale (days): {f.lifetime_scale_days}"]
    if f.lifetime_shape:
        lines.append(f"  Weibull shape: {f.lifetime_shape}")
    if f.gamma_shape:
        lines.append(f"  gamma frailty shape: {f.gamma_shape}")
    elif f.regimes:  # the regimes' family takes no frailty (docs/traces.md: the fit does not join them)
        lines.append("  gamma frailty: none (the regimes' family has no frailty: the goodness of fit's faults per "
                     "server show what that leaves out)")
    else:
        lines.append("  gamma frailty: none (the servers' counts are not over-dispersed beyond the lifetimes')")
    if f.relapse_probability:
        aic = f.relapse_aic
        lines += [f"repairs that do not hold (AIC {aic:.1f}): "
                  f"{f.relapse_probability}", f"  the short lifetime's mean (days, frailty 1): {f.relapse_mean_days}"]
    if f.regimes:
        lines.append(f"regimes (faults clustered in time), stormy over calm rate: {f.regime_ratio}")
        if f.regimes_ess is not None:
            lines.append(f"  joined with the lifetimes ({f.regimes_family}: Monte Carlo EM, docs/traces.md): the "
                         f"log-likelihood to +-{f.regimes_nll_error:.2g}, the importance weights' effective count "
                         f"{f.regimes_ess:.0f} of their {joint_paths()}")
        for name, (m, d) in zip(("calm", "stormy"), f.regimes, strict=True):
            lines.append(f"  {name}: multiplier {m}; mean days {d}")
    if f.rate_schedule:
        from simd.traces.scenario import _pieces

        lines.append(f"rate over the log's span, {_pieces(f)}; multipliers of a time-weighted mean of 1: AIC "
                     f"{f.aic[f.schedule_aic]:.1f} against {f.aic[f.lifetime]:.1f} without; {_test(f)}")
        for day, m in f.rate_schedule:
            lines.append(f"  from day {day:.4g}: {m}")
        theta, k, a = f.unscheduled
        lines.append(f"  without it: scale {theta.value:.4g} days" + (f", Weibull shape {k.value:.4g}" if k else "")
                     + (f", gamma frailty shape {a.value:.4g}" if a else ""))
    elif f.regimes and f.schedule_tests and f.schedule_p < SCHEDULE_LEVEL / f.schedule_tests:
        # the schedule passed its test, then lost to the regimes by AIC (fit._regimes): not a steady rate
        lines.append(f"rate over the log's span: none written: the regimes' AIC is lower than the schedule's (the "
                     f"fit does not join the two; the likeliest schedule's {_test(f)})")
    elif f.schedule_tests:
        lines.append(f"rate over the log's span: steady (the likeliest schedule's {_test(f)})")
    if f.burst_per_day:
        lines += [f"bursts per day (the cluster): {f.burst_per_day}", f"  mean size: {f.burst_mean_size}"]
        if f.burst_seconds:
            lines.append(f"  the {f.bursts} groups within {f.burst_seconds:g} s: "
                         f"{f.burst_per_day.value * f.span_days:.1f} bursts and {f.joined_by_chance:.1f} independent "
                         "faults joined by chance (docs/traces.md)")
    kinds = f" of {len(f.repair_mixture)} lognormal kinds" if f.repair == "mixture" else ""
    lines.append(f"repairs: {f.repair}{kinds} (AIC: "
                 + ", ".join(f"{k} {v:.1f}" for k, v in f.repair_aic.items()) + ")")
    if f.repair == "mixture":
        for w, m, sg in f.repair_mixture:
            lines.append(f"  weight {w}; median (days) {m}; sigma {sg}")
    elif f.repair == "lognormal":  # (an exponential's is its mean alone: the lognormal's it beat are not its)
        lines += [f"  median (days): {f.repair_median_days}", f"  sigma: {f.repair_sigma}"]
    lines.append(f"  mean (days): {f.repair_mean_days}")
    lines.append("causes: " + ", ".join(f"{k} {v:.1%}" for k, v in f.causes.items()))
    return "\n".join(lines)
