"""The straggler settings core.advance's property check (tests/engine/statistical/test_advance_properties.py) draws
from: none, jitter alone, a slow rank replaced or kept, two slow ranks without jitter."""

from simd.engine import Stragglers

STRAGGLERS = [None, Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2, replace_after_steps=40),
              Stragglers(0.5, 1, 1.2), Stragglers(0.0, 2, 1.5)]
