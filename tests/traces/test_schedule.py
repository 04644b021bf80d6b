"""A rate that varies over the log's span (docs/traces.md, "Rates over the log's span"): the engine's
servers.rate_schedule, a time change of the servers' ages, fitted by simd trace fit and simulated by
simd.traces.synth the same way. The likelihood against the plain one and its gradient against finite
differences, synth's operational clock against the schedule, the fit choosing a schedule where a log has one
(and writing it as the scenario file the engine reads) and not where it has none, and the goodness of fit saying
what the schedule buys. Coverage over many logs: tests/traces/statistical/test_schedule_recovery.py."""

import json
import math

import numpy as np
import pytest
from scipy import optimize

from simd.cli import main
from simd.cli.trace import fit_table
from simd.scenario.load import parse_config
from simd.traces.fit import _intervals, _spans, fit, likelihood, schedule_edges, schedule_likelihood
from simd.traces.scenario import Job, goodness, goodness_table, scenario_text
from simd.traces.stats import bursts
from simd.traces.synth import Model, _operational, generate

SERVERS, SPAN = 150, 240.0
# a quiet first quarter, a surge, then back: pieces of two months (60.875 days)
RISING = Model(lifetime_scale_days=60.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
               repair_mean_days=1.0, rate_schedule=((0.0, 0.4), (60.875, 2.0), (121.75, 1.0), (182.625, 1.0)))


def _weights(log):
    starts = np.array([f.start for f in log.faults]) / 86400.0
    in_burst, _ = bursts(starts, 0.0)
    return np.where(in_burst, 0.0, 1.0)


def test_the_schedules_likelihood_is_the_plain_one_at_equal_multipliers_and_its_gradient_is_exact():
    m = Model(lifetime_scale_days=80.0, lifetime_shape=0.7, gamma_shape=1.5, repair="lognormal",
              repair_median_days=1.0, repair_sigma=1.0, burst_per_day=0.05, burst_mean_size=3.0,
              rate_schedule=((0.0, 0.5), (70.0, 1.5)))
    log = generate(m, 60, 200.0, np.random.default_rng(4))
    w = _weights(log)
    plain = likelihood(_intervals(log, 60, w), 60)
    edges = schedule_edges(200.0, 1)
    assert len(edges) == 8 and edges[-1] == 200.0 and edges[1] == pytest.approx(365.25 / 12)
    f = schedule_likelihood(_spans(log, 60, w), 60, edges)
    rng = np.random.default_rng(5)
    for weibull in (False, True):
        x = np.array([math.log(80.0), -0.3, 0.4] if weibull else [math.log(80.0), 0.4])
        # every multiplier 1: the plain likelihood (the time change is the identity)
        assert f(np.concatenate([x, np.zeros(6)]), weibull) == pytest.approx(plain(x, weibull), rel=1e-12)
        for _ in range(3):
            y = np.concatenate([x + rng.normal(0, 0.3, len(x)), rng.normal(0, 0.7, 6)])
            value, grad = f(y, weibull, True)
            assert value == f(y, weibull)
            err = optimize.check_grad(f, lambda p, wb: f(p, wb, True)[1], y, weibull, epsilon=1e-7)
            assert err <= 1e-4 * max(1.0, np.linalg.norm(grad)), (weibull, err, grad)


def test_synths_clock_runs_the_schedule_times_the_regimes():
    """The operational clock: tau's slope is the schedule's piece's multiplier (times the regime's)."""
    times, taus = _operational(Model(lifetime_scale_days=10.0, rate_schedule=((0.0, 0.5), (10.0, 3.0))), 30.0,
                               np.random.default_rng(0))
    at = np.array([0.0, 5.0, 10.0, 20.0, 30.0])
    assert np.allclose(np.interp(at, times, taus), [0.0, 2.5, 5.0, 35.0, 65.0])
    both = Model(lifetime_scale_days=10.0, regimes=((1.0, 1e9), (1.0, 1e-9)), rate_schedule=((0.0, 2.0),))
    times, taus = _operational(both, 30.0, np.random.default_rng(0))
    assert np.interp(30.0, times, taus) == pytest.approx(60.0)


def test_the_fit_finds_a_schedule_where_the_log_has_one_and_writes_it_as_the_engine_reads_it():
    log = generate(RISING, SERVERS, SPAN, np.random.default_rng(7))
    f = fit(log, SERVERS)
    assert f.rate_schedule and f.aic[f.schedule_aic] < min(f.aic["exponential"], f.aic["weibull"]), f.aic
    days = [d for d, _ in f.rate_schedule]
    assert days == list(schedule_edges(SPAN, f.schedule_months)[:-1])
    # normalised: a time-weighted mean of 1 over the span
    lengths = np.diff(schedule_edges(SPAN, f.schedule_months))
    assert float(lengths @ [m.value for _, m in f.rate_schedule]) / SPAN == pytest.approx(1.0)
    surge = next(m for d, m in f.rate_schedule if d >= 60.8)
    assert f.rate_schedule[0][1].high < 1 < surge.low, f.rate_schedule  # the quiet start and the surge, told apart
    text = scenario_text(f, Job(), "a synthetic log")
    servers = parse_config(text).scenarios[0].job_spec().servers
    assert servers.rate_schedule == tuple((float(f"{d:.10g}"), float(f"{m.value:.6g}")) for d, m in f.rate_schedule)
    assert servers.lifetime == f.lifetime and f.unscheduled is not None
    # the goodness of fit: the model without its schedule beside, a rising rate that it misses
    g = goodness(f, log, 40)
    rows = {r[0]: r for r in g.rows}
    assert g.without_schedule is not None and len(g.without_schedule) == len(g.rows)
    i = list(rows).index("months' dispersion (chi2/df)")
    obs, lo, hi = rows["months' dispersion (chi2/df)"][1], *rows["months' dispersion (chi2/df)"][3:]
    assert lo <= obs <= hi and obs > g.without_schedule[i][2]
    assert "without the schedule" in goodness_table(g.rows, g.without_schedule).splitlines()[0]


def test_trace_fit_says_what_the_schedule_buys_in_its_table_and_json(tmp_path, capsys):
    """As a user runs it: the fit's table names the schedule and its AIC, the goodness of fit has the column without
    it, and --json has the pieces, the estimates without it and that column."""
    log = generate(RISING, SERVERS, SPAN, np.random.default_rng(7))
    path = tmp_path / "log.csv"
    events = sorted([(f.start, 0, f.server, "start") for f in log.faults]
                    + [(f.end, 1, f.server, "end") for f in log.faults if f.end is not None])
    path.write_text("time,server,event,class\n" + "".join(f"{t!r},s{i},{e},GPU\n" for t, _, i, e in events))
    assert main(["trace", "fit", str(path), "--servers", str(SERVERS), "--replicas", "20",
                 "--out", str(tmp_path / "fitted.yaml")]) == 0
    out = capsys.readouterr().out
    assert "rate over the log's span" in out and "without the schedule" in out and "trend U (Laplace)" in out
    assert "likelihood ratio test against none p = " in out
    assert main(["trace", "fit", str(path), "--servers", str(SERVERS), "--replicas", "20", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert len(got["fit"]["rate_schedule"]) >= 2 and got["fit"]["unscheduled"] is not None
    assert 0 <= got["fit"]["schedule_p"] < 0.05 / got["fit"]["schedule_tests"]
    assert [r["statistic"] for r in got["goodness_without_schedule"]] == [r["statistic"] for r in got["goodness"]]


def test_the_fit_writes_no_schedule_where_the_rate_is_steady():
    """Steady logs (no schedule in the model) from 8 seeds: the AIC's lowest is a schedule on 4 of them (AIC writes
    one on a fifth to a third of steady logs: docs/traces.md), the fit writes one on at most 1 (its likelihood ratio
    test at 5% over the schedules tried, Bonferroni), each schedule tried and its p-value reported."""
    steady = Model(lifetime_scale_days=60.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
                   repair_mean_days=1.0)
    by_aic = written = 0
    for seed in range(8):
        log = generate(steady, 100, 200.0, np.random.default_rng(seed))
        f = fit(log, 100)
        family = min(("exponential", "weibull"), key=f.aic.get)
        by_aic += min(f.aic, key=f.aic.get).startswith(f"{family}, ")  # a schedule, by months or a trend
        written += bool(f.rate_schedule)
        # by 6, 3 and 1 months (12: one piece), and the trend by month
        assert f.schedule_tests == 4 and 0 <= f.schedule_p <= 1
        assert sum(k.startswith(f"{family}, by") for k in f.aic) == 3 and f"{family}, trend by month" in f.aic
        if not f.rate_schedule:
            assert f.unscheduled is None and f.schedule_p >= 0.05 / 4, f.aic
            assert "rate_schedule" not in scenario_text(f, Job(), "a synthetic log")
            assert goodness(f, log, 5).without_schedule is None
            assert f"rate over the log's span: steady (the likeliest schedule's likelihood ratio test against none " \
                f"p = {f.schedule_p:.2g}" in fit_table(f)
    assert by_aic >= 3 and written <= 1, (by_aic, written)


def test_a_rate_that_grows_month_by_month_is_fitted_as_a_trend_and_written_as_the_engine_reads_it():
    """A rate x1.09 a month over a year (the engine's schedule by month, log-linear in the month: x2.6 from the
    first to the last): the fit's trend candidate (one parameter against the free pieces' eleven) is the likeliest
    schedule and written, its factor a month holding the truth, its pieces normalised and log-linear, the trend's
    likelihood the free schedule's at log-linear multipliers with its gradient exact; the scenario's schedule is its
    pieces."""
    edges = schedule_edges(350.0, 1)
    raw = np.exp(0.09 * np.arange(len(edges) - 1))
    m = Model(lifetime_scale_days=120.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
              repair_mean_days=2.0, rate_schedule=tuple(zip(edges[:-1].tolist(), raw.tolist(), strict=True)))
    log = generate(m, 200, 350.0, np.random.default_rng(3))
    f = fit(log, 200)
    assert f.schedule_aic == "weibull, trend by month" and f.schedule_p < 0.05 / f.schedule_tests, f.aic
    assert f.schedule_trend.low <= math.exp(0.09) <= f.schedule_trend.high < 1.2, f.schedule_trend
    got = np.array([x.value for _, x in f.rate_schedule])
    assert np.allclose(got[1:] / got[:-1], f.schedule_trend.value)
    assert float(np.diff(edges) @ got) / 350.0 == pytest.approx(1.0)
    assert "a trend: each piece's multiplier" in fit_table(f)
    servers = parse_config(scenario_text(f, Job(), "a synthetic log")).scenarios[0].job_spec().servers
    assert servers.rate_schedule == tuple((float(f"{d:.10g}"), float(f"{x.value:.6g}")) for d, x in f.rate_schedule)
    spans = _spans(log, 200, _weights(log))
    free, trend = schedule_likelihood(spans, 200, edges), schedule_likelihood(spans, 200, edges, trend=True)
    x = np.array([math.log(100.0), -0.2, 0.7, 0.08])
    assert trend(x, True) == pytest.approx(free(np.concatenate([x[:3], 0.08 * np.arange(1, 12)]), True), rel=1e-12)
    err = optimize.check_grad(trend, lambda p, wb: trend(p, wb, True)[1], x, True, epsilon=1e-7)
    assert err <= 1e-4 * max(1.0, np.linalg.norm(trend(x, True, True)[1])), err
