"""simd trace fit on the InfiniteHBD trace as a user runs it: a scenario file that check-config accepts and
simulate runs, and the goodness of fit the issue asks for: the fitted model reproduces the log's burst share,
its faults-per-server distribution, its repair median and mean (a mixture of lognormal repairs) and its rate over
the months (a rate schedule by month) within the model's 95% range; it does not reproduce the gaps' coefficient of
variation (1.76 against ~1.2-1.6: the log's faults cluster in time beyond its same-instant bursts and its months):
pinned here, so a change is seen."""

import json
from dataclasses import replace

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
    assert 0.29 < sv.shape < 0.36 and 0.25 < sv.rate_shape < 0.6 and sv.burst_per_day > 0.05
    # the rate by month (the AIC's choice on this log): a quiet start and a busier second half
    assert len(sv.rate_schedule) == 12 and sv.rate_schedule[1][0] == pytest.approx(365.25 / 12)
    assert sv.rate_schedule[0][1] < 0.1 and all(m > 1 for _, m in sv.rate_schedule[8:])
    assert set(s.failures.cause_shares()) >= {"gpu", "unknown_error"}
    # the repairs: the fitted mixture of three lognormal kinds, as the engine runs it (weights to 6 decimals, medians
    # to 6 digits)
    f = fit(load(infinitehbd), 400)
    assert f.repair == "mixture" and len(sv.repair_mixture) == len(f.repair_mixture) == 3
    for (w, kind, median, sigma), (fw, fm, fs) in zip(sv.repair_mixture, f.repair_mixture, strict=True):
        assert kind == "lognormal" and w == pytest.approx(fw.value, abs=2e-6)
        assert median == pytest.approx(fm.value * 86400, rel=1e-5) and sigma == pytest.approx(fs.value, rel=1e-3)
    assert sum(w for w, *_ in sv.repair_mixture) == pytest.approx(1.0, abs=1e-9)
    assert main(["simulate", "--config", str(out), "--seeds", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] is True
    assert "# 30 bursts in the log" in out.read_text() and "95%:" in out.read_text()


def test_what_the_fitted_model_reproduces_and_what_it_does_not(infinitehbd):
    log = load(infinitehbd)
    f = fit(log, 400)
    g = goodness(f, log, 100)
    rows = {name: (obs, lo, hi) for name, obs, _, lo, hi in g.rows}
    for name in ("burst share", "zero gaps", "faults", "servers without a fault", "servers with 6+ faults",
                 "dispersion index", "repair median (days)", "repair mean (days)", "months' dispersion (chi2/df)",
                 "trend U (Laplace)"):
        obs, lo, hi = rows[name]
        assert lo <= obs <= hi, (name, rows[name])
    obs, lo, hi = rows["gap CV"]
    assert obs > hi and round(obs, 2) == 1.76
    # what the rate by month buys: without it the model's rate falls over the year (every server new at the log's
    # start, Weibull 0.42), where the log's does not
    without = dict(zip(rows, g.without_schedule, strict=True))
    assert rows["trend U (Laplace)"][0] > without["trend U (Laplace)"][2]


def test_the_repairs_are_a_mixture_by_aic_and_a_single_lognormal_misses_their_median(infinitehbd):
    """InfiniteHBD's repairs: the mixture of three lognormal kinds has the lowest AIC (a spike of ~13-minute
    resets, hours-long and days-long repairs); the single lognormal, the mixture's rival, puts the median below
    the log's (its model range under 0.85 days), the mixture around it."""
    log = load(infinitehbd)
    f = fit(log, 400)
    aic = f.repair_aic
    assert f.repair == "mixture" and aic["mixture of 3"] < min(aic["mixture of 2"], aic["lognormal"],
                                                               aic["exponential"])
    weights = [w.value for w, _, _ in f.repair_mixture]
    medians = [m.value for _, m, _ in f.repair_mixture]
    assert sum(weights) == pytest.approx(1.0) and medians == sorted(medians)
    assert all(w.low < w.value < w.high and m.low < m.value < m.high and s.low < s.value < s.high
               for w, m, s in f.repair_mixture)
    single = replace(f, repair="lognormal", repair_mixture=())
    _, obs, _, lo, hi = next(r for r in goodness(single, log, 100).rows if r[0] == "repair median (days)")
    assert obs > hi


def test_fit_refuses_what_it_cannot_use(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n0,a,start,GPU\n60,a,end,GPU\n")
    assert main(["trace", "fit", str(log), "--servers", "4", "--n-gpus", "30", "--replicas", "0"]) == 2
    assert capsys.readouterr().err == "simd trace fit: error: --n-gpus 30 is not a multiple of --gpus-per-server 8\n"
    with pytest.raises(SystemExit) as exit_:
        main(["trace", "fit", str(log), "--servers", "4", "--name", "Bad Name", "--replicas", "0"])
    assert exit_.value.code == 2 and "argument --name: " in capsys.readouterr().err
