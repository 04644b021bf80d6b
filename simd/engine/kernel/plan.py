"""The plan as the compiled loop reads it: four arrays, every entry named after what it holds, the names generated
from the declarations (never listed by hand), so a field added to ``spec.Plan`` is in the loop's reach at once.

- ``ints`` (int64): Plan's ``int`` and ``bool`` fields, then the values derived from the plan and the arrays'
  layouts (:data:`DERIVED`; ``aux_<region>`` and ``aux_<region>_width`` for each region of layout.Aux, ``tot_<name>``
  where each tuple of the Totals starts in a ``tot`` row), then for each tuple field its segment: ``<name>`` its
  offset in ``ivec`` or ``fvec`` and ``<name>_len`` its length;
- ``floats`` (float64): Plan's ``float`` fields;
- ``ivec`` (int64) and ``fvec`` (float64): Plan's ``tuple[int, ...]`` and ``tuple[float, ...]`` fields, one
  after the other.

The loop reads ``ints[PI.step_us]``, ``floats[PF.lifetime_shape]`` and ``seg(fvec, ints, PI.stop_cumulative)``: PI and
PF are IntEnums, which numba compiles as constants, so a name costs what a number did. Fields of other types (the
spec, names, the streams, the step times) are not the loop's: the streams are ``words`` rows (layout.Stream), the
step times its tables (stragglers.kernel_tables).
"""

from __future__ import annotations

from dataclasses import fields
from enum import IntEnum

import numpy as np

from simd.engine.jit import njit
from simd.engine.layout import TUPLES, Aux, TotalsLayout
from simd.engine.spec import Plan
from simd.engine.stragglers import kernel_tables

_KINDS = {"int": "ints", "bool": "ints", "float": "floats", "tuple[int, ...]": "ivec", "tuple[float, ...]": "fvec"}
# Plan's field types that are not the loop's (the spec, names, streams, step times): any other type is refused
# here, so a number written another way (``tuple[float, float]``, ``int | None``) cannot silently miss the arrays
_NOT_THE_LOOPS = {"JobSpec", "StepTimes | None", "tuple[str, ...]", "dict", "dict | None"}
_UNKNOWN = [f"{f.name}: {f.type}" for f in fields(Plan) if f.type not in _KINDS and f.type not in _NOT_THE_LOOPS]
if _UNKNOWN:
    raise TypeError(f"Plan fields of a type kernel.plan does not place: {', '.join(_UNKNOWN)}")
_DECLARED = {kind: tuple(f.name for f in fields(Plan) if _KINDS.get(f.type) == kind) for kind in set(_KINDS.values())}

# What the loop reads that is no field: derived from the plan (and its aux row's layout)
DERIVED = {
    "cluster": lambda p: p.cluster,  # the cluster's servers with pools (0: no pools)
    "table": lambda p: p.table,  # the servers' table: the cluster's with pools, else the job's (0: no servers)
    "has_st": lambda p: int(p.step_times is not None),  # stragglers: each step's duration drawn
    "diagnose": lambda p: int(p.diagnosis_stream is not None),  # imperfect diagnosis: its draws
    "tree_p": lambda p: Aux.of(p).tree_p,  # the servers' tournament trees' leaves
}
_SEGMENTS = (*_DECLARED["ivec"], *_DECLARED["fvec"])

PI = IntEnum("PI", [(name, i) for i, name in enumerate((
    *_DECLARED["ints"], *DERIVED,
    *(f"aux_{r}{suffix}" for r in Aux.NAMES for suffix in ("", "_width")),
    *(f"tot_{name}" for name in TUPLES),
    *(f"{name}{suffix}" for name in _SEGMENTS for suffix in ("", "_len"))))])
PF = IntEnum("PF", [(name, i) for i, name in enumerate(_DECLARED["floats"])])


@njit()
def seg(vec, ints, k):
    """The segment of ``vec`` (``ivec`` or ``fvec``) that ``PI`` member ``k`` names: offset ``ints[k]``, length
    ``ints[k + 1]``."""
    return vec[ints[k]:ints[k] + ints[k + 1]]


_KEY = "_kernel_plan"


def arrays(p: Plan, layout: TotalsLayout) -> tuple:
    """The loop's ``plan`` (ints, floats, ivec, fvec) and ``tables`` for plan ``p`` with Totals laid out as
    ``layout``, cached on the (immutable) plan."""
    hit = p.__dict__.get(_KEY)
    if hit is not None and hit[0] == layout:
        return hit[1]
    by_name = {name: int(getattr(p, name)) for name in _DECLARED["ints"]}
    by_name.update((name, int(f(p))) for name, f in DERIVED.items())
    ax = Aux.of(p)
    for r in Aux.NAMES:
        by_name[f"aux_{r}"], by_name[f"aux_{r}_width"] = getattr(ax, r)
    by_name.update((f"tot_{name}", layout.start[name]) for name in TUPLES)
    vecs: dict[str, list] = {"ivec": [], "fvec": []}
    for kind in ("ivec", "fvec"):
        for name in _DECLARED[kind]:
            v = getattr(p, name)
            by_name[name], by_name[f"{name}_len"] = len(vecs[kind]), len(v)
            vecs[kind].extend(v)
    plan = (np.array([by_name[name] for name in PI.__members__], dtype=np.int64),
            np.array([getattr(p, n) for n in _DECLARED["floats"]], dtype=np.float64),
            np.array(vecs["ivec"], dtype=np.int64), np.array(vecs["fvec"], dtype=np.float64))
    out = plan, kernel_tables(p.step_times)
    p.__dict__[_KEY] = (layout, out)
    return out
