"""docs/scenario-file.md, generated: every key of the scenario file from the schema (simd.scenario.schema and
its bounded types), the prose around the tables kept here.

    .venv/bin/python -m simd.scenario.docs --write    # rewrite docs/scenario-file.md
    .venv/bin/python -m simd.scenario.docs            # print it

A key's type, range and default come from pydantic's JSON schema of the models, its meaning from the
docstring under the field; tests/scenario/test_file_docs.py checks that the committed file is what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from simd import generated
from simd.scenario.schema import Config

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenario-file.md"

INTRO = """\
<!-- Generated from simd/scenario/schema.py and simd/scenario/docs.py: edit those, then run
     `.venv/bin/python -m simd.scenario.docs --write`. -->
# The scenario file

One YAML file describes what simd simulates: the jobs (scenarios), the sweeps that expand into scenarios, the
drills that change scenarios for a stretch of simulated time, and how fast the daemon runs. `simd config
--default` prints the embedded one (`simd/scenario/default.yaml`); `simd check-config FILE` validates a file.

It is validated before anything runs: every problem is reported on its own line with its field path
(`scenarios[2].checkpoint.interval_steps: must be > 0, got -5`), exit code 2; unknown keys are errors. Numbers
are read as YAML 1.2, as every other tool you use reads them: `1e-5`, `2E+3` and `0x10` are numbers,
`yes`/`no`/`on` are text (YAML 1.1 made them booleans). A key given twice in one mapping is an error. A file
is refused, with one line, when it is larger than 1 MiB, nests deeper than 32 levels, expands aliases to more
than 100,000 values, or has more than 1000 scenarios, 100 sweeps, 100 drills, 2000 scenarios and sweep points
in all, or 50,000 replicas in all (what one daemon holds in memory: `python bench/daemon.py --replica-memory`
measures a replica). The file, like every file simd reads (a token file, the state file), must be a regular
file: a FIFO, a device or a directory is refused at once, never waited on. Every number has a range (below):
they keep every quantity the engine forms in integer microseconds finite; no real job comes near them.

```yaml
speedup: 600              # simulated seconds per wall second in the daemon
tick_seconds: 1.0         # wall seconds between ticks
scenarios:
  - name: optimized
    seed: 8
    n_gpus: 1024
    step_seconds: 60
    target_steps: 3000    # steps per job; the daemon starts the next job when one completes
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
    checkpoint: {interval_steps: 25, seconds: 300}
    validation: {interval_steps: 25, seconds: 20}
    restart_seconds: 60
sweeps:                   # the same job at several checkpoint intervals: scenarios <name>-<interval>
  - name: interval
    checkpoint_intervals: [10, 20, 40, 80, 160]
    scenario: {...}       # a scenario without its name
drills:
  - name: failure-storm
    description: Hard failures 10x the calibrated rate
    duration_seconds: 540000
    effects: {hard_rate_factor: 10}
```

A warning (not an error) is printed when validation does not divide the checkpoint interval: then SDCs can
be baked into checkpoints (seed 000's note claims `validation_interval <= ckpt_interval` suffices; it does
not: validating every 40 steps and checkpointing every 50 bakes in about 2 SDCs per 3000-step run). Each
warning ends with its code (`sdc-baked`, `sdc-baked-hyper` for hyper checkpoints between validations,
`sdc-baked-tier` for a memory tier's saves). So is one for a peer tier without a servers block, which nothing
loses (an interruption is then one failure: `peer-no-servers`). A scenario that shows the risk on purpose lists
its code in `acknowledge`, and it is logged at info level instead (`check-config` prints it as a note). What each
mechanism does is in [model.md](model.md).

Every key, section by section. "absent" means the key may be left out and its mechanism is off.
"""

_TYPES = {"integer": "integer", "number": "number", "string": "text", "boolean": "true or false"}


def _num(x) -> str:
    """A bound or default as people write it: 600, 0.01, 10^9, 3.6x10^6, 2^63."""
    if not isinstance(x, int | float) or isinstance(x, bool):
        return str(x)
    if x == 2**63:
        return "2^63"
    if abs(x) >= 10**6:
        mantissa, exponent = f"{x:e}".split("e")
        m = float(mantissa)
        return f"10^{int(exponent)}" if m == 1 else f"{m:g}x10^{int(exponent)}"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return f"{x:g}" if isinstance(x, float) else str(x)


def _bounds(s: dict) -> str:
    parts = []
    for key, sign in (("exclusiveMinimum", ">"), ("minimum", ">="), ("exclusiveMaximum", "<"), ("maximum", "<=")):
        if key in s:
            parts.append(f"{sign} {_num(s[key])}")
    if "maxLength" in s:
        parts.append(f"at most {s['maxLength']} characters")
    if "pattern" in s:
        parts.append(f"matching `{s['pattern']}`")
    return ", ".join(parts)


def _ref(ref: str, paths: dict[str, str]) -> str:
    name = ref.rsplit("/", 1)[1]
    path = paths.get(name, name)
    return f"[`{path}`](#{_anchor(path)})"


def _anchor(path: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return "".join(c for c in path.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


def _type(s: dict, paths: dict[str, str]) -> str:
    """A schema fragment as a reader of the file would say it."""
    if "$ref" in s:
        return "a mapping: " + _ref(s["$ref"], paths)
    if "anyOf" in s:
        kinds = [x for x in s["anyOf"] if x.get("type") != "null"]
        return " or ".join(_type(x, paths) for x in kinds)
    if "oneOf" in s and all("$ref" in x for x in s["oneOf"]):  # a key's forms, each a mapping (told by a tag)
        return "a mapping, one of: " + ", ".join(_ref(x["$ref"], paths) for x in s["oneOf"])
    if "oneOf" in s:  # a value or a mapping (told by its kind)
        return " or ".join(_type(x, paths) for x in s["oneOf"])
    if "enum" in s:
        return "one of " + ", ".join(f"`{v}`" for v in s["enum"])
    if "const" in s:
        return f"`{s['const']}`"
    kind = s.get("type")
    if kind == "array":
        items = _type(s.get("items", {}), paths)
        size = [f"at least {s['minItems']}" if "minItems" in s else "", f"at most {s['maxItems']}" if "maxItems" in s
                else ""]
        size = " and ".join(x for x in size if x)
        return f"a list ({size}) of {items}" if size else f"a list of {items}"
    if kind == "object":
        (pattern, values), = (s.get("patternProperties") or {"": s.get("additionalProperties", {})}).items()
        names = f"names matching `{pattern}`" if pattern else "names"
        return f"a mapping of {names} to {_type(values, paths)}"
    text = _TYPES.get(kind, kind or "any value")
    bounds = _bounds(s)
    return f"{text}, {bounds}" if bounds else text


def _default(prop: dict, required: bool) -> str:
    if required:
        return "required"
    if "default" not in prop:
        return ""
    d = prop["default"]
    if d is None:
        return "absent"
    if d == [] or d == {}:
        return "none"
    if isinstance(d, dict):
        return ", ".join(f"{k}: {_num(v)}" for k, v in d.items())
    if isinstance(d, list):
        return "[" + ", ".join(map(str, d)) + "]"
    if isinstance(d, bool):
        return str(d).lower()
    return _num(d) if isinstance(d, int | float) else f"`{d}`"


def _paths(schema: dict) -> dict[str, str]:
    """Each model's key path in the file (the first found, breadth first from the top). The forms of one key
    (a discriminated union: the latency's distributions) are told apart by their tag: ``latency
    (distribution: lognormal)``."""
    defs = schema["$defs"]
    paths: dict[str, str] = {}
    queue = [("", schema)]
    while queue:
        prefix, model = queue.pop(0)
        for key, prop in model.get("properties", {}).items():
            forms = [(ref.rsplit("/", 1)[1], suffix) for ref, suffix in _refs(prop)]
            for name, suffix in forms:
                if name not in paths:
                    path = f"{prefix}{key}{suffix}"
                    if len(forms) > 1:
                        tag = next((k, v["const"]) for k, v in defs[name]["properties"].items() if "const" in v)
                        path += f" ({tag[0]}: {tag[1]})"
                    paths[name] = path
                    queue.append((path.split(" (")[0] + ".", defs[name]))
    return paths


def _refs(prop: dict, suffix: str = ""):
    """(ref, what its key path adds: ``[]`` inside a list, ``.NAME`` as a mapping's value) of every model a
    property can hold."""
    if "$ref" in prop:
        yield prop["$ref"], suffix
    for key in ("anyOf", "oneOf"):
        for x in prop.get(key, []):
            yield from _refs(x, suffix)
    if prop.get("type") == "array":
        yield from _refs(prop.get("items", {}), suffix + "[]")
    if prop.get("type") == "object":
        values = next(iter((prop.get("patternProperties") or {}).values()), prop.get("additionalProperties"))
        if isinstance(values, dict):
            yield from _refs(values, suffix + ".NAME")


def _table(model: dict, paths: dict[str, str]) -> str:
    required = set(model.get("required", ()))
    props = model.get("properties", {})
    keys = sorted(props, key=lambda k: k != "name")  # a name first, then the schema's order
    rows = ["| key | type and range | default | meaning |", "|---|---|---|---|"]
    for key in keys:
        prop = props[key]
        cells = [f"`{key}`", _type(prop, paths), _default(prop, key in required),
                 " ".join(prop.get("description", "").split())]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def _same_keys_as(model: dict, shown: dict[str, dict]) -> tuple[str, list[str]] | None:
    """The path of a model already shown whose keys include all of this one's, identically (a scenario and a
    sweep's scenario without its name), and the keys this one lacks."""
    props = model.get("properties", {})
    for path, other in shown.items():
        theirs = other.get("properties", {})
        if props and all(theirs.get(k) == v for k, v in props.items()):
            return path, [k for k in theirs if k not in props]
    return None


def render() -> str:
    schema = Config.model_json_schema()
    paths = _paths(schema)
    parts = [INTRO, "## The top level\n\n" + _table(schema, paths)]
    shown: dict[str, dict] = {}
    for name in sorted(paths, key=lambda n: (paths[n].count("."), paths[n])):
        model = schema["$defs"][name]
        about = " ".join(model.get("description", "").split())
        head = f"## {paths[name]}\n\n" + (about + "\n\n" if about else "")
        same = _same_keys_as(model, shown)
        if same:
            path, missing = same
            parts.append(head + f"The keys of [`{path}`](#{_anchor(path)})"
                         + (", without " + ", ".join(f"`{k}`" for k in missing) if missing else "") + ".\n")
            continue
        shown[paths[name]] = model
        parts.append(head + _table(model, paths))
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    return generated.main(argv, DOC, render, "simd.scenario.docs")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
