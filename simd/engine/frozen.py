"""Building a frozen dataclass from fields already checked, without its ``__init__``.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (and runs ``__post_init__``):
~6 us for a JobSpec or State, which is most of the cost when thousands of replicas' specs, plans and states
are built at once (a lane's start, a drill's boundary, a resume; simd.engine.replicas). Where the fields come
from an object of the same class, or from arrays the engine wrote, the checks have nothing to find; this is
the one place that skips them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


def built(cls: type[T], fields: Mapping | Iterable[tuple[str, object]], **changes) -> T:
    """An instance of ``cls`` with ``fields`` (a mapping or (name, value) pairs; updated by ``changes``) as its
    __init__ would set them, without running it: ``dataclasses.replace(obj, **changes)`` is ``built(type(obj),
    obj.__dict__, **changes)``."""
    out = object.__new__(cls)
    out.__dict__.update(fields, **changes)
    return out
