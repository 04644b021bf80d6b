"""The CLI as users meet it: bad input gives one line and exit 2, never a traceback.

``simd(...)`` runs ``simd.cli.main`` in-process (the fast inner loop, ``pytest -m "not integration"``): an
exception escaping it fails the test, as a traceback would. The ``integration`` tests at the end run the same
commands as a real subprocess (``python -m simd``) and compare.
"""

import argparse
import json

import pytest
from support.cli import simd, simd_process
from support.scenarios import job, scenario_file

GOOD = scenario_file(job("small", seed=4, restart_seconds=120),
                     job("odd", validation={"interval_steps": 15, "seconds": 5}))

CONTRACT = ["scenario", "seed", "target_steps", "recompute_steps", "interruptions", "sdc_detected", "sdc_baked",
            "wall_seconds", "checkpoint_seconds", "validation_seconds", "restart_seconds", "effective_utilization"]


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.yaml"
    p.write_text(GOOD)
    return p


def test_check_config_ok_summarizes_and_warns(good):
    r = simd("check-config", str(good))
    assert r.returncode == 0
    assert r.stdout.splitlines()[0].startswith("small: 512 GPUs, 400 steps of 30 s")
    assert len(r.stdout.splitlines()) == 2
    # each warning a line of its own, prefixed with the command as its errors are
    assert r.stderr.startswith("simd check-config: warning: scenario odd: validation every 15 steps does not divide "
                               "checkpoint every 20")


@pytest.mark.parametrize("text,message", [
    ("scenarios: [", "not valid YAML"),
    (GOOD.replace("n_gpus: 512", "n_gpus: -1", 1), "scenarios[0].n_gpus: must be > 0, got -1"),
    (GOOD.replace("seed: 4", "sed: 4"), "scenarios[0].sed: unknown key"),
])
def test_check_config_errors_exit_2(tmp_path, text, message):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    r = simd("check-config", str(p))
    assert r.returncode == 2 and message in r.stderr and r.stdout == ""


def test_check_config_missing_file():
    r = simd("check-config", "/nonexistent/x.yaml")
    assert r.returncode == 2 and "/nonexistent/x.yaml: cannot read" in r.stderr


def test_simulate_json_contract_and_seed_ranges(good):
    r = simd("simulate", "--config", str(good), "--scenario", "small", "--seeds", "3..5", "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["seed"] for row in rows] == [3, 4, 5]
    for row in rows:
        assert list(row)[:3] == CONTRACT[:3] and set(CONTRACT) <= set(row)
        assert set(row["bucket_seconds"]) == {"productive", "rollback", "checkpoint", "validation", "restart",
                                              "detection", "straggler", "shadow", "waiting"}
        assert sum(row["bucket_seconds"].values()) == pytest.approx(row["wall_seconds"], rel=1e-12)
        assert sum(row["interruptions_by_cause"].values()) == row["interruptions"]


def test_simulate_tick_seconds_does_not_change_results(good):
    a = simd("simulate", "--config", str(good), "--seeds", "4", "--json").stdout
    b = simd("simulate", "--config", str(good), "--seeds", "4", "--json", "--tick-seconds", "17.3").stdout
    assert a == b and len(a.splitlines()) == 8


def test_simulate_human_table(good):
    r = simd("simulate", "--config", str(good), "--scenario", "small", "--seeds", "2")
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["scenario", "seed", "util"]
    assert [ln.split()[1] for ln in lines[1:]] == ["0", "1", "mean"]


@pytest.mark.parametrize("args,message", [
    (["--seeds", "5..2"], "--seeds: A..B needs A <= B"),
    (["--seeds", "x"], "--seeds: expected N or A..B"),
    (["--scenario", "nope"], "no scenario named 'nope'"),
    (["--tick-seconds", "-1"], "argument --tick-seconds: must be >= 0.01, got '-1'"),
    # the scenario file's tick_seconds range: 1e-300 s would be ~10^11 ticks, a run that never ends
    (["--tick-seconds", "1e-300"], "argument --tick-seconds: must be >= 0.01, got '1e-300'"),
    (["--tick-seconds", "1e6"], "argument --tick-seconds: must be <= 3600, got '1e6'"),
    (["--tick-seconds", "inf"], "argument --tick-seconds: must be a finite number, got 'inf'"),
])
def test_simulate_bad_flags_exit_2(good, args, message):
    r = simd("simulate", "--config", str(good), *args)
    assert r.returncode == 2 and message in r.stderr


def test_demo_has_the_seed_shape():
    r = simd("demo", "--seeds", "60", "--json")
    assert r.returncode == 0
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    ideal, naive, opt = rows["ideal"], rows["naive"], rows["optimized"]
    assert ideal["utilization"] >= opt["utilization"] > naive["utilization"]
    assert naive["sdc_baked"] > 0 and opt["sdc_baked"] == 0
    # naive shows baked SDCs on purpose: the embedded file acknowledges it, so no warning
    assert "warning" not in r.stderr


def test_demo_text_has_the_table_and_a_conclusion():
    out = simd("demo", "--seeds", "20").stdout
    assert "ideal (no failures)" in out and "naive" in out and "optimized" in out
    assert "Conclusion: validating at every checkpoint" in out


def test_config_default_prints_a_valid_file(tmp_path):
    text = simd("config", "--default").stdout
    p = tmp_path / "d.yaml"
    p.write_text(text)
    assert simd("check-config", str(p)).returncode == 0


def test_unknown_command_exit_2():
    r = simd("frobnicate")
    assert r.returncode == 2 and "invalid choice" in r.stderr


@pytest.mark.integration
@pytest.mark.parametrize("args", [
    ["frobnicate"], ["simulate", "--tick-seconds", "-1"], ["check-config", "/nonexistent/x.yaml"],
    ["simulate", "--seeds", "0..1", "--scenario", "optimized", "--json"], ["config", "--default"],
])
def test_a_real_process_prints_and_exits_as_in_process(args):
    real, inproc = simd_process(*args), simd(*args)
    assert (real.returncode, real.stdout, real.stderr) == (inproc.returncode, inproc.stdout, inproc.stderr)


def test_every_help_text_renders():
    """``simd --help`` and each command's: argparse %-formats help strings (a bare "95%" crashed it)."""
    from simd.cli import build_parser

    parser = build_parser()
    parser.format_help()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        assert p.format_help(), name


@pytest.mark.parametrize(("value", "message"), [("0", "must be >= 1, got 0"), ("-3", "must be >= 1, got -3"),
                                                ("2.5", "expected a whole number, got '2.5'")])
def test_whole_number_flags_share_one_parser_and_its_words(value, message):
    """--save-every-ticks (run) and --replicas (sweep) are both simd.cli.common.positive_int: one parser, the
    scenario file's phrasing ("must be >= 1, got 0"); they said it in two ways before."""
    run = simd("run", "--save-every-ticks", value)
    sweep = simd("sweep", "--scenario", "optimized", "--param", "checkpoint.interval_steps=50", "--replicas", value)
    assert run.returncode == sweep.returncode == 2
    assert run.stderr.strip() == f"simd run: error: argument --save-every-ticks: {message}"
    assert sweep.stderr.strip() == f"simd sweep: error: argument --replicas: {message}"


def test_an_interrupt_inside_a_kernels_call_back_into_python_is_exit_130(monkeypatch):
    """Ctrl-C while a compiled kernel calls back into Python (numba's unpickling of its constants) reaches the
    command as a SystemError whose context is the KeyboardInterrupt (`simd trace fit --bootstrap N --workers 1`
    printed 72 lines of traceback and exit 1): exit 130 as any interrupt. Another SystemError is still raised."""
    from simd import cli
    from simd.cli import offline

    def interrupted(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("<function _numba_unpickle> returned a result with an exception set") from None

    monkeypatch.setattr(offline, "cmd_check_config", interrupted)
    assert cli.main(["check-config", "x.yaml"]) == 130

    def broken(args):
        raise SystemError("something else")

    monkeypatch.setattr(offline, "cmd_check_config", broken)
    with pytest.raises(SystemError, match="something else"):
        cli.main(["check-config", "x.yaml"])
