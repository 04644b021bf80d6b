"""The parametric bootstrap of the joint family's intervals (simd.traces.bootstrap; `simd trace fit --joint-regimes
--bootstrap N`; docs/traces.md, "The joint fit's intervals by a parametric bootstrap"): a refit writes the family it
is told to whatever the AIC says; the intervals are the estimate +- t x the refits' spread on each parameter's own
scale (refits made up here, so that every number is known); refits the log cannot hold are counted and left out;
the command line's flag, its refusals and what it prints. Its coverage over many logs: scripts/bootstrap_coverage.py
(docs/traces.md)."""

import dataclasses
import functools
import math
import time

import numpy as np
import pytest
from scipy import special, stats
from support.cli import simd

from simd import executors
from simd.traces import bootstrap as bootstrap_module
from simd.traces import fit as fit_module
from simd.traces import joint
from simd.traces.bootstrap import bootstrap
from simd.traces.fit import Estimate, fit
from simd.traces.synth import Model, generate

MEAN = (5.0 + 8.0 * 0.3) / 5.3  # a storm 8 times the calm rate, calm 5 days, stormy 0.3: the stationary mean
REGIMES = ((1.0 / MEAN, 5.0), (8.0 / MEAN, 0.3))


def _e(v: float) -> Estimate:
    return Estimate(v, v / 2, v * 2)


def _joint(f, ratio=8.0, calm=5.0, stormy=0.3, p=None, mu=None, theta=None, k=None, a=None, schedule=()):
    """``f`` with a joint family's estimates (the intervals made up: they are what the bootstrap replaces)."""
    e = (calm + ratio * stormy) / (calm + stormy)
    theta, k = theta or f.lifetime_scale_days.value, k or f.lifetime_shape.value
    return dataclasses.replace(
        f, regimes=((_e(1 / e), _e(calm)), (_e(ratio / e), _e(stormy))), regime_ratio=_e(ratio),
        rate_per_server_day=fit_module._rate(_e(theta), _e(k)),
        regimes_family="weibull, relapse, regimes" if p else "weibull, regimes",
        relapse_probability=_e(p) if p else None, relapse_mean_days=_e(mu) if mu else None,
        lifetime_scale_days=_e(theta), lifetime_shape=_e(k), gamma_shape=None if a is False else _e(a or 1.5),
        rate_schedule=tuple((day, _e(m)) for day, m in schedule))


@pytest.fixture()
def coarse(monkeypatch):
    """The joint fit's Monte Carlo EM on a coarse grid with few paths (what is checked here is which family is
    fitted and what is written, not the EM's accuracy: tests/traces/test_joint.py)."""
    monkeypatch.setattr(joint, "fit", functools.partial(joint.fit, steps=1 << 12, paths=8, final_paths=32))


@pytest.fixture(scope="module")
def plain():
    """A log without regimes (Weibull 0.7, frailty 1.5, 120 servers over 200 days) and its fit."""
    m = Model(lifetime_scale_days=60.0, lifetime_shape=0.7, gamma_shape=1.5, repair="exponential",
              repair_mean_days=0.2)
    log = generate(m, 120, 200.0, np.random.default_rng(11))
    return log, fit(log, 120, schedules=())


def test_a_refit_writes_the_family_it_is_told_whatever_the_aic_says(plain, coarse):
    """Without regimes in the log, the joint family's AIC is above the renewal family's (`--joint-regimes` would
    not write it); told to (``like``), the fit writes it all the same: the same renewal family, the regimes joined,
    no schedule, no relapses; a fit not of the joint family is no ``like``; and a family the log cannot hold
    (relapses with no repair to follow) is a ValueError."""
    log, f = plain
    told = fit(log, 120, like=_joint(f))
    assert told.aic["weibull, regimes"] > told.aic["weibull"], told.aic
    assert told.regimes_family == "weibull, regimes" and told.regimes is not None
    assert told.lifetime == "weibull" and told.relapse_probability is None and not told.rate_schedule
    (_, calm), (_, stormy) = told.regimes
    assert told.regime_ratio.value >= 1.0 and calm.value > 0 and stormy.value > 0
    with pytest.raises(ValueError, match="regimes joined"):
        fit(log, 120, like=f)
    unrepaired = dataclasses.replace(log, faults=tuple(dataclasses.replace(x, end=None) for x in log.faults))
    with pytest.raises(ValueError):  # no repair: nothing for relapses to follow (or no regime chain)
        fit(unrepaired, 120, like=_joint(f, p=0.1, mu=0.05))


def _made_up(monkeypatch, f, refits):
    """bootstrap's refits replaced by ``refits`` (Fits, or exceptions raised), the logs still drawn."""
    it = iter(refits)

    def refit(log, servers, burst_seconds, like):
        assert like is f and servers == f.servers
        got = next(it)
        if isinstance(got, Exception):
            raise got
        return got

    _refits_by(monkeypatch, refit)


def _refits_by(monkeypatch, refit):
    """bootstrap's calls of simd.traces.fit.fit made ``refit``'s (everything else in that module its own)."""
    class Fits:
        fit = staticmethod(refit)

        def __getattr__(self, name):
            return getattr(fit_module, name)

    monkeypatch.setattr(bootstrap_module, "fit_module", Fits())


def test_the_intervals_are_the_refits_spread_on_each_parameters_scale(plain, monkeypatch):
    """Three refits made up: each interval is the estimate +- t(2) x the refits' SD on its own scale (log; logit
    for the relapses' share; log(r - 1) for the ratio), the estimates unchanged; the multipliers' follow the
    ratio's, the schedule's pieces and the rate per server-day (1 / (theta Gamma(1 + 1/k)) of each refit) each
    theirs; a refit's frailty at its bound takes the frailty's interval to the bound, its low end from the other
    two."""
    _, f = plain
    f = _joint(f, ratio=8.0, calm=5.0, stormy=0.3, p=0.1, mu=0.05, theta=60.0, k=0.7, a=1.5,
               schedule=((0.0, 0.8), (100.0, 1.2)))
    rows = [dict(ratio=6.0, calm=4.0, stormy=0.25, p=0.08, mu=0.04, theta=55.0, k=0.65, a=1.2,
                 schedule=((0.0, 0.85), (100.0, 1.15))),
            dict(ratio=9.0, calm=7.0, stormy=0.4, p=0.12, mu=0.07, theta=70.0, k=0.75, a=False,
                 schedule=((0.0, 0.7), (100.0, 1.3))),
            dict(ratio=11.0, calm=3.0, stormy=0.2, p=0.15, mu=0.05, theta=62.0, k=0.72, a=2.5,
                 schedule=((0.0, 0.9), (100.0, 1.1)))]
    _made_up(monkeypatch, f, [_joint(f, **r) for r in rows])
    b = bootstrap(f, 3)
    assert b.bootstrap_refits == 3 and b.bootstrap_failures == ()
    bound = fit_module.GAMMA_SHAPE_MAX

    def check(e, want, values, to, back):
        half = stats.t.ppf(0.975, len(values) - 1) * np.std([to(v) for v in values], ddof=1)
        assert e.value == pytest.approx(want, rel=1e-12)
        got = (e.low, e.high) if math.isfinite(e.high) else (e.low,)
        assert got == pytest.approx((back(to(want) - half), back(to(want) + half))[:len(got)], rel=1e-12)

    log, exp = math.log, math.exp
    check(b.lifetime_scale_days, 60.0, [55.0, 70.0, 62.0], log, exp)
    check(b.lifetime_shape, 0.7, [0.65, 0.75, 0.72], log, exp)
    check(dataclasses.replace(b.gamma_shape, high=math.nan), 1.5, [1.2, 2.5], log, exp)  # (t(1) for two)
    assert b.gamma_shape.high == pytest.approx(bound)
    check(b.relapse_probability, 0.1, [0.08, 0.12, 0.15], special.logit, special.expit)
    check(b.relapse_mean_days, 0.05, [0.04, 0.07, 0.05], log, exp)
    check(b.regime_ratio, 8.0, [6.0, 9.0, 11.0], lambda r: log(r - 1), lambda y: 1 + exp(y))
    (mc, calm), (ms, stormy) = b.regimes
    check(calm, 5.0, [4.0, 7.0, 3.0], log, exp)
    check(stormy, 0.3, [0.25, 0.4, 0.2], log, exp)
    e = (5.0 + 8.0 * 0.3) / 5.3
    assert mc.value == pytest.approx(1 / e) and ms.value == pytest.approx(8.0 / e)
    for r, m in ((b.regime_ratio.low, (mc.high, ms.low)), (b.regime_ratio.high, (mc.low, ms.high))):
        e = (5.0 + r * 0.3) / 5.3
        assert m == pytest.approx((1 / e, r / e))
    def rate(theta, k):
        return 1 / (theta * math.gamma(1 + 1 / k))

    check(b.rate_per_server_day, rate(60.0, 0.7), [rate(55.0, 0.65), rate(70.0, 0.75), rate(62.0, 0.72)], log, exp)
    (_, m0), (_, m1) = b.rate_schedule
    check(m0, 0.8, [0.85, 0.7, 0.9], log, exp)
    check(m1, 1.2, [1.15, 1.3, 1.1], log, exp)


def test_refits_the_log_cannot_hold_are_counted_and_left_out(plain, monkeypatch):
    """A refit that raises ValueError is left out and its reason kept, as is a log past the goodness of fit's
    budget (10 times the log's faults, at least 1,000: a fitted model far from its log; the fit not run on it);
    fewer than two refits: a ValueError (no interval), naming how many failed and why; a numerical error is no
    refit the log cannot hold: it is raised."""
    _, f = plain
    f = _joint(f)
    _made_up(monkeypatch, f, [_joint(f, ratio=6.0), ValueError("the log holds no regime chain"),
                              _joint(f, ratio=10.0)])
    b = bootstrap(f, 3)
    assert b.bootstrap_refits == 2 and b.bootstrap_failures == ("the log holds no regime chain",)
    many = dataclasses.replace(f, lifetime_scale_days=Estimate(0.05, 0.05, 0.05))  # far more faults than f.faults
    _made_up(monkeypatch, many, [_joint(many, ratio=6.0), _joint(many, ratio=10.0)])
    with pytest.raises(ValueError, match="2 of the 2 bootstrap logs could not be fitted back.*passed [0-9]+ faults"):
        bootstrap(many, 2)
    _made_up(monkeypatch, f, [np.linalg.LinAlgError("singular")])
    with pytest.raises(np.linalg.LinAlgError):
        bootstrap(f, 2)
    half = stats.t.ppf(0.975, 1) * np.std([math.log(5.0), math.log(9.0)], ddof=1)
    assert b.regime_ratio.high == pytest.approx(1 + math.exp(math.log(7.0) + half))
    _made_up(monkeypatch, f, [_joint(f), ValueError("no"), ValueError("no")])
    with pytest.raises(ValueError, match="2 of the 3 bootstrap logs"):
        bootstrap(f, 3)
    with pytest.raises(ValueError, match="joined with the lifetimes"):
        bootstrap(plain[1], 3)


def test_the_refits_are_the_same_on_worker_processes(plain, monkeypatch):
    """The logs are drawn in this process, one after another from the seed; fitted back on two worker processes
    (`--workers`, simd.executors.LocalPool), in whatever order they end, the refits and the reasons of
    those left out come back in the logs' order: the same as in this process. (Refits made up from each log's
    count of faults, some of them left out, some slower; the workers, forked, fit with them too.)"""
    from simd.executors import LocalPool

    _, f = plain
    f = _joint(f)

    def refit(log, servers, burst_seconds, like):
        n = len(log.faults)
        time.sleep(0.05 * (n % 2))  # (the workers' refits end out of the logs' order)
        if n % 3 == 0:
            raise ValueError(f"left out: {n} faults")
        return _joint(like, ratio=2.0 + n / 100)

    _refits_by(monkeypatch, refit)
    here = bootstrap_module.refits(f, 9)
    pool = LocalPool(2, start="fork")  # (forked: the workers inherit the made-up refits)
    try:
        there = bootstrap_module.refits(f, 9, execute=pool)
    finally:
        pool.close()
    assert len(here[0]) + len(here[1]) == 9 and here[1], here  # some left out, some not
    assert np.array_equal(here[0], there[0]) and here[1] == there[1]


def test_the_command_line(tmp_path, monkeypatch, coarse):
    """--bootstrap N: refused without --joint-regimes and below 2; on a log of regimes (Weibull 0.7, frailty 1.5,
    x8 storms, 150 servers over 250 days) the scenario on standard output still check-config's, its header and the
    table saying the intervals are a bootstrap's of N refits, the estimates those of the fit without it (refits made
    cheap here: the log's own fit again, whose spread is 0, so the intervals close on the estimates)."""
    r = simd("trace", "fit", "x.csv", "--servers", "10", "--bootstrap", "3")
    assert r.returncode == 2 and "needs --joint-regimes" in r.stderr
    r = simd("trace", "fit", "x.csv", "--servers", "10", "--bootstrap", "1", "--joint-regimes")
    assert r.returncode == 2 and "from 2 to 1000" in r.stderr
    r = simd("trace", "fit", "x.csv", "--servers", "10", "--joint-regimes", "--workers", "2")
    assert r.returncode == 2 and "--workers runs the bootstrap's refits: it needs --bootstrap N" in r.stderr
    r = simd("trace", "fit", "x.csv", "--servers", "10", "--joint-regimes", "--bootstrap", "3", "--workers", "2",
             "--scheduler", "tcp://127.0.0.1:1")
    assert r.returncode == 2 and "--workers is for local runs" in r.stderr
    r = simd("trace", "fit", "x.csv", "--servers", "10", "--joint-regimes", "--bootstrap", "3", "--scheduler", " ")
    assert r.returncode == 2 and "--scheduler: expected a scheduler's address" in r.stderr
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_SECONDS", 0.5)
    r = simd("trace", "fit", "x.csv", "--servers", "10", "--joint-regimes", "--bootstrap", "3", "--scheduler",
             "tcp://127.0.0.1:1")  # before any work: the scheduler unreachable, the log (none here) not read
    assert r.returncode == 1 and r.stderr.startswith("simd trace fit: error: --scheduler tcp://127.0.0.1:1: cannot "
                                                     "connect"), r.stderr
    m = Model(lifetime_scale_days=150.0, lifetime_shape=0.7, gamma_shape=1.5, repair="exponential",
              repair_mean_days=0.3, regimes=REGIMES)
    log = generate(m, 150, 250.0, np.random.default_rng(4))
    rows = sorted([(x.start, 0, x.server, "start") for x in log.faults]
                  + [(x.end, 1, x.server, "end") for x in log.faults if x.end is not None])
    path = tmp_path / "log.csv"
    path.write_text("time,server,event,class\n" + "".join(f"{t!r},s{s},{e},gpu\n" for t, _, s, e in rows))
    told = []

    def refit(*a, like, **kw):
        told.append(like)
        return like

    _refits_by(monkeypatch, refit)
    r = simd("trace", "fit", str(path), "--servers", "150", "--joint-regimes", "--bootstrap", "2", "--replicas", "0",
             "--workers", "1")  # (this process: the refits made cheap here are this process's)
    assert r.returncode == 0, r.stderr
    own = told[0]
    assert len(told) == 2 and own.regimes_family == "weibull, regimes", own.aic
    assert "Intervals are 95%; the regimes joined with the lifetimes': a parametric bootstrap of 2 refits." \
        in r.stdout
    assert "a parametric bootstrap of 2 refits, docs/traces.md)" in r.stderr
    assert "--bootstrap 2: fewer than 10 refits" in r.stderr
    assert f"stormy over calm rate: {own.regime_ratio.value:.4g} (95%: {own.regime_ratio.value:.4g} .. " \
           f"{own.regime_ratio.value:.4g})" in r.stderr
    out = tmp_path / "fitted.yaml"
    out.write_text(r.stdout)
    assert simd("check-config", str(out)).returncode == 0
