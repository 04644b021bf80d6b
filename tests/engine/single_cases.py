"""The single tests' cases, shared by their fast checks (tests/engine/test_single.py) and
their statistical ones (tests/engine/statistical/test_single_properties.py)."""

from simd.engine import Stragglers

STRAGGLERS = [None, Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2, replace_after_steps=40),
              Stragglers(0.5, 1, 1.2), Stragglers(0.0, 2, 1.5)]
