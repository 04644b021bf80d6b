"""Every trajectory of the golden corpus (golden_paths.py: 200 jobs over every mechanism and accepted combination,
cut into calls, some drilled) ends where the retired Python walks ended it: state and events, bit for bit."""

import json

from golden_paths import CASES, GOLDEN, case, digests


def test_the_kernel_gives_every_golden_path():
    want = json.loads(GOLDEN.read_text())
    assert len(want) == CASES
    got = digests()
    moved = [k for k in want if got[k] != want[k]]
    assert not moved, f"{len(moved)} paths moved, the first: case {moved[0]}: {case(int(moved[0]))}"


def test_a_moved_path_shows():
    """The digest sees a one-microsecond change of any step time (a check that can fail)."""
    from dataclasses import replace

    from golden_paths import digest, run

    from simd.engine import Event

    state, events = run(3)
    assert digest(state, events) == json.loads(GOLDEN.read_text())["3"]
    assert digest(replace(state, t=state.t + 1), events) != digest(state, events)
    assert digest(state, [*events, Event(state.t, "sdc_baked")]) != digest(state, events)
