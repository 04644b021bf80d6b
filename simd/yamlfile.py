"""Reading a scenario file: YAML 1.2 scalars, and bounds on what a file can make the loader do.

PyYAML implements YAML 1.1, where ``1e-5`` is a string (a float needs a dot) and ``no``/``on`` are booleans.
Every other tool a user meets (YAML 1.2: ruamel.yaml, yq, Go's yaml.v3, Kubernetes) reads ``1e-5`` as a
number, so :class:`Loader` resolves plain scalars with the YAML 1.2 *core schema* (yaml.org/spec/1.2.2,
section 10.3.2): null, true/false, decimal/octal (0o)/hex (0x) integers, floats with or without a dot,
.inf and .nan. Anything else stays a string.

A scenario file is a few kilobytes; the loader refuses what no scenario file needs, each with one line that
names the limit, in bounded time and memory (issue 13's list of hostile files):

- more than :data:`MAX_BYTES` bytes (a 200 MB comment, ``/dev/zero``): the read stops at the limit;
- nesting deeper than :data:`MAX_DEPTH` (10,000 nested lists otherwise exhaust Python's recursion);
- aliases whose expansion exceeds :data:`MAX_EXPANDED_NODES` nodes ("billion laughs": 9 levels of 10
  aliases expand to 10^9 nodes from a few hundred bytes);
- a key given twice in one mapping (YAML forbids it; PyYAML silently keeps the last one).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_BYTES = 1 << 20  # 1 MiB: the embedded default configuration is ~7 KB
MAX_DEPTH = 32  # a scenario file nests 4-5 levels (scenarios[i].stragglers.mitigation.detect_after_steps)
MAX_EXPANDED_NODES = 100_000  # far above any real file (the default has ~700 nodes), far below a bomb


class YamlError(ValueError):
    """The text is not a scenario file's YAML; the message is one line (with the position when known)."""


class Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars, duplicate keys refused and bounded nesting/aliases."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        if self._depth > MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise YamlError(f"nested deeper than {MAX_DEPTH} levels{_at(mark)}")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):
        node = super().compose_document()
        _check_expansion(node)
        return node

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True) if isinstance(key_node, ScalarNode) else None
                if key is not None and _hashable(key):
                    if key in seen:
                        raise YamlError(f"key {_short(key)!r} given twice in one mapping{_at(key_node.start_mark)} "
                                        f"(first{_at(seen[key])})")
                    seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _check_expansion(root: Node | None) -> None:
    """Refuse a document whose tree, with every alias expanded, has more than MAX_EXPANDED_NODES nodes.
    Counted on the node graph with memoization, so the count itself costs one visit per distinct node."""
    if root is None:
        return
    sizes: dict[int, int] = {}

    def size(node: Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        sizes[id(node)] = 1  # a recursive alias (a node inside itself) counts once, the construct step refuses it
        if isinstance(node, SequenceNode):
            n = 1 + sum(size(c) for c in node.value)
        elif isinstance(node, MappingNode):
            n = 1 + sum(size(k) + size(v) for k, v in node.value)
        else:
            n = 1
        sizes[id(node)] = n
        if n > MAX_EXPANDED_NODES:
            raise YamlError(f"more than {MAX_EXPANDED_NODES} values (aliases expanded){_at(node.start_mark)}: "
                            "a scenario file has a few hundred")
        return n

    size(root)


def _at(mark) -> str:
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _short(value, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


# YAML 1.2 core schema (yaml.org/spec/1.2.2/#1032-tag-resolution), replacing PyYAML's YAML 1.1 resolvers
Loader.yaml_implicit_resolvers = {}
_CORE = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
     r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", list("-+0123456789.")),
]
for _tag, _pattern, _first in _CORE:
    Loader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _construct_int(loader: Loader, node: ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # YAML 1.2: a leading 0 is decimal (1.1 read 010 as octal 8)


def _construct_float(loader: Loader, node: ScalarNode) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


def _construct_bool(loader: Loader, node: ScalarNode) -> bool:
    return loader.construct_scalar(node).lower() == "true"


Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def loads(text: str):
    """Parse one YAML document; YamlError (one line) for bad syntax or a refused construct."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise YamlError(f"larger than {MAX_BYTES} bytes (1 MiB), the limit of a scenario file")
    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 (Loader is a SafeLoader)
    except YamlError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(f"not valid YAML{_at(mark)}: {problem}") from None
    except RecursionError:  # a construct beyond MAX_DEPTH cannot get here; kept as the last line of defence
        raise YamlError(f"nested deeper than {MAX_DEPTH} levels") from None


def read_text(path: str | Path) -> str:
    """The file's text, reading at most MAX_BYTES + 1 bytes (``/dev/zero`` or a 200 MB file stop there).
    OSError and UnicodeDecodeError propagate; YamlError when the file is too large."""
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise YamlError(f"larger than {MAX_BYTES} bytes (1 MiB), the limit of a scenario file")
    return raw.decode("utf-8")
