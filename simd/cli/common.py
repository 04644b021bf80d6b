"""What every command group's flags share: the parser that exits 2 with one line, argparse types checked
against the scenario file's bounded types, and loading the scenario file a command names."""

from __future__ import annotations

import argparse

from simd.quoting import warning

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # exit 2 with one line, never a traceback
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def checked(parse):
    """An argparse type from a ``parse(text)`` that raises ValueError (-> a one-line usage error)."""

    def check(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    check.__name__ = getattr(parse, "__name__", "value").removeprefix("parse_")
    return check


def typed(kind: str):
    """An argparse type checked against simd.scenario.limits' type ``kind`` (the one home of its limits);
    simd.scenario (pydantic) is imported only when the flag is given."""

    def parse(text: str):
        from simd.scenario import limits, parse_value

        return parse_value(getattr(limits, kind), text)

    parse.__name__ = kind
    return checked(parse)


def whole_number(text: str) -> int:
    """An integer flag (ValueError, phrased as the scenario file's errors, otherwise)."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    n = whole_number(text)
    if n < 1:
        raise ValueError(f"must be >= 1, got {n}")
    return n


def at_most(limit: int, why: str):
    """An argparse type: a positive whole number of at most ``limit`` (``why``: what the bound is, for the
    message)."""

    def parse(text: str) -> int:
        n = positive_int(text)
        if n > limit:
            raise ValueError(f"must be at most {limit} ({why}), got {n}")
        return n

    return checked(parse)


def workers(text: str) -> int:
    """``--workers``: local worker processes (simd.executors), at most WORKERS_PER_CORE per core."""
    from simd.executors import WORKERS_PER_CORE, cpu_count

    return at_most(WORKERS_PER_CORE * cpu_count(), f"{WORKERS_PER_CORE} per core")(text)


def _address(text: str) -> str:
    if not text.strip():
        raise ValueError("expected a scheduler's address like tcp://HOST:8786, got an empty one")
    return text


def add_executor_flags(p: argparse.ArgumentParser, what: str) -> None:
    """``--scheduler`` and ``--workers``: where ``what`` (the command's independent tasks) run
    (simd.executors.choose)."""
    from simd.executors import WORKERS_PER_CORE

    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", type=checked(_address),
                   help=f"run {what} on this dask.distributed scheduler (simd's dask extra)")
    p.add_argument("--workers", type=workers, help=f"local worker processes for {what} (default: one per core; at "
                                                   f"most {WORKERS_PER_CORE} per core)")


def load(path):
    from simd.scenario import default_config, load_config

    return load_config(path) if path else default_config()


def warn(config, prog: str) -> None:
    for w in config.warnings():
        warning(prog, w)
    for n in config.notes():  # check-config shows what the file acknowledges too
        warning(prog, n, "note (acknowledged)")
