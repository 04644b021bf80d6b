"""simd trace fit on the InfiniteHBD trace as a user runs it: a scenario file that check-config accepts and
simulate runs, and the goodness of fit the issue asks for: the fitted model reproduces the log's burst share and
its faults-per-server distribution within the model's 95% range; it does not reproduce the gaps' coefficient of
variation (1.76 against ~1.2-1.5: the log's faults cluster in time beyond its same-instant bursts) nor the
repair median (the lognormal's is lower): pinned here, so a change of either is seen."""

import json

import pytest

from simd.cli import main
from simd.scenario import load_config
from simd.traces.fit import fit
from simd.traces.log import load
from simd.traces.scenario import goodness


def test_the_fitted_scenario_is_a_valid_file_and_runs(tmp_path, capsys, infinitehbd):
    out = tmp_path / "fitted.yaml"
    code = main(["trace", "fit", str(infinitehbd), "--servers", "400", "--replicas", "20", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0 and "lifetimes: weibull" in printed.out and f"wrote {out}" in printed.err
    (s,) = load_config(out).scenarios
    sv = s.job_spec().servers
    assert (s.gpus, sv.gpus_per_server, sv.lifetime) == (3200, 8, "weibull")
    assert 0.38 < sv.shape < 0.46 and 0.3 < sv.rate_shape < 0.7 and sv.burst_per_day > 0.05
    assert sv.repair[0] == "lognormal" and set(s.failures.cause_shares())  >= {"gpu", "unknown_error"}
    assert main(["simulate", "--config", str(out), "--seeds", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] is True
    assert "# 30 bursts in the log" in out.read_text() and "95%:" in out.read_text()


def test_what_the_fitted_model_reproduces_and_what_it_does_not(infinitehbd):
    log = load(infinitehbd)
    f = fit(log, 400)
    rows = {name: (obs, lo, hi) for name, obs, _, lo, hi in goodness(f, log, 100).rows}
    for name in ("burst share", "zero gaps", "faults", "servers without a fault", "servers with 6+ faults",
                 "dispersion index", "repair mean (days)"):
        obs, lo, hi = rows[name]
        assert lo <= obs <= hi, (name, rows[name])
    obs, lo, hi = rows["gap CV"]
    assert obs > hi and round(obs, 2) == 1.76
    obs, lo, hi = rows["repair median (days)"]
    assert obs > hi


def test_fit_refuses_what_it_cannot_use(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n0,a,start,GPU\n60,a,end,GPU\n")
    assert main(["trace", "fit", str(log), "--servers", "4", "--n-gpus", "30", "--replicas", "0"]) == 2
    assert capsys.readouterr().err == "simd trace fit: error: --n-gpus 30 is not a multiple of --gpus-per-server 8\n"
    with pytest.raises(SystemExit) as exit_:
        main(["trace", "fit", str(log), "--servers", "4", "--name", "Bad Name", "--replicas", "0"])
    assert exit_.value.code == 2 and "argument --name: " in capsys.readouterr().err
