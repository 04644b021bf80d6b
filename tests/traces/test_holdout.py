"""A check against data the model was not built from, in the CLI: `simd trace fit LOG --until WHEN` fits the part of
a log before WHEN, `simd trace check SCENARIO LOG [--from WHEN]` prints the goodness-of-fit table of any scenario's
server model against a log or its part from WHEN on (docs/traces.md, "Checking a model against another part of a
log")."""

import json
import math
from datetime import UTC, datetime

import numpy as np
import pytest
from support.cli import simd
from support.scenarios import job, scenario_file

from simd.traces import synth
from simd.traces.log import before, load

DAY = 86400.0


def write_log(path, servers=40, days=200.0, seed=3, dated=False) -> None:
    """A synthetic log (simd.traces.synth, Weibull 0.7 with frailty and lognormal repairs) as a CSV of a fault per
    row, its times in seconds or as dates from 2024-01-01."""
    model = synth.Model(lifetime_scale_days=60.0, lifetime_shape=0.7, gamma_shape=1.5, repair_median_days=0.5,
                        repair_sigma=1.0)
    log = synth.generate(model, servers, days, np.random.default_rng(seed))

    def t(x):
        if not dated:
            return f"{x:.3f}"
        return (np.datetime64("2024-01-01T00:00:00") + np.timedelta64(round(x), "s")).astype(str).replace("T", " ")

    path.write_text("start,end,server,class\n" + "".join(
        f"{t(f.start)},{'' if f.end is None else t(f.end)},{log.servers[f.server]},GPU\n" for f in log.faults))


def rows(stdout: str) -> dict[str, dict]:
    return {r["statistic"]: r for r in json.loads(stdout)["goodness"]}


def test_fit_until_fits_the_logs_part_before_it_as_days_or_as_a_date(tmp_path):
    log = tmp_path / "log.csv"
    write_log(log, dated=True)
    whole = load(log)
    part = before(whole, 80 * DAY)
    r = simd("trace", "fit", str(log), "--servers", "40", "--replicas", "0", "--json", "--until", "80")
    assert r.returncode == 0, r.stderr
    fit = json.loads(r.stdout)["fit"]
    assert (fit["faults"], fit["span_days"]) == (len(part.faults), 80.0) and len(part.faults) < len(whole.faults)
    # a date, as the log's times are read: from the log's start (its first event)
    r = simd("trace", "fit", str(log), "--servers", "40", "--replicas", "0", "--json", "--until", "2024-03-21")
    assert r.returncode == 0, r.stderr
    span = (datetime(2024, 3, 21, tzinfo=UTC).timestamp() - whole.origin) / DAY
    assert json.loads(r.stdout)["fit"]["span_days"] == pytest.approx(span) and 79 < span < 80
    # a repair running past the cut is open in the part
    assert all(f.end is None or f.end <= 80 * DAY for f in part.faults)


def test_check_of_the_file_fit_wrote_gives_fits_table(tmp_path):
    """`trace check` of the scenario `trace fit` wrote, on the same log, reproduces the fit's table: the same log
    column, model means within a few percent (the file's values rounded, the same seed)."""
    log = tmp_path / "log.csv"
    write_log(log)
    out = tmp_path / "fit.yaml"
    r = simd("trace", "fit", str(log), "--servers", "40", "--replicas", "100", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    fitted = {g["statistic"]: g for g in json.loads(r.stdout)["goodness"]}
    r = simd("trace", "check", str(out), str(log), "--servers", "40", "--replicas", "100", "--json")
    assert r.returncode == 0, r.stderr
    checked = rows(r.stdout)
    assert checked.keys() == fitted.keys()
    for name, row in checked.items():
        assert row["log"] == fitted[name]["log"]
        assert row["model_mean"] == pytest.approx(fitted[name]["model_mean"], rel=0.08, abs=0.02), name


def test_check_from_compares_the_logs_rest_with_the_models_same_part(tmp_path):
    """A memoryless scenario without pools (a server back at once) makes Poisson faults: its mean count over the
    log's part from day 120 on is servers x rate x days, and the log's column is the faults of that part."""
    log = tmp_path / "log.csv"
    write_log(log)
    whole = load(log)
    hard = 2.0e-4  # per GPU-hour: 0.0384 per server-day of 8 GPUs
    config = tmp_path / "m.yaml"
    config.write_text(scenario_file(job("memoryless", n_gpus=64, failures={"hard_per_gpu_hour": hard,
                                                                           "sdc_per_gpu_hour": 0.0})))
    r = simd("trace", "check", str(config), str(log), "--servers", "40", "--from", "120", "--replicas", "100",
             "--json")
    assert r.returncode == 0, r.stderr
    faults = rows(r.stdout)["faults"]
    assert faults["log"] == sum(f.start >= 120 * DAY for f in whole.faults)
    expected = 40 * hard * 8 * 24 * (whole.span_days - 120)
    assert abs(faults["model_mean"] - expected) < 4 * math.sqrt(expected / 100)
    r = simd("trace", "check", str(config), str(log), "--servers", "40", "--from", "120", "--replicas", "20")
    assert r.returncode == 0 and "the log from day 120 to its end" in r.stdout and "faults" in r.stdout


@pytest.mark.parametrize(("servers", "args", "said"), [
    ({"lemons": {"fraction": 0.1, "multiplier": 5.0}}, (), "servers.lemons: not in the model a synthetic log "
                                                            "simulates"),
    ({}, ("--from", "900"), "--from: '900' is not inside the log's span (0 to"),
    ({}, ("--from", "2024-02-01"), "--from: '2024-02-01' is not a number of days since the log's start"),
    ({}, ("--servers", "1"), "--servers 1 is fewer than the"),
    ({}, ("--scenario", "nope"), "no scenario named 'nope'"),
])
def test_what_check_cannot_do_is_one_line(tmp_path, servers, args, said):
    log = tmp_path / "log.csv"
    write_log(log, servers=10, days=30)
    config = tmp_path / "m.yaml"
    config.write_text(scenario_file(job("m", n_gpus=80, failures={"hard_per_gpu_hour": 2e-4, "sdc_per_gpu_hour": 0.0},
                                        **({"servers": servers} if servers else {}))))
    flags = dict(zip(args[::2], args[1::2], strict=True))
    r = simd("trace", "check", str(config), str(log), "--replicas", "5", *(["--servers", "10"] if "--servers"
                                                                             not in flags else []), *args)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert said in r.stderr


def test_fit_until_outside_the_log_is_one_line(tmp_path):
    log = tmp_path / "log.csv"
    write_log(log, servers=10, days=30)
    r = simd("trace", "fit", str(log), "--servers", "10", "--replicas", "0", "--until", "-1")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("simd trace fit: error: --until: '-1' is not "
                                                                        "inside the log's span")
