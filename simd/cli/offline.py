"""The offline commands' flags and console: check-config, simulate, demo, report; compile and config."""

from __future__ import annotations

import json
import sys

from simd.cli.common import EXIT_USAGE, load, typed, warn
from simd.quoting import warning


def add_commands(sub) -> None:
    c = sub.add_parser("check-config", help="validate a scenario file")
    c.add_argument("file")
    c.set_defaults(func=cmd_check_config)

    s = sub.add_parser("simulate", help="run jobs to completion offline")
    s.add_argument("--config", help="scenario file (default: the embedded configuration)")
    s.add_argument("--scenario", action="append", help="scenario name (repeatable; default: all)")
    s.add_argument("--seeds", help="N (seeds 0..N-1) or A..B (inclusive); default: each scenario's seed")
    # the scenario file's tick_seconds range: a tick far below it is a job of ~10^11 ticks that never ends
    s.add_argument("--tick-seconds", type=typed("TickSeconds"),
                   help="advance in ticks of this many simulated seconds, within the scenario file's tick_seconds "
                   "range (results do not change)")
    s.add_argument("--json", action="store_true", help="one JSON object per line")
    s.set_defaults(func=cmd_simulate)

    d = sub.add_parser("demo", help="seed 000's ideal / naive / optimized table")
    d.add_argument("--seeds", help="N or A..B (default: 200 seeds)")
    d.add_argument("--extended", action="store_true",
                   help="also seed 000's extension exercises against the optimized baseline")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("report", help="seed 001's five reliability models")
    _report_flags(r)
    r.set_defaults(func=cmd_report)



def add_setup_commands(sub) -> None:
    k = sub.add_parser("compile", help="compile the engine's kernels into the cache now (a container image does "
                       "at build time; otherwise the first run on a machine does)")
    k.add_argument("--unit", action="append",
                   help="a unit of kernels (repeatable; default: all; an unknown name lists the units)")
    k.add_argument("--state-dir", help="the cache goes under this state directory, as simd run --state-dir puts "
                   "it (default: $NUMBA_CACHE_DIR, else the XDG cache directory)")
    k.set_defaults(func=cmd_compile)

    g = sub.add_parser("config", help="print the embedded default configuration")
    g.add_argument("--default", action="store_true", required=True)
    g.set_defaults(func=cmd_config)


def _report_flags(parser) -> None:
    from simd.report import DEFAULT_SEED, FORMATS, SCENARIOS

    parser.add_argument(
        "--scenario",
        type=int,
        choices=SCENARIOS,
        action="append",
        metavar="{1..5}",
        help="scenario to print (repeatable; default: all five)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"random seed of scenarios 3-5 (default: {DEFAULT_SEED}); scenarios 1-2 are closed form",
    )


def cmd_check_config(args) -> int:
    from simd.scenario import drill_summary, load_config, summary

    config = load_config(args.file)
    warn(config, "simd check-config")
    for s in config.all_scenarios:
        print(summary(s))
    for d in config.drills:
        print(drill_summary(d, config))
    return 0


def cmd_simulate(args) -> int:
    from simd.offline import simulate as sim

    config = load(args.config)
    names = args.scenario or None
    for n in names or []:
        try:
            config.scenario(n)
        except KeyError:
            known = ", ".join(s.name for s in config.all_scenarios)
            print(f"simd simulate: error: --scenario: no scenario named {n!r} (known: {known})", file=sys.stderr)
            return EXIT_USAGE
    try:
        seeds = sim.parse_seeds(args.seeds) if args.seeds is not None else None
    except ValueError as exc:
        print(f"simd simulate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    chosen = [s for s in config.all_scenarios if not names or s.name in names]
    for s in chosen:
        for w in s.warnings():
            warning("simd simulate", w)
    from simd.offline.precompile import prepare

    prepare([s.job_spec(seed) for s in chosen for seed in (seeds or [s.seed])[:1]], prog="simd simulate")
    from simd.cli.progress import ProgressLine

    unfinished = horizon = 0
    mean = None  # the current scenario's running means (constant memory over any number of seeds)
    width = sim.name_width(s.name for s in chosen)
    if not args.json:
        print(sim.header(width))
    line = ProgressLine()
    for outcome in sim.run_all(config, names, seeds, args.tick_seconds, line):
        line.clear()
        unfinished += outcome.job is None
        horizon += outcome.horizon_seconds is not None
        if args.json:
            print(sim.json_line(outcome), flush=True)
            continue
        if mean is None or outcome.scenario != mean.name:
            if mean is not None and mean.seeds > 1:
                print(mean.row())
            mean = sim.MeanRow(outcome.scenario, width)
        mean.add(outcome)
        print(sim.table_row(outcome, width), flush=True)
    if mean is not None and mean.seeds > 1:
        print(mean.row())
    if horizon:
        warning("simd simulate", f"{horizon} job(s) stopped at the work horizon, {sim.HORIZON_WORK_US / 1e6:g} s of "
                "estimated engine work each, unfinished (docs/design.md: simd simulate)")
    if unfinished - horizon:
        warning("simd simulate", f"{unfinished - horizon} job(s) did not finish within {sim.LIMIT_FACTOR}x their "
                "failure-free duration")
    if unfinished:
        return 1
    return 0


def cmd_demo(args) -> int:
    from simd.offline import demo
    from simd.offline.simulate import parse_seeds
    from simd.scenario import default_config

    config = default_config()
    extended = [demo.BASELINE] + [e.name for e in demo.EXTENDED] if args.extended else []
    names = [n for n, _ in demo.ROWS] + extended
    for name in names:
        for w in config.scenario(name).warnings():
            warning("simd demo", w)
    try:
        seeds = parse_seeds(args.seeds) if args.seeds else list(range(demo.DEFAULT_SEEDS))
    except ValueError as exc:
        print(f"simd demo: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from simd.offline.precompile import prepare

    prepare([config.scenario(n).job_spec() for n in names], prog="simd demo")
    rows = demo.compute(config, seeds)
    more = demo.compute_extended(config, seeds) if args.extended else []
    if args.json:
        print(json.dumps({"rows": [r.__dict__ for r in rows], "extended": [r.__dict__ for r in more]}
                         if args.extended else [r.__dict__ for r in rows]))
    else:
        print(demo.render(rows, len(seeds)) + ("\n\n" + demo.render_extended(more, len(seeds)) if more else ""))
    return 0


def cmd_report(args) -> int:
    from simd import report

    return report.run(args)


def cmd_compile(args) -> int:
    from simd.offline.precompile import compile_all

    return compile_all(args.unit, args.state_dir)


def cmd_config(args) -> int:
    from simd.scenario import default_config_text

    sys.stdout.write(default_config_text())
    return 0
