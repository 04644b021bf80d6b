"""The single tests' cases, shared by their fast checks (tests/engine/test_single.py) and
their statistical ones (tests/engine/statistical/test_single_properties.py)."""

from contextlib import contextmanager

from simd.engine import (
    Stragglers,
    advance,
    core,
)

STRAGGLERS = [None, Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2, replace_after_steps=40),
              Stragglers(0.5, 1, 1.2), Stragglers(0.0, 2, 1.5)]


def _walk(state, until, **kw):
    """The reference: the Python segment walk."""
    return advance(state, until, compiled=False, **kw)


@contextmanager
def _python_walk_refused():
    """core.advance fails if it runs a Python walk (the segment walk, the extended walk) meanwhile."""
    from simd.engine import xwalk

    def refuse(*_):
        raise AssertionError("the Python walk ran")

    saved, saved_x = core.segment, xwalk.segment
    core.segment = xwalk.segment = refuse
    try:
        yield
    finally:
        core.segment, xwalk.segment = saved, saved_x


def _fast(state, until, **kw):
    """The compiled walk, and nothing else."""
    with _python_walk_refused():
        return advance(state, until, **kw)
