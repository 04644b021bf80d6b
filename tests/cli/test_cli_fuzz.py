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
import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.scenarios import SMALL_YAML

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
    import simd.offline.precompile
    import simd.offline.sweep.command
    import simd.report

    monkeypatch.setattr(simd.offline.precompile, "prepare", reached)
    monkeypatch.setattr(simd.offline.precompile, "compile_all", reached)
    monkeypatch.setattr(simd.report, "build", reached)
    monkeypatch.setattr(simd.daemon.process, "run", reached)
    monkeypatch.setattr(simd.cli.drillclient, "request", reached)
    monkeypatch.setattr(simd.offline.sweep.command, "_executor", reached)


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
