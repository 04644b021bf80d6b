"""Repairs that do not hold inside the regimes joined with the lifetimes (simd.traces.joint.RelapseJoint; `simd
trace fit --relapse --joint-regimes`; docs/traces.md, "Relapses and regimes at once"): given a regime path, its
likelihood is the joint family's when no repair relapses, and so is its proposal; the proposal prices a storm over
an interval that could be either part of the mixture as the mixture does (the chord); its gradient is the
likelihood's; and one log the engine makes of both (tests/support/engine_logs.py) fitted back: the family chosen by
AIC, every interval holding the truth. The coverage over many logs: scripts/engine_recovery.py --families
relapse_regimes."""

import dataclasses
import math

import numpy as np
import pytest
from support.engine_logs import engine_log, spec_of

from simd.traces import fit as fit_module
from simd.traces import joint
from simd.traces.fit import fit
from simd.traces.stats import bursts
from simd.traces.synth import Model, generate

MEAN = (5.0 + 8.0 * 0.3) / 5.3  # a storm 8 times the calm rate, calm 5 days, stormy 0.3: the stationary mean
REGIMES = ((1.0 / MEAN, 5.0), (8.0 / MEAN, 0.3))
MODEL = Model(lifetime_scale_days=60.0, lifetime_shape=0.6, gamma_shape=1.5, repair="exponential",
              repair_mean_days=1e-9, relapse_probability=0.1, relapse_mean_days=0.05, regimes=REGIMES)


def _models(edges: np.ndarray):
    """(the joint model, the joint model with relapses) on one synthetic log of MODEL (repairs of half a day)."""
    m = Model(**{**MODEL.__dict__, "repair_mean_days": 0.5})
    log = generate(m, 120, 200.0, np.random.default_rng(2))
    starts = np.array([f.start for f in log.faults])
    spans = fit_module._spans(log, 120, np.where(bursts(starts, 0.0)[0], 0.0, 1.0))
    return (joint.Joint(spans, 120, log.span_days, edges, True, steps=1 << 12),
            joint.RelapseJoint(spans, 120, log.span_days, edges, True, steps=1 << 12))


def test_without_relapses_a_paths_likelihood_is_the_joint_ones():
    """logit p = -40: each path's complete-data likelihood is the joint family's (the relapse family's own
    tolerance, tests/traces/test_relapse_fit.py: its quadrature against the renewal fit's), on the same paths."""
    plain, both = _models(np.array([0.0, 200.0]))
    assert np.array_equal(plain.start, both.start) and np.array_equal(plain.owner, both.owner)
    x = np.array([math.log(70.0), math.log(0.7), math.log(1.2), -40.0, math.log(0.05), math.log(6.0)])
    d = np.log([5.0, 0.3])
    p = both.draw(x, d, 4, np.random.default_rng(1))
    assert p.paths.any()  # (storms drawn)
    for i in range(4):
        assert both.nll(x, p, i) == pytest.approx(plain.nll(np.delete(x, [3, 4]), p, i), abs=2e-3)


def test_without_relapses_the_proposal_is_the_joint_ones():
    """logit p = -40: no interval can be short, so the proposal's hazards are the joint family's (the frailty's
    posterior from the relapse quadrature, equal to the renewal fit's to its tolerance) and the chord (a storm's
    factor at each interval's last step making the interval's storm what the mixture makes it) vanishes."""
    plain, both = _models(np.array([0.0, 200.0]))
    x = np.array([math.log(70.0), math.log(0.7), math.log(1.2), -40.0, math.log(0.05), math.log(6.0)])
    d = np.log([5.0, 0.3])
    for got, want in zip(both.proposal(x, d), plain.proposal(np.delete(x, [3, 4]), d), strict=True):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9)


def test_the_chord_prices_a_storm_as_the_mixture_does():
    """One server (exponential lifetimes, so that a storm's hazard adds up step by step), a repair, then a fault
    0.3 days later that can be either part of the mixture (its share of a short lifetime between 0.1 and 0.95): the
    proposal's storm over that interval (its stormy steps' hazards against their calm ones, the fault's factor and
    the chord at its last step) moves its log-likelihood by what the relapse quadrature's mixture does, wholly stormy
    against wholly calm at the frailty's posterior held (without the chord: by the tangent at no storm, far off)."""
    spans = (np.zeros(3, dtype=np.int64), np.array([0.0, 10.5, 11.0]), np.array([10.0, 10.8, 200.0]),
             np.array([1.0, 1.0, 0.0]), np.array([2.0]))
    both = joint.RelapseJoint(spans, 1, 200.0, np.array([0.0, 200.0]), False, steps=1 << 12)
    r, mu = 7.0, 0.07
    x = np.array([math.log(79.0), math.log(2.0), math.log(0.1 / 0.9), math.log(mu), math.log(r - 1.0)])
    d = np.log([5.0, 0.3])
    lam, lam_s, log_fault = both.proposal(x, d)
    calm = both.overlap @ both.multipliers(x[both.base + 1:])
    mean = (5.0 + r * 0.3) / 5.3
    (_, _, s_c, t_c), (_, _, _, t_s) = both.relapse.hazard_weights(
        x[:both.base], dataclasses.replace(both.iv, x=calm * mean), False, np.stack([calm, r * calm]))
    assert 0.1 < s_c[1] < 0.95, s_c
    first, last = int(both.start[1] / both.h), int(both.end[1] / both.h)
    stormy = -(lam_s[first:last + 1] - lam[first:last + 1]).sum() + log_fault[last]
    exact = t_s[1] + math.log(r) - t_c[1]
    assert stormy == pytest.approx(exact, abs=1e-6)
    tangent = math.log(r) - (r - 1.0) * s_c[1] * calm[1] / mu  # (shares held: no chord, no stormy shares)
    assert abs(tangent - exact) > 5.0


def test_the_gradient_is_the_likelihoods():
    """A path's complete-data negative log-likelihood's analytic gradient (the lifetimes', the relapse's, the ratio's
    through the stormy days, a schedule's through the operational lengths) against central differences."""
    _, both = _models(np.array([0.0, 70.0, 140.0, 200.0]))
    x = np.array([math.log(70.0), math.log(0.7), math.log(1.2), -2.0, math.log(0.05), math.log(6.0), 0.4, -0.3])
    p = both.draw(x, np.log([5.0, 0.3]), 2, np.random.default_rng(3))
    for i in range(2):
        _, g = both.nll(x, p, i, grad=True)
        h = 1e-5
        numeric = [(both.nll(x + e, p, i) - both.nll(x - e, p, i)) / (2 * h) for e in np.eye(len(x)) * h]
        assert g == pytest.approx(numeric, rel=1e-4, abs=1e-3)


def test_an_engine_log_of_relapses_and_regimes_is_fitted_back():
    """200 servers over 200 days of the engine's own model (no pools: a failed server repaired at once): Weibull 0.6
    lifetimes (scale 60 days at the stationary mean), a frailty of shape 1.5, 10% of the repairs a short lifetime of
    1.2 h, regimes x8 (calm 5 days, stormy 0.3): the family of both written (its AIC the lowest), each of its eight
    intervals holding the truth, at most 20 times wide."""
    log = engine_log(spec_of(MODEL, 200, 200.0), 200.0, 7, np.random.default_rng(7))
    f = fit(log, 200, schedules=(), joint_regimes=True, relapse=True)
    assert f.regimes_family == "weibull, relapse, regimes" and f.aic[f.regimes_family] == min(f.aic.values()), f.aic
    assert f.relapse_aic == f.aic[f.regimes_family]
    (_, calm), (_, stormy) = f.regimes
    for name, truth, e in (("scale", 60.0, f.lifetime_scale_days), ("shape", 0.6, f.lifetime_shape),
                           ("frailty", 1.5, f.gamma_shape), ("p", 0.1, f.relapse_probability),
                           ("mu", 0.05, f.relapse_mean_days), ("ratio", 8.0, f.regime_ratio),
                           ("calm days", 5.0, calm), ("stormy days", 0.3, stormy)):
        assert e.low <= truth <= e.high, (name, e)
        assert e.high / e.low < 20, (name, e)
