"""``simd sweep``'s grid: ``--param KEY=SPEC`` parsed against the scenario's fields, and the scenario variants.

A key is a dotted path into a scenario (``checkpoint.interval_steps``, ``n_gpus``, ``failures.hard_per_gpu_hour``,
``recovery.strategy``). Its kind comes from the scenario model of ``simd.scenario``: an integer field, a float field,
or a categorical (``Literal``) field. A SPEC is one of

- ``A:B:N``     N points from A to B inclusive, evenly spaced (``numpy.linspace``);
- ``A:B:Nlog``  N points from A to B inclusive, evenly spaced in log (``numpy.geomspace``; needs 0 < A);
- ``a,b,c``     explicit values (one value is allowed: a fixed override); numbers are sorted ascending,
                categorical names keep their order; duplicates are refused.

On an integer field every point is rounded to the nearest integer (``numpy.rint``) and duplicates are dropped, so
``10:12:5`` gives 10, 11, 12 (``Param.note`` says so); explicit values on an integer field must be integers.

Every grid point is validated by the scenario model (``Scenario.model_validate``) before any work: a value the
model refuses (``checkpoint.interval_steps=0``, a rate whose per-step probability exceeds 1, more slow ranks
than GPUs) is a :class:`GridError` whose one line names the param and the value.
"""

from __future__ import annotations

import itertools
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from simd.quoting import quoted
from simd.scenario import Scenario, errors

# Bounds on the work one sweep asks for (not statistical constants): a param of more points than a plot can
# show apart, or a two-parameter grid beyond this many configurations, is more likely a typo than a plan.
MAX_POINTS_PER_PARAM = 1000
MAX_GRID_POINTS = 10_000
MAX_PARAMS = 2  # a curve or a heat map
# Keys the sweep itself sets: the seeds of each replica and their number.
RESERVED = {"seed": "--seed-base", "replicas": "--replicas or --ci", "name": None, "sweep": None}


class GridError(ValueError):
    """A bad --param: the message is one line that names it."""


@dataclass(frozen=True)
class Param:
    key: str  # dotted path
    kind: str  # "int", "float" or "choice"
    values: tuple  # ints, floats or strings, in grid order
    log: bool = False  # spaced in log (A:B:Nlog): the plot uses a log axis
    note: str = ""  # e.g. that rounding to integers dropped points
    groups: tuple = ()  # a group key's: per value (a scenario's name) that scenario's group, as a mapping

    def setting(self, value):
        """What a grid point sets the key to: the value, or for a group key the named scenario's group."""
        return self.groups[self.values.index(value)] if self.groups else value

    @property
    def numeric(self) -> bool:
        return self.kind != "choice"


@dataclass(frozen=True)
class Point:
    """One grid point: its parameter values (in --param order) and the scenario variant."""

    values: tuple
    scenario: Scenario


def _bare(annotation):
    """``annotation`` without its ``Annotated[...]`` constraints (pydantic strips them from a field's own
    annotation, not from the members of ``Annotated[int, ...] | None``: servers.warm_standbys)."""
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _unwrap(annotation):
    """The non-None members of ``X | None`` (or of a Union), else ``(annotation,)``, each without its
    ``Annotated`` constraints."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(_bare(a) for a in typing.get_args(annotation) if a is not type(None))
    return (_bare(annotation),)


def field_kind(key: str) -> tuple[str, tuple]:
    """(kind, choices) of a dotted scenario key: ("int", ()), ("float", ()) or ("choice", names)."""
    if not re.fullmatch(r"[a-z_]+(\.[a-z_]+)*", key):
        # (the key quoted: it is what the user typed, a terminal escape included)
        raise GridError(f"--param {quoted(key)}: a key is a dotted path of scenario fields, e.g. "
                        "checkpoint.interval_steps")
    parts = key.split(".")
    if parts[0] in RESERVED:
        by = RESERVED[parts[0]]
        raise GridError(f"--param {key}: not a sweep parameter" + (f" (the sweep sets it: {by})" if by else ""))
    # the models a part may belong to: several under a union of groups (servers.lifetime: one per distribution)
    models: list[type[BaseModel]] = [Scenario]
    for i, part in enumerate(parts):
        where = ".".join(parts[:i]) or "a scenario"
        field = next((m.model_fields[part] for m in models if part in m.model_fields), None)
        if field is None:
            known = ", ".join(dict.fromkeys(n for m in models for n in m.model_fields if n not in RESERVED))
            raise GridError(f"--param {key}: unknown key {part!r} in {where} (known: {known})")
        members = _unwrap(field.annotation)
        groups = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        if i == len(parts) - 2 and len(members) == 1 and typing.get_origin(members[0]) is dict:
            # a mapping's entry (recovery.migration.causes.gpu): its values' kind; the model checks the name
            values = _unwrap(typing.get_args(members[0])[1])
            if len(values) == 1 and values[0] in (int, float):
                return values[0].__name__, ()
        if i < len(parts) - 1:
            if not groups:
                raise GridError(f"--param {key}: {'.'.join(parts[:i + 1])} is a value, not a group of keys")
            models = groups
            continue
        numbers = [m for m in members if m in (int, float)]
        if len(numbers) == 1 and len(members) == len(numbers) + len(groups):
            # a number, or a number or a group (recovery.phases.stop: seconds or a law): swept as the number
            return numbers[0].__name__, ()
        if len(members) == 1 and typing.get_origin(members[0]) is typing.Literal:
            return "choice", tuple(typing.get_args(members[0]))
        if groups:  # its numeric keys, which a number given for the group is probably meant for
            return "group", tuple(dict.fromkeys(
                f"{key}.{n}" for m in groups for n, f in m.model_fields.items()
                if n not in RESERVED and set(_unwrap(f.annotation)) & {int, float}))
        raise GridError(f"--param {key}: not a numeric or categorical key (a mapping)")
    raise AssertionError("unreachable")


def _number(key: str, text: str, kind: str) -> int | float:
    try:
        x = float(text)
    except ValueError:
        raise GridError(f"--param {key}: {text!r} is not a number") from None
    if not math.isfinite(x):
        raise GridError(f"--param {key}: {text!r} is not a finite number")
    if kind == "int":
        if not x.is_integer():
            raise GridError(f"--param {key}: {text!r} is not an integer ({key} is an integer key)")
        return int(x)
    return x


_RANGE = re.compile(r"(?P<a>[^:]+):(?P<b>[^:]+):(?P<n>\d+)(?P<log>log)?")


def parse_param(text: str, scenarios: Mapping[str, Scenario] | None = None) -> Param:
    """``KEY=SPEC`` -> a :class:`Param` (see the module docstring), or GridError. ``scenarios``: the file's, by
    name, which a group key's values name."""
    import numpy as np

    key, eq, spec = text.partition("=")
    key, spec = key.strip(), spec.strip()
    if not eq or not key or not spec:
        raise GridError(f"--param {text!r}: expected KEY=A:B:N, KEY=A:B:Nlog or KEY=a,b,c")
    kind, choices = field_kind(key)
    if kind == "group":
        return _group_param(key, spec, scenarios or {}, choices)
    m = _RANGE.fullmatch(spec)
    if m:
        if kind == "choice":
            raise GridError(f"--param {key}: a categorical key takes a list of {', '.join(choices)}, not a range")
        a, b, n = _number(key, m["a"], "float"), _number(key, m["b"], "float"), int(m["n"])
        log = m["log"] is not None
        if not a < b:
            raise GridError(f"--param {key}: A:B:N needs A < B, got {spec!r}")
        if not 2 <= n <= MAX_POINTS_PER_PARAM:
            raise GridError(f"--param {key}: N must be 2 to {MAX_POINTS_PER_PARAM}, got {n}")
        if log and a <= 0:
            raise GridError(f"--param {key}: log spacing needs 0 < A, got {spec!r}")
        grid = np.geomspace(a, b, n) if log else np.linspace(a, b, n)
        if kind == "float":
            return Param(key, kind, tuple(float(x) for x in grid), log)
        values = tuple(dict.fromkeys(int(x) for x in np.rint(grid)))
        note = "" if len(values) == n else f"{key}={spec}: {len(values)} distinct integers of the {n} points"
        return Param(key, kind, values, log, note)
    if ":" in spec:
        raise GridError(f"--param {key}: a range is A:B:N or A:B:Nlog with N a whole number, got {spec!r}")
    items = _listed(key, spec)
    if kind == "choice":
        for t in items:
            if t not in choices:
                raise GridError(f"--param {key}: {t!r} is not one of {', '.join(choices)}")
        values = tuple(items)
    else:
        values = tuple(sorted(_number(key, t, kind) for t in items))
    if len(set(values)) != len(values):
        raise GridError(f"--param {key}: duplicate values in {spec!r}")
    return Param(key, kind, values)


def _listed(key: str, spec: str) -> list[str]:
    """``a,b,c``'s values, stripped: none empty, at most MAX_POINTS_PER_PARAM of them (GridError otherwise)."""
    items = [t.strip() for t in spec.split(",")]
    if any(not t for t in items):
        raise GridError(f"--param {key}: empty value in {spec!r}")
    if len(items) > MAX_POINTS_PER_PARAM:
        raise GridError(f"--param {key}: at most {MAX_POINTS_PER_PARAM} values, got {len(items)}")
    return items


def _group_param(key: str, spec: str, scenarios: Mapping[str, Scenario], numeric: tuple[str, ...] = ()) -> Param:
    """A group key (``recovery``, ``servers``, ...) over names of the file's scenarios: each point takes that
    scenario's group (a recovery path as a categorical parameter: ``recovery=llama3-16k-cold,llama3-16k-hot``).
    ``numeric``: the group's numeric keys, named when a value is not a scenario."""
    items = _listed(key, spec)
    if len(set(items)) != len(items):
        raise GridError(f"--param {key}: duplicate values in {spec!r}")
    for t in items:
        if t not in scenarios:
            shown = t if len(t) <= 48 and t.isprintable() else t[:48].encode("unicode_escape").decode() + "..."
            hint = f"; its numeric keys: {', '.join(numeric)}" if numeric else ""
            raise GridError(f"--param {key}: {shown!r} is not a scenario of the file ({key} is a group of keys: "
                            f"its values name the scenarios whose {key} each point takes{hint})")
    groups = []
    for t in items:
        value = scenarios[t].model_dump(exclude_unset=True)
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        groups.append(value)
    return Param(key, "choice", tuple(items), groups=tuple(groups))


def parse_params(texts: list[str], scenarios: Mapping[str, Scenario] | None = None) -> list[Param]:
    params = [parse_param(t, scenarios) for t in texts]
    if not 1 <= len(params) <= MAX_PARAMS:
        raise GridError(f"--param: give one or two (a curve or a heat map), got {len(params)}")
    keys = [p.key for p in params]
    if len(set(keys)) != len(keys):
        raise GridError(f"--param {keys[0]}: given twice")
    if math.prod(len(p.values) for p in params) > MAX_GRID_POINTS:
        raise GridError(f"--param: at most {MAX_GRID_POINTS} grid points, got "
                        + " x ".join(str(len(p.values)) for p in params))
    return params


def _set(data: dict, parts: list[str], value) -> None:
    for part in parts[:-1]:
        if data.get(part) is None:  # an absent optional group (stragglers: null): its defaults apply
            data[part] = {}
        data = data[part]
    data[parts[-1]] = value


def _created(base: Scenario, key: str) -> str | None:
    """The group ``key`` is in (dotted), when a value of it creates that group in ``base`` (the scenario leaves it
    out, or one around it); else None."""
    data, parts = base.model_dump(exclude_unset=True), key.split(".")
    for part in parts[:-1]:
        data = data.get(part) if isinstance(data, dict) else None
        if data is None:
            return ".".join(parts[:-1])
    return None


def _unset(data: dict, parts: list[str]) -> None:
    for part in parts[:-1]:
        data = data.get(part)
        if not isinstance(data, dict):
            return
    data.pop(parts[-1], None)


def _error_line(exc: ValidationError) -> str:
    """The first problem, phrased as the scenario file's errors are (simd.scenario.errors)."""
    return errors.phrase(exc.errors(include_url=False)[0])


def variant(base: Scenario, settings: dict[str, object]) -> Scenario:
    """``base`` with each dotted key set to its value, validated by the scenario model (ValidationError)."""
    data = base.model_dump(exclude_unset=True)  # the keys given: a default dumped would count as given (a
    # restart_seconds beside recovery.phases)
    for key, value in settings.items():
        if value is None:  # a group key's named scenario left the group out: the point leaves it out too (its
            _unset(data, key.split("."))  # defaults, as in that scenario), not a null the model refuses
        else:
            _set(data, key.split("."), value)
    return Scenario.model_validate(data)


def grid(base: Scenario, params: list[Param]) -> list[Point]:
    """Every combination of the params' values (the first param varies slowest), each validated."""
    points = []
    for values in itertools.product(*(p.values for p in params)):
        settings = dict(zip((p.key for p in params), values, strict=True))
        try:
            points.append(Point(values, variant(base, {p.key: p.setting(v) for p, v in zip(params, values,
                                                                                          strict=True)})))
        except ValidationError as exc:
            shown = ", ".join(f"{k}={v}" for k, v in settings.items())
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(x) for x in first["loc"])
            created = [g for g in (_created(base, p.key) for p in params)
                       if g and first["type"] == "missing" and where.startswith(g + ".")]
            hint = (f" (scenario {base.name} has no {created[0]}: the sweep made it from the swept key alone; give "
                    "the group in the scenario file, then sweep its key)") if created else ""
            raise GridError(f"--param {shown}: scenario {base.name} refuses it: {_error_line(exc)}{hint}") from None
    return points
