"""`simd trace fit --relapse` (simd.traces.relapse; docs/traces.md, "Repairs that do not hold"): the mixture's
likelihood is the renewal fit's when no repair relapses, its gradient the likelihood's, and a log the engine makes
of a known model (tests/support/engine_logs.py) fitted back: the family chosen by AIC, every interval holding the
truth. Coverage over 100 logs: scripts/engine_recovery.py --families relapse."""

import math

import numpy as np
import pytest
from support.engine_logs import engine_log, spec_of

from simd.traces import fit as F
from simd.traces import relapse as R
from simd.traces.synth import Model, generate

MODEL = Model(lifetime_scale_days=60.0, lifetime_shape=0.6, gamma_shape=1.5, repair="exponential",
              repair_mean_days=1e-9, burst_per_day=0.05, burst_mean_size=3.0, relapse_probability=0.1,
              relapse_mean_days=0.05)


def _log(schedule=()):
    m = Model(**{**MODEL.__dict__, "repair_mean_days": 0.5, "rate_schedule": schedule})
    return generate(m, 150, 300.0, np.random.default_rng(2))


@pytest.mark.parametrize("params", [(60.0, 0.7, 1.5), (20.0, 1.3, 0.3), (60.0, 1.0, 5000.0)])
def test_without_relapses_the_likelihood_is_the_renewal_fits(params):
    log = _log()
    weight = np.ones(len(log.faults))
    renewal = F.likelihood(F._intervals(log, 150, weight), 150)
    iv = R.intervals(F._spans(log, 150, weight), 150)
    x = [math.log(v) for v in params]
    got = R.nll(np.array(x + [-40.0, math.log(0.05)]), iv, True)
    assert got == pytest.approx(renewal(np.array(x), True), abs=2e-3)


@pytest.mark.parametrize("schedule", [(), ((0.0, 0.5), (100.0, 1.5), (200.0, 1.0))])
def test_the_gradient_is_the_likelihoods(schedule):
    log = _log(schedule)
    weight = np.ones(len(log.faults))
    edges = np.array([0.0, 100.0, 200.0, 300.0]) if schedule else None
    iv = R.intervals(F._spans(log, 150, weight), 150, edges)
    x = np.array([math.log(50), math.log(0.8), math.log(1.2), -2.0, math.log(0.04)] + ([0.5, -0.3] if schedule else []))
    _, g = R.nll(x, iv, True, True)
    h = 1e-5
    numeric = [(R.nll(x + e, iv, True) - R.nll(x - e, iv, True)) / (2 * h) for e in np.eye(len(x)) * h]
    assert g == pytest.approx(numeric, rel=1e-4, abs=1e-3)


def test_an_engine_log_of_known_relapses_is_fitted_back():
    """200 servers over 200 days of the engine's own model (no pools: a failed server repaired at once), 10% of the
    repairs a short lifetime of 1.2 h: the relapse family written (its AIC the lowest), each interval holding the
    truth, and without --relapse none."""
    log = engine_log(spec_of(MODEL, 200, 200.0), 200.0, 7, np.random.default_rng(7))
    f = F.fit(log, 200, schedules=(), relapse=True)
    assert f.relapse_probability is not None and f.aic["weibull, relapse"] < f.aic["weibull"]
    for est, true in ((f.relapse_probability, 0.1), (f.relapse_mean_days, 0.05), (f.lifetime_scale_days, 60.0),
                      (f.lifetime_shape, 0.6), (f.gamma_shape, 1.5)):
        assert est.low <= true <= est.high, (est, true)
    assert F.fit(log, 200, schedules=()).relapse_probability is None
