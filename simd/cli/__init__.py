"""``simd``: the command line. One module per command group defines its flags and turns them into a call
into the layer that does the work (simd.offline, simd.report, simd.daemon); this one assembles them and
turns a scenario file's errors into exit 2. Importing it stays light: every group imports its work lazily.
"""

from __future__ import annotations

import gc
import os
import sys

# OpenBLAS (numpy's and scipy's) on one thread unless the environment says otherwise, set before any group imports
# numpy: simd's linear algebra is tiny (L-BFGS-B over 2 to 9 parameters in `trace fit`, products of a few thousand
# numbers), where OpenBLAS's threads only hand work over and spin waiting for a core: on a machine whose cores are
# busy (a test suite, the daemon beside other work) that spinning costs several times the work itself
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from simd import __version__
from simd.cli import daemon, offline, sweep, trace
from simd.cli.common import EXIT_USAGE, Parser


def build_parser() -> Parser:
    p = Parser(prog="simd", description="Simulate the reliability of large synchronous training jobs.")
    p.add_argument("--version", action="version", version=f"simd {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    offline.add_commands(sub)
    sweep.add_commands(sub)
    daemon.add_commands(sub)
    trace.add_commands(sub)
    offline.add_setup_commands(sub)
    return p


# A scenario file's errors printed at most (then how many more): a screenful, which a user fixes before the rest
MAX_ERROR_LINES = 20


def _interrupted(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in ``exc``'s chain: numba reports one raised while it calls back into Python
    as a SystemError ("returned a result with an exception set") whose context is the interrupt."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def main(argv: list[str] | None = None) -> int:
    from simd.scenario import ConfigError

    args = build_parser().parse_args(argv)
    if args.command != "run":
        # A command that ends within seconds: its imports allocate ~10^6 objects that live to the end, and the
        # default threshold (700) collected over them ~250 times; a collection every 50,000 allocations leaves
        # them alone (warm `simd simulate --seeds 1`: 0.60 s instead of 0.64-0.70 s, measured in turns). The
        # daemon keeps the default: it runs for weeks.
        gc.set_threshold(50_000, 20, 20)
    try:
        return args.func(args)
    except ConfigError as exc:
        shown = exc.errors[:MAX_ERROR_LINES]  # a file of 20,000 unknown keys is not 20,000 lines
        for line in shown:  # prefixed as argparse's errors are, and every other command's
            print(f"simd {args.command}: error: {line}", file=sys.stderr)
        if len(exc.errors) > len(shown):
            print(f"simd {args.command}: error: ... and {len(exc.errors) - len(shown)} more errors (the first "
                  f"{len(shown)} above)", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except SystemError as exc:
        if _interrupted(exc):  # Ctrl-C inside a compiled kernel's call back into Python (numba's unpickling)
            return 130
        raise
    finally:
        # Everything still alive lives until the process ends: frozen, the interpreter's collections at exit
        # skip it (numba's and pydantic's objects, built at import: about a fifth of a warm `simd simulate
        # --seeds 1`, bench/startup.py).
        gc.freeze()
