"""Fuzzing the scenario-file reader: generated and mutated files never give a traceback.

Whatever the text, ``parse_config`` either returns a Config or raises ConfigError whose every line is a
single line naming what is wrong; ``simd check-config`` (in-process) exits 0 or 2 with one line per error.
"""

from __future__ import annotations

import contextlib
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.scenarios import SMALL

from simd import cli
from simd.scenario import ConfigError, default_config_text, parse_config

DEFAULT = default_config_text()
GOOD = SMALL
FUZZ = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

# YAML's own punctuation and the values that break naive validators
TOKENS = ["{", "}", "[", "]", ":", "- ", ",", "&a", "*a", "!!python/object", "!!binary", "<<: ", "? ", "|", ">",
          "'", '"', "#", "\n", "  ", "\t", "~", "null", ".inf", "-.inf", ".nan", "1e400", "-0", "0x", "1e-9",
          "1.0e+300", "10000000000000000000000000", "true", "yes", "\x00", "\ufeff", "%YAML 1.1\n", "---\n", "..."]


def check(text: str) -> None:
    try:
        parse_config(text)
    except ConfigError as exc:
        assert exc.errors and all(line and "\n" not in line and len(line) < 1000 for line in exc.errors), exc.errors


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text(text):
    check(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS) | st.text(max_size=6), max_size=60))
def test_yaml_shaped_noise(parts):
    check("".join(parts))


@FUZZ
@given(base=st.sampled_from([GOOD, DEFAULT]), data=st.data())
def test_mutated_valid_files(base, data):
    """Delete, duplicate or replace a slice of a valid file, or splice in a token."""
    text = base
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 40)))
        op = data.draw(st.sampled_from(["delete", "duplicate", "token", "swap"]))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "token":
            text = text[:i] + data.draw(st.sampled_from(TOKENS)) + text[j:]
        else:
            text = text[:i] + text[j:j + (j - i)] + text[i:j] + text[j + (j - i):]
    check(text)


@settings(max_examples=examples(40), deadline=None)
@given(st.text(max_size=200))
def test_check_config_exits_0_or_2_with_one_line_per_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "s.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["check-config", str(path)])
    assert code in (0, 2)
    if code == 2:
        lines = err.getvalue().splitlines()
        assert lines and all(line.startswith("simd check-config: error: ") for line in lines)
