"""A progress line on stderr for long offline work (``simd simulate``): on a terminal, one line rewritten in place
once a job has run for TTY_AFTER_S; otherwise (a pipe, a log file) a line every EVERY_S once a job has run for
AFTER_S, so quick runs print nothing and scripts reading stderr see no noise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

TTY_AFTER_S, TTY_EVERY_S = 1.0, 0.25  # a terminal: from the first second, four times a second
AFTER_S, EVERY_S = 10.0, 10.0  # not a terminal: from the tenth second, every ten seconds


class _Line:
    """One line on ``stream`` at the times above: ``due(now)`` whether one is due since ``start``, ``show(text)``
    writes it (rewritten in place on a terminal), ``clear()`` erases it before a result line."""

    def __init__(self, stream=None, clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock = clock
        self.start, self.last, self.shown = 0.0, 0.0, False

    def due(self, now: float) -> bool:
        after, every = (TTY_AFTER_S, TTY_EVERY_S) if self.tty else (AFTER_S, EVERY_S)
        return not (now - self.start < after or (self.shown and now - self.last < every))

    def show(self, now: float, text: str) -> None:
        self.last = now
        self.stream.write("\r\x1b[K" + text if self.tty else text + "\n")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        self.shown = False


class ProgressLine(_Line):
    """Called with a simd.offline.simulate.Progress after each call of a job; ``clear()`` before a result line."""

    def __init__(self, stream=None, clock: Callable[[], float] = time.monotonic):
        super().__init__(stream, clock)
        self.key = None

    def __call__(self, p) -> None:
        now = self.clock()
        if (p.scenario, p.seed) != self.key:
            self.key, self.start, self.last = (p.scenario, p.seed), now, now
            return
        if not self.due(now):
            return
        self.show(now, f"simd simulate: {p.scenario} seed {p.seed}: simulated hour {p.seconds / 3600:.0f} of at "
                       f"most {p.limit_seconds / 3600:.0f}, {min(p.horizon_share, 1.0):.0%} of the work horizon, "
                       f"{now - self.start:.0f} s")

    def clear(self) -> None:
        """The line on a terminal erased (a result follows); the next job starts counting anew."""
        super().clear()
        self.key = None


class CountLine(_Line):
    """Called with (done, total) after each of a count of calls (simd trace fit's bootstrap refits): "LABEL 3 of
    20, 41 s" at the times above, counted from its creation; ``clear()`` before a result line."""

    def __init__(self, label: str, stream=None, clock: Callable[[], float] = time.monotonic):
        super().__init__(stream, clock)
        self.label = label
        self.start = self.last = clock()

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.due(now):
            self.show(now, f"{self.label} {done} of {total}, {now - self.start:.0f} s")
