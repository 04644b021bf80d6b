"""The scenario-file reader: YAML 1.2 scalars and bounded work on hostile files (one line, fast, small)."""

import resource
import time

import pytest

from simd.scenario import ConfigError, load_config, yamlfile
from simd.scenario.yamlfile import YamlError, loads


@pytest.mark.parametrize("text,value", [
    ("1e-5", 1e-5), ("-2E+3", -2000.0), ("1.5", 1.5), (".5", 0.5), ("7.", 7.0), ("+.inf", float("inf")),
    ("-.inf", float("-inf")), ("12", 12), ("-3", -3), ("0o17", 15), ("0x1F", 31), ("010", 10),
    ("true", True), ("False", False), ("null", None), ("~", None), ("", None),
    # YAML 1.1 reads these as booleans, numbers or a date; YAML 1.2 core (and simd) as text
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("1_000", "1_000"), ("0b101", "0b101"), ("2026-12-01", "2026-12-01"),
    ("1:20", "1:20"),
])
def test_plain_scalars_follow_the_yaml_1_2_core_schema(text, value):
    assert loads(f"v: {text}") == {"v": value}


def test_nan_is_a_float():
    v = loads("v: .nan")["v"]
    assert isinstance(v, float) and v != v


def test_duplicate_keys_are_refused_with_both_positions():
    with pytest.raises(YamlError, match=r"^key 'seed' given twice in one mapping at line 3, column 3 "
                                        r"\(first at line 2, column 3\)$"):
        loads("a:\n  seed: 1\n  seed: 2\n")


def bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def bounded(fn):
    """Run fn, return (its exception, seconds, peak RSS growth in MB)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    with pytest.raises(Exception) as exc:
        fn()
    return exc.value, time.perf_counter() - t, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


def test_billion_laughs_is_refused_at_once():
    err, seconds, mb = bounded(lambda: loads(bomb(9)))
    assert isinstance(err, YamlError) and str(err).startswith("more than 100000 values (aliases expanded)")
    assert "\n" not in str(err) and seconds < 1.0 and mb < 100


def test_a_few_aliases_are_fine():
    assert loads(bomb(2))["a2"][0][0] == ["lol"] * 9
    assert len(loads(bomb(3))["a3"]) == 9


def test_deep_nesting_is_refused_without_recursion_error():
    err, seconds, mb = bounded(lambda: loads("[" * 10_000 + "]" * 10_000))
    assert isinstance(err, YamlError) and str(err).startswith("nested deeper than 32 levels at line 1")
    assert seconds < 1.0
    nested = loads("[" * 31 + "]" * 31)
    for _ in range(30):
        (nested,) = nested
    assert nested == []


def test_size_is_bounded_when_reading(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * (200 << 20) + "\n")  # a 200 MB comment
    for path, message in ((big, "larger than 1048576 bytes (1 MiB), the limit of a scenario file"),
                          ("/dev/zero", "cannot read: not a regular file (a character device)")):
        err, seconds, mb = bounded(lambda p=path: load_config(p))
        assert isinstance(err, ConfigError)
        assert err.errors == [f"{path}: {message}"]
        assert seconds < 1.0 and mb < 100


def test_syntax_errors_are_one_line_with_the_position():
    with pytest.raises(YamlError, match=r"^not valid YAML at line 2, column 1: did not find expected node content"):
        loads("scenarios: [\n")
    assert yamlfile.MAX_BYTES == 1 << 20
