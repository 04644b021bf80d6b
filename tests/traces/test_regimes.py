"""Faults clustered in time in the fit (simd.traces.regimes; docs/traces.md "Regimes"): the forward algorithm's
likelihood against closed forms, the family chosen by AIC on a log that has regimes and not on one that has none,
and the scenario written with them read back by the schema."""

import math

import numpy as np

from simd.cli.trace import fit_table
from simd.scenario.load import parse_config
from simd.traces import regimes
from simd.traces.fit import fit
from simd.traces.scenario import Job, scenario_text
from simd.traces.synth import Model, generate


def _pieces(model: Model, servers: int, span: float, seed: int):
    log = generate(model, servers, span, np.random.default_rng(seed))
    return log, regimes.pieces(log, servers, np.ones(len(log.faults)))


def test_the_likelihood_is_the_poisson_one_when_the_regimes_are_alike():
    """Both regimes at one rate: the path drops out, the log-likelihood is n log(lambda) - lambda * exposure whatever
    the durations."""
    _, p = _pieces(Model(lifetime_scale_days=50.0, repair="exponential", repair_mean_days=3.0), 40, 200.0, 1)
    lam = p.faults / p.exposure
    want = p.faults * math.log(lam) - lam * p.exposure
    for leave in ((1.0, 1.0), (0.01, 5.0)):
        assert math.isclose(regimes.loglik(p, lam, lam, *leave), want, rel_tol=1e-9)


def test_the_likelihood_of_a_regime_that_never_leaves_is_its_poisson_one():
    """Regimes that never end (leaving rates ~0): the stationary mixture of the two Poisson likelihoods."""
    _, p = _pieces(Model(lifetime_scale_days=50.0, repair="exponential", repair_mean_days=3.0), 40, 200.0, 2)
    rc, rs, lc, ls = 0.01, 0.05, 1e-12, 3e-12
    pc = ls / (lc + ls)
    each = [p.faults * math.log(r) - r * p.exposure for r in (rc, rs)]
    want = math.log(pc * math.exp(each[0] - max(each)) + (1 - pc) * math.exp(each[1] - max(each))) + max(each)
    assert math.isclose(regimes.loglik(p, rc, rs, lc, ls), want, rel_tol=1e-7)


def test_the_fit_picks_regimes_where_the_log_has_them_and_writes_them():
    stormy = Model(lifetime_scale_days=100.0, repair="exponential", repair_mean_days=1.0,
                   regimes=((0.4, 15.0), (4.0, 3.0)))
    log = generate(stormy, 120, 300.0, np.random.default_rng(3))
    f = fit(log, 120)
    assert f.regimes is not None and f.aic["regimes"] < min(f.aic["exponential"], f.aic["weibull"])
    (mc, dc), (ms, ds) = f.regimes
    assert ms.value > mc.value and f.regime_ratio.low > 1
    text = scenario_text(f, Job(), "a synthetic log")
    servers = parse_config(text).scenarios[0].job_spec().servers
    assert servers.regimes == ((float(f"{mc.value:.6g}"), float(f"{dc.value:.6g}")),
                               (float(f"{ms.value:.6g}"), float(f"{ds.value:.6g}")))
    assert servers.lifetime == "exponential" and servers.rate_shape == 0.0  # the family fitted, as it is simulated
    # the table says what was written and why: the regimes' family has no frailty (not "the counts are not
    # over-dispersed"), a schedule whose test passed lost to the regimes by AIC (not "steady"), and the repairs'
    # exponential law is given by its mean alone (not by the lognormal's median and sigma it beat)
    assert f.schedule_p < 0.05 / f.schedule_tests and f.repair == "exponential", (f.schedule_p, f.repair)
    table = fit_table(f)
    assert "gamma frailty: none (the regimes' family has no frailty" in table
    assert "not over-dispersed" not in table and "steady" not in table
    assert "rate over the log's span: none written: the regimes' AIC" in table
    assert "median (days)" not in table and "sigma:" not in table and "  mean (days): " in table


def test_the_fit_keeps_the_renewal_family_where_the_log_has_no_regimes():
    steady = Model(lifetime_scale_days=100.0, lifetime_shape=0.7, gamma_shape=1.0, repair="exponential",
                   repair_mean_days=1.0)
    f = fit(generate(steady, 120, 300.0, np.random.default_rng(4)), 120)
    assert f.regimes is None and f.aic["regimes"] > f.aic["weibull"]
