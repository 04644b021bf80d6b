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
    return advance(state, until, vectorize=False, compiled=False, **kw)


@contextmanager
def _python_walk_refused():
    """core.advance fails if it runs the Python segment walk meanwhile."""
    def refuse(*_):
        raise AssertionError("the Python walk ran")

    saved = core.segment
    core.segment = refuse
    try:
        yield
    finally:
        core.segment = saved


def _fast(state, until, **kw):
    """The compiled walk, and nothing else."""
    with _python_walk_refused():
        return advance(state, until, vectorize=False, **kw)
