"""``--state-dir``: the daemon's state on disk, so that a restart continues where the last run left off.

What is saved: the shared simulated clock, every scenario's lane (its configuration hash, where it started on
the shared clock, whether it is quarantined, and each replica's engine State with the JobSpec it runs under),
and the drills' runs and start counts. Not saved: the tick loop's own health counters (a restart resets
them, as it does any Prometheus counter) and a stall drill's wall-clock hold.

Format: one JSON document, ``state.json``, versioned (``format``, ``version``, and ``layout``: the engine
dataclasses' field names), with the SHA-256 of its canonical payload. A file of another layout is read when
the engine's declarations can fill what it lacks: every field it lacks has a declared default, read as that
default (a field's default means "the mechanism that brought it is off", so a state saved before the field
existed continues as it ran); a class or field the engine does not declare, or a field without a default
missing, makes the file foreign. JSON keeps every integer exact and every float bit for bit
(``repr`` round-trips), so a resumed State equals the saved one; the engine state is read and rebuilt from
outside the engine, through its public dataclasses and ``compile_seeds``. Version 2 (written) keeps a lane's
replicas by column: its JobSpec once, the seeds, and per State field one list over the replicas (per Totals
field for ``totals`` and ``job_start``), read from the batch path's arrays when the lane is on them: ~20 us
per replica to save, ~85 us to resume, where version 1's JobSpec and State per replica (``replicas``) cost
~0.5 ms and ~4.5 ms (measured at 10,000 replicas of llama3-16k: bench/daemon.py --lane-costs). Version
1 files are still read (a daemon upgraded in place resumes), then saved as version 2.

Writes are atomic: a temporary file in the same directory, fsync, rename over ``state.json``, fsync of the
directory. A kill at any moment leaves the previous complete snapshot or the new one, never a torn file.

On start (:func:`load`): no file, a fresh start. A file that does not parse, fails its checksum, or is of
another format, version or engine layout is moved aside to ``state.json.bad-<UTC time>`` with a warning,
and the daemon starts fresh; it never crashes on it. A scenario whose configuration hash changed (or that
is new) starts fresh at the saved simulated time, with a warning; a scenario no longer configured is dropped;
the others resume exactly (the engine is deterministic and tick-size invariant, so the resumed run equals an
uninterrupted one from the snapshot's time). A saved spec must be one the validated scenario gives
(_check_saved_spec) before anything is compiled from it; else that scenario starts fresh, the others resume,
and the file is moved aside as evidence (SpecRefused: a crafted file, or a drill redefined while it ran).
A directory is used by one daemon at a time (a lock file).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import fcntl
import functools
import hashlib
import json
import logging
import math
import os
import tempfile
import threading
import time
import types
import typing
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Strict, ValidationError, create_model

from simd import __version__, regularfile
from simd.engine import (
    BUCKETS,
    JOB_ROLE,
    NEVER,
    SERVER_ROLES,
    US_PER_SECOND,
    JobSpec,
    State,
    built,
    compile_seeds,
    compile_spec,
    new_state,
    retarget_replicas,
    state_columns,
    with_seed,
)
from simd.live.drills import DrillRunner, Run
from simd.live.keyed import digest, keyed
from simd.live.lane import Lane, gc_paused, new_lane, scenario_key
from simd.metrics.snapshot import scenario_info
from simd.scenario import Config

log = logging.getLogger(__name__)

FORMAT, VERSION = "simd-state", 2
# The largest state file read: 768 MiB. A replica takes ~0.35-0.4 kB in version 2 (measured on llama3-16k and
# optimized, 10,000 replicas each) and a few kB in version 1, a file holds at most MAX_TOTAL_REPLICAS
# (simd.scenario.limits) replicas, and a server slot ~48 B (131,072 servers with pools, Weibull lifetimes and
# gamma rates after a simulated day: tests/live/test_state_size.py), of which the memory budget
# (simd.scenario.schema.MAX_FILE_BYTES) admits ~10^7: ~0.53 GB at most, with room for larger numbers; a larger
# (or sparse) file is not read. Reading one at the limit takes ~3.5x its size at its peak (decode, resume).
MAX_STATE_BYTES = 768 << 20
# The latest simulated time a state may hold, microseconds: the scenario file's longest stretch of simulated
# time (10^12 s, simd.scenario.limits.SimulatedSeconds) in the engine's microseconds.
MAX_CLOCK_US = 10**18
READABLE = (1, 2)  # the versions decode accepts
STATE_FILE, LOCK_FILE = "state.json", "lock"


def _dataclasses(*roots: type) -> list[type]:
    """Every dataclass reachable from ``roots`` through the type hints of their fields (Plan excluded: it is
    compiled from the JobSpec, not saved)."""
    seen: list[type] = []

    def visit(tp) -> None:
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            if tp in seen or tp.__name__ == "Plan":
                return
            seen.append(tp)
            for hint in typing.get_type_hints(tp).values():
                visit(hint)
        for arg in typing.get_args(tp):
            visit(arg)

    for root in roots:
        visit(root)
    return seen


# The engine's saved dataclasses by name, and the layout a file records: each class's fields, in order.
SAVED = {cls.__name__: cls for cls in _dataclasses(State, JobSpec)}
LAYOUT = ",".join(f"{name}:{'/'.join(f.name for f in fields(cls))}" for name, cls in SAVED.items())


def _as_saved(value):
    """A value as the state file holds it (JSON): tuples as lists, dataclasses as objects."""
    if dataclasses.is_dataclass(value):
        return {f.name: _as_saved(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list):
        return [_as_saved(x) for x in value]
    return value


@functools.lru_cache(maxsize=8)
def _lacking(layout: str) -> dict[str, dict[str, object]]:
    """What a file of ``layout`` lacks, read at the engine's declared defaults: class name -> {field: its
    default as saved}. A field's default means "the mechanism that brought it is off" (a state saved before
    the field existed never used it). StateError when the declarations cannot read that layout: a class or a
    field they do not declare, a class twice, or a field without a default missing."""
    lacking: dict[str, dict[str, object]] = {}
    for part in layout.split(","):
        name, _, saved = part.partition(":")
        cls = SAVED.get(name)
        if cls is None or name in lacking:
            raise StateError("a class the engine does not declare, or one twice")
        declared = {f.name: f for f in fields(cls)}
        names = saved.split("/") if saved else []
        if len(set(names)) != len(names) or not set(names) <= set(declared):
            raise StateError(f"{name} has a field the engine does not declare")
        missing = [f for n, f in declared.items() if n not in names]
        if any(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in missing):
            raise StateError(f"{name} lacks a field without a default")
        lacking[name] = {f.name: _as_saved(f.default if f.default is not dataclasses.MISSING
                                           else f.default_factory()) for f in missing}
    return lacking


class StateError(Exception):
    """The saved state cannot be used (the message says why, in one line)."""


class SpecRefused(StateError):
    """A lane's saved spec is not one its scenario, as the scenario file validates it, gives."""


class StateDirBusy(Exception):
    """Another daemon holds the state directory."""


# Values per json.dumps call when a document is encoded (_pieces): a call holds the interpreter's lock throughout, so
# one call over a whole state (seconds for a file at the memory budget, simd.scenario.schema.MAX_FILE_BYTES) held
# /metrics and /-/healthy as long; a piece of 16,384 numbers takes ~1-3 ms, and the HTTP threads run between pieces.
ENCODE_PIECE = 1 << 14


def _canonical(payload: dict) -> bytes:
    """The canonical JSON of ``payload`` (sorted keys, no spaces, no NaN), in pieces of at most ENCODE_PIECE
    values per json.dumps call: the bytes json.dumps(payload, sort_keys=True, separators=(",", ":")) gives."""
    out: list[bytes] = []
    _pieces(payload, out)
    return b"".join(out)


def _pieces(v, out: list[bytes]) -> None:
    if isinstance(v, dict):
        out.append(b"{")
        for i, k in enumerate(sorted(v)):
            out.append((b"," if i else b"") + _dumps(k) + b":")
            _pieces(v[k], out)
        out.append(b"}")
    elif isinstance(v, list | tuple) and v and isinstance(v[0], dict | list | tuple):  # (a column: one type)
        out.append(b"[")
        for i, x in enumerate(v):
            if i:
                out.append(b",")
            _pieces(x, out)
        out.append(b"]")
    elif isinstance(v, list | tuple) and len(v) > ENCODE_PIECE:
        out.append(b"[")
        for i in range(0, len(v), ENCODE_PIECE):
            out.append((b"," if i else b"") + _dumps(list(v[i:i + ENCODE_PIECE]))[1:-1])
        out.append(b"]")
    else:
        out.append(_dumps(v))


def _dumps(v) -> bytes:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


# --- encoding --------------------------------------------------------------------------------------------

def _replicas(states) -> dict:
    """A lane's replicas by column: the JobSpec of the first (every replica runs it with its own seed: lane.py
    makes and retargets them together), the seeds, the epoch and the States' fields (replicas.state_columns)."""
    batch = getattr(states, "batch", None)  # the batch path's arrays: no State built
    plans = [s.plan for s in states] if batch is None else [d["plan"] for d in batch.statics]
    spec, seeds = plans[0].spec, [p.spec.seed for p in plans]
    if any(p.spec != with_seed(spec, seed) for p, seed in zip(plans, seeds, strict=True)):
        raise ValueError("the replicas of a lane differ in more than their seeds")
    return {"spec": asdict(spec), "seeds": seeds, "state": state_columns(states)}


def encode(simulated_us: int, lanes: tuple[Lane, ...], drills: DrillRunner, wall: float) -> bytes:
    """The document for ``state.json``: the payload last, as its canonical bytes, which the checksum covers
    (encoded once; decode hashes those bytes as they are in the file)."""
    return b"".join(encode_parts(simulated_us, lanes, drills, wall))


def encode_parts(simulated_us: int, lanes: tuple[Lane, ...], drills: DrillRunner, wall: float) -> list[bytes]:
    """``encode``'s document as its pieces, in order (StateDir.save writes them one by one: joined, a document
    at the memory budget is one copy of hundreds of MB, which holds the interpreter's lock that long)."""
    with gc_paused():
        payload = _payload(simulated_us, lanes, drills, wall)
        try:
            return _document_parts(payload)
        finally:
            _dismantle(payload)


def document(payload: dict) -> bytes:
    """A payload as a ``state.json`` document of this version, checksummed."""
    return b"".join(_document_parts(payload))


def _document_parts(payload: dict) -> list[bytes]:
    body: list[bytes] = []
    _pieces(payload, body)
    digest = hashlib.sha256()
    for piece in body:
        digest.update(piece)
    head = json.dumps({"format": FORMAT, "version": VERSION, "layout": LAYOUT, "sha256": digest.hexdigest()},
                      separators=(",", ":"))
    body.insert(0, head[:-1].encode() + _PAYLOAD)
    body.append(b"}\n")
    return body


_PAYLOAD = b',"payload":'


def _dismantle(v) -> None:
    """Free a payload a piece at a time (each list of numbers alone, a few ms each): freed whole, it is one
    deallocation of every value it holds, which holds the interpreter's lock for seconds at the memory budget
    (the HTTP threads wait meanwhile)."""
    if isinstance(v, dict):
        while v:
            _dismantle(v.popitem()[1])
    elif isinstance(v, list) and v and isinstance(v[0], dict | list):
        while v:
            _dismantle(v.pop())


def _payload(simulated_us: int, lanes: tuple[Lane, ...], drills: DrillRunner, wall: float) -> dict:
    return {
        "simd_version": __version__,
        "written_unix": wall,
        "simulated_us": simulated_us,
        "drills": {
            "definitions": {d.name: _drill_key(d) for d in drills.config.drills},
            "runs": [[r.drill, r.start, r.end, r.on_demand] for r in drills.book.runs],
            "starts": dict(drills.book.starts),
        },
        "lanes": [{"name": lane.scenario.name, "key": lane.key, "origin_us": lane.origin_us, "failed": lane.failed,
                   "overruns": lane.overruns, **_replicas(lane.states)} for lane in lanes],
    }


def check_states(states: tuple[State, ...], origin_us: int, at_us: int) -> None:
    """A lane's restored replicas are states the engine can continue from, or StateError: every integer in
    0..NEVER (the engine's "no such event"), each clock at most MAX_CLOCK_US and, from the lane's origin on the
    shared clock, not past the snapshot's time, ``t`` not past the clock, and every per-cause, per-type,
    per-detector and per-bucket tuple of the length a fresh state of the plan has (a histogram of another
    length would break every scrape and tick after the load)."""
    fresh = new_state(states[0].plan.spec)
    lengths = {name: len(v) for name, v in _tuples(fresh)}
    for s in states:
        if not 0 <= s.t <= s.clock <= MAX_CLOCK_US or origin_us + s.clock > at_us:
            raise StateError(f"a replica's clock ({s.clock} us, from {origin_us}) is outside 0..the snapshot's "
                             f"time ({at_us} us)")
        for name, v in _tuples(s):
            if len(v) != lengths[name]:
                raise StateError(f"a replica's {name} has {len(v)} entries where its plan has {lengths[name]}")
        n = s.plan.table  # the servers' table (servers.py): each server's end of lifetime, once drawn, ...
        if len(s.srv_next) != (n if s.lifetimes else 0):
            raise StateError(f"a replica has {len(s.srv_next)} servers' lifetimes where its plan has {n}")
        if len(s.srv_mult) not in (0, n if s.plan.rate_shape else 0) or 0 in s.srv_mult:  # ... rate multipliers
            raise StateError(f"a replica has {len(s.srv_mult)} servers' rate multipliers where its plan has "
                             f"{n if s.plan.rate_shape else 0} (or a multiplier 0)")
        roles = n if s.plan.cluster else 0  # ... roles and repairs, once laid out
        if len(s.srv_role) not in (0, roles) or not len(s.srv_repair) == len(s.srv_fixed) == len(s.srv_role) or \
                not set(s.srv_role) <= SERVER_ROLES or s.srv_role.count(JOB_ROLE) not in (0, s.plan.servers) or \
                len(s.srv_blamed) not in (0, len(s.srv_role) * s.plan.retire_after):
            raise StateError(f"a replica's servers' roles do not fit its plan ({len(s.srv_role)} roles, "
                             f"{s.srv_role.count(JOB_ROLE)} in the job, for {roles} servers and a job of "
                             f"{s.plan.servers})")
        bad = next((x for x in _ints(s) if not 0 <= x <= NEVER), None)
        if bad is not None:
            raise StateError(f"a replica holds {bad}, outside 0..{NEVER}")


def _tuples(state: State):
    """(name, tuple) of a state's variable-length tuples, its totals' and its job start's."""
    for prefix, totals in (("totals", state.totals), ("job_start", state.job_start)):
        for f in fields(totals):
            v = getattr(totals, f.name)
            if isinstance(v, tuple):
                yield f"{prefix}.{f.name}", v


def _ints(obj):
    """Every integer of a state (its plan apart), tuples and nested totals included."""
    for f in fields(obj):
        if f.name == "plan":
            continue
        v = getattr(obj, f.name)
        if dataclasses.is_dataclass(v):
            yield from _ints(v)
        elif isinstance(v, tuple):
            yield from v
        elif type(v) is int:
            yield v


def _drill_key(drill) -> str:
    """A hash of the drill's definition; an effect the schema gained after a drill was saved changes no key while
    it is at its default (simd.live.keyed)."""
    return digest(keyed(drill))


# --- decoding --------------------------------------------------------------------------------------------

# The typed decoding is pydantic's, over types derived from the engine's declarations: a value's type with its
# leaves strict (an int is an int, never a bool, a float or a string; a float may be written as an int), tuples
# read from lists, and each dataclass a model of its fields (all required, no other key) built into the
# dataclass once validated; a lane's columns (see _replicas) a model of one list per field.

def _typed(tp):
    """The pydantic type that reads a value of type ``tp`` from parsed JSON (see above)."""
    if tp in (int, float, bool, str):
        return Annotated[tp, Strict()]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        return tuple[tuple(a if a is Ellipsis else _typed(a) for a in args)]
    if origin in (types.UnionType, typing.Union):
        return typing.Union[tuple(_typed(a) for a in args)]  # noqa: UP007 (built from a tuple of types)
    if tp is type(None):
        return tp
    if dataclasses.is_dataclass(tp):
        return Annotated[_model(tp), AfterValidator(lambda m: tp(**dict(m)))]
    raise TypeError(f"no typed decoding for {tp!r}")


@functools.cache
def _model(cls: type, columns: bool = False) -> type[BaseModel]:
    """A model of ``cls``'s fields (``plan`` apart): each of its type, or with ``columns`` a list of its type
    (a nested dataclass: its own columns, read as a list of objects)."""
    def typed(tp):
        if columns and dataclasses.is_dataclass(tp):
            return Annotated[_model(tp, True), AfterValidator(lambda m: _rows(tp, dict(m)))]
        return list[_typed(tp)] if columns else _typed(tp)

    hints = _hints(cls)
    return create_model(f"{cls.__name__}{'Columns' if columns else ''}", __config__=ConfigDict(extra="forbid"),
                        **{f.name: (typed(hints[f.name]), ...) for f in fields(cls) if f.name != "plan"})


def _rows(cls: type, cols: dict[str, list]) -> list:
    if len({len(v) for v in cols.values()}) > 1:
        raise ValueError(f"the columns of {cls.__name__} differ in length")
    return _objects(cls, cols, len(next(iter(cols.values()), ())))


def _validated(model: type[BaseModel], value, what: str) -> dict:
    """``value`` read by ``model``: its fields, or ValueError in one line naming where (never the value)."""
    try:
        return dict(model.model_validate(value))
    except ValidationError as exc:
        e = exc.errors(include_url=False, include_input=False)[0]
        loc, msg = e["loc"], e["msg"]
        if e["type"] == "extra_forbidden":  # the key is the file's: not repeated
            loc, msg = loc[:-1], "a field the engine does not declare"
        raise ValueError(f"{'.'.join(map(str, (what, *loc)))}: {msg}") from None


def _spec(d) -> JobSpec:
    return JobSpec(**_validated(_model(JobSpec), d, "spec"))


def _restore_state(d: dict) -> State:
    spec = _spec(d["spec"])
    s = _validated(_model(State), d["state"], "state")
    state = State(plan=compile_spec(spec, s["epoch"]), **s)
    # the engine's invariant (docs/design.md 3.5): every simulated microsecond is in a bucket or in flight
    if sum(state.totals.bucket_us().values()) + state.in_flight_us() != state.clock:
        raise StateError("a replica's buckets do not add up to its clock")
    return state


def _columns(cls: type, cols, n: int) -> dict[str, list]:
    """Columns of ``cls``'s fields (``plan`` apart), each ``n`` values of the field's type (a nested dataclass's:
    ``n`` objects); ValueError when they do not fit."""
    out = _validated(_model(cls, True), cols, cls.__name__)
    if {len(v) for v in out.values()} != {n}:
        raise ValueError(f"{cls.__name__}: expected {n} values per field")
    return out


def _objects(cls: type, cols: dict[str, list], n: int, **each) -> list:
    """``n`` instances of ``cls`` from columns (and ``each``: a list per further field), as its __init__ would set
    them, without its cost (the engine's frozen dataclasses have no __post_init__)."""
    names = list(cols) + list(each)
    values = list(cols.values()) + list(each.values())
    return [built(cls, zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def _restore_lane_states(d: dict) -> tuple[State, ...]:
    """A version 2 lane's States (see _replicas): the plans compiled for all seeds at once (compile_seeds)."""
    spec, seeds = _spec(d["spec"]), d["seeds"]
    if not isinstance(seeds, list) or not seeds or not set(map(type, seeds)) <= {int}:
        raise ValueError("the seeds are not a list of integers")
    cols = _columns(State, d["state"], len(seeds))
    plans: list = [None] * len(seeds)
    for epoch in set(cols["epoch"]):  # (one: a lane's replicas are retargeted together)
        at = [i for i, e in enumerate(cols["epoch"]) if e == epoch]
        for i, plan in zip(at, compile_seeds(spec, [seeds[i] for i in at], epoch).plans, strict=True):
            plans[i] = plan
    states = tuple(_objects(State, cols, len(seeds), plan=plans))
    # the engine's invariant (docs/design.md 3.5): every simulated microsecond is in a bucket or in flight
    # (the degraded bucket of elastic replica groups: 0 in a file written before it)
    buckets = sum(np.array(d["state"]["totals"][f"{b}_us"], dtype=object) for b in BUCKETS) + \
        np.array(d["state"]["totals"].get("degraded_us", 0), dtype=object)
    flight = np.array(cols["pending_us"], dtype=object) + np.array(cols["clock"], dtype=object) \
        - np.array(cols["t"], dtype=object)
    if (buckets + flight != np.array(cols["clock"], dtype=object)).any():
        raise StateError("a replica's buckets do not add up to its clock")
    return states


def decode(raw: bytes) -> dict:
    """The payload of a ``state.json`` document; StateError if it is not one this simd can use."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deep for the parser
        raise StateError(f"not JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StateError("not a simd state file")
    layout = doc.get("layout")
    try:
        lacking = _lacking(layout) if isinstance(layout, str) and len(layout) <= len(LAYOUT) * 4 else None
        why = "" if lacking is not None else ": not a layout"
    except StateError as exc:
        lacking, why = None, f": {exc}"
    if doc.get("version") not in READABLE or lacking is None:
        raise StateError(f"written by another simd (format version {doc.get('version')!r}, engine layout "
                         f"{'readable' if lacking is not None else 'different'}{why})")
    payload = doc.get("payload")
    if not isinstance(payload, dict) or _digest(raw, payload, doc["version"]) != doc.get("sha256"):
        raise StateError("checksum mismatch")
    if layout != LAYOUT:
        _grow(payload, lacking)
    return payload


def _grow(payload: dict, lacking: dict[str, dict[str, object]]) -> None:
    """A payload of an earlier layout with what it lacks at the declared defaults (_lacking), in place: version
    2 lanes (a spec and columns), version 1 lanes (a spec and a state per replica). Malformed parts are left as
    they are, for resume's checks to refuse."""
    lanes = payload.get("lanes")
    for lane in lanes if isinstance(lanes, list) else ():
        if not isinstance(lane, dict):
            continue
        if isinstance(lane.get("seeds"), list):  # version 2
            _fill(JobSpec, lane.get("spec"), lacking)
            _fill_columns(State, lane.get("state"), lacking, len(lane["seeds"]))
        for replica in lane.get("replicas") or () if isinstance(lane.get("replicas"), list) else ():  # version 1
            if isinstance(replica, dict):
                _fill(JobSpec, replica.get("spec"), lacking)
                _fill(State, replica.get("state"), lacking)


def _fill(tp, v, lacking: dict) -> None:
    """``v`` (parsed JSON of type ``tp``) with the fields it lacks, through nested dataclasses, in place."""
    for arg in typing.get_args(tp):  # X | None, tuple[X, ...]
        if arg is not Ellipsis:
            for x in v if isinstance(v, list) and typing.get_origin(tp) is tuple else (v,):
                _fill(arg, x, lacking)
    if not (dataclasses.is_dataclass(tp) and isinstance(v, dict)):
        return
    for name, default in lacking.get(tp.__name__, {}).items():
        v.setdefault(name, default)
    for name, hint in _hints(tp).items():
        if name in v:
            _fill(hint, v[name], lacking)


def _fill_columns(cls: type, cols, lacking: dict, n: int) -> None:
    """Columns of ``n`` replicas (see _columns) with the fields they lack, each its default n times, in place."""
    if not isinstance(cols, dict):
        return
    for name, default in lacking.get(cls.__name__, {}).items():
        cols.setdefault(name, [default] * n)
    for name, hint in _hints(cls).items():
        if dataclasses.is_dataclass(hint) and name != "plan":
            _fill_columns(hint, cols.get(name), lacking, n)


@functools.cache
def _hints(cls: type) -> dict:
    return typing.get_type_hints(cls)


def _digest(raw: bytes, payload: dict, version: int) -> str:
    """The SHA-256 of the payload's canonical bytes: from version 2 on, the file's own (encode writes them last,
    as they are); version 1 wrote another form, so they are encoded again."""
    if version == 1:
        return hashlib.sha256(_canonical(payload)).hexdigest()
    at, end = raw.find(_PAYLOAD), raw.rstrip().rfind(b"}")
    return "" if at < 0 else hashlib.sha256(raw[at + len(_PAYLOAD):end]).hexdigest()


@dataclass(frozen=True)
class Resumed:
    """What :func:`resume` rebuilt: the arguments of simd.live.ticker.Ticker's resume."""

    at_us: int
    lanes: tuple[Lane, ...]
    drills: DrillRunner
    refused: tuple[str, ...] = ()  # why each scenario whose saved spec was refused starts fresh (SpecRefused)


def resume(payload: dict, config: Config) -> Resumed:
    """Lanes and drills of ``config`` from a decoded payload: unchanged scenarios resume, changed and new ones
    start fresh at the saved time (a warning each), removed ones are dropped. StateError if the payload's
    shape is wrong."""
    try:
        at_us = payload["simulated_us"]
        if type(at_us) is not int or not 0 <= at_us <= MAX_CLOCK_US:
            raise ValueError(f"simulated_us must be an integer in 0..{MAX_CLOCK_US}, got {at_us!r}")
        drills = _resume_drills(payload["drills"], config)
        saved = {d["name"]: d for d in payload["lanes"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(f"malformed ({type(exc).__name__}: {exc})") from None
    refused: list[str] = []
    with gc_paused():
        lanes = _resume_lanes(config, saved, drills, at_us, refused)
    for name in saved:
        log.info("state: scenario %s of the snapshot is no longer configured: dropped", name)
    return Resumed(at_us, tuple(lanes), drills, tuple(refused))


def _resume_lanes(config: Config, saved: dict, drills: DrillRunner, at_us: int, refused: list[str]) -> list[Lane]:
    """Every configured scenario's lane, resumed from ``saved`` (whose entries it takes) or fresh; the lanes whose
    saved spec is refused start fresh, and ``refused`` gets why."""
    lanes = []
    for s in config.all_scenarios:
        d = saved.pop(s.name, None)
        if d is not None and d.get("key") == scenario_key(s):
            try:
                lanes.append(_resume_lane(d, s, drills, at_us))
                continue
            except SpecRefused as exc:  # nothing computed from it: the scenario starts fresh (the caller moves
                refused.append(str(exc))  # the file aside and says why in one line)
            except (KeyError, TypeError, ValueError, StateError) as exc:
                log.warning("state: scenario %s cannot be resumed (%s: %s): it starts fresh at simulated second "
                            "%.0f", s.name, type(exc).__name__, exc, at_us / US_PER_SECOND)
        elif d is not None:
            log.warning("state: scenario %s changed since the snapshot: it starts fresh at simulated second %.0f",
                        s.name, at_us / US_PER_SECOND)
        else:
            log.info("state: scenario %s is new: it starts at simulated second %.0f", s.name, at_us / US_PER_SECOND)
        lanes.append(new_lane(s, drills.body(s, at_us / US_PER_SECOND), at_us))
    return lanes


def _resume_drills(d: dict, config: Config) -> DrillRunner:
    runner = DrillRunner(config)
    same = {x.name for x in config.drills if d["definitions"].get(x.name) == _drill_key(x)}
    runner.book.runs = [r for r in runner.book.runs if r.drill not in same] + [
        Run(str(name), float(a), float(b), bool(on_demand)) for name, a, b, on_demand in d["runs"] if name in same]
    for name in same:
        runner.book.starts[name] = int(d["starts"][name])
    return runner


def _resume_lane(d: dict, scenario, drills: DrillRunner, at_us: int) -> Lane:
    for spec, clock in _saved_specs(d):
        at = d["origin_us"] + clock if type(d["origin_us"]) is int and type(clock) is int else at_us  # (a malformed
        # clock: the checks after this one say what is wrong)
        _check_saved_spec(spec, scenario, drills, min(max(at, 0), at_us) / US_PER_SECOND)
    states = tuple(_restore_state(r) for r in d["replicas"]) if "replicas" in d else _restore_lane_states(d)
    if len(states) != scenario.replicas or len({s.clock for s in states}) != 1:
        raise StateError("replicas do not match the scenario")
    if [s.plan.spec.seed for s in states] != list(scenario.replica_seeds()):  # the scenario key pins them
        raise StateError("the replicas' seeds do not match the scenario")
    origin = d["origin_us"]
    if type(origin) is not int or origin < 0:
        raise StateError(f"origin_us must be a non-negative integer, got {origin!r}")
    check_states(states, origin, at_us)
    body = drills.body(scenario, (origin + states[0].clock) / US_PER_SECOND)
    # the parameters in force at the saved time under this configuration's drills (a changed drill: retarget)
    seeds = scenario.replica_seeds()
    spec = body.job_spec(seeds[0])
    if any(s.plan.spec != with_seed(spec, seed) for s, seed in zip(states, seeds, strict=True)):
        states = retarget_replicas(states, spec)
    failed = d["failed"]
    return Lane(scenario, scenario_key(scenario), origin, body, states, scenario_info(scenario, body, states[0]),
                failed=None if failed is None else str(failed), overruns=int(d["overruns"]))


def _saved_specs(d: dict):
    """(JobSpec, clock as saved) of a saved lane: its spec (version 2) or each replica's (version 1), decoded by
    type only; ValueError, TypeError or KeyError when malformed (the lane then starts fresh)."""
    if "replicas" in d:
        for r in d["replicas"]:
            yield _spec(r["spec"]), r["state"].get("clock") if isinstance(r.get("state"), dict) else None
    else:
        clocks = d["state"].get("clock") if isinstance(d.get("state"), dict) else None
        yield _spec(d["spec"]), clocks[0] if isinstance(clocks, list) and clocks else None


def _check_saved_spec(spec: JobSpec, scenario, drills: DrillRunner, t: float) -> None:
    """A saved spec is validated as a new one, before anything is computed from it: it must be the JobSpec that the
    scenario, as the scenario file's schema validated it, gives at the lane's saved time ``t`` (seconds) under the
    drills of this configuration, alone or under one of its drills (every such spec passed the schema's types and
    bounds: simd.scenario.schema); any other spec (one no scenario file gives, e.g. a server of 0 GPUs, or one
    of a drill redefined while it ran) is SpecRefused."""
    seed = spec.seed
    bodies = [drills.body(scenario, t), scenario] + [
        scenario.with_effects(drill.effects) for drill in drills.config.drills
        if scenario.name in {s.name for s in drills.config.drill_targets(drill)}]
    given = [body.job_spec(seed) for body in bodies]
    if spec in given:
        return
    if _replay_changed(spec, given):
        raise StateError(f"its replay log changed since the snapshot (servers.replay {scenario.servers.replay.log})")
    if spec.restart_failure == 0.0 and any(c.crash_loop for c in spec.causes) and \
            _without_loops(spec) in [_without_loops(g) for g in given]:
        # the crash loop that never fails a crash-loop drill gives its scenario outside the drill
        # (ScenarioBody.with_crash_loop_counted), the drill gone: no retarget switches the counts off
        raise StateError("its restarts were counted per cause for a crash-loop drill this configuration no longer "
                         "has (the counts cannot be switched off)")
    differ = [f.name for f in fields(spec) if getattr(spec, f.name) != getattr(given[0], f.name)]
    nested = [f"{name}.{g.name}" for name in differ if dataclasses.is_dataclass(getattr(spec, name))
              and dataclasses.is_dataclass(getattr(given[0], name))
              for g in fields(getattr(spec, name)) if getattr(getattr(spec, name), g.name) !=
              getattr(getattr(given[0], name), g.name)]
    shown = ", ".join((nested or differ)[:5]) or "its type"
    raise SpecRefused(f"scenario {scenario.name}: its saved spec is not one the scenario file gives (it differs in "
                      f"{shown})")


def _without_loops(spec: JobSpec) -> JobSpec:
    """``spec`` without crash loops (core.retarget: the per-cause restart counts)."""
    return replace(spec, causes=tuple(replace(c, crash_loop=False) for c in spec.causes), restart_failure=0.0,
                   restart_attempts=1, escalation_seconds=0.0)


def _replay_changed(spec: JobSpec, given: list[JobSpec]) -> bool:
    """Whether ``spec`` differs from one of ``given`` only in its replayed faults, and those are what a fault log
    could give (at least one server, times finite, within 0..the span): the log was edited in place (its path,
    which keys the scenario, unchanged), so the scenario starts fresh; any other replay is refused with the
    spec."""
    srv = spec.servers
    if srv is None or not srv.replay:
        return False
    span = srv.replay_span_seconds
    if not (math.isfinite(span) and span >= 0 and all(
            0 <= t <= span for times in srv.replay for t in times)):
        return False
    return any(g.servers is not None and g.servers.replay and replace(
        spec, servers=replace(srv, replay=g.servers.replay, replay_span_seconds=g.servers.replay_span_seconds)) == g
        for g in given)


# --- the directory ---------------------------------------------------------------------------------------

class StateDir:
    """A state directory: the lock, atomic saves, loading with corrupt or foreign files moved aside."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.file = self.path / STATE_FILE
        self._lock_fd: int | None = None

    def open(self) -> StateDir:
        """Create the directory if needed and take its lock; StateDirBusy if another daemon has it, OSError
        if it cannot be used. Removes temporary files a killed daemon left behind.

        The lock is ``flock`` on the directory itself, held by its file descriptor: removing or replacing the
        ``lock`` file (which only says the PID, for people) admits no second daemon. No file here is opened
        through a symbolic link: one planted as ``lock`` or as a temporary file is removed (the link, never its
        target) and the file created anew with O_EXCL."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateDirBusy(f"{self.path} is in use by another simd run (its lock is held)") from None
        self._lock_fd = fd
        for leftover in self.path.glob(f".{STATE_FILE}.tmp-*"):
            leftover.unlink(missing_ok=True)
        lock = self.path / LOCK_FILE
        lock.unlink(missing_ok=True)
        pid = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.write(pid, f"{os.getpid()}\n".encode())
        finally:
            os.close(pid)
        return self

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    def load(self) -> dict | None:
        """The saved payload, or None (no file, or one moved aside because it could not be used: not a
        regular file, a symbolic link, larger than MAX_STATE_BYTES, not a state this simd wrote)."""
        try:
            raw = regularfile.read(self.file, MAX_STATE_BYTES, follow=False)
        except FileNotFoundError:
            return None
        except regularfile.Refused as exc:
            self.move_aside(exc.strerror)
            return None
        try:
            return decode(raw)
        except StateError as exc:
            self.move_aside(str(exc))
            return None

    def move_aside(self, why: str, starting_fresh: bool = True) -> Path:
        """The state file renamed to ``state.json.bad-<UTC time>``, with one warning saying why (and, unless
        ``starting_fresh`` is False, that the daemon starts fresh)."""
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        aside = self.path / f"{STATE_FILE}.bad-{stamp}"
        os.replace(self.file, aside)
        if starting_fresh:
            log.warning("state: %s cannot be used (%s): moved to %s; starting fresh", self.file, why, aside.name)
        else:
            log.warning("state: %s: %s; the file moved to %s", self.file, why, aside.name)
        return aside

    def save(self, data: bytes | list[bytes]) -> None:
        """Write ``data`` (a document, or its pieces in order: encode_parts) as the state file atomically
        (temporary file, fsync, rename, fsync the directory); the pieces are written one by one.
        The temporary file has an unpredictable name and is created with O_EXCL (``mkstemp``), so nothing
        planted in the directory receives the state; it is removed when the write fails (a full disk)."""
        fd, tmp = tempfile.mkstemp(prefix=f".{STATE_FILE}.tmp-", dir=self.path)
        try:
            with open(fd, "wb") as f:
                for piece in [data] if isinstance(data, bytes) else data:
                    f.write(piece)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        dir_fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class Saver:
    """Saves the ticker's state every ``every_ticks`` ticks and on demand (shutdown), recording the outcome in
    ``status`` (simd.metrics.health.DaemonStatus: ``simd_state_last_save_timestamp_seconds``,
    ``simd_state_save_errors_total``). With ``background`` the periodic saves run on a thread of their own
    (``simd-save``), from the state as the tick left it (immutable lanes: the next ticks advance copies), so a
    save at the memory budget (seconds) delays no tick; a periodic save due while one still runs is skipped."""

    def __init__(self, state_dir: StateDir, ticker, every_ticks: int, status, wall=time.time,
                 background: bool = False):
        self.dir, self.ticker, self.every, self.status, self._wall = state_dir, ticker, every_ticks, status, wall
        self.background = background
        self._ticks = 0
        self._thread: threading.Thread | None = None
        self.last_error = ""

    def after_tick(self) -> None:
        self._ticks += 1
        if self._ticks % self.every:
            return
        if not self.background:
            self.save()
        elif self._thread is None or not self._thread.is_alive():
            try:
                taken = self.ticker.saved()
                self._thread = threading.Thread(target=self._save, args=(taken, False), name="simd-save",
                                                daemon=True)
                self._thread.start()
            except Exception as exc:  # noqa: BLE001 (no thread to be had: the save is not made, the tick goes on)
                self._failed(exc, False)

    def wait(self) -> None:
        """Until the save in progress in the background (if any) has ended."""
        if self._thread is not None:
            self._thread.join()

    def save(self, quiet: bool = False) -> bool:
        """Save now (after the one in progress in the background); False when the save could not be made,
        whatever the error (a full disk, memory exhausted while encoding, ...): counted in
        ``simd_state_save_errors_total`` and, unless ``quiet``, logged in one line (``last_error`` says why);
        the previous snapshot stays."""
        self.wait()
        try:
            taken = self.ticker.saved()
        except Exception as exc:  # noqa: BLE001
            return self._failed(exc, quiet)
        return self._save(taken, quiet)

    def _save(self, taken: tuple, quiet: bool) -> bool:
        try:
            simulated_us, lanes, drills = taken
            wall = self._wall()
            self.dir.save(encode_parts(simulated_us, lanes, drills, wall))
        except Exception as exc:  # noqa: BLE001 (a save that cannot be made never stops the tick nor the daemon)
            return self._failed(exc, quiet)
        self.status.saved(wall)
        return True

    def _failed(self, exc: Exception, quiet: bool) -> bool:
        self.last_error = _why(exc)
        self.status.save_failed()
        if not quiet:
            log.error("state: cannot save to %s: %s (the previous snapshot stays)", self.dir.file, self.last_error)
        return False


def _why(exc: Exception) -> str:
    """One line saying why a save failed: an OSError's reason, else the exception's kind (never its text)."""
    if isinstance(exc, OSError):
        return str(exc.strerror or type(exc).__name__)
    return {MemoryError: "MemoryError (out of memory while encoding the state)"}.get(type(exc), type(exc).__name__)
