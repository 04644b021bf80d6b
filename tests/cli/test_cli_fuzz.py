"""A generated fuzz of the command line: argument vectors built from the real parser's own commands and flags
(so a flag added later is fuzzed too), each value drawn from hostile ones (empty, signs, huge, NaN, paths
that are FIFOs, directories, devices, broken or missing files) and arbitrary text. Whatever it is, ``simd``
either reaches the work it was asked for (stopped there: the work is tested elsewhere), exits 0, or exits 1
or 2 with its reasons on stderr, one line each; never an exception out of ``main`` (a traceback to a user).

The work each command would start is replaced by a sentinel, so an accidentally valid vector costs nothing:
simulate and demo stop at kernel preparation, report at building its tables, compile at compiling, run at
the daemon, drill at its HTTP request, sweep at its executor."""

from __future__ import annotations

import argparse
import json
import os

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.scenarios import SMALL_YAML, replaying

from simd.cli import build_parser, main


class Work(Exception):
    """Raised where a command would start its work."""


def reached(*_args, **_kwargs):
    raise Work


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fuzz")
    files = {
        "valid": SMALL_YAML,
        "empty": "",
        "garbage": "\x7fELF\x02\x01 not yaml: [\n",
        "wrong": "scenarios:\n  - name: x\n    n_gpus: -3\n    unknown_key: 1\n",
        "list": "- 1\n- 2\n",
        "token": "s3cret\n",
    }
    out = {}
    for name, text in files.items():
        (d / name).write_text(text)
        out[name] = str(d / name)
    os.mkfifo(d / "fifo")
    out |= {"fifo": str(d / "fifo"), "dir": str(d), "missing": str(d / "missing" / "x.yaml"),
            "devnull": "/dev/null", "urandom": "/dev/urandom", "proc": "/proc/self/status"}
    return out


HOSTILE = ["", " ", "-", "--", "-1", "0", "1", "2", "1e999", "-1e999", "nan", "inf", "1.5", "0x10", "1_000",
           "99999999999999999999999999", str(2**63), str(-2**63), "abc", "é", "名前", "1..0", "0..-1", "5..",
           "a=b", "=", "key=", "n_gpus=1:2:0", "n_gpus=1:2:3log", "n_gpus=a,b", "checkpoint.interval_seconds=0,-1",
           "x.y.z=1", "1:2", ":::", "%", "0.2%", "200%", "tcp://", "tcp://127.0.0.1:1", "http://[",
           "http://127.0.0.1:1", "127.0.0.1:0", "[::1]:99999", "localhost:-1", ":9109", "no-such", "big", "plain",
           "calm", "sw", "optimized", "llama3-16k", "storage", "checkpoint.interval_steps=10,20",
           "checkpoint.interval_steps=1:1e9:5log", "replicas=1,2", "n_gpus=0", "seed=-1",
           "text", "json", "markdown", "3", "6"]
PATH_KEYS = ["valid", "empty", "garbage", "wrong", "list", "token", "fifo", "dir", "missing", "devnull",
             "urandom", "proc"]


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


COMMANDS = _commands()


@st.composite
def argv(draw, paths: dict[str, str]) -> list[str]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    parser = COMMANDS[name]
    value = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(PATH_KEYS).map(paths.__getitem__),
                      st.integers(-2**80, 2**80).map(str), st.floats().map(str),
                      st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                              max_size=12))
    out = [name]
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    required = [a for a in options if a.required]  # always given, so that what follows them is reached
    for action in required + (draw(st.lists(st.sampled_from(options), max_size=5)) if options else []):
        out.append(draw(st.sampled_from(action.option_strings)))
        if action.nargs != 0:
            out.append(draw(st.sampled_from(list(map(str, action.choices))) | value if action.choices else value))
    positionals = [a for a in parser._actions if not a.option_strings]
    for _ in positionals:
        if draw(st.booleans()):
            out.append(draw(value))
    if draw(st.integers(0, 9)) == 0:  # now and then a flag no command has
        out.append(draw(st.sampled_from(["--no-such-flag", "-x", "--config=", "--seeds="])))
    return out


@pytest.fixture()
def no_work(monkeypatch):
    import simd.cli.drillclient
    import simd.daemon.process
    import simd.executors
    import simd.offline.precompile
    import simd.report

    monkeypatch.setattr(simd.offline.precompile, "prepare", reached)
    monkeypatch.setattr(simd.offline.precompile, "compile_all", reached)
    monkeypatch.setattr(simd.report, "build", reached)
    monkeypatch.setattr(simd.daemon.process, "run", reached)
    monkeypatch.setattr(simd.cli.drillclient, "request", reached)
    monkeypatch.setattr(simd.executors, "choose", reached)


def test_every_command_is_fuzzed():
    """The fuzz draws from the parser itself: every command there is one it can generate."""
    assert {"check-config", "simulate", "demo", "report", "sweep", "run", "drill", "compile", "config"} <= set(COMMANDS)


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_command_lines_end_in_work_success_or_one_line_errors(paths, no_work, capsys, data):
    args = data.draw(argv(paths))
    try:
        code = main(args)
    except Work:
        capsys.readouterr()
        event(f"{args[0]}: reached its work")
        return
    except SystemExit as exc:  # argparse: --help, --version, or a usage error
        code = exc.code
    err = capsys.readouterr().err
    event(f"{args[0]}: exit {code}")
    assert code in (0, 1, 2), f"simd {args}: exit {code!r}"
    assert "Traceback" not in err, f"simd {args}:\n{err}"
    if code:
        lines = err.strip().splitlines()
        assert lines, f"simd {args}: exit {code} with nothing on stderr"
        assert all(line.strip() for line in lines), f"simd {args}: blank lines in\n{err}"


# --- fault logs: `simd trace stats`, `simd trace fit` and `simd check-config` of a scenario replaying the log ---------
# Hypothesis over the two formats' events (docs/traces.md), each field either valid or hostile: numbers at the float
# and integer extremes written as JSON or CSV text (past a float, past int's 4300 digits, NaN, infinities,
# subnormals, past the log's range of times), names long or with control characters, missing keys, nesting up to
# 100,000 deep. Bad input: exit 2 and one line per problem, each bounded and printable; a log valid by construction:
# exit 0. Never a traceback.

NUMBER_TEXTS = ["0", "-0", "0.0", "1", "-1", "1e-400", "5e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
                "1e307", "1e300", "-1e300", "1e400", "-1e400", "36525", "36525.0000001", "3155760000", "3155760001",
                str(2**63), str(2**64), "9" * 400, "1" * 4300, "7" * 5000, "NaN", "Infinity", "-Infinity", "nan",
                "inf", "1_000", "0x10", " 1 ", ""]
NAMES = ["a", "b", "node-1", "x" * 200, "x" * 201, "y" * 100_000, "", " ", "a\nb", "\x1b[31mred", "名前", "\u202e",
         "a,b", '"q"']


def _number_text():
    return st.one_of(st.sampled_from(NUMBER_TEXTS), st.integers(-2**70, 2**70).map(str),
                     st.floats().map(lambda x: repr(x).replace("inf", "Infinity").replace("nan", "NaN")))


def _name():
    return st.one_of(st.sampled_from(NAMES), st.text(st.characters(blacklist_categories=("Cs",)), max_size=8))


@st.composite
def hostile_json_log(draw) -> str:
    events = []
    for _ in range(draw(st.integers(0, 6))):
        fields = {"node_id": json.dumps(draw(_name())), "event_time": draw(_number_text()),
                  "event_type": json.dumps(draw(st.sampled_from(["fault_start", "fault_end", "start", ""]))),
                  "fault_type": draw(st.sampled_from(['{"Level": "l", "Class": "GPU", "Desc": "d"}', '{}', '1', '[]',
                                                      '{"Level": 1, "Class": "c", "Desc": "d"}']))}
        if draw(st.integers(0, 4)) == 0:
            del fields[draw(st.sampled_from(sorted(fields)))]
        if draw(st.integers(0, 5)) == 0:  # a field nested deep
            depth = draw(st.sampled_from([2, 100, 5000, 100_000]))
            key = draw(st.sampled_from(sorted(fields)))
            fields[key] = "[" * depth + fields[key] + "]" * depth
        events.append("{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}")
    text = "[" + ", ".join(events) + "]"
    depth = draw(st.sampled_from([0, 0, 0, 1, 3, 1000, 100_000]))
    return "[" * depth + text + "]" * depth


ISO = ["2024-01-01T00:00:00", "2024-01-01T00:00:00+05:00", "0001-01-01T00:00:00", "9999-12-31T23:59:59",
       "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "2024-13-01T00:00:00", "2024-02-30"]


@st.composite
def hostile_csv_log(draw) -> str:
    header = draw(st.sampled_from(["time,server,event,class", "time,server,event,class,level,desc",
                                   "time,server,event", "TIME, Server ,event,class", ""]))
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        t = draw(st.one_of(_number_text(), st.sampled_from(ISO)))
        row = [t, draw(_name()), draw(st.sampled_from(["start", "end", "begin", ""])), draw(_name())]
        rows.append(",".join(row[:draw(st.integers(1, 4))] if draw(st.integers(0, 5)) == 0 else row))
    return "\n".join([header, *rows]) + "\n"


@st.composite
def valid_log(draw) -> tuple[str, int]:
    """(a valid log's text, its servers): per server, alternating starts and ends at increasing times within the
    log's range (the last fault open or closed), in JSON days or CSV seconds."""
    from simd.traces.log import MAX_DAYS

    servers = draw(st.integers(1, 4))
    events = []
    for s in range(servers):
        times = sorted(draw(st.lists(st.floats(0, MAX_DAYS), min_size=1, max_size=6, unique=True)))
        events += [(t, f"s{s}", i % 2 == 0) for i, t in enumerate(times)]
    if draw(st.booleans()):
        return json.dumps([{"node_id": n, "event_time": t, "event_type": "fault_start" if start else "fault_end",
                            "fault_type": {"Level": "l", "Class": "GPU", "Desc": "d"}}
                           for t, n, start in events]), servers
    return "time,server,event,class\n" + "".join(f"{t * 86400!r},{n},{'start' if start else 'end'},GPU\n"
                                                 for t, n, start in events), servers


def _trace_commands(log: str, servers: int, scenario: str) -> list[list[str]]:
    return [["trace", "stats", log, "--json"], ["trace", "stats", log, "--servers", str(servers)],
            ["trace", "fit", log, "--servers", str(servers), "--replicas", "0", "--json"], ["check-config", scenario]]


def _run_lines(capsys, args: list[str]) -> tuple[int, list[str]]:
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err, f"simd {args[:2]}:\n{err[:2000]}"
    lines = err.strip().splitlines()
    assert all(len(line) <= 1000 and line.isprintable() for line in lines), f"simd {args[:2]}: {err[:2000]}"
    return code, lines


@pytest.fixture(scope="module")
def log_files(tmp_path_factory) -> tuple[str, str]:
    d = tmp_path_factory.mktemp("logs")
    (d / "scenario.yaml").write_text(replaying("log"))  # the log beside it
    return str(d / "log"), str(d / "scenario.yaml")


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(hostile_json_log(), hostile_csv_log()), servers=st.integers(1, 8))
def test_fuzzed_fault_logs_are_refused_with_one_line_each(log_files, capsys, text, servers):
    from simd.traces.log import LogError, parse

    log, scenario = log_files
    with open(log, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)
    try:
        parse(text)
        bad = False
    except LogError:
        bad = True
    event("refused" if bad else "valid")
    for args in _trace_commands(log, servers, scenario):
        code, lines = _run_lines(capsys, args)
        assert code in (0, 2) and (code == 2 or not bad), (args[:2], code, lines[:3])
        if code == 2:
            assert 1 <= len(lines) <= 20 and all("error: " in line for line in lines), (args[:2], lines[:3])


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=valid_log(), extra=st.integers(0, 4))
def test_fuzzed_valid_fault_logs_are_read(log_files, capsys, drawn, extra):
    log, scenario = log_files
    text, servers = drawn
    with open(log, "w") as f:
        f.write(text)
    for args in _trace_commands(log, servers + extra, scenario):
        if args[1] != "fit":
            code, lines = _run_lines(capsys, args)
            assert code == 0, (args[:2], lines[:3])


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          report_multiple_bugs=False)
@given(drawn=valid_log(), extra=st.integers(0, 4))
@example(drawn=("time,server,event,class\n86400,s0,start,GPU\n", 1), extra=0)
@example(drawn=("time,server,event,class\n1e-70,s0,start,GPU\n86400,s0,end,GPU\n", 1), extra=0)
def test_fuzzed_valid_fault_logs_are_fitted_or_refused_with_one_line(log_files, capsys, drawn, extra):
    log, _ = log_files
    text, servers = drawn
    with open(log, "w") as f:
        f.write(text)
    code, lines = _run_lines(capsys, ["trace", "fit", log, "--servers", str(servers + extra), "--replicas", "0",
                                      "--json"])
    # a valid log is fitted, or found to hold nothing a fit can use (no span, no fault): one line, exit 2
    assert code == 0 or (code == 2 and len(lines) == 1), lines[:3]
