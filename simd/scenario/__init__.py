"""The scenario file: its schema, its error lines, the bounded YAML reader, the translation to the engine's
JobSpec, and the embedded default configuration (default.yaml). What the rest of simd imports is here."""

from simd.scenario.errors import ConfigError
from simd.scenario.load import (
    default_config,
    default_config_text,
    load_config,
    parse_config,
    parse_drill_request,
    parse_value,
)
from simd.scenario.schema import Config, Drill, DrillEffects, DrillRequest, Scenario, ScenarioBody
from simd.scenario.summary import drill_summary, summary

__all__ = ["Config", "ConfigError", "Drill", "DrillEffects", "DrillRequest", "Scenario", "ScenarioBody",
           "default_config", "default_config_text", "load_config", "parse_config", "parse_drill_request",
           "parse_value", "summary", "drill_summary"]
