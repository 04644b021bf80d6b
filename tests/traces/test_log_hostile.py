"""A fault log as an attack surface: `simd trace stats` of a file that is not a fault log quotes none of it,
refuses the kernel's pseudo-files, refuses every numeric pathology (times out of their documented range, integers
past a float, nesting) with one line and exit 2, and bounds every error line however long the value it is about;
the one helper that quotes a value in an error (simd.quoting) is short, printable and bounded whatever it is given."""

import json

import pytest
from support.cli import simd

from simd.quoting import MAX_LINE, bounded, quoted
from simd.traces.log import MAX_DAYS, LogError, parse

SECRET = "hunter2-s3cret-value"  # lower case, and checked against the lower-cased error: a quote may change case


def event(node, t, kind="fault_start", cls="GPU"):
    return {"node_id": node, "event_time": t, "event_type": kind,
            "fault_type": {"Level": "Hardware Failure", "Class": cls, "Desc": "xid"}}


def stats(path) -> tuple[int, list[str]]:
    r = simd("trace", "stats", str(path))
    assert "Traceback" not in r.stderr
    return r.returncode, r.stderr.splitlines()


@pytest.mark.parametrize("content", [
    f"{SECRET}\n",  # an API token file
    f"user={SECRET},x\nmore,lines,here\n",  # a CSV-ish line, as /proc/self/environ or a key file
    f"root:{SECRET}:19000:0:99999:7:::\n",  # /etc/shadow's first line
])
def test_a_file_that_is_not_a_fault_log_is_never_quoted(tmp_path, content):
    path = tmp_path / "secret"
    path.write_text(content)
    code, lines = stats(path)
    assert code == 2 and lines
    assert all(SECRET not in line.lower() for line in lines), lines
    assert all(str(path) in line for line in lines)


def test_the_kernels_pseudo_files_are_refused():
    """/proc/self/environ passes for a regular file of size 0: it is refused as a pseudo-file, unread (its "first
    line" is the whole environment, PATH among it: quoted in any case, it would show "path=")."""
    code, lines = stats("/proc/self/environ")
    assert code == 2 and len(lines) == 1 and "pseudo-file" in lines[0], lines
    assert "path=" not in lines[0].lower()


DEEP = "[" * 100_000 + "]" * 100_000
PATHOLOGIES = [
    ("json-nested-100000-deep", DEEP, "nested"),
    ("json-nested-in-an-event", json.dumps([event("a", 1)])[:-2] + ', "x": ' + DEEP + "}]", "nested"),
    ("json-400-digit-time", json.dumps([event("a", 10**400)]), "event 1: event_time"),
    ("json-5000-digit-integer", "[" + "7" * 5000 + "]", "digits"),
    ("json-time-1e307-days", json.dumps([event("a", 1e307)]), "event 1: event_time"),
    ("json-time-1e300-days", json.dumps([event("a", 1), event("b", 1e300)]), "event 2: event_time"),
    ("json-time-past-the-range", json.dumps([event("a", MAX_DAYS * 1.5)]), "event 1: event_time"),
    ("csv-400-digit-seconds", "time,server,event,class\n" + "9" * 400 + ",a,start,GPU\n", "line 2: time"),
    ("csv-seconds-past-the-range", f"time,server,event,class\n{MAX_DAYS * 86400 * 2:.0f},a,start,GPU\n",
     "line 2: time"),
    ("csv-iso-spanning-eight-millennia", "time,server,event,class\n0001-01-01T00:00:00,a,start,GPU\n"
                                         "9999-12-31T00:00:00,a,end,GPU\n", "line 3: time"),
]


@pytest.mark.parametrize("text, where", [p[1:] for p in PATHOLOGIES], ids=[p[0] for p in PATHOLOGIES])
def test_numeric_pathologies_are_refused_with_one_line(tmp_path, text, where):
    path = tmp_path / "log"
    path.write_text(text)
    code, lines = stats(path)
    assert code == 2 and len(lines) == 1, lines
    assert f"error: {path}: " in lines[0] and where in lines[0], lines
    assert len(lines[0]) <= MAX_LINE


@pytest.mark.parametrize("text", [
    json.dumps([event("a" * 5_000_000, 1)]),  # a 5 MB node_id
    json.dumps([event("n" * 199, 1, kind="b" * 1_000_000)]),
    json.dumps([event(["x"] * 1_000_000, 1)]),
    "time,server,event,class\n" + "1" * 100_000 + "x,a,start,GPU\n",
    "time,server,event,class\n1,a," + "s" * 100_000 + ",GPU\n",
])
def test_error_lines_are_bounded(tmp_path, text):
    path = tmp_path / "log"
    path.write_text(text)
    code, lines = stats(path)
    assert code == 2 and len(lines) == 1
    assert len(lines[0]) <= MAX_LINE and lines[0].isprintable(), lines[0][:2000]


def test_a_name_with_control_characters_is_quoted_escaped():
    """A name is a short string of any characters: an error quotes it with its control characters escaped, never
    as a second line or a terminal escape sequence."""
    with pytest.raises(LogError) as exc:
        parse(json.dumps([event("a\n\x1b[31mb", 1, kind="fault_end")]))
    (line,) = exc.value.errors
    assert line.isprintable() and "\\n\\x1b[31mb" in line


@pytest.mark.parametrize("value", [
    "x" * 5_000_000, "a\nb\x1b[2J\u202e", 10**400, -(10**4000), 1e308, float("nan"), ["y" * 10_000] * 100_000,
    {str(i): i for i in range(100_000)}, b"\x00" * 10_000, object(), True, None,
])
def test_quoted_is_short_and_printable(value):
    text = quoted(value)
    assert text.isprintable() and len(text) <= 120, text


def test_quoted_keeps_short_values_as_written():
    assert [quoted(v) for v in ("begin", 12, 1.5, [1, 2], 10**30)] == [
        "'begin'", "12", "1.5", "[1, 2]", "1000000000000000000000000000000"]
    assert quoted("x" * 100).startswith("'" + "x" * 40) and "100 characters" in quoted("x" * 100)
    assert "400 digits" in quoted(10**399)


def test_quoted_survives_deep_nesting():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert quoted(deep).startswith("[[")


def test_bounded_cuts_and_escapes_a_line():
    assert bounded("short") == "short"
    long = bounded("a\nb" + "z" * 100_000)
    assert len(long) <= MAX_LINE and long.isprintable() and long.startswith("a\\nb")
