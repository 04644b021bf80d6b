"""One model fitted and simulated (docs/traces.md, "The fit"): a server's gamma frailty w divides its Weibull
lifetime's scale, as the engine's gamma multiplies its rate (simd.engine.servers), in the fit's likelihood and in
the synthetic logs (simd.traces.synth). The fit's per-server integral over w against scipy.integrate.quad and,
for exponential lifetimes, against the negative binomial's closed form; a synthetic server's first lifetime against
the engine's law. The fit recovering known parameters and the engine simulating a fitted scenario:
tests/traces/statistical/test_model_is_simulated.py."""

import math

import numpy as np
from scipy import integrate, optimize, special, stats

from simd.traces.fit import _intervals, likelihood, log_frailty, log_frailty_numpy
from simd.traces.stats import bursts
from simd.traces.synth import Model, columns, generate


def _quad(n: int, h: float, a: float, k: float) -> float:
    """log E[w**(k n) exp(-w**k h)], w ~ Gamma(a, 1/a), by scipy.integrate.quad in u = log w around the mode."""
    r = a + k * n

    def g(u):
        return r * u - a * math.exp(u) - h * math.exp(k * u) if max(u, k * u) < 700 else -math.inf

    mode = next(u for u in np.linspace(-60, 10, 70001)[::-1] if r - a * math.exp(u) - k * h * math.exp(k * u) > 0)
    top = g(mode)
    pieces = ((-np.inf, mode - 5), (mode - 5, mode), (mode, mode + 5), (mode + 5, np.inf))
    total = sum(integrate.quad(lambda u: math.exp(g(u) - top), lo, hi, epsabs=0, epsrel=1e-12, limit=500)[0]
                for lo, hi in pieces)
    return a * math.log(a) - math.lgamma(a) + top + math.log(total)


CASES = [(n, h, a, k) for n in (0, 1, 4, 30) for h in (0.0, 1e-4, 0.3, 5.0, 80.0) for a, k in
         ((0.3, 0.42), (2.0, 0.7), (1.0, 1.5), (50.0, 0.5), (0.1, 3.0), (700.0, 0.2))]


def test_the_frailty_integral_is_scipy_quads():
    n, h, a, k = (np.array(c) for c in zip(*CASES, strict=True))
    for a_, k_ in {(x, y) for x, y in zip(a.tolist(), k.tolist(), strict=True)}:
        on = (a == a_) & (k == k_)
        got = log_frailty(n[on], h[on], a_, k_)
        want = np.array([_quad(int(x), y, a_, k_) for x, y in zip(n[on], h[on], strict=True)])
        assert np.allclose(got, want, rtol=1e-9, atol=1e-9), (a_, k_, got - want)


def test_the_compiled_quadrature_is_numpys():
    """log_frailty (compiled, server by server, the servers alike found by a lexsort) and log_frailty_numpy (every
    server at once) agree to 1e-12 relative, value and gradient, on the cases above with servers repeated in a
    shuffled order (the servers alike mapped back to each)."""
    n, h, a, k = (np.array(c) for c in zip(*CASES, strict=True))
    order = np.random.default_rng(1).permutation(np.repeat(np.arange(len(n)), 3))
    for a_, k_ in {(x, y) for x, y in zip(a.tolist(), k.tolist(), strict=True)}:
        on = order[(a[order] == a_) & (k[order] == k_)]
        got = log_frailty(n[on], h[on], a_, k_, grad=True)
        want = log_frailty_numpy(n[on], h[on], a_, k_, grad=True)
        for x, y in zip(got, want, strict=True):
            assert np.allclose(x, y, rtol=1e-12, atol=1e-12), (a_, k_, np.max(np.abs(np.asarray(x) - y)))


def test_exponential_lifetimes_give_the_negative_binomials_closed_form():
    n, h = np.repeat(np.arange(6), 4), np.tile([0.0, 0.01, 1.0, 40.0], 6)
    for a in (0.05, 1.0, 9.0):
        closed = special.gammaln(a + n) - special.gammaln(a) + a * math.log(a) - (a + n) * np.log(a + h)
        assert np.array_equal(log_frailty(n, h, a, 1.0), closed)
        # the quadrature next to k = 1 is the closed form's limit
        assert np.allclose(log_frailty(n, h, a, 1.0 + 1e-9), closed, rtol=1e-7, atol=1e-7)
    # and it is the negative binomial: a server's faults over a unit of time at rate w (no censoring apart)
    a, p = 2.0, 2.0 / 3.0
    assert np.allclose(log_frailty(np.arange(5), np.ones(5), a, 1.0) - special.gammaln(np.arange(5) + 1),
                       stats.nbinom.logpmf(np.arange(5), a, p))


def test_a_synthetic_servers_first_lifetime_has_the_engines_law():
    """The engine's server: scale theta / w (its gamma divides the scale), so P(first lifetime > x) =
    E[exp(-(x w / theta)**k)]; with the frailty on the cumulative hazard instead it would be
    (1 + (x / theta)**k / a)**-a, 0.50 at x = theta for a = 1, k = 0.5 where the engine's is 0.545."""
    theta, k, a, servers = 100.0, 0.5, 1.0, 20_000
    m = Model(lifetime_scale_days=theta, lifetime_shape=k, gamma_shape=a, repair="exponential",
              repair_mean_days=1e6)
    c = columns(m, servers, 10 * theta, np.random.default_rng(3))
    first = np.full(servers, np.inf)
    np.minimum.at(first, c.server, c.start / 86400.0)
    for x in (0.1 * theta, theta, 4 * theta):
        want = integrate.quad(lambda w, x=x: math.exp(-(x * w / theta) ** k) * stats.gamma.pdf(w, a, scale=1 / a),
                              0, np.inf)[0]
        got = (first > x).mean()
        assert abs(got - want) < 4 * math.sqrt(want * (1 - want) / servers), (x, got, want)


def test_the_frailty_integrals_derivatives_are_its_finite_differences():
    """log_frailty(..., grad=True): the partial derivatives in h, k and a (the fit's analytic gradient) against
    central differences of the value, in each variable's logarithm (steps of 1e-5: the quadrature's 1e-9 error over
    the step is 1e-4 at most, against derivatives of order one), on the quadrature's cases and at k = 1's closed
    form."""
    n, h, a, k = (np.array(c) for c in zip(*CASES, strict=True))
    for a_, k_ in sorted({(x, y) for x, y in zip(a.tolist(), k.tolist(), strict=True)} | {(0.3, 1.0), (9.0, 1.0)}):
        on = (a == a_) & (k == k_) if k_ != 1.0 else a == a
        nn, hh = n[on], np.maximum(h[on], 1e-6)  # (h = 0: no logarithm to step in)
        value, dh, dk, da = log_frailty(nn, hh, a_, k_, grad=True)
        assert np.array_equal(value, log_frailty(nn, hh, a_, k_))
        e = 1e-5
        step = {"h": lambda s: log_frailty(nn, hh * math.exp(s), a_, k_),  # noqa: B023  (used in this pass)
                "a": lambda s: log_frailty(nn, hh, a_ * math.exp(s), k_),  # noqa: B023
                "k": lambda s: log_frailty(nn, hh, a_, k_ * math.exp(s))}  # noqa: B023
        # (at k = 1 a step in k leaves the closed form for the quadrature: below)
        for name, got in (("h", dh * hh), ("a", da * a_)) + ((("k", dk * k_),) if k_ != 1.0 else ()):
            want = (step[name](e) - step[name](-e)) / (2 * e)
            assert np.allclose(got, want, rtol=1e-4, atol=1e-4), (name, a_, k_, got - want)
        if k_ == 1.0:  # the closed form's k derivative is the quadrature's next to k = 1
            near = log_frailty(nn, hh, a_, 1.0 + 1e-9, grad=True)
            assert np.allclose([dh, dk, da], near[1:], rtol=1e-6, atol=1e-6)


def test_the_fits_gradient_is_its_likelihoods_finite_differences():
    """The lifetimes' likelihood's analytic gradient (fit.likelihood, the optimizer's jac and the Wald Hessian's
    differences) against scipy.optimize.check_grad's forward differences, exponential and Weibull, over a log with
    frailty, bursts and censored servers, at the fit's start (k = 1 exactly: the closed form) and around it."""
    m = Model(lifetime_scale_days=80.0, lifetime_shape=0.7, gamma_shape=1.5, repair="lognormal",
              repair_median_days=1.0, repair_sigma=1.0, burst_per_day=0.05, burst_mean_size=3.0)
    servers = 60
    log = generate(m, servers, 200.0, np.random.default_rng(4))
    starts = np.array([f.start for f in log.faults]) / 86400.0
    in_burst, _ = bursts(starts, 0.0)
    nll = likelihood(_intervals(log, servers, np.where(in_burst, 0.0, 1.0)), servers)
    rng = np.random.default_rng(5)
    for weibull in (False, True):
        points = [np.array([math.log(80.0), 0.0, 0.0] if weibull else [math.log(80.0), 0.0])]
        points += [points[0] + rng.normal(0.0, 0.5, len(points[0])) for _ in range(4)]
        for x in points:
            value, grad = nll(x, weibull, True)
            assert value == nll(x, weibull)
            err = optimize.check_grad(nll, lambda p, w: nll(p, w, True)[1], x, weibull, epsilon=1e-7)
            assert err <= 1e-4 * max(1.0, np.linalg.norm(grad)), (weibull, x, err, grad)


def test_the_bursts_mean_size_interval_covers_it_at_a_few_bursts():
    """A log of ~10 bursts of 2 + a geometric number of servers (mean 3): the mean size's 95% interval holds the
    truth in at least 94% of 4,000 such logs (its exact negative binomial interval: ~96%; a Wald interval, the mean
    -+ 1.96 standard deviations of a skewed count, 89%)."""
    from simd.traces.fit import _burst_size

    rng = np.random.default_rng(34)
    hits = logs = 0
    for n in rng.poisson(10, 4000).tolist():
        if n:
            e = _burst_size(n, float(1 + rng.geometric(0.5, n).mean()))
            hits += e.low <= 3.0 <= e.high
            logs += 1
    assert hits / logs >= 0.94, hits / logs


def test_repairs_open_at_the_logs_end_are_censored_not_left_out():
    """Repairs of three lognormal kinds (weights 0.3, 0.5, 0.2, medians 0.02, 1 and 20 days) of faults spread over a
    100-day log, those that would end past it open: the long kind, a quarter of whose repairs are open, is fitted
    with its weight and median inside their intervals when the open repairs count as lasting at least as long as they
    have (right-censored), and its weight below its interval when they are left out."""
    from simd.traces.fit import _repairs

    rng = np.random.default_rng(34)
    kind = rng.choice(3, 1500, p=[0.3, 0.5, 0.2])
    length = np.exp(rng.normal(np.log([0.02, 1.0, 20.0])[kind], np.array([0.8, 0.7, 0.6])[kind]))
    left = 100.0 - rng.uniform(0.0, 100.0, 1500)  # each fault's time to the log's end
    closed, open_ = length[length <= left], left[length > left]
    got = _repairs(closed, open_)
    assert got["repair"] == "mixture" and len(got["repair_mixture"]) == 3, got["repair_aic"]
    weight, median, _ = got["repair_mixture"][2]
    assert weight.low <= 0.2 <= weight.high and median.low <= 20.0 <= median.high, (weight, median)
    weight = _repairs(closed)["repair_mixture"][2][0]
    assert weight.high < 0.2, weight
