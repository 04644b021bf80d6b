"""The daemon's commands: ``simd run`` (its flags, then simd.daemon.process) and ``simd drill`` (a client of
a running daemon's drill API)."""

from __future__ import annotations

import sys

from simd.cli.common import EXIT_USAGE, checked, load, positive_int, typed
from simd.daemon.listen import DEFAULT_LISTEN, parse_listen


def add_commands(sub) -> None:
    n = sub.add_parser("run", help="the daemon: advance every scenario in accelerated ticks, serve /metrics")
    n.add_argument("--config", help="scenario file (default: the embedded configuration)")
    n.add_argument("--listen", type=checked(parse_listen), default=DEFAULT_LISTEN,
                   help=f"HOST:PORT to serve /metrics and /healthz on (default {DEFAULT_LISTEN})")
    n.add_argument("--speedup", type=typed("Speedup"),
                   help="simulated seconds per wall second (default: the scenario file's)")
    n.add_argument("--tick-seconds", type=typed("TickSeconds"),
                   help="wall seconds between ticks (default: the scenario file's)")
    n.add_argument("--api-token-file", help="file holding the bearer token of the drill control API "
                   "(default: $SIMD_API_TOKEN; without either, the control API refuses every POST)")
    n.add_argument("--state-dir", help="directory to keep the simulation state in across restarts "
                   "(default: none, every start is from simulated time 0)")
    n.add_argument("--save-every-ticks", type=checked(positive_int), default=10,
                   help="with --state-dir, save the state every N ticks and at shutdown (default 10)")
    n.set_defaults(func=cmd_run)

    dr = sub.add_parser("drill", help="start a drill on a running daemon (or --list them)")
    dr.add_argument("name", nargs="?", help="the drill to start")
    dr.add_argument("--list", action="store_true", help="list the drills and whether they run")
    dr.add_argument("--url", default="http://127.0.0.1:9109", help="the daemon (default http://127.0.0.1:9109)")
    dr.add_argument("--api-token-file", help="file holding the bearer token (default: $SIMD_API_TOKEN)")
    dr.add_argument("--duration-seconds", type=typed("SimulatedSeconds"),
                    help="simulated seconds (default: the drill's)")
    dr.set_defaults(func=cmd_drill)


def cmd_run(args) -> int:
    from simd.cli.drillclient import read_token
    from simd.daemon import process as daemon

    config = load(args.config)
    if args.speedup is not None or args.tick_seconds is not None:  # the file's bound on a tick, at the flags' pace
        for why in config.tick_overruns(args.speedup, args.tick_seconds)[:1]:
            print(f"simd run: error: {why}", file=sys.stderr)
            return EXIT_USAGE
    try:
        token = read_token(args.api_token_file)
    except ValueError as exc:
        print(f"simd run: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return daemon.run(config, listen=args.listen, speedup=args.speedup, tick_seconds=args.tick_seconds,
                      api_token=token, config_path=args.config, state_dir=args.state_dir,
                      save_every_ticks=args.save_every_ticks)


def cmd_drill(args) -> int:
    from simd.cli import drillclient as dc

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
