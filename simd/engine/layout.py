"""The replicas' arrays, laid out from the engine's dataclasses: one row per replica, its columns named after
State's and Totals' fields (generated here, never numbered by hand), so a field added to either has its column.

- ``pos`` (R x NPOS, int64): a State's position, each integer field a column in State's order; the stream
  positions ``hard`` and ``sdc`` as ``hard_i``/``hard_p`` (index, g position) and ``sdc_i``/``sdc_p``;
  ``corrupt_ckpts`` as ``ring_head``/``ring_n`` over the ring region of the replica's ``aux`` row. ``plan`` and
  ``epoch`` are not moved by a kernel: they are kept beside the arrays.
- ``aux`` (R x Aux(plan).width, int64): a replica's variable-width state, in regions (:class:`Aux`): ``ring``
  (the newest corrupt checkpoints, oldest at ``ring_head``; at least one column), ``srv`` (State.srv_next: each
  server's end of lifetime), ``mult`` (State.srv_mult: the servers' gamma rate multipliers) and with capacity
  ``role``, ``rep`` and ``fixed`` (State.srv_role, srv_repair, srv_fixed); with retirement ``blamed``
  (State.srv_blamed: ``retire_after`` columns per server, its last blames); with regimes ``regime`` (State.regime:
  the regime path's current stretch, 4 columns); with elastic replica groups ``rejoin`` (State.rejoin: one column
  per group) and, with servers too, ``ready`` (State.group_ready: one column per group) and with pools ``group``
  (State.srv_group: one column per server); with relapses ``relapse`` (State.srv_relapse: one column per server,
  () while none is flagged); with a memory tier keeping more than one copy, or two tiers, ``tier``
  (State.tier_ckpts as ``tier_head``/``tier_n`` over it: its copies, oldest first); with two tiers ``low``
  (State.low_ckpts as ``low_head``/``low_n``: the local tier's copies). The kernel's tournament trees over
  them (kernel/servers.py) are scratch of each call, not in the rows.
- ``tot`` (R x width, int64): a Totals, its integer counters first (Totals' order: ``Tot``), then its tuples
  (Totals' order, each as wide as the plan makes it: :class:`TotalsLayout`).
- ``words`` (R x NSTREAMS x 5, uint64): a plan's streams as pcg.words rows (``Stream``); zeros for a stream
  the plan has not (a mechanism that is off draws nothing).

Pos, Tot and Stream are IntEnums: numba compiles their members as constants, so a kernel reads ``pos[r, Pos.t]``
at the cost of ``pos[r, 1]``.
"""

from __future__ import annotations

from dataclasses import fields
from enum import IntEnum

import numpy as np

from simd.engine.frozen import built
from simd.engine.spec import STREAMS as PLAN_STREAMS
from simd.engine.state import State, Totals

# State fields no kernel moves (kept beside the arrays); those in ``tot``/``start`` rows, not ``pos``; those stored
# as two columns or as a ring
BESIDE = ("plan", "epoch")
_KEPT = (*BESIDE, "totals", "job_start")
# State's fields held in a replica's aux row (Aux), not in its pos row
AUX_FIELDS = ("corrupt_ckpts", "srv_next", "srv_mult", "srv_role", "srv_repair", "srv_fixed", "srv_blamed",
              "regime", "rejoin", "tier_ckpts", "group_ready", "srv_group", "srv_relapse", "low_ckpts")
_PAIRS = {"hard": ("hard_i", "hard_p"), "sdc": ("sdc_i", "sdc_p"), "corrupt_ckpts": ("ring_head", "ring_n"),
          "srv_next": (), "srv_mult": (), "srv_role": (), "srv_repair": (), "srv_fixed": (),
          "srv_blamed": (), "regime": (), "rejoin": (), "tier_ckpts": ("tier_head", "tier_n"), "group_ready": (),
          "srv_group": (), "srv_relapse": (), "low_ckpts": ("low_head", "low_n")}


# the pos columns that hold a State field with another (a pair, a ring's head and count): not a field each
PAIRED = frozenset(c for cols in _PAIRS.values() for c in cols)


def _pos_columns() -> list[str]:
    out: list[str] = []
    for f in fields(State):
        if f.name not in _KEPT:
            out.extend(_PAIRS.get(f.name, (f.name,)))
    return out


Pos = IntEnum("Pos", [(name, i) for i, name in enumerate(_pos_columns())])
FLAGS = tuple(f.name for f in fields(State) if f.type == "bool")  # State's bools: 0 or 1 in a pos row
NPOS = len(Pos)
TOTALS = tuple(f.name for f in fields(Totals))
TUPLES = tuple(f.name for f in fields(Totals) if f.type.startswith("tuple"))  # in a row after the scalars
Tot = IntEnum("Tot", [(name, i) for i, name in enumerate(n for n in TOTALS if n not in TUPLES)])
# the plan's streams: its ``stream`` fields (spec.STREAMS), then "step_times" (its StepTimes' stream)
STREAMS = (*PLAN_STREAMS, "step_times")
Stream = IntEnum("Stream", [(name.removesuffix("_stream"), i) for i, name in enumerate(STREAMS)])


class TotalsLayout:
    """Where each Totals field sits in a ``tot`` row of Totals shaped like ``example`` (the widths of its tuples:
    causes, buckets, accelerator types, detectors): ``start[name]``, ``width_of[name]`` (tuples only)."""

    def __init__(self, example: Totals):
        self.start = {n: int(Tot[n]) for n in Tot.__members__}
        self.width_of: dict[str, int] = {}
        i = len(Tot)
        for name in TUPLES:
            self.start[name] = i
            self.width_of[name] = len(getattr(example, name))
            i += self.width_of[name]
        self.width = i
        self._scalars = tuple(Tot.__members__)

    def row(self, t: Totals) -> list[int]:
        d = t.__dict__
        out = [d[n] for n in self._scalars]
        for name in TUPLES:
            out.extend(d[name])
        return out

    def totals(self, row: list[int]) -> Totals:
        """A Totals from a row (a list: ``tot[i].tolist()``)."""
        d = dict(zip(self._scalars, row, strict=False))
        for name in TUPLES:
            i = self.start[name]
            d[name] = tuple(row[i:i + self.width_of[name]])
        return built(Totals, d)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TotalsLayout) and self.width_of == other.width_of

    __hash__ = None


def pos_row(s: State) -> list[int]:
    """A State's ``pos`` row."""
    d = s.__dict__
    out = []
    for name in Pos.__members__:
        if name in ("hard_i", "sdc_i"):
            out.append(d[name[:-2]][0])
        elif name in ("hard_p", "sdc_p"):
            out.append(d[name[:-2]][1])
        elif name == "ring_head":
            out.append(0)
        elif name == "ring_n":
            out.append(len(d["corrupt_ckpts"]))
        elif name == "tier_head":
            out.append(0)
        elif name == "tier_n":
            out.append(len(d["tier_ckpts"]))
        elif name == "low_head":
            out.append(0)
        elif name == "low_n":
            out.append(len(d["low_ckpts"]))
        else:
            out.append(int(d[name]))
    return out


class Aux:
    """The regions of a replica's ``aux`` row for ``plan`` (module docstring): each as (offset, width)."""

    # the regions, in the row's order
    NAMES = ("ring", "srv", "mult", "role", "rep", "fixed", "blamed", "regime", "rejoin", "tier", "ready", "group",
             "relapse", "low")

    def __init__(self, plan):
        self.servers = n = plan.table
        self.tree_p = 1 << (n - 1).bit_length() if n else 0  # the trees' leaves: a power of two >= the servers
        c = n if plan.cluster > 0 else 0
        # (the tournament trees and the pooled servers' keys are the kernel's scratch, one set per call: a
        # replica's row holds only its state, ~4 int64 per server with pools, not ~11)
        widths = {"ring": max(plan.retention, 1), "srv": n, "mult": n if plan.rate_shape > 0.0 else 0, "role": c,
                  "rep": c, "fixed": c, "blamed": c * plan.retire_after, "regime": 4 if plan.regimes else 0,
                  "rejoin": plan.elastic_groups, "tier": plan.mem_keep if plan.mem_keep > 1 or plan.low_every else 0,
                  "ready": plan.elastic_groups if n else 0, "group": c if plan.elastic_groups else 0,
                  "relapse": n if plan.relapse_p > 0 else 0, "low": plan.low_keep if plan.low_every else 0}
        at = 0
        for name in self.NAMES:
            setattr(self, name, (at, widths.pop(name)))
            at += getattr(self, name)[1]
        assert not widths, f"Aux.NAMES lacks {sorted(widths)}"
        self.width = at
        self.regions = tuple(getattr(self, name) for name in self.NAMES)

    @staticmethod
    def of(plan) -> Aux:
        """The plan's Aux, cached on the (immutable) plan."""
        a = plan.__dict__.get("_aux")
        if a is None:
            a = plan.__dict__["_aux"] = Aux(plan)
        return a

    def rows(self, n: int) -> np.ndarray:
        """``n`` empty rows."""
        return np.zeros((n, self.width), dtype=np.int64)


def state_fields(row: list[int], aux: np.ndarray, ax: Aux) -> dict:
    """The State fields a ``pos`` row (and the replica's ``aux`` row, laid out as ``ax``) hold: pos_row's
    inverse."""
    d = dict(zip(Pos.__members__, row, strict=True))
    head, n = d.pop("ring_head"), d.pop("ring_n")
    o, k = ax.ring
    d["corrupt_ckpts"] = tuple(int(aux[o + (head + i) % k]) for i in range(n))
    o, k = ax.srv
    d["srv_next"] = tuple(aux[o:o + k].tolist()) if k and d["lifetimes"] else ()
    o, k = ax.mult
    d["srv_mult"] = tuple(aux[o:o + k].tolist()) if k and aux[o] else ()
    o, k = ax.role
    laid_out = k and aux[o]
    d["srv_role"] = tuple(aux[o:o + k].tolist()) if laid_out else ()
    o, k = ax.rep
    d["srv_repair"] = tuple(aux[o:o + k].tolist()) if laid_out else ()
    o, k = ax.fixed
    d["srv_fixed"] = tuple(aux[o:o + k].tolist()) if laid_out else ()
    o, k = ax.blamed
    d["srv_blamed"] = tuple(aux[o:o + k].tolist()) if laid_out and k else ()
    o, k = ax.regime
    d["regime"] = tuple(aux[o:o + k].tolist()) if k and aux[o] else ()
    o, k = ax.rejoin
    d["rejoin"] = tuple(aux[o:o + k].tolist())
    head, n = d.pop("tier_head"), d.pop("tier_n")
    o, k = ax.tier
    d["tier_ckpts"] = tuple(int(aux[o + (head + i) % k]) for i in range(n))
    o, k = ax.ready
    d["group_ready"] = tuple(aux[o:o + k].tolist())
    o, k = ax.group
    d["srv_group"] = tuple(aux[o:o + k].tolist()) if laid_out and k else ()
    o, k = ax.relapse
    d["srv_relapse"] = tuple(aux[o:o + k].tolist()) if k and aux[o:o + k].any() else ()
    head, n = d.pop("low_head"), d.pop("low_n")
    o, k = ax.low
    d["low_ckpts"] = tuple(int(aux[o + (head + i) % k]) for i in range(n))
    d["hard"] = (d.pop("hard_i"), d.pop("hard_p"))
    d["sdc"] = (d.pop("sdc_i"), d.pop("sdc_p"))
    for name in FLAGS:
        d[name] = bool(d[name])
    return d


def pack(states, lay: TotalsLayout | None = None) -> tuple[TotalsLayout, np.ndarray, np.ndarray, np.ndarray]:
    """States of one plan's shape as arrays: (their Totals layout, ``pos``, ``tot``, ``aux``)."""
    lay = lay or TotalsLayout(states[0].totals)
    pos = np.array([pos_row(s) for s in states], dtype=np.int64)
    tot = np.array([lay.row(s.totals) for s in states], dtype=np.int64)
    ax = Aux.of(states[0].plan)
    aux = ax.rows(len(states))
    for i, s in enumerate(states):
        # each field from its region's start (the rings from their head, which pos_row sets to 0)
        for region, name in zip(Aux.NAMES, AUX_FIELDS, strict=True):
            if value := getattr(s, name):
                o = getattr(ax, region)[0]
                aux[i, o:o + len(value)] = value
    return lay, pos, tot, aux


def words(plan) -> np.ndarray:
    """The plan's streams as ``words`` rows (NSTREAMS x 5), cached on the (immutable) plan."""
    w = plan.__dict__.get("_words")
    if w is None:
        from simd.engine import pcg

        st = plan.step_times
        got = [getattr(plan, n, None) for n in STREAMS[:-1]] + [st.stream if st is not None else None]
        w = np.stack([pcg.words(s) if s is not None else np.zeros(5, dtype=np.uint64) for s in got])
        plan.__dict__["_words"] = w
    return w
