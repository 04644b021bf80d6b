"""Reading a scenario file (bounded, simd.scenario.yamlfile), the embedded default, and single values checked
against the file's bounded types (command-line flags, the drill API's body). Nothing starts until the whole file
is valid; every problem is one line of an errors.ConfigError.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from simd.scenario import errors, yamlfile
from simd.scenario.schema import Config, DrillRequest

DEFAULT_RESOURCE = "default.yaml"


def parse_value(kind, text: str):
    """A command-line value checked against one of the types above (``parse_value(Speedup, "600")``);
    ValueError with a one-line message naming the constraint (``must be > 0, got '0'``)."""
    try:
        return TypeAdapter(kind).validate_strings(text)
    except ValidationError as exc:
        raise ValueError(errors.one_line(exc)) from None


def parse_drill_request(raw: bytes) -> DrillRequest:
    """The drill API's JSON body (empty: every default); ValueError with a one-line message otherwise."""
    if not raw.strip():
        return DrillRequest()
    try:
        return DrillRequest.model_validate_json(raw)
    except ValidationError as exc:
        errs = exc.errors(include_url=False)
        if any(e["type"] == "json_invalid" for e in errs):
            raise ValueError("the body must be a JSON object, e.g. {\"duration_seconds\": 3600}") from None
        raise ValueError("; ".join(errors.phrase({**e, "loc": ("body", *e["loc"])}) for e in errs)) from None


def parse_config(text: str, source: str = "<config>", folder: str | None = None) -> Config:
    """Parse and validate a scenario file's text; raise ConfigError with every problem. ``folder``: the file's
    folder, against which its relative paths resolve (``servers.replay.log``); None: the working directory."""
    try:
        data = yamlfile.loads(text)
    except yamlfile.YamlError as exc:
        raise errors.ConfigError([f"{source}: {exc}"]) from None
    if not isinstance(data, dict):
        raise errors.ConfigError([f"{source}: the top level must be a mapping with a 'scenarios' list, "
                           f"got {type(data).__name__}"])
    try:
        return Config.model_validate(data, context={"folder": folder})
    except ValidationError as exc:
        raise errors.ConfigError([errors.phrase(e) for e in exc.errors(include_url=False)]) from None


def load_config(path: str | Path) -> Config:
    try:
        text = yamlfile.read_text(path)
    except OSError as exc:
        raise errors.ConfigError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise errors.ConfigError([f"{path}: not UTF-8 text"]) from None
    except yamlfile.YamlError as exc:
        raise errors.ConfigError([f"{path}: {exc}"]) from None
    return parse_config(text, str(path), os.path.dirname(os.path.abspath(path)))


def default_config_text() -> str:
    return resources.files("simd.scenario").joinpath(DEFAULT_RESOURCE).read_text(encoding="utf-8")


def default_config() -> Config:
    return parse_config(default_config_text(), f"<embedded {DEFAULT_RESOURCE}>")
