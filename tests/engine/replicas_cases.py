"""The replicas tests' cases, shared by their fast checks (tests/engine/test_replicas.py) and
their statistical ones (tests/engine/statistical/test_replicas_properties.py)."""

from dataclasses import replace

from simd.engine import Stragglers, new_state

STRAGGLERS = [None, Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2, replace_after_steps=40), Stragglers(0.0, 2, 1.5)]


def _replicas(s, n):
    return [new_state(replace(s, seed=s.seed + k)) for k in range(n)]
