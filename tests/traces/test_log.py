"""Reading a fault log (simd.traces.log) as `simd trace stats` meets it: both formats, ends paired with their
fault's type, open repairs, and every bad input refused with one clear line per problem and exit 2."""

import json

import pytest

from simd.cli import main
from simd.traces.log import LogError, parse


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["trace", "stats", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def event(node, t, kind, cls="GPU", level="Hardware Failure", desc="xid"):
    return {"node_id": node, "event_time": t, "event_type": kind,
            "fault_type": {"Level": level, "Class": cls, "Desc": desc}}


def test_an_end_closes_the_open_fault_of_its_type():
    """A server with two faults of different types open at once (as one of InfiniteHBD's): each end closes its
    own type's fault; a fault without an end is an open repair."""
    log = parse(json.dumps([event("a", 1, "fault_start"), event("a", 2, "fault_start", cls="Fan"),
                            event("a", 3, "fault_end", cls="Fan"), event("a", 5, "fault_end"),
                            event("b", 6, "fault_start")]))
    assert [(f.cls, f.start / 86400, f.end and f.end / 86400) for f in log.faults] == [
        ("GPU", 1, 5), ("Fan", 2, 3), ("GPU", 6, None)]
    assert log.servers == ("a", "b") and log.span_days == 6 and log.source == "infinitehbd"


def test_csv_with_iso_times_counts_from_the_first_event():
    log = parse("time,server,event,class,level\n2024-03-30T00:00:00Z,s1,start,GPU,hw\n"
                "2024-03-30T12:00:00+00:00,s1,end,GPU,hw\n2024-03-31T00:00:00,s2,start,NIC,hw\n")
    assert [(f.start, f.end, f.level) for f in log.faults] == [(0.0, 43200.0, "hw"), (86400.0, None, "hw")]
    assert log.span_days == 1


@pytest.mark.parametrize("text, expected", [
    ("", ["the log is empty"]),
    ("[]", ["the log has no events"]),
    ("[1, 2", ["not valid JSON: Expecting ',' delimiter (line 1, column 6)"]),
    ('{"a": 1}', ["an InfiniteHBD log is a JSON list of events"]),
    (json.dumps([{"node_id": "a", "event_time": 1, "event_type": "fault_start"}]),
     ["event 1: missing fault_type"]),
    (json.dumps([event("a", -1, "fault_start"), event("", 1, "fault_start"), event("a", 1, "begin")]),
     ["event 1: event_time must be a number of days from 0 to 36525, got -1",
      "event 2: node_id must be a non-empty string of at most 200 characters, got ''",
      "event 3: event_type must be fault_start or fault_end, got 'begin'"]),
    (json.dumps([event("a", 1, "fault_end")]), ["event 1: server 'a' ends a fault of type 'Hardware Failure/GPU/xid' "
                                                "that is not open"]),
    (json.dumps([event("a", 1, "fault_start"), event("a", 2, "fault_start")]),
     ["event 2: server 'a' starts a fault of type 'Hardware Failure/GPU/xid' while one of that type is open "
      "(no end between)"]),
    ("when,server,event,class\n1,a,start,GPU\n",
     ["line 1: not a fault log: the header must be time,server,event,class (then optionally level, desc), or "
      "start,end,server,class for a fault per row (any order, other columns left out; --columns maps other names)"]),
    ("time,server,event,class\nsoon,a,start,GPU\n1,a,begin,GPU\n1,a\n",
     ["line 2: time must be seconds from 0 to 3155760000 (36525 days) or an ISO 8601 date and time, got 'soon'",
      "line 3: event must be start or end, got 'begin'", "line 4: 2 fields where the header has 4"]),
    ("time,server,event,class\n1,a,start,GPU\n2024-01-01T00:00:00,a,end,GPU\n",
     ["line 3: times mix seconds and ISO 8601 dates"]),
])
def test_bad_logs_are_one_clear_line_each(text, expected):
    with pytest.raises(LogError) as exc:
        parse(text)
    assert exc.value.errors == expected


def test_the_cli_refuses_bad_input_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([event("a", 1, "fault_end")]))
    code, out, err = run(capsys, str(bad))
    assert (code, out) == (2, "") and err == (f"simd trace stats: error: {bad}: event 1: server 'a' ends a fault of "
                                              "type 'Hardware Failure/GPU/xid' that is not open\n")
    code, _, err = run(capsys, str(tmp_path / "missing.json"))
    assert code == 2 and err.startswith("simd trace stats: error: ") and "No such file or directory" in err
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and "not a regular file" in err
    good = tmp_path / "good.csv"
    good.write_text("time,server,event,class\n0,a,start,GPU\n60,a,end,GPU\n")
    for flag, value, message in (("--servers", "0", "argument --servers: must be >= 1, got 0"),
                                 ("--burst-seconds", "nan", "argument --burst-seconds: must be between 0 and 86400 "
                                                            "seconds, got nan")):
        with pytest.raises(SystemExit) as exit_:
            main(["trace", "stats", str(good), flag, value])
        assert exit_.value.code == 2 and capsys.readouterr().err.endswith(f"error: {message}\n")
    code, out, err = run(capsys, str(good), "--servers", "2", "--json")
    assert code == 0 and json.loads(out)["per_server"] == {"0": 1, "1": 1} and err == ""


def test_stats_writes_its_pngs(tmp_path, capsys, infinitehbd):
    code, out, err = run(capsys, str(infinitehbd), "--servers", "400", "--out", str(tmp_path))
    assert code == 0 and "faults 584 on 231 servers named of 400" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["faults-per-server.png", "gaps.png", "rate-by-month.png",
                                                          "repair-times.png"]
    assert all(p.stat().st_size > 10_000 for p in tmp_path.iterdir()) and err.count("wrote ") == 4
