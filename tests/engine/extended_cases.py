"""The cases of the tests of the extended mechanisms (hyper-checkpointing, committed SDCs) combined with the others,
shared by their fast checks (tests/engine/test_extended.py) and their statistical ones
(tests/engine/statistical/test_extended_properties.py): a detector of each distribution, and a job advanced
through cuts against one call."""

from __future__ import annotations

from simd.engine import advance, new_state
from simd.engine.spec import Detector

GUARD = Detector("loss_spike", "lognormal", 300.0, 1.0, 0.5)


RIPPLE = Detector("ripple", "uniform", 259200.0)


SCANNER = Detector("fleetscanner", "exponential", 86400.0)


EVERY = (GUARD, RIPPLE, SCANNER)  # one detector of each distribution


def _cuts(horizon: int, fractions) -> list[int]:
    return sorted(int(f * horizon) for f in fractions) + [horizon]


def _in_calls(s, cuts: list[int], **kw):
    state, events = new_state(s), []
    for c in cuts:
        state, ev = advance(state, c, **kw)
        events.extend(ev)
    return state, events


def assert_same_paths(s, cuts: list[int]) -> None:
    """The kernel advanced through ``cuts`` and in one call to the last cut: identical states and events (the
    trace, and the job ends with their JobResults)."""
    kernel = _in_calls(s, cuts, trace=True)
    whole = _in_calls(s, cuts[-1:], trace=True)
    assert kernel[0] == whole[0]
    assert kernel[1] == whole[1]
