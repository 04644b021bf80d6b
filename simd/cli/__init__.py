"""``simd``: argument parsing, then a call into the module that does the work. No logic of its own."""

from __future__ import annotations

import argparse
import json
import sys

from simd import __version__

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # exit 2 with one line, never a traceback
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _load(path):
    from simd.scenario import default_config, load_config

    return load_config(path) if path else default_config()


def _warn(config) -> None:
    for w in config.warnings():
        print(f"warning: {w}", file=sys.stderr)
    for n in config.notes():  # check-config shows what the file acknowledges too
        print(f"note (acknowledged): {n}", file=sys.stderr)


def cmd_check_config(args) -> int:
    from simd.scenario import load_config, summary

    config = load_config(args.file)
    _warn(config)
    for s in config.all_scenarios:
        print(summary(s))
    return 0


def cmd_simulate(args) -> int:
    from simd.offline import simulate as sim

    config = _load(args.config)
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
            print(f"warning: {w}", file=sys.stderr)
    from simd.offline.precompile import prepare

    prepare([s.job_spec(seed) for s in chosen for seed in (seeds or [s.seed])[:1]], prog="simd simulate")
    unfinished = 0
    mean = None  # the current scenario's running means (constant memory over any number of seeds)
    if not args.json:
        print(sim.HEADER)
    for outcome in sim.run_all(config, names, seeds, args.tick_seconds):
        unfinished += outcome.job is None
        if args.json:
            print(sim.json_line(outcome), flush=True)
            continue
        if mean is None or outcome.scenario != mean.name:
            if mean is not None and mean.seeds > 1:
                print(mean.row())
            mean = sim.MeanRow(outcome.scenario)
        mean.add(outcome)
        print(sim.table_row(outcome), flush=True)
    if mean is not None and mean.seeds > 1:
        print(mean.row())
    if unfinished:
        print(f"warning: {unfinished} job(s) did not finish within {sim.LIMIT_FACTOR}x their failure-free "
              "duration", file=sys.stderr)
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
            print(f"warning: {w}", file=sys.stderr)
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


def cmd_sweep(args) -> int:
    from simd.offline.sweep import command as sweepcmd

    return sweepcmd.run(args)


def cmd_run(args) -> int:
    from simd.cli.drill import read_token
    from simd.daemon import process as daemon

    config = _load(args.config)
    try:
        token = read_token(args.api_token_file)
    except ValueError as exc:
        print(f"simd run: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return daemon.run(config, listen=args.listen, speedup=args.speedup, tick_seconds=args.tick_seconds,
                      api_token=token, config_path=args.config, state_dir=args.state_dir,
                      save_every_ticks=args.save_every_ticks)


def cmd_drill(args) -> int:
    from simd.cli import drill as dc

    base = args.url.rstrip("/") + "/api/v1/drills"
    try:
        if args.list or not args.name:
            status, body = dc.request(base)
            if status == 200:
                print("\n".join(dc.list_lines(body["drills"])))
                return 0
        else:
            token = dc.read_token(args.api_token_file)
            if token is None:
                print(f"simd drill: error: no API token: set {dc.TOKEN_ENV} or pass --api-token-file",
                      file=sys.stderr)
                return EXIT_USAGE
            payload = {"duration_seconds": args.duration_seconds} if args.duration_seconds else None
            status, body = dc.request(f"{base}/{args.name}", "POST", token, payload)
            if status == 200:
                end = body["end_seconds"] - body["start_seconds"]
                print(f"drill {body['name']} started at simulated second {body['start_seconds']:.0f}, "
                      f"runs for {end:.0f} simulated seconds")
                return 0
    except ValueError as exc:
        print(f"simd drill: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"simd drill: error: cannot reach {args.url}: {getattr(exc, 'reason', exc)}", file=sys.stderr)
        return 1
    print(f"simd drill: error: HTTP {status}: {body.get('error', body)}", file=sys.stderr)
    return 1


def _checked(parse):
    """An argparse type from a ``parse(text)`` that raises ValueError (-> a one-line usage error)."""

    def check(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    check.__name__ = getattr(parse, "__name__", "value").removeprefix("parse_")
    return check


def _typed(kind: str):
    """An argparse type checked against simd.scenario.limits' type ``kind`` (the one home of its limits);
    simd.scenario (pydantic) is imported only when the flag is given."""

    def parse(text: str):
        from simd.scenario import limits, parse_value

        return parse_value(getattr(limits, kind), text)

    parse.__name__ = kind
    return _checked(parse)


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"must be a positive integer, got {text!r}")
    return int(text)


def cmd_compile(args) -> int:
    from simd.offline.precompile import compile_all

    return compile_all(args.unit, args.state_dir)


def cmd_config(args) -> int:
    from simd.scenario import default_config_text

    sys.stdout.write(default_config_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="simd", description="Simulate the reliability of large synchronous training jobs.")
    p.add_argument("--version", action="version", version=f"simd {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("check-config", help="validate a scenario file")
    c.add_argument("file")
    c.set_defaults(func=cmd_check_config)

    s = sub.add_parser("simulate", help="run jobs to completion offline")
    s.add_argument("--config", help="scenario file (default: the embedded configuration)")
    s.add_argument("--scenario", action="append", help="scenario name (repeatable; default: all)")
    s.add_argument("--seeds", help="N (seeds 0..N-1) or A..B (inclusive); default: each scenario's seed")
    s.add_argument("--tick-seconds", type=_typed("SimulatedSeconds"),
                   help="advance in ticks of this many simulated seconds (results do not change)")
    s.add_argument("--json", action="store_true", help="one JSON object per line")
    s.set_defaults(func=cmd_simulate)

    d = sub.add_parser("demo", help="seed 000's ideal / naive / optimized table")
    d.add_argument("--seeds", help="N or A..B (default: 200 seeds)")
    d.add_argument("--extended", action="store_true",
                   help="also seed 000's extension exercises against the optimized baseline")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("report", help="seed 001's five reliability models")
    try:
        from simd import report

        report.configure_parser(r)
    except ImportError:
        pass
    r.set_defaults(func=cmd_report)

    w = sub.add_parser("sweep", help="replicas of a scenario over a grid of one or two parameters, with 95%% CIs")
    from simd.offline.sweep import command as sweepcmd

    sweepcmd.configure_parser(w)
    w.set_defaults(func=cmd_sweep)

    from simd.daemon import listen as daemon

    n = sub.add_parser("run", help="the daemon: advance every scenario in accelerated ticks, serve /metrics")
    n.add_argument("--config", help="scenario file (default: the embedded configuration)")
    n.add_argument("--listen", type=_checked(daemon.parse_listen), default=daemon.DEFAULT_LISTEN,
                   help=f"HOST:PORT to serve /metrics and /healthz on (default {daemon.DEFAULT_LISTEN})")
    n.add_argument("--speedup", type=_typed("Speedup"),
                   help="simulated seconds per wall second (default: the scenario file's)")
    n.add_argument("--tick-seconds", type=_typed("TickSeconds"),
                   help="wall seconds between ticks (default: the scenario file's)")
    n.add_argument("--api-token-file", help="file holding the bearer token of the drill control API "
                   "(default: $SIMD_API_TOKEN; without either, the control API refuses every POST)")
    n.add_argument("--state-dir", help="directory to keep the simulation state in across restarts "
                   "(default: none, every start is from simulated time 0)")
    n.add_argument("--save-every-ticks", type=_checked(_positive_int), default=10,
                   help="with --state-dir, save the state every N ticks and at shutdown (default 10)")
    n.set_defaults(func=cmd_run)

    dr = sub.add_parser("drill", help="start a drill on a running daemon (or --list them)")
    dr.add_argument("name", nargs="?", help="the drill to start")
    dr.add_argument("--list", action="store_true", help="list the drills and whether they run")
    dr.add_argument("--url", default="http://127.0.0.1:9109", help="the daemon (default http://127.0.0.1:9109)")
    dr.add_argument("--api-token-file", help="file holding the bearer token (default: $SIMD_API_TOKEN)")
    dr.add_argument("--duration-seconds", type=_typed("SimulatedSeconds"),
                    help="simulated seconds (default: the drill's)")
    dr.set_defaults(func=cmd_drill)

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
    return p


def main(argv: list[str] | None = None) -> int:
    from simd.scenario import ConfigError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        for line in exc.errors:
            print(f"error: {line}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
