"""Event-stream buffers (simd.engine.streams.Buffer): the same elements however they are read, in bounded memory."""

import math

import numpy as np

from simd.engine.streams import Buffer, gaps, stream_state


def test_buffer_drops_passed_elements_and_keeps_every_index_and_position():
    state, log1m = stream_state(4, "hard"), math.log1p(-0.3)
    first = int(gaps(state, log1m, 0, 1)[0])
    expected = first + np.concatenate(([0], np.cumsum(gaps(state, log1m, 1, 800_000))))
    buf = Buffer(state, log1m, 0, first)
    g, longest = 0, 0
    for step in (1, 7, 1000, 3, 50_000, 1):  # reads near and far ahead, as the walk and the batch do
        for _ in range(40):
            g += step
            nxt = buf.next_after(g)
            i = int(np.searchsorted(expected, g, side="right"))
            assert (buf.index(), nxt) == (i, int(expected[i]))
            longest = max(longest, len(buf.pos))
    assert g > 2_000_000 * 0.3  # hundreds of thousands of elements passed ...
    assert longest <= 4 * (1 << 16)  # ... with at most a few blocks held at once


def test_buffer_saved_state_round_trips():
    state, log1m = stream_state(5, "sdc"), math.log1p(-0.01)
    buf = Buffer(state, log1m, 0, int(gaps(state, log1m, 0, 1)[0]))
    buf.next_after(1_000_000)
    again = Buffer(state, log1m, *buf.saved())
    assert again.next_after(2_000_000) == buf.next_after(2_000_000) and again.index() == buf.index()
