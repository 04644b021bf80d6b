"""``simd sweep``: the run from parsed flags (simd.cli.sweep) to the table, the files and the exit code.

Every check happens before any work: the scenario, each --param and every grid point it makes (validated by the
scenario model), the output directory, the executor (dask importable, the scheduler reachable). A bad input
is one line on stderr and exit 2; an executor that cannot start, exit 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

from simd.quoting import warning

EXIT_USAGE = 2  # simd.cli.common's (the offline layer does not import the command line's)
PROG = "simd sweep"


# Fixed mode's default. Measured 95% half-widths at 100 replicas: at most 0.09 points of utilization on llama3-16k
# (70-day jobs), 0.01-0.4 points on the ckpt-sweep template (intervals 10 to 400 steps).
DEFAULT_REPLICAS = 100
# Adaptive mode's cap on a point's replicas: a bound on work, not a statistical constant (at the 0.06-0.19 s
# per llama3-16k replica measured on this 2-core machine, 10,000 replicas are 10-32 minutes per point).
MAX_REPLICAS = 10_000
# Bounds on what one sweep may ask for, both bounding memory: the sweep keeps a result per replica (~0.5 kB)
# until it summarizes, so a point holds at most MAX_REPLICAS_PER_POINT (--replicas, --max-replicas) and a
# sweep at most MAX_SWEEP_REPLICAS in all (points x replicas, or x --max-replicas with --ci): ~1 GB.
MAX_REPLICAS_PER_POINT = 100_000
MAX_SWEEP_REPLICAS = 2_000_000


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def _scenario(config, name: str):
    from simd.scenario import Scenario

    for sw in config.sweeps:
        if sw.name == name:
            return Scenario.model_validate({**sw.scenario.model_dump(), "name": sw.name})
    return config.scenario(name)


class _Bar:
    """tqdm on stderr, or nothing when stderr is not a terminal or with --quiet."""

    def __init__(self, enabled: bool):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            # no monitor thread: the local pool forks its workers after the bar exists, and a fork copies
            # no other thread (a lock that thread held would stay locked in the child)
            tqdm.monitor_interval = 0
            self.bar = tqdm(total=0, unit="replica", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)

    def __call__(self, planned: int, done: int) -> None:
        if self.bar is not None:
            self.bar.total = planned
            self.bar.n = done
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _warn_points(base, params, points) -> None:
    for p in params:
        if p.note:
            warning(PROG, p.note, "note")
    for w in base.warnings():
        warning(PROG, w)
    warned = [w for pt in points for w in pt.scenario.warnings()]
    if warned and not base.warnings():
        more = f" (and {len(warned) - 1} more of the {len(points)} points)" if len(warned) > 1 else ""
        warning(PROG, f"{warned[0]}{more}")


def _report(args, params, results, meta, out: Path | None) -> int:
    """The table on stdout, warnings on stderr, the files; exit 1 if a replica did not finish (as simulate)."""
    from simd.offline.sweep import outputs as sweepout

    unwritten = None
    if out is not None:  # the files before the table: a reader that closes the table's pipe (| head) loses none
        from simd.offline.sweep import plot as sweepplot

        try:
            sweepout.write_csv(out / "sweep.csv", params, results)
            sweepout.write_json(out / "sweep.json", meta, params, results)
            sweepplot.save(sweepplot.render(params, results, meta), out / "sweep.png")
        except OSError as exc:  # the disk filled up, the directory went away: the table below stands
            unwritten = exc
    print(sweepout.table(params, results))
    print(sweepout.TABLE_NOTE)
    if sweepout.has_degraded(results):  # elastic replica groups only
        print(sweepout.DEGRADED_NOTE)
    for line in sweepout.cost_notes(params, results):  # scenarios with server pools only
        print(line)
    for line in sweepout.optimum_notes(params, results):
        print(line)
    capped = sum(r.hit_cap for r in results)
    if capped:
        print(sweepout.CAPPED_NOTE)
        warning(PROG, f"{capped} point(s) stopped at --max-replicas {meta['max_replicas']} with the half-width "
                f"above {args.ci:g}")
    unfinished = sum(r.stats.unfinished for r in results)
    if unfinished:
        print(sweepout.UNFINISHED_NOTE)
    if unwritten is not None:
        return _fail(f"--out {out}: cannot write {Path(unwritten.filename or '').name or 'the files'}: "
                     f"{unwritten.strerror or unwritten}", 1)
    if out is not None:
        print(f"wrote {out / 'sweep.csv'}, {out / 'sweep.json'}, {out / 'sweep.png'}", file=sys.stderr)
    horizon = sum(x.horizon for r in results for x in r.replicas)
    if horizon:
        from simd.offline.simulate import HORIZON_WORK_US

        warning(PROG, f"{horizon} replica(s) stopped at the work horizon, {HORIZON_WORK_US / 1e6:g} s of estimated "
                "engine work each, and are left out of the means (marked ! in column n)")
    if unfinished - horizon:
        from simd.offline.simulate import LIMIT_FACTOR

        warning(PROG, f"{unfinished - horizon} replica(s) did not finish within {LIMIT_FACTOR}x their failure-free "
                "duration and are left out of the means (marked ! in column n)")
    if unfinished:
        return 1
    return 0


def run(args) -> int:
    from simd import regularfile
    from simd.executors import ExecutorError, MissingDask, choose, refused
    from simd.offline.sweep import run as sweep
    from simd.offline.sweep.grid import GridError, grid, parse_params
    from simd.scenario import default_config, load_config

    config = load_config(args.config) if args.config else default_config()
    try:
        base = _scenario(config, args.scenario)
    except KeyError:
        known = ", ".join([s.name for s in config.all_scenarios] + [sw.name for sw in config.sweeps])
        return _fail(f"--scenario: no scenario named {args.scenario!r} (known: {known})")
    if why := refused(args.scheduler, args.workers):
        return _fail(why)
    if args.ci is None and args.max_replicas is not None:
        return _fail("--max-replicas applies to --ci only")
    cap = MAX_REPLICAS if args.max_replicas is None else args.max_replicas
    if args.ci is not None and cap < 2:
        return _fail("--max-replicas: --ci needs at least 2 replicas per point")
    try:
        params = parse_params(args.param, {s.name: s for s in config.all_scenarios})
        points = grid(base, params)
    except GridError as exc:
        return _fail(str(exc))
    per_point = cap if args.ci is not None else (args.replicas or DEFAULT_REPLICAS)
    if len(points) * per_point > MAX_SWEEP_REPLICAS:
        return _fail(f"at most {MAX_SWEEP_REPLICAS} replicas in all (grid points x "
                     f"{'--max-replicas' if args.ci is not None else '--replicas'}), got {len(points)} x "
                     f"{per_point} = {len(points) * per_point}")
    out = Path(args.out) if args.out else None
    if out is not None:
        try:
            regularfile.writable_dir(out)  # can the files be written there (before any work)?
        except OSError as exc:
            return _fail(f"--out {args.out}: cannot write there: {exc.strerror or exc}")
    _warn_points(base, params, points)
    seed_base = base.seed if args.seed_base is None else args.seed_base
    replicas = args.replicas or DEFAULT_REPLICAS
    if not args.scheduler:  # this machine's workers load the kernels compiled here (a cluster's compile their own)
        from simd.offline.precompile import prepare

        shared = any(len(g) > 1 for g in sweep.shared_groups(points))
        prepare([p.scenario.job_spec(seed_base) for p in points], prog="simd sweep", extra=("crn",) if shared else ())
    try:
        execute = choose(args.scheduler, args.workers)
    except ExecutorError as exc:  # dask missing: a usage error; the scheduler unreachable: a failure
        return _fail(str(exc), EXIT_USAGE if isinstance(exc, MissingDask) else 1)
    bar = _Bar(not args.quiet and sys.stderr.isatty())
    try:
        runner = sweep.Runner(points, execute, execute.workers, progress=bar)
        if args.ci is not None:
            results = sweep.adaptive_sweep(runner, seed_base, args.ci, cap)
        else:
            results = sweep.fixed_sweep(runner, seed_base, replicas)
    except ExecutorError as exc:  # a task failed on the cluster
        bar.close()
        return _fail(str(exc), 1)
    finally:
        bar.close()
        execute.close()
    meta = {"scenario": base.name, "config": args.config or "<embedded default>", "seed_base": seed_base,
            **({"mode": "adaptive", "ci_half_width": args.ci, "max_replicas": cap} if args.ci is not None
               else {"mode": "fixed", "replicas": replicas})}
    return _report(args, params, results, meta, out)
