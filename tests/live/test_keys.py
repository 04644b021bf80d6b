"""Configuration keys (simd.live.keyed): a field the schema gains changes no key while it is at its default, so a
state saved before it existed continues; FIRST_KEYED records fields the schema still declares."""

from __future__ import annotations

import typing

from pydantic import BaseModel, create_model
from support.scenarios import SMALL_YAML

from simd.live import persist
from simd.live.keyed import FIRST_KEYED
from simd.live.lane import scenario_key
from simd.scenario import parse_config
from simd.scenario.schema import Drill, Scenario

DRILL = """drills:
  - name: storm
    description: x10
    duration_seconds: 5000
    effects: {hard_rate_factor: 10}
"""


def _models(root: type) -> dict[str, type]:
    seen: dict[str, type] = {}

    def visit(tp) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel) and tp.__name__ not in seen:
            seen[tp.__name__] = tp
            for f in tp.model_fields.values():
                visit(f.annotation)
        for arg in typing.get_args(tp):
            visit(arg)

    visit(root)
    return seen


def test_first_keyed_names_fields_the_schema_declares():
    """A renamed model or field would silently change the keys of saved states: it must show here."""
    models = {**_models(Scenario), **_models(Drill)}
    for name, keyed_fields in FIRST_KEYED.items():
        assert name in models, f"{name} is no longer a model of the scenario file"
        assert keyed_fields <= set(models[name].model_fields), f"{name} no longer declares {keyed_fields}"


def test_a_new_key_at_its_default_keeps_the_scenario_key():
    s = parse_config(SMALL_YAML).all_scenarios[0]
    grown = create_model("Scenario", __base__=Scenario, new_knob=(float | None, None))
    same = grown.model_validate(s.model_dump())
    assert same.new_knob is None and scenario_key(same) == scenario_key(s)
    assert scenario_key(same.model_copy(update={"new_knob": 2.0})) != scenario_key(s)
    assert scenario_key(s.model_copy(update={"seed": s.seed + 1})) != scenario_key(s)


def test_a_new_key_at_its_default_keeps_the_drill_key():
    (drill,) = parse_config(SMALL_YAML + DRILL).drills
    grown = create_model("Drill", __base__=Drill, new_knob=(float, 1.0))
    same = grown.model_validate(drill.model_dump())
    assert persist._drill_key(same) == persist._drill_key(drill)
    assert persist._drill_key(same.model_copy(update={"new_knob": 2.0})) != persist._drill_key(drill)
    stronger = drill.model_copy(update={"effects": drill.effects.model_copy(update={"hard_rate_factor": 20.0})})
    assert persist._drill_key(stronger) != persist._drill_key(drill)
