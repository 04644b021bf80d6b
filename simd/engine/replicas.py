"""The batch path over replicas: R replicas of one configuration advanced together, their states as rows of the
arrays laid out by layout.py, by one call of the compiled loop (loopcall.call: loop.py, every mechanism).

Promises:

- ``advance_replicas(states, until)`` equals ``tuple(core.advance(s, until)[0] for s in states)`` state for
  state, bit for bit (the same kernel on the same streams; tests compare the two on random configurations and
  random cuts of time), so it is tick-size invariant as the engine is, and a replica means the same whether it
  ran alone or in a batch.
- ``run_jobs(specs, limit_us)`` equals ``[core.run_job(spec, limit_us=limit_us) for spec in specs]``.
- ``new_replicas(spec, seeds)`` equals ``tuple(core.new_state(with_seed(spec, s)) for s in seeds)`` and
  ``retarget_replicas(states, spec)`` equals ``tuple(core.retarget(s, with_seed(spec, seed of s)) for s in
  states)``, state for state and plan for plan (its streams included): a scenario's replicas starting, or
  changing parameters at a drill's boundary, all at once. The plans are compiled together (spec.compile_seeds)
  and the first failure and SDC of every replica drawn together (streams.Seeded), ~10-20 us per replica where
  core's costs ~0.6 ms (4 numpy bit generators per compile_spec); core does the first replica, so its checks
  and every field it leaves alone are core's own.
- States whose plans differ in anything but their seed (loopcall._key) are advanced one by one with
  core.advance: the same results, without the speed. A lane's replicas never do.

Cost per call: one kernel call, and in it per replica the jumps of its streams to their current draws (~0.65 us
measured at 10,000 replicas of llama3-16k), the work of its events and, under stragglers, one draw per executed
step (~17 ns, its events included). States that come from a previous call (a :class:`Replicas`, as the daemon
passes them tick after tick) continue from its arrays, copied (~0.1 us per replica); only States that do not
(a fresh start, a drill's retarget) are packed into arrays first, about 2-4 us per replica (immutable
dataclasses), and a State is built back from the arrays only when it is read. There is no Python per replica,
event or step in a call that continues.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import numpy as np

from simd.engine.core import advance, capped_rejoins, new_state, retarget, servers_kept
from simd.engine.frozen import built
from simd.engine.hazard import NEVER
from simd.engine.layout import (
    AUX_FIELDS,
    BESIDE,
    FLAGS,
    PAIRED,
    STREAMS,
    TOTALS,
    Aux,
    Pos,
    TotalsLayout,
    pack,
    pos_row,
    state_fields,
    words,
)
from simd.engine.loopcall import _key, call
from simd.engine.results import JobResult, job_result
from simd.engine.servers import census
from simd.engine.spec import JobSpec, Plan, Seeds, compile_seeds, with_seed
from simd.engine.state import State, Totals


def _stacked_words(plans: Sequence[Plan]) -> np.ndarray:
    """The replicas' streams (R x NSTREAMS x 5), in replica order."""
    return np.stack([words(p) for p in plans])


def _seeds_words(seeds: Seeds) -> np.ndarray:
    """_stacked_words of compile_seeds' plans, from its streams' arrays."""
    none = np.zeros((len(seeds.plans), 5), dtype=np.uint64)
    return np.stack([seeds.streams[n].words() if n in seeds.streams else none for n in STREAMS], axis=1)


def _hist_bucket(plan: Plan) -> int | None:
    """The histogram bucket of every step without stragglers (None with them): a Replicas continues on its arrays
    across a retarget only while this is unchanged (stragglers neither switched on nor off)."""
    return None if plan.step_times is not None else getattr(plan, "step_bucket", 0)


def _one_batch(states: Sequence[State]) -> bool:
    first = _key(states[0].plan)
    return all(_key(s.plan) == first for s in states)


_FIELDS = tuple(f.name for f in fields(State))


class _Batch:
    """The arrays of one advance_replicas result, from which its States are built on first use.

    What no call changes is shared by every batch that descends from one packing of States (never mutated):
    ``statics`` (per replica, its State fields the kernels do not move: plan, epoch), ``packed_starts``
    (per replica, its job_start Totals as packed) and ``words`` (the replicas' streams). What calls change is
    this batch's own: ``pos``, ``tot``, ``aux`` (layout.py), ``start`` (a replica's job_start row, valid where
    ``ended``) and ``ended`` (replicas whose job ended in a call since the packing)."""

    def __init__(self, lay, pos, tot, start, aux, ended, statics, packed_starts, words, hb, work=0):
        self.lay, self.pos, self.tot, self.start, self.aux, self.hb = lay, pos, tot, start, aux, hb
        self.work = work  # the work of the call that made this batch, by its budget's weights (0: none counted)
        self.ended = ended
        self.statics, self.packed_starts, self.words = statics, packed_starts, words
        self._starts: dict[int, Totals] = {}  # job_start Totals built from ``start`` rows

    def job_start(self, i: int) -> Totals:
        if not self.ended[i]:
            return self.packed_starts[i]
        js = self._starts.get(i)
        if js is None:
            js = self._starts[i] = self.lay.totals(self.start[i].tolist())
        return js

    def state_fields(self, i: int) -> dict:
        d = dict(self.statics[i])
        d.update(state_fields(self.pos[i].tolist(), self.aux[i], Aux.of(self.plan)))
        d.update(totals=self.lay.totals(self.tot[i].tolist()), job_start=self.job_start(i))
        return d

    def column(self, name: str) -> np.ndarray:
        """A Totals field over the replicas (R, or R x entries for a tuple field)."""
        i, n = self.lay.start[name], self.lay.width_of.get(name)
        return self.tot[:, i] if n is None else self.tot[:, i:i + n]

    @property
    def plan(self) -> Plan:
        """The replicas' shared plan (seeds apart: replicas with equal _key)."""
        return self.statics[0]["plan"]

    def summed_totals(self) -> Totals:
        """The replicas' Totals summed field by field (snapshot.sum_totals, without building the States)."""
        return self.lay.totals(self.tot.sum(axis=0).tolist())

    def in_flight_us(self) -> int:
        """Sum of State.in_flight_us over the replicas."""
        p = self.pos
        return int(p[:, Pos.pending_us].sum() + (p[:, Pos.clock] - p[:, Pos.t]).sum())

    def writes_in_flight(self, tier: bool = False, low: bool = False) -> int:
        """Replicas with an asynchronous save writing (State.write_end > 0; a memory tier's with ``tier``:
        State.tier_write_end > 0; with two tiers the local one's with ``low``: State.low_write_end > 0)."""
        return int((self.pos[:, Pos.low_write_end if low else Pos.tier_write_end if tier else Pos.write_end] > 0).sum())

    def groups_running(self) -> int:
        """Elastic replica groups running, summed over the replicas (State.rejoin's zeros), from the arrays."""
        o, k = Aux.of(self.plan).rejoin
        return int((self.aux[:, o:o + k] == 0).sum())

    def checkpoint_age_steps(self) -> tuple[int, int, int]:
        """simd.metrics.snapshot.state_checkpoint_age_steps' largest over the replicas, from the arrays."""
        p, plan = self.pos, self.plan
        step = p[:, Pos.step]
        newest = step - p[:, Pos.last_ckpt]
        persistent = step - p[:, Pos.persist_last] if plan.mem_every else newest
        upper = newest
        if plan.low_every:  # the peer tier's newest copy (its ring's last), the persistent checkpoint when newer
            o, k = Aux.of(plan).tier
            n, head = p[:, Pos.tier_n], p[:, Pos.tier_head]
            rows = np.arange(len(p))
            last = np.where(n > 0, self.aux[rows, o + (head + n - 1) % max(k, 1)], 0)
            upper = step - np.maximum(p[:, Pos.persist_last], last)
        return int(persistent.max(initial=0)), int(upper.max(initial=0)), int(newest.max(initial=0))

    def columns(self) -> dict:
        """state_columns of the States this batch holds, from its arrays."""
        p = self.pos
        out = {name: p[:, col].tolist() for name, col in Pos.__members__.items()
               if name not in PAIRED}
        for name in FLAGS:
            out[name] = p[:, Pos[name]].astype(bool).tolist()
        out["hard"] = p[:, [Pos.hard_i, Pos.hard_p]].tolist()
        out["sdc"] = p[:, [Pos.sdc_i, Pos.sdc_p]].tolist()
        ax = Aux.of(self.plan)
        if p[:, Pos.ring_n].any() or p[:, Pos.tier_n].any() or ax.servers or ax.rejoin[1]:
            rows = [state_fields(row, aux, ax) for row, aux in zip(p.tolist(), self.aux, strict=True)]
            for name in AUX_FIELDS:
                out[name] = [list(d[name]) for d in rows]
        else:
            for name in AUX_FIELDS:
                out[name] = [[] for _ in range(len(p))]
        starts = self.start
        waiting = np.flatnonzero(~self.ended)  # job_start as packed, not rewritten by a call since
        if len(waiting):
            rows: dict[int, list[int]] = {}  # by Totals object: fresh replicas share one (new_replicas)
            starts[waiting] = np.array([rows.get(id(t)) or rows.setdefault(id(t), self.lay.row(t))
                                        for t in (self.packed_starts[i] for i in waiting.tolist())], dtype=np.int64)
        out["totals"], out["job_start"] = self._totals_columns(self.tot), self._totals_columns(starts)
        for name in _FIELDS:
            if name not in out and name != "plan":
                out[name] = [_listed(d[name]) for d in self.statics]
        return out

    def _totals_columns(self, rows: np.ndarray) -> dict[str, list]:
        out = {}
        for name in TOTALS:
            i, n = self.lay.start[name], self.lay.width_of.get(name)
            out[name] = rows[:, i].tolist() if n is None else rows[:, i:i + n].tolist()
        return out


class Replicas(Sequence):
    """The States advance_replicas returns, as a read-only sequence over the arrays they come from (``batch``):
    a State is built on first access (a daemon tick reads a few; the snapshot and the work count read sums
    from the arrays), and passed back to advance_replicas the sequence starts from the arrays. Equal to any
    sequence of equal States (a tuple of them included). No per-replica object is made per call, so a tick
    leaves the garbage collector nothing to walk."""

    __slots__ = ("batch", "_n", "_built")

    def __init__(self, batch: _Batch, n: int):
        self.batch, self._n, self._built = batch, n, {}

    def __len__(self) -> int:
        return self._n

    @property
    def clock(self) -> int:
        """The replicas' clock (one for all: every call leaves them at one), without building a State."""
        return int(self.batch.pos[0, Pos.clock])

    @property
    def clocks(self) -> np.ndarray:
        """Each replica's clock (a copy), without building a State."""
        return self.batch.pos[:, Pos.clock].copy()

    def totals_of(self, i: int) -> Totals:
        """Replica ``i``'s Totals, without building its State."""
        return self.batch.lay.totals(self.batch.tot[i].tolist())

    @property
    def plan(self) -> Plan:
        """The first replica's plan (the others differ in their seed only), without building a State."""
        return self.batch.statics[0]["plan"]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(self._n)))
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        st = self._built.get(i)
        if st is None:
            st = self._built[i] = built(State, self.batch.state_fields(i))
        return st

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None

    def __repr__(self) -> str:
        return f"Replicas({self._n} states)"


def state_columns(states: Sequence[State]) -> dict:
    """The States' fields (``plan`` apart) as columns over the replicas: a list per field, ``totals`` and
    ``job_start`` a dict of such lists per Totals field, tuples as lists (JSON's shape); from a Replicas' arrays
    without building its States."""
    batch = getattr(states, "batch", None)
    if batch is not None:
        return batch.columns()
    out: dict = {}
    for name in _FIELDS:
        if name in ("totals", "job_start"):
            out[name] = {t: [_listed(getattr(getattr(s, name), t)) for s in states] for t in TOTALS}
        elif name != "plan":
            out[name] = [_listed(getattr(s, name)) for s in states]
    return out


def _listed(v):
    return list(v) if isinstance(v, tuple) else v


def _statics(s: State) -> dict:
    """The State fields no kernel moves (layout.BESIDE)."""
    return {k: s.__dict__[k] for k in BESIDE}


def on_kernel(states: Sequence[State]) -> bool:
    """Whether advance_replicas advances ``states`` in one kernel call (else one by one with core.advance)."""
    return isinstance(states, Replicas) or (len(states) > 0 and _one_batch(states))


def _pack(states: Sequence[State], words: np.ndarray) -> _Batch:
    """States of one batch (_one_batch) as arrays."""
    lay, pos, tot, aux = pack(states)
    start = np.zeros_like(tot)  # rows written by the kernel where a job ends
    return _Batch(lay, pos, tot, start, aux, np.zeros(len(states), dtype=bool), tuple(_statics(s) for s in states),
                  tuple(s.job_start for s in states), words, _hist_bucket(states[0].plan))


def advance_replicas(states: Sequence[State], until_us: int, *, max_jobs: int | None = None,
                     budget: np.ndarray | None = None) -> Sequence[State]:
    """Every state advanced to ``until_us`` (see the module docstring); ``max_jobs`` as core.advance's.

    With ``budget`` (loop.BUDGET_FIELDS: a row's limit of work and the weights of its kinds) the call may stop
    short of ``until_us``: a replica stops once it has spent the limit, and the replicas after it go no further
    than it (loop.py, "Work"); every replica then stands at the earliest of their clocks, T (those before it that
    went further are advanced again from where they were, to T: at most the work they did once more), so the
    result is the states ``advance_replicas(states, T)`` gives, bit for bit, and the batch's ``work`` is what the
    call did (both passes). The work of one call is then at most twice the replicas' limits plus one unit each (a
    unit is not cut); the replicas must share one clock (a lane's always do).

    States that come from a previous call (a Replicas) continue from its arrays: no per-replica Python, only
    copies of the arrays (the States already handed out, a snapshot being saved, keep their values)."""
    if budget is not None and max_jobs is not None:
        raise ValueError("advance_replicas: a budget stops at a time, max_jobs at a job: not both")
    if budget is not None and len({int(c) for c in _clocks(states)}) > 1:
        raise ValueError("advance_replicas: a budget needs replicas at one clock")
    if not states:
        return ()
    if isinstance(states, Replicas):
        own = states.batch
        at = int(own.pos[:, Pos.clock].max())
        if until_us < at:
            raise ValueError(f"cannot advance backwards: at {at} us, asked for {until_us} us")
        pos, tot, start, aux = own.pos.copy(), own.tot.copy(), own.start.copy(), own.aux.copy()
    else:
        for s in states:
            if until_us < s.clock:
                raise ValueError(f"cannot advance backwards: at {s.clock} us, asked for {until_us} us")
        if not _one_batch(states):
            return tuple(advance(s, until_us, max_jobs=max_jobs)[0] for s in states)
        own = _pack(states, _stacked_words([s.plan for s in states]))
        pos, tot, start, aux = own.pos, own.tot, own.start, own.aux
        if budget is not None:  # the packed arrays are the ones advanced: a copy to go back to
            own = _Batch(own.lay, pos.copy(), tot.copy(), start.copy(), aux.copy(), own.ended, own.statics,
                         own.packed_starts, own.words, own.hb)
    lay = own.lay
    jobs = lay.start["jobs_completed"]
    jobs_before = tot[:, jobs].copy()
    work = call(own.plan, lay, pos, tot, start, aux, own.words, until_us, max_jobs, budget=budget)
    if budget is not None:
        at = int(pos[:, Pos.clock].min())
        ahead = np.flatnonzero(pos[:, Pos.clock] > at)
        if len(ahead):  # from where they were to the earliest clock (tick-size invariance: the same states)
            rows = [a[ahead] for a in (own.pos, own.tot, own.start, own.aux)]  # copies (fancy indexing)
            work[ahead] += call(own.plan, lay, *rows, own.words[ahead], at, None, budget=_unlimited(budget))
            pos[ahead], tot[ahead], start[ahead], aux[ahead] = rows
    ended = own.ended | (tot[:, jobs] != jobs_before)
    return Replicas(_Batch(lay, pos, tot, start, aux, ended, own.statics, own.packed_starts, own.words, own.hb,
                           int(work.sum()) if budget is not None else 0), len(states))


def _clocks(states: Sequence[State]):
    return states.clocks if isinstance(states, Replicas) else [s.clock for s in states]


def _unlimited(budget: np.ndarray) -> np.ndarray:
    """``budget``'s weights without its limit."""
    out = budget.copy()
    out[0] = -1
    return out


def new_replicas(spec: JobSpec, seeds: Sequence[int]) -> Sequence[State]:
    """``tuple(core.new_state(with_seed(spec, s)) for s in seeds)`` (module docstring), as a Replicas
    (advance_replicas continues from its arrays)."""
    if not seeds:
        return ()
    compiled = compile_seeds(spec, seeds)
    plans = compiled.plans
    first = new_state(plans[0].spec)  # core's, for seed 0: every other field is the same for every seed
    hard = compiled.streams["hard_stream"].first_positions(plans[0].hard_log1m)
    sdc = compiled.streams["sdc_stream"].first_positions(plans[0].sdc_log1m)
    _check(first, {"plan": plans[0], "hard": (0, int(hard[0])), "sdc": (0, int(sdc[0]))}, "new_state")
    lay = TotalsLayout(first.totals)
    n = len(plans)
    pos = np.tile(np.array(pos_row(first), dtype=np.int64), (n, 1))
    pos[:, Pos.hard_i], pos[:, Pos.hard_p], pos[:, Pos.sdc_i], pos[:, Pos.sdc_p] = 0, hard, 0, sdc
    tot = np.tile(np.array(lay.row(first.totals), dtype=np.int64), (n, 1))
    base = _statics(first)
    statics = tuple({**base, "plan": p} for p in plans)
    batch = _Batch(lay, pos, tot, np.zeros_like(tot), Aux.of(plans[0]).rows(n), np.zeros(n, dtype=bool), statics,
                   (first.job_start,) * n, _seeds_words(compiled), _hist_bucket(plans[0]))
    return Replicas(batch, n)


# the fields core.retarget changes (the others carry over): new_replicas' and retarget_replicas' derivation,
# checked against core's own result for the first replica (_check)
_RETARGETED = frozenset(("plan", "hard", "sdc", "epoch", "lifetimes", "srv_next", "srv_mult", "burst_at",
                         "regime", "rejoin", "srv_relapse"))


def retarget_replicas(states: Sequence[State], spec: JobSpec) -> Sequence[State]:
    """``tuple(core.retarget(s, with_seed(spec, s.plan.spec.seed)) for s in states)`` (module docstring): a
    Replicas continues as one (its arrays, the new plans' streams) when the step histogram is booked the same way
    under both plans and the aux rows keep their layout; else a tuple of States."""
    if not states:
        return ()
    batch = getattr(states, "batch", None)
    statics = batch.statics if batch is not None else [s.__dict__ for s in states]
    epochs = {d["epoch"] for d in statics}
    seeds = [d["plan"].spec.seed for d in statics]
    if len(epochs) > 1:  # (a lane's replicas always share their epoch) core, one by one
        return tuple(retarget(s, with_seed(spec, seed)) for s, seed in zip(states, seeds, strict=True))
    (epoch,) = epochs
    head = states[0]
    first = retarget(head, with_seed(spec, seeds[0]))  # core's checks and result for the first replica
    if batch is not None:
        g, step, pending = batch.pos[:, Pos.g], batch.pos[:, Pos.step], batch.pos[:, Pos.pending_us]
    else:
        g, step, pending = np.array([(s.g, s.step, s.pending_us) for s in states], dtype=np.int64).T
    # core.retarget's checks of the position, over every replica (the first passed them in core)
    if (step > spec.target_steps).any():
        raise ValueError(f"retarget: target_steps {spec.target_steps} is behind the job's step {int(step.max())}")
    if head.plan.committed and spec.step_seconds != head.plan.spec.step_seconds and pending.any():
        retarget(states[int(np.flatnonzero(pending)[0])], with_seed(spec, 0))  # core's error, for that replica
    compiled = compile_seeds(spec, seeds, epoch + 1)
    plans, p0 = compiled.plans, compiled.plans[0]
    hard = g + compiled.streams["hard_stream"].first_positions(p0.hard_log1m) if p0.hard_log1m \
        else np.full(len(plans), NEVER, dtype=np.int64)
    sdc = g + compiled.streams["sdc_stream"].first_positions(p0.sdc_log1m) if p0.sdc_log1m \
        else np.full(len(plans), NEVER, dtype=np.int64)
    kept = servers_kept(head.plan, p0)
    # the servers' lifetimes start anew, their multipliers drawn again (core.retarget)
    renewed = {} if kept else {"lifetimes": 0, "srv_next": (), "srv_mult": (), "regime": ()}
    if p0.burst_log1m:  # bursts: drawn afresh from g (core.retarget)
        renewed["burst_at"] = int(g[0])
    if (p0.relapse_p > 0) != (head.plan.relapse_p > 0):  # relapses switched on or off (core.retarget)
        renewed["srv_relapse"] = ()
    _check(first, {"plan": p0, "hard": (0, int(hard[0])), "sdc": (0, int(sdc[0])), "epoch": epoch + 1, **renewed},
           "retarget", head)
    if batch is None or _hist_bucket(p0) != batch.hb or Aux.of(batch.plan).regions != Aux.of(p0).regions:
        return tuple(_derived(s, {"plan": p, "hard": (0, h), "sdc": (0, d), "epoch": epoch + 1, **renewed,
                                  **({"burst_at": gi} if p0.burst_log1m else {}),
                                  **({"rejoin": capped_rejoins(s.rejoin, s.clock + p0.rejoin_us, s.group_ready,
                                                               p0.rejoin_us)}
                                     if p0.elastic_groups else {})})
                     for s, p, h, d, gi in zip(states, plans, hard.tolist(), sdc.tolist(), g.tolist(), strict=True))
    pos = batch.pos.copy()
    pos[:, Pos.hard_i], pos[:, Pos.hard_p], pos[:, Pos.sdc_i], pos[:, Pos.sdc_p] = 0, hard, 0, sdc
    if p0.burst_log1m:
        pos[:, Pos.burst_at] = g
    aux = batch.aux
    if not kept:
        pos[:, Pos.lifetimes] = 0
        o, k = Aux.of(p0).mult
        if k:  # drawn again by the kernel (the same draws while the shape is the same)
            aux = aux.copy()
            aux[:, o:o + k] = 0
        o, k = Aux.of(p0).regime
        if k:  # the regime path walked again from its start (the same path while its parameters are the same)
            aux = aux.copy()
            aux[:, o:o + k] = 0
    o, k = Aux.of(p0).rejoin
    if k:  # elastic replica groups out rejoin no later than the new rejoin from now (core.retarget)
        latest = int(batch.pos[0, Pos.clock]) + p0.rejoin_us
        region = aux[:, o:o + k]
        ro, rk = Aux.of(p0).ready
        if rk:  # with servers, no earlier than the rejoin after the group's last replacement (core.capped_rejoins)
            latest = np.maximum(latest, aux[:, ro:ro + rk] + p0.rejoin_us)
        if (region > latest).any():
            aux = aux.copy()
            aux[:, o:o + k] = np.minimum(region, latest)
    statics = tuple({**d, "plan": p, "epoch": epoch + 1} for d, p in zip(batch.statics, plans, strict=True))
    # tot, start and aux are shared with the batch retargeted (never mutated: advance_replicas copies them)
    out = _Batch(batch.lay, pos, batch.tot, batch.start, aux, batch.ended, statics, batch.packed_starts,
                 _seeds_words(compiled), batch.hb)
    return Replicas(out, len(plans))


def _derived(state: State, changes: dict) -> State:
    """``dataclasses.replace(state, **changes)`` without the frozen __init__'s cost (no __post_init__)."""
    return built(State, state.__dict__, **changes)


def _check(core_result: State, derived: dict, what: str, before: State | None = None) -> None:
    """The first replica derived as core derives it: the fields core changed, to the same values (a change to
    core.new_state or core.retarget that this module has not followed fails here, not silently)."""
    if before is not None:
        changed = {k for k, v in core_result.__dict__.items() if before.__dict__.get(k) != v}
        if not changed <= _RETARGETED:
            raise RuntimeError(f"replicas: core.{what} changed {sorted(changed - _RETARGETED)}, not derived here")
    for k, v in derived.items():
        got = getattr(core_result, k)
        if (_streams_of(got), got.__dict__.keys()) != (_streams_of(v), v.__dict__.keys()) if k == "plan" \
                else got != v:
            raise RuntimeError(f"replicas: core.{what} gives another {k} for the first replica")


def _streams_of(plan: Plan) -> tuple:
    """A plan's spec and streams (Plan.__eq__ compares the specs only)."""
    st = plan.step_times
    return (plan.spec, *(v for k, v in plan.__dict__.items() if k.endswith("_stream")),
            None if st is None else st.stream)


def run_jobs(specs: Sequence[JobSpec], limit_us: int) -> list[JobResult | None]:
    """Each spec's first job run from a fresh state; None where ``limit_us`` passes first (core.run_job)."""
    states = [new_state(s) for s in specs]
    if not states:
        return []
    if not _one_batch(states):
        from simd.engine.core import run_job

        return [run_job(s, limit_us=limit_us) for s in specs]
    own = _pack(states, _stacked_words([s.plan for s in states]))
    call(own.plan, own.lay, own.pos, own.tot, own.start, own.aux, own.words, limit_us, 1)
    done = own.tot[:, own.lay.start["jobs_completed"]] >= 1
    return [job_result(s.plan, own.lay.totals(row), 0, t) if ok else None
            for s, t, row, ok in zip(states, own.pos[:, Pos.t].tolist(), own.tot.tolist(), done.tolist(),
                                     strict=True)]


def first_jobs(states: Sequence[State]) -> list[JobResult | None]:
    """Each replica's first job's result once it has ended, else None: for replicas started by new_replicas and
    advanced with ``max_jobs=1`` (their clocks at their job's end), core.run_job's result (run_jobs' rule)."""
    batch = getattr(states, "batch", None)
    if batch is None:
        return [job_result(s.plan, s.totals, 0, s.t) if s.totals.jobs_completed >= 1 else None for s in states]
    done = batch.column("jobs_completed") >= 1
    return [job_result(batch.statics[i]["plan"], batch.lay.totals(batch.tot[i].tolist()), 0, int(batch.pos[i, Pos.t]))
            if ok else None for i, ok in enumerate(done.tolist())]


def summed_totals(states: Sequence[State]) -> Totals:
    """The replicas' Totals summed field by field, from a Replicas' arrays without building its States (or one
    State's)."""
    batch = getattr(states, "batch", None)
    if batch is not None:
        return batch.summed_totals()
    if len(states) != 1:
        raise ValueError("summed_totals: a Replicas, or one State")
    return states[0].totals


def server_census(states: Sequence[State]) -> tuple[tuple[int, ...], int]:
    """servers.census of the replicas' pools (one plan's; ((), 0) without pools), from a Replicas' arrays
    without building its States."""
    if not states or not states[0].plan.cluster:
        return (), 0
    p = states[0].plan
    batch = getattr(states, "batch", None)
    if batch is not None:
        ax = Aux.of(batch.plan)
        (o, k), (o2, _) = ax.role, ax.rep
        roles, ends, clock = batch.aux[:, o:o + k], batch.aux[:, o2:o2 + k], batch.pos[:, Pos.clock]
    else:
        k = p.cluster
        roles = np.array([s.srv_role or (0,) * k for s in states], dtype=np.int64)
        ends = np.array([s.srv_repair or (0,) * k for s in states], dtype=np.int64)
        clock = np.array([s.clock for s in states], dtype=np.int64)
    return census(p.standbys, p.servers, roles, ends, clock, p.spares_withheld)
