"""Reading a scenario file: YAML 1.2 scalars, and bounds on what a file can make the loader do.

PyYAML implements YAML 1.1, where ``1e-5`` is a string (a float needs a dot) and ``no``/``on`` are booleans.
Every other tool a user meets (YAML 1.2: ruamel.yaml, yq, Go's yaml.v3, Kubernetes) reads ``1e-5`` as a
number, so :func:`loads` resolves plain scalars with the YAML 1.2 *core schema* (yaml.org/spec/1.2.2,
section 10.3.2): null, true/false, decimal/octal (0o)/hex (0x) integers, floats with or without a dot,
.inf and .nan. Anything else stays a string. Explicit tags other than the core ones (``!!python/...``,
``!!binary``, ``!!timestamp``, local ``!tags``) are refused; ``<<`` is an ordinary key (merge keys are YAML 1.1).

The value is built straight from the parser's events (libyaml's when PyYAML has it), without PyYAML's node
graph and constructor: that, and counting values as they are built, is what bounds the time of any file
under the size limit (a 760 KB file of 10,000 drills took 8.8 s through PyYAML's pure-Python loader).

A scenario file is a few kilobytes; the loader refuses what no scenario file needs, each with one line that
names the limit, in bounded time and memory (a list of hostile files it was tried with):

- more than :data:`MAX_BYTES` bytes (a 200 MB comment, ``/dev/zero``): the read stops at the limit;
- nesting deeper than :data:`MAX_DEPTH` (10,000 nested lists otherwise exhaust Python's recursion);
- more than :data:`MAX_EXPANDED_NODES` values, aliases expanded ("billion laughs": 9 levels of 10
  aliases expand to 10^9 nodes from a few hundred bytes), counted as they are built;
- integers of more than 4300 digits (Python's int() limit), undefined or recursive aliases, two documents;
- a key given twice in one mapping (YAML forbids it; PyYAML silently keeps the last one).
"""

from __future__ import annotations

import errno
import re
from pathlib import Path

import yaml
from yaml import events

from simd import regularfile
from simd.quoting import quoted

MAX_BYTES = 1 << 20  # 1 MiB: the embedded default configuration is ~7 KB
MAX_DEPTH = 32  # a scenario file nests 4-5 levels (scenarios[i].stragglers.mitigation.detect_after_steps)
MAX_EXPANDED_NODES = 100_000  # far above any real file (the default has ~700 nodes), far below a bomb


class YamlError(ValueError):
    """The text is not a scenario file's YAML; the message is one line (with the position when known)."""


class _Open:
    """A collection being built: its value, its start event, the node count when it began, and for a mapping
    the key waiting for its value and where each key was first given."""

    __slots__ = ("value", "event", "start", "key", "seen")

    def __init__(self, value, event, start: int):
        self.value, self.event, self.start = value, event, start
        self.key, self.seen = _NO_KEY, {}


_NO_KEY = object()


def _events(text: str):
    """The parser's events, one at a time: libyaml's (C, in PyYAML's wheels) when present, the same events as
    PyYAML's pure-Python scanner and parser about 10x faster (measured: a 60 KB file's events in 0.07 s
    against 0.99 s), which keeps a 1 MiB file inside the one-second budget; else PyYAML's own."""
    if yaml.__with_libyaml__:
        from yaml.cyaml import CParser

        parser = CParser(text)
        get, dispose = parser.get_event, parser.dispose
    else:  # pragma: no cover (PyYAML built without libyaml)
        loader = yaml.SafeLoader(text)
        get, dispose = loader.get_event, loader.dispose
    try:
        while True:
            ev = get()
            yield ev
            if isinstance(ev, events.StreamEndEvent):
                return
    finally:
        dispose()


def _build(text: str):
    """The document's value from the parser's events, without node objects: plain Python dicts, lists and
    scalars. Counts every value as it is built (an alias counts the whole subtree it stands for), so a bomb
    stops at the budget instead of after its expansion; refuses duplicate keys, deep nesting, unknown tags,
    undefined and recursive aliases and a second document."""
    stack: list[_Open] = []
    anchors: dict[str, tuple[object, int]] = {}  # anchor -> (value, values in its subtree)
    opened: set[str] = set()  # anchors of collections still being built (an alias to one is recursive)
    count, root, documents = 0, None, 0
    for ev in _events(text):
        kind = type(ev)
        if kind is events.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise YamlError(f"more than one document{_at(ev.start_mark)}: a scenario file is one document")
            continue
        if kind in (events.StreamStartEvent, events.StreamEndEvent, events.DocumentEndEvent):
            continue
        if kind in (events.SequenceStartEvent, events.MappingStartEvent, events.ScalarEvent, events.AliasEvent) \
                and len(stack) >= MAX_DEPTH:
            raise YamlError(f"nested deeper than {MAX_DEPTH} levels{_at(ev.start_mark)}")
        if kind is events.SequenceStartEvent or kind is events.MappingStartEvent:
            _collection_tag(ev, "seq" if kind is events.SequenceStartEvent else "map")
            count += 1
            stack.append(_Open([] if kind is events.SequenceStartEvent else {}, ev, count))
            if ev.anchor is not None:
                opened.add(ev.anchor)
            continue
        if kind is events.SequenceEndEvent or kind is events.MappingEndEvent:
            done = stack.pop()
            value, size, anchor = done.value, count - done.start + 1, done.event.anchor
            opened.discard(anchor)
        elif kind is events.ScalarEvent:
            count += 1
            value, size, anchor = _scalar(ev), 1, ev.anchor
        else:  # an alias: the anchored value again, counted again
            if ev.anchor in opened:
                raise YamlError(f"recursive alias {quoted('*' + ev.anchor)}{_at(ev.start_mark)}: an anchor cannot "
                                "contain itself")
            if ev.anchor not in anchors:
                raise YamlError(f"undefined alias {quoted('*' + ev.anchor)}{_at(ev.start_mark)}")
            value, size = anchors[ev.anchor]
            count += size
            anchor = None
        if count > MAX_EXPANDED_NODES:
            raise YamlError(f"more than {MAX_EXPANDED_NODES} values (aliases expanded){_at(ev.start_mark)}: "
                            "a scenario file has a few hundred")
        if anchor is not None:
            anchors[anchor] = (value, size)
        if not stack:
            root = value
        else:
            _add(stack[-1], value, ev)
    return root


def _add(top: _Open, value, ev) -> None:
    if isinstance(top.value, list):
        top.value.append(value)
    elif top.key is _NO_KEY:
        if not _hashable(value):
            raise YamlError(f"a mapping key must be a scalar{_at(ev.start_mark)}")
        if value in top.seen:
            raise YamlError(f"key {quoted(value)} given twice in one mapping{_at(ev.start_mark)} "
                            f"(first{_at(top.seen[value])})")
        top.key, top.seen[value] = value, ev.start_mark
    else:
        top.value[top.key] = value
        top.key = _NO_KEY


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _at(mark) -> str:
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


# YAML 1.2 core schema (yaml.org/spec/1.2.2/#1032-tag-resolution): the tags a plain scalar resolves to
_CORE = [
    ("null", re.compile(r"^(?:~|null|Null|NULL|)$")),
    ("bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")),
    ("int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")),
    ("float", re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                         r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")),
]
_TAG = "tag:yaml.org,2002:"


def _scalar(ev: events.ScalarEvent):
    """A scalar's value: a plain one resolved by the core schema, a quoted one (or ``!``) a string, an
    explicit core tag (``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``) as it says."""
    text, tag = ev.value, ev.tag
    if tag is None or tag == "!":
        if tag == "!" or not ev.implicit[0]:  # quoted, or the non-specific tag: text
            return text
        tag = next((name for name, pattern in _CORE if pattern.match(text)), "str")
    elif tag.startswith(_TAG) and tag[len(_TAG):] in _CONSTRUCT:
        tag = tag[len(_TAG):]
    else:
        raise YamlError(f"unsupported tag {quoted(tag)}{_at(ev.start_mark)}: a scenario file uses plain values")
    try:
        return _CONSTRUCT[tag](text)
    except ValueError:
        raise YamlError(f"{quoted(text)} is not a valid !!{tag}{_at(ev.start_mark)}") from None


def _collection_tag(ev, kind: str) -> None:
    if ev.tag is not None and ev.tag not in ("!", _TAG + kind):
        raise YamlError(f"unsupported tag {quoted(ev.tag)}{_at(ev.start_mark)}: a scenario file uses plain values")


def _int(text: str) -> int:
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # YAML 1.2: a leading 0 is decimal (1.1 read 010 as octal 8); ValueError past 4300 digits


def _float(text: str) -> float:
    low = text.lower()
    if low.endswith(".inf"):
        return float("-inf") if low.startswith("-") else float("inf")
    if low == ".nan":
        return float("nan")
    return float(low)


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


def _null(text: str) -> None:
    if text not in ("", "~", "null", "Null", "NULL"):
        raise ValueError(text)


_CONSTRUCT = {"str": str, "int": _int, "float": _float, "bool": _bool, "null": _null}


def loads(text: str):
    """Parse one YAML document; YamlError (one line) for bad syntax or a refused construct."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise YamlError("not valid text: it contains lone surrogate code points") from None
    if size > MAX_BYTES:
        raise YamlError(f"larger than {MAX_BYTES} bytes (1 MiB), the limit of a scenario file")
    try:
        return _build(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if problem == "exceeded maximum nesting depth":  # libyaml's own limit (1000) hit while scanning ahead
            raise YamlError(f"nested deeper than {MAX_DEPTH} levels{_at(mark)}") from None
        raise YamlError(f"not valid YAML{_at(mark)}: {problem}") from None


def read_text(path: str | Path) -> str:
    """The file's text: a regular file (simd.regularfile: a FIFO or a device is refused without blocking) of
    at most MAX_BYTES. OSError and UnicodeDecodeError propagate; YamlError when the file is too large."""
    try:
        raw = regularfile.read(path, MAX_BYTES)
    except regularfile.Refused as exc:
        if exc.errno == errno.EFBIG:
            raise YamlError(f"larger than {MAX_BYTES} bytes (1 MiB), the limit of a scenario file") from None
        raise
    return raw.decode("utf-8")
