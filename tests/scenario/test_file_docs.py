"""docs/scenario-file.md is generated from the schema (simd.scenario.docs), and says what a reader needs."""

from __future__ import annotations

import re

from simd.scenario import docs
from simd.scenario.schema import Config

REGENERATE = ".venv/bin/python -m simd.scenario.docs --write"


def test_the_committed_file_is_the_generated_one():
    assert docs.DOC.read_text() == docs.render(), \
        f"docs/scenario-file.md is not what simd/scenario/ generates: run `{REGENERATE}` and commit it"


def _models():
    schema = Config.model_json_schema()
    return {"Config": schema, **schema["$defs"]}


def test_every_key_that_is_not_a_section_of_its_own_says_what_it_means():
    """A new key without a docstring under it fails here: the reference would show it without a meaning."""
    undocumented = [f"{name}.{key}" for name, model in _models().items()
                    for key, prop in model.get("properties", {}).items()
                    if "description" not in prop and "$ref" not in prop
                    and not any("$ref" in x for x in prop.get("anyOf", ())) and "const" not in prop]
    assert undocumented == []


def test_every_key_of_every_section_is_in_a_table_with_its_range():
    text = docs.render()
    paths = docs._paths(Config.model_json_schema())
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert set(paths.values()) <= set(headings)
    rows = {line.split(" | ")[0].strip("| `") for line in text.splitlines() if line.startswith("| `")}
    keys = {key for model in _models().values() for key in model.get("properties", {})}
    assert keys - {"sweep"} <= rows  # `sweep` is set on a sweep's points, not written in a file
    assert "| `interval_steps` | integer, > 0, <= 10^9 | required |" in text
    assert "| `seed` | integer, >= 0, < 2^63 | 0 |" in text
    assert "| `restart_seconds` | number, >= 0, <= 10^6 | 388.2 |" in text


def test_every_link_points_at_a_heading():
    text = docs.render()
    anchors = {docs._anchor(h) for h in re.findall(r"^## (.+)$", text, flags=re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links and links <= anchors
