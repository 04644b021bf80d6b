"""A replay reads the logs `simd trace` reads: `servers.replay` takes the command line's `columns`, `timezone`
and `time_format` (one implementation, simd.traces.log), `simd trace fit` writes the replay line of the log it read
into its scenario, and LANL's dates (`6/21/2005 10:54`) read through a strptime format (docs/traces.md)."""

import json
import re

import pytest
import yaml
from support.cli import simd
from support.scenarios import replaying

# A cluster's own log: its column names (one extra), local times of Denver, whose clocks went back from 02:00 MDT
# (UTC-6) to 01:00 MST (UTC-7) on 2005-10-30; the same faults in simd's names and UTC below
OWN = """Ticket,Node,Rack,Prob Started,Prob Fixed,Cause
T0,n3,r1,2005-10-29 22:54,2005-10-29 23:30,Hardware
T1,n1,r1,2005-10-30 00:30,2005-10-30 09:00,Software
T2,n3,r1,2005-10-30 03:00,,Hardware
T3,n2,r2,2005-11-02 06:00,2005-11-02 07:00,Network
"""
SIMD = """start,end,server,class
2005-10-30 04:54,2005-10-30 05:30,n3,Hardware
2005-10-30 06:30,2005-10-30 16:00,n1,Software
2005-10-30 10:00,,n3,Hardware
2005-11-02 13:00,2005-11-02 14:00,n2,Network
"""
COLUMNS = "start=Prob Started,end=Prob Fixed,server=Node,class=Cause"
LANL = "%m/%d/%Y %H:%M"


def lanl(text: str) -> str:
    """OWN's dates as LANL writes them (6/21/2005 10:54)."""
    return re.sub(r"(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d)", lambda m: f"{int(m[2])}/{int(m[3])}/{m[1]} {m[4]}", text)


def outcome(config) -> list:
    r = simd("simulate", "--config", str(config), "--seeds", "2", "--json")
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_trace_fit_writes_the_replay_of_the_log_it_read_and_it_replays_as_the_log_in_simds_names(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "own.csv").write_text(OWN)
    (tmp_path / "simd.csv").write_text(SIMD)
    r = simd("trace", "fit", "own.csv", "--servers", "4", "--replicas", "0", "--columns", COLUMNS,
             "--timezone", "America/Denver")
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.strip().startswith("# replay:")]
    replay = yaml.safe_load(line.strip().removeprefix("#").strip())["replay"]
    assert replay == {"log": "own.csv", "servers": 4, "timezone": "America/Denver",
                      "columns": {"start": "Prob Started", "end": "Prob Fixed", "server": "Node", "class": "Cause"}}
    (tmp_path / "fitted.yaml").write_text(r.stdout)
    assert simd("check-config", "fitted.yaml").returncode == 0  # (the line is a comment there)
    (tmp_path / "own.yaml").write_text(replaying(**replay))
    (tmp_path / "simd.yaml").write_text(replaying(log="simd.csv", servers=4))
    r = simd("check-config", "own.yaml")
    assert r.returncode == 0 and f"replaying {tmp_path / 'own.csv'}" in r.stdout, r.stderr
    own, plain = outcome("own.yaml"), outcome("simd.yaml")
    assert own == plain and own[0]["interruptions"] > 0
    # and the zone matters: read in UTC, the log's third fault comes an hour early
    (tmp_path / "utc.yaml").write_text(replaying(**{**replay, "timezone": "UTC"}))
    assert outcome("utc.yaml") != plain


def test_trace_fit_writes_the_logs_path_from_the_out_files_folder_and_its_time_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "lanl.csv").write_text(lanl(OWN))
    (tmp_path / "out").mkdir()
    r = simd("trace", "fit", "logs/lanl.csv", "--servers", "4", "--replicas", "0", "--columns", COLUMNS,
             "--time-format", LANL, "--timezone=-07:00", "--out", "out/fit.yaml")
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in (tmp_path / "out" / "fit.yaml").read_text().splitlines() if "# replay:" in x]
    replay = yaml.safe_load(line.strip().removeprefix("#").strip())["replay"]
    assert (replay["log"], replay["time_format"], replay["timezone"]) == ("../logs/lanl.csv", LANL, "-07:00")
    (tmp_path / "out" / "r.yaml").write_text(replaying(**replay))
    assert simd("check-config", "out/r.yaml").returncode == 0


def test_lanl_dates_read_through_a_time_format_as_the_iso_dates_they_are(tmp_path):
    (tmp_path / "iso.csv").write_text(OWN)
    (tmp_path / "lanl.csv").write_text(lanl(OWN))
    iso = simd("trace", "stats", str(tmp_path / "iso.csv"), "--columns", COLUMNS, "--json")
    r = simd("trace", "stats", str(tmp_path / "lanl.csv"), "--columns", COLUMNS, "--json", "--time-format", LANL)
    assert iso.returncode == r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(iso.stdout)
    for log, extra in (("iso.csv", {}), ("lanl.csv", {"time_format": LANL})):
        (tmp_path / f"{log}.yaml").write_text(replaying(str(tmp_path / log), columns=dict(
            p.split("=") for p in COLUMNS.split(",")), **extra))
    assert outcome(tmp_path / "lanl.csv.yaml") == outcome(tmp_path / "iso.csv.yaml")


@pytest.mark.parametrize(("replay", "flags", "said"), [
    ({"columns": {"start": "Begin"}}, ("--columns", "start=Begin"),
     {"scenario": "line 1: replay.columns {start: 'Begin'}: the header has no column of that name",
      "cli": "line 1: --columns start='Begin': the header has no column of that name"}),
    ({}, (), {"scenario": "line 1: not a fault log: the header must be time,server,event,class (then optionally "
                          "level, desc), or start,end,server,class for a fault per row (any order, other columns "
                          "left out; replay.columns maps other names)"}),
    ({"columns": {"begin": "x"}}, ("--columns", "begin=x"),
     {"both": "'begin' is not a column simd reads (start, end, server, class, level, desc, time, event)"}),
    ({"timezone": "Mars/Olympus"}, ("--timezone", "Mars/Olympus"),
     {"both": "'Mars/Olympus' is not a time zone of the system's tz database"}),
    ({"time_format": "%Q"}, ("--time-format", "%Q"), {"both": "'%Q' is not a strptime format that reads back"}),
    ({"time_format": "%H:%M"}, ("--time-format", "%H:%M"),
     {"both": "'%H:%M' is not a strptime format that reads back the date and time it writes"}),
    ({"time_format": "no directive"}, ("--time-format", "no directive"),
     {"both": "expected a strptime format of at most 100 characters such as '%m/%d/%Y %H:%M', got 'no directive'"}),
    ({"columns": dict(p.split("=") for p in COLUMNS.split(",")), "time_format": LANL},
     ("--columns", COLUMNS, "--time-format", LANL),
     {"scenario": "line 2: start must be a date and time of replay.time_format '%m/%d/%Y %H:%M', got "
                  "'2005-10-29 22:54'",
      "cli": "line 2: start must be a date and time of --time-format '%m/%d/%Y %H:%M', got '2005-10-29 22:54'"}),
])
def test_what_cannot_be_read_is_one_line_in_the_readers_words(tmp_path, replay, flags, said):
    log = tmp_path / "own.csv"
    log.write_text(OWN)
    config = tmp_path / "r.yaml"
    config.write_text(replaying(str(log), **replay))
    r = simd("check-config", str(config))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr  # (its first problems joined)
    assert (said.get("scenario") or said["both"]) in r.stderr and len(r.stderr) < 500
    if flags:
        r = simd("trace", "stats", str(log), *flags)
        line = [x for x in r.stderr.splitlines() if "error:" in x][0]  # (a line per problem of a log)
        assert r.returncode == 2 and (said.get("cli") or said["both"]) in line and len(line) < 500


def test_a_json_log_takes_none_of_the_csv_options(infinitehbd, tmp_path):
    config = tmp_path / "r.yaml"
    config.write_text(replaying(str(infinitehbd), timezone="UTC"))
    r = simd("check-config", str(config))
    assert r.returncode == 2 and "replay.columns, replay.timezone and replay.time_format name a CSV's columns and " \
        "dates: this is an InfiniteHBD JSON log" in r.stderr and len(r.stderr.splitlines()) == 1
