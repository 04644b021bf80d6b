"""The logs people have: a CSV of one row per fault (start, end, server, class in any order, other columns
ignored), its columns named by `--columns`, local times in the zone `--timezone` states; every other file a clear
one-line error (docs/traces.md, "Reading a log")."""

import json
from datetime import timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from support.cli import simd

from simd.traces.log import LogError, parse
from simd.traces.stats import stats

EVENTS = """time,server,event,class
0,a,start,GPU
10,b,start,NIC
10,c,start,GPU
10,a,end,GPU
20,b,end,NIC
40,a,start,GPU
50,a,end,GPU
100,c,end,GPU
"""

# the same four faults, a row each, columns in another order, an extra column, and a row's end empty (c's fault
# ends at 100 in EVENTS; here one more fault of d is still open)
ROWS = """ticket,server,class,end,start
1,a,GPU,10,0
2,b,NIC,20,10
3,c,GPU,100,10
4,a,GPU,50,40
"""


def test_a_row_per_fault_reads_as_the_same_faults_as_start_and_end_events():
    a, b = parse(EVENTS), parse(ROWS)
    assert b.source == "csv" and sorted(a.servers) == sorted(b.servers)
    key = lambda log: sorted((log.servers[f.server], f.start, f.end, f.cls) for f in log.faults)  # noqa: E731
    assert key(a) == key(b) and a.span_seconds == b.span_seconds == 100
    sa, sb = stats(a, 5), stats(b, 5)
    assert (sa.faults, sa.by_class, sa.per_server, sa.repair_days_quantiles) == \
        (sb.faults, sb.by_class, sb.per_server, sb.repair_days_quantiles)


def test_an_empty_end_is_an_open_repair_and_faults_of_a_server_may_overlap():
    log = parse("start,end,server,class\n0,,a,GPU\n5,30,a,GPU\n")
    assert [(f.start, f.end) for f in log.faults] == [(0, None), (5, 30)] and log.span_seconds == 30


def test_columns_are_named_by_flags(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text(ROWS.replace("server", "Node").replace("class", "cause").replace("end", "finish")
                    .replace("start", "begin"))
    r = simd("trace", "stats", str(path), "--servers", "5", "--json",
             "--columns", "start=begin,end=finish,server=node,class=cause")
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert (js["faults"], js["by_class"], js["repairs"]) == (4, {"GPU": 3, "NIC": 1}, 4)
    r = simd("trace", "fit", str(path), "--servers", "5", "--replicas", "0", "--json",
             "--columns", "start=begin,end=finish,server=node,class=cause")
    assert r.returncode == 0 and json.loads(r.stdout)["fit"]["faults"] == 4, r.stderr


def test_local_times_in_a_stated_zone():
    """Berlin's clocks went from 02:00 to 03:00 on 2024-03-31: 01:30 to 03:30 local is one hour, two in UTC."""
    text = "start,end,server,class\n2024-03-31 01:30:00,2024-03-31 03:30:00,a,GPU\n"
    assert parse(text).faults[0].end == 7200  # no zone stated: UTC, as the event CSV
    assert parse(text, timezone=ZoneInfo("Europe/Berlin")).faults[0].end == 3600
    assert parse(text, timezone=timezone(timedelta(hours=5))).faults[0].end == 7200
    # a time with its own offset keeps it: 01:30 UTC is 03:30 in Berlin (summer time)
    text = "start,end,server,class\n2024-03-31T01:30:00+00:00,2024-03-31 03:30:00,a,GPU\n"
    assert parse(text, timezone=ZoneInfo("Europe/Berlin")).faults[0].end == 0
    with pytest.raises(LogError) as exc:
        parse("start,end,server,class\n2024-03-31 02:30:00,2024-03-31 04:00:00,a,GPU\n",
              timezone=ZoneInfo("Europe/Berlin"))
    assert exc.value.errors == ["line 2: start '2024-03-31 02:30:00' is not a time in Europe/Berlin (its clocks "
                                "skipped it)"]


def test_the_timezone_flag(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("start,end,server,class\n2024-03-31 01:30:00,2024-03-31 03:30:00,a,GPU\n")
    r = simd("trace", "stats", str(path), "--json", "--timezone", "Europe/Berlin")
    assert r.returncode == 0 and json.loads(r.stdout)["repair_days_max"] * 86400 == pytest.approx(3600), r.stderr
    r = simd("trace", "stats", str(path), "--json", "--timezone", "+05:30")
    assert r.returncode == 0 and json.loads(r.stdout)["repair_days_max"] * 86400 == pytest.approx(7200), r.stderr


@pytest.mark.parametrize(("text", "flags", "error"), [
    ("server,class,end\na,GPU,10\n", (),
     "line 1: a log of one fault per row needs the columns start, end, server and class: start is missing (--columns "
     "start=NAME names it)"),
    ("start,end,server,class\n10,5,a,GPU\n", (), "line 2: end is before start"),
    ("start,end,server,class\nsoon,5,a,GPU\n", (),
     "line 2: start must be seconds from 0 to 3155760000 (36525 days) or an ISO 8601 date and time, got 'soon'"),
    ("start,end,server,class\n0,5,,GPU\n", (), "line 2: server must be a non-empty name of at most 200 characters"),
    ("start,end,server,class\n0,5,a\n", (), "line 2: 3 fields where the header has 4"),
    ("start,end,server,class\n0,5,a,GPU\n", ("--columns", "start=begin"),
     "line 1: --columns start='begin': the header has no column of that name"),
    ('[{"node_id": "a"}]', ("--columns", "start=begin"),
     "--columns, --timezone and --time-format name a CSV's columns and dates: this is an InfiniteHBD JSON log"),
])
def test_what_cannot_be_read_is_one_line(tmp_path, text, flags, error):
    path = tmp_path / "log.csv"
    path.write_text(text)
    for command in ("stats", "fit"):
        r = simd("trace", command, str(path), "--servers", "4", "--replicas", "0", *flags) if command == "fit" else \
            simd("trace", command, str(path), *flags)
        assert (r.returncode, r.stdout) == (2, "") and r.stderr == f"simd trace {command}: error: {path}: {error}\n"


@pytest.mark.parametrize(("flag", "value", "said"), [
    ("--columns", "start", "expected NAME=COLUMN pairs separated by commas, got 'start'"),
    ("--columns", "begin=start", "'begin' is not a column simd reads (start, end, server, class, level, desc, time, "
                                 "event)"),
    ("--columns", "start=a,start=b", "start is named twice"),
    ("--columns", "start=", "start= names no column"),
    ("--timezone", "Mars/Olympus", "'Mars/Olympus' is not a time zone of the system's tz database (e.g. "
                                   "Europe/Berlin, UTC) nor an offset such as +05:30"),
    pytest.param("--timezone", "x" * 5000, "'xxxx", id="a-zone-of-5000-characters-quoted-cut"),
])
def test_bad_flags_are_one_line_naming_the_flag(tmp_path, flag, value, said):
    path = tmp_path / "log.csv"
    path.write_text(ROWS)
    r = simd("trace", "stats", str(path), flag, value)
    assert r.returncode == 2 and r.stdout == ""
    (line,) = [x for x in r.stderr.splitlines() if "error:" in x]
    assert f"argument {flag}: {said}" in line and len(line) < 400


def test_the_event_csv_maps_its_columns_and_zone_too():
    text = EVENTS.replace("time,server,event,class", "When,host,what,cause")
    log = parse(text, columns={"time": "when", "server": "host", "event": "what", "class": "cause"})
    assert [(f.start, f.end) for f in log.faults] == [(f.start, f.end) for f in parse(EVENTS).faults]
    text = "time,server,event,class\n2024-10-27 02:30:00,a,start,GPU\n2024-10-27 03:30:00,a,end,GPU\n"
    # Berlin's clocks went back from 03:00 to 02:00 on 2024-10-27: 02:30 happens twice, taken the first time
    assert parse(text, timezone=ZoneInfo("Europe/Berlin")).faults[0].end == 7200


def test_a_csv_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    """Spreadsheets save a CSV as UTF-8 with a byte order mark (EF BB BF) before its header: the header's first
    column is still `start` (or `time`), not a missing one."""
    for text in ("start,end,server,class\n0,10,a,GPU\n10,20,b,NIC\n", EVENTS):
        path = tmp_path / "log.csv"
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        plain = tmp_path / "plain.csv"
        plain.write_text(text)
        r, want = simd("trace", "stats", str(path), "--json"), simd("trace", "stats", str(plain), "--json")
        assert (r.returncode, r.stderr) == (0, "") and json.loads(r.stdout) == json.loads(want.stdout)
