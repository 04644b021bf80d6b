"""The regimes joined with the renewal lifetimes (simd.traces.joint; docs/traces.md, "Regimes with the lifetimes"):
the Monte Carlo EM's importance weights exact where the proposal is the model (exponential servers without a
frailty: the regimes' MMPP), and one log the engine makes of regimes, Weibull lifetimes and a frailty fitted back
(the family chosen by AIC, every parameter's interval holding the truth and informative). The coverage over many
logs: scripts/engine_recovery.py --families joint."""

import math

import numpy as np
from support.engine_logs import engine_log, spec_of

from simd.traces import fit as fit_module
from simd.traces import joint
from simd.traces.fit import fit
from simd.traces.stats import bursts
from simd.traces.synth import Model, generate

SPAN = 350.0
MEAN = (5.0 + 8.0 * 0.3) / 5.3  # a storm 8 times the calm rate, calm 5 days, stormy 0.3: the stationary mean
REGIMES = ((1.0 / MEAN, 5.0), (8.0 / MEAN, 0.3))


def _joint(log, servers: int) -> joint.Joint:
    starts = np.array([f.start for f in log.faults])
    weight = np.where(bursts(starts, 0.0)[0], 0.0, 1.0)
    return joint.Joint(fit_module._spans(log, servers, weight), servers, log.span_days,
                       np.array([0.0, log.span_days]), True, steps=1 << 14)


def test_the_weights_are_exact_where_the_proposal_is_the_model():
    """Exponential lifetimes without a frailty (k = 1, a frailty shape of 1e8): the proposal's MMPP is the model
    given the path, so every path's importance weight is the same (their log's spread under 0.01: the grid's steps
    against the intervals' ends), where Weibull lifetimes of shape 0.7 spread them (the ages a storm moves: over
    0.1)."""
    m = Model(lifetime_scale_days=150.0, repair="exponential", repair_mean_days=1.0, regimes=REGIMES)
    log = generate(m, 100, SPAN, np.random.default_rng(3))
    j = _joint(log, 100)
    d = np.log([5.0, 0.3])
    for shape, spread in ((1.0, (0.0, 0.01)), (0.7, (0.1, math.inf))):
        x = np.array([math.log(150.0 * MEAN), math.log(shape), math.log(1e8), math.log(7.0)])
        p = j.draw(x, d, 8, np.random.default_rng(1))
        lw, _ = j.weights(x, p)
        assert spread[0] <= lw.std() < spread[1], (shape, lw.std())


def test_the_joint_fit_recovers_the_engines_model():
    """A log the engine makes (tests/support/engine_logs.py) of Weibull 0.7 lifetimes (scale 150 days at the
    stationary mean), a frailty of shape 1.5 and regimes (x8 stormy over calm, 5 and 0.3 days), 200 servers over
    300 days: the joint family is written (its AIC the lowest), and the scale, shape, frailty, ratio and both mean
    durations each have an interval holding the truth, at most 20 times wide."""
    m = Model(lifetime_scale_days=150.0, lifetime_shape=0.7, gamma_shape=1.5, repair="exponential",
              repair_mean_days=1e-9, regimes=REGIMES)
    log = engine_log(spec_of(m, 200, 300.0), 300.0, 4, np.random.default_rng(4))
    f = fit(log, 200, schedules=(), joint_regimes=True)
    assert f.regimes is not None and f.regimes_family == "weibull, regimes", f.aic
    assert f.aic["weibull, regimes"] == min(f.aic.values())
    (_, calm), (_, stormy) = f.regimes
    for name, truth, e in (("scale", 150.0, f.lifetime_scale_days), ("shape", 0.7, f.lifetime_shape),
                           ("frailty", 1.5, f.gamma_shape), ("ratio", 8.0, f.regime_ratio),
                           ("calm days", 5.0, calm), ("stormy days", 0.3, stormy)):
        assert e.low <= truth <= e.high, (name, e)
        assert e.high / e.low < 20, (name, e)


def test_the_regimes_variances_are_marginal_over_the_lifetimes():
    """The joint fit's covariance (joint.covariance): the information with its regimes' block the approximating
    MMPP's curvature, inverted whole, so the regimes' variances are their marginal ones, wider than the block's
    alone (their variance given the lifetimes) by what the lifetimes' uncertainty passes to them through Louis'
    cross terms; without cross terms the block's alone; where the whole is not positive definite, the blocks
    apart."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(7, 7))
    info = a @ a.T + 7 * np.eye(7)  # (log theta, log k, log a, log(r - 1), b_2, log d_c, log d_s)
    b = 3
    regime = [3, 5, 6]
    rest = [0, 1, 2, 4]
    c = rng.normal(size=(3, 3))
    curvature = c @ c.T + 3 * np.eye(3)
    cov = joint.covariance(info, curvature, b)
    whole = info.copy()
    whole[np.ix_(regime, regime)] = curvature
    assert np.allclose(cov, np.linalg.inv(whole))
    given = np.diag(np.linalg.inv(curvature))
    assert np.all(np.diag(cov)[regime] > given * (1 + 1e-6))
    apart = info.copy()
    apart[np.ix_(regime, rest)] = 0.0
    apart[np.ix_(rest, regime)] = 0.0
    assert np.allclose(np.diag(joint.covariance(apart, curvature, b))[regime], given)
    bad = info.copy()
    bad[np.ix_(regime, rest)] = 50.0  # (cross terms no positive definite whole has)
    bad[np.ix_(rest, regime)] = 50.0
    cov = joint.covariance(bad, curvature, b)
    assert np.allclose(cov[np.ix_(regime, regime)], np.linalg.inv(curvature))
    assert np.allclose(cov[np.ix_(regime, rest)], 0.0)
