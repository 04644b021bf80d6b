"""The replicas tests' cases, shared by their fast checks (tests/engine/test_replicas.py) and
their statistical ones (tests/engine/statistical/test_replicas_properties.py)."""

from dataclasses import replace

from simd.engine import new_state


def _replicas(s, n):
    return [new_state(replace(s, seed=s.seed + k)) for k in range(n)]
