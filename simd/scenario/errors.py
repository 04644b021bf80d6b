"""A scenario file's problems as readable lines: ``<field path>: <what is wrong>, got <value>`` (docs/design.md 3.8)."""

from __future__ import annotations

from pydantic import ValidationError

from simd.quoting import bounded, quoted


class ConfigError(Exception):
    """The scenario file is invalid; ``errors`` holds one readable line per problem (each printable and bounded:
    simd.quoting)."""

    def __init__(self, errors: list[str]):
        errors = [bounded(e) for e in errors]
        super().__init__("\n".join(errors))
        self.errors = errors


_PHRASES = {
    "greater_than": "must be > {gt}",
    "greater_than_equal": "must be >= {ge}",
    "less_than": "must be < {lt}",
    "less_than_equal": "must be <= {le}",
    "extra_forbidden": "unknown key",
    "missing": "required key is missing",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "model_type": "must be a mapping",
    "dict_type": "must be a mapping",
    "string_pattern_mismatch": "must match {pattern}",
    "too_short": "must have at least {min_length} item(s)",
    "string_too_long": "must be at most {max_length} characters",
    "finite_number": "must be a finite number",
    "float_parsing": "must be a number",
    "int_parsing": "must be an integer",
    "too_long": "must have at most {max_length} item(s)",
    "bool_type": "must be true or false",
    "union_tag_invalid": "{discriminator} must be one of {expected_tags}",
    "union_tag_not_found": "needs the key {discriminator}",
}


def field_path(loc: tuple) -> str:
    """pydantic's location as the file spells it: ``scenarios[0].failures.hard_per_gpu_hour``."""
    out = ""
    for part in loc:
        if isinstance(part, str) and part.startswith("="):  # a union's form (schema.py's tags): not a key
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def phrase(err: dict) -> str:
    """One pydantic error as one line: ``<field path>: <what is wrong>, got <value>``."""
    path = field_path(err["loc"])
    kind = err["type"]
    if kind == "value_error":  # our own validators: the message already names its field
        msg = str(err["ctx"]["error"]) if "ctx" in err else err["msg"]
        return msg if msg.startswith(("scenarios", "sweeps[", "drills[")) or not path else f"{path}: {msg}"
    template = _PHRASES.get(kind)
    ctx = {k: (f"{v:g}" if isinstance(v, float) else v) for k, v in err.get("ctx", {}).items()}
    text = template.format(**ctx) if template else err["msg"][0].lower() + err["msg"][1:]
    where = f"{path}: " if path else ""
    if kind in ("missing", "extra_forbidden"):  # (an unknown key is named, its value never shown: it may be anything)
        return f"{where}{text}"
    if kind == "too_long" and isinstance(err["input"], list | dict):  # the count says it; the items do not
        return f"{where}{text}, got {len(err['input'])}"
    return f"{where}{text}, got {quoted(err['input'])}"


def one_line(exc: ValidationError) -> str:
    return "; ".join(phrase(e) for e in exc.errors(include_url=False))
