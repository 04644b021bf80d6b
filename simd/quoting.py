"""Values and lines in error messages, safely: an error names the path, the line or event and what is wrong, and
quotes a value only short, printable and cut to a fixed length, whatever the value (a 5 MB name, a 400-digit
integer, a list nested 100,000 deep, a terminal escape sequence), in the same bounded time.

:func:`quoted` is the one way a scenario file's or a fault log's error shows a value; :func:`bounded` is the
last guard on a whole error line (every line of simd.scenario.errors.ConfigError and simd.traces.log.LogError).
What is not a value of the file's own format is never quoted at all (a file that is not a fault log is refused
by what it lacks, not by what it holds: simd/traces/log.py).
"""

from __future__ import annotations

import math
import reprlib
import sys

LIMIT = 60  # characters of a quoted value: enough for a name, a number or a short list; cut beyond
MAX_LINE = 500  # characters of an error line: the longest the messages make is ~300 (a path, a field, a value)


class _Bounded(reprlib.Repr):
    """reprlib's repr, bounded in depth, items and characters (so in time and memory), with integers by
    :func:`_integer` (``repr`` of one of over 4300 digits raises)."""

    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict, self.maxset, self.maxfrozenset = 3, 6, 6, 4, 6, 6
        self.maxstring, self.maxother, self.maxlong = LIMIT, LIMIT, LIMIT

    def repr_int(self, x, level):
        return _integer(x)

    def repr_str(self, x, level):
        return _string(x)

    def repr_bytes(self, x, level):
        return f"{len(x)} bytes"

    def repr_instance(self, x, level):  # another type (a parsed file holds none): its repr, cut, or its type
        try:
            return bounded(repr(x), LIMIT)
        except Exception:  # noqa: BLE001 - a repr that fails names the type
            return _kind(x)


_REPR = _Bounded()


def quoted(value) -> str:
    """``value`` as an error shows it: a string as its repr (control characters and the like escaped) cut to
    LIMIT characters with its length; an integer in digits up to LIMIT of them, else its number of digits; a float
    as repr; a container as a bounded repr (a few items, three levels); anything else by its type. Always
    printable, at most about 2 x LIMIT characters."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is shown by its type
        return _kind(value)
    text = bounded(text, 2 * LIMIT)
    return text if len(text) <= LIMIT else text[:LIMIT] + " ..."


def _kind(x) -> str:
    return f"a value of type {type(x).__name__}"


def _string(s: str) -> str:
    if len(s) <= LIMIT:
        return _escaped(s)
    return f"{_escaped(s[:LIMIT])}... ({len(s)} characters)"


def _escaped(s: str) -> str:
    return repr(s)  # (repr escapes exactly what str.isprintable refuses: control, format, separator characters)


def _integer(n: int) -> str:
    if abs(n) < 10**LIMIT:
        return str(n)
    return f"{'a negative' if n < 0 else 'an'} integer of {int(math.log10(abs(n))) + 1} digits"


def bounded(line: str, limit: int = MAX_LINE) -> str:
    """One error line, printable (anything else escaped) and at most ``limit`` characters (cut, with its length)."""
    cut = line[:limit]
    if not cut.isprintable():
        cut = "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)
    if len(line) <= limit and len(cut) <= limit:
        return cut
    tail = f"... ({len(line)} characters)"
    return cut[:limit - len(tail)] + tail


def warning(prog: str, text: str, kind: str = "warning") -> None:
    """A warning (or a note) on standard error, prefixed with the command as its errors are
    (``simd sweep: warning: ...``), so that a line in a script's log says which command wrote it."""
    print(f"{prog}: {kind}: {text}", file=sys.stderr)
