"""The logs the engine makes and simd.traces.synth's agree in distribution for the families the fit's recovery
over many logs measures from the engine (scripts/engine_recovery.py; docs/traces.md, "The fit on logs of known
parameters"): the regimes (faults clustered in time), the rate schedule and the repair mixture, each model written
as a scenario by the fit's own writer and run by the engine (tests/support/engine_logs.py). A few logs of each
maker, their means compared within 4 standard errors of the difference (two independent samples): the engine's
regimes in days of compute and synth's in the log's days, the schedule's pieces by executed step and by day, the
mixture's component drawn by the engine's one uniform and by synth's weights, each one law."""

import numpy as np
from scipy import stats as sps
from support.engine_logs import engine_log, engine_times, spec_of

from simd.traces.log import DAY
from simd.traces.synth import Model, generate
from simd.traces.trend import MONTH_DAYS

SPAN = 350.0


def _z(a: list, b: list) -> np.ndarray:
    a, b = np.array(a, dtype=float), np.array(b, dtype=float)
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    return (a.mean(axis=0) - b.mean(axis=0)) / se


def _both(m: Model, servers: int, logs: int, summary) -> np.ndarray:
    """The z of each summary's mean, of the engine's faults' times (its interruptions) against synth's, over
    ``logs`` logs each (synth's repairs of 1e-9 days: without pools the engine's failed server is back at once)."""
    spec = spec_of(m, servers, SPAN)
    rng = np.random.default_rng(34)
    engine = [summary(*engine_times(spec, SPAN, seed, rng)) for seed in range(logs)]
    same = Model(**{**m.__dict__, "repair": "exponential", "repair_mean_days": 1e-9})
    synth = []
    for _ in range(logs):
        log = generate(same, servers, SPAN, rng)
        synth.append(summary(np.array([f.start for f in log.faults]) / DAY, len(log.faults)))
    return _z(engine, synth)


def test_the_engines_regimes_are_synths():
    """Calm x0.5 for 20 days, stormy x3.5 for 4: the faults, the gaps' CV and the months' dispersion (chi-square
    over its degrees of freedom: 1 for a steady rate, ~10 here) agree; regimes of 20 and 4 steps instead of days
    would give a gaps' CV of 1 and a dispersion of 1."""
    m = Model(lifetime_scale_days=150.0, repair="exponential", repair_mean_days=2.0,
              regimes=((0.5, 20.0), (3.5, 4.0)))

    def summary(days, faults):
        gaps = np.diff(np.sort(days))
        counts = np.histogram(days, np.append(np.arange(0.0, SPAN, MONTH_DAYS), SPAN))[0]
        expected = len(days) * np.diff(np.append(np.arange(0.0, SPAN, MONTH_DAYS), SPAN)) / SPAN
        return [faults, gaps.std() / gaps.mean(), ((counts - expected) ** 2 / expected).sum() / (len(counts) - 1)]

    z = _both(m, 300, 10, summary)
    assert np.all(np.abs(z) < 4), dict(zip(("faults", "gap CV", "months' dispersion"), z.round(2).tolist(),
                                           strict=True))


def test_the_engines_rate_schedule_is_synths():
    """x0.5, x1.8, x0.8, x1.0 by three months over Weibull 0.8 lifetimes with a gamma frailty: each quarter's
    share of the faults agrees (about 0.13, 0.40, 0.20, 0.27: the schedule's pieces by executed step in the
    engine, by day in synth)."""
    edges = [0.0, 91.3125, 182.625, 273.9375]
    m = Model(lifetime_scale_days=120.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
              repair_mean_days=2.0, rate_schedule=tuple(zip(edges, (0.5, 1.8, 0.8, 1.0), strict=True)))

    def summary(days, faults):
        return np.histogram(days, [*edges, SPAN])[0] / len(days)

    z = _both(m, 200, 8, summary)
    assert np.all(np.abs(z) < 4), z.round(2).tolist()


def test_the_engines_repair_mixture_is_synths():
    """Repairs of three lognormal kinds (weights 0.3, 0.5, 0.2, medians 0.02, 1 and 20 days) drawn by the engine
    for a job with pools (each server's repair read from its state) and by synth: one law (two-sample
    Kolmogorov-Smirnov over the repairs of a log of each)."""
    m = Model(lifetime_scale_days=150.0, repair="mixture",
              repair_mixture=((0.3, 0.02, 0.8), (0.5, 1.0, 0.7), (0.2, 20.0, 0.6)))
    rng = np.random.default_rng(34)

    def repairs(log):
        return [(f.end - f.start) / DAY for f in log.faults if f.end is not None]

    engine = repairs(engine_log(spec_of(m, 400, SPAN, pools=True), SPAN, 0, rng))
    synth = repairs(generate(m, 400, SPAN, rng))
    assert len(engine) > 800 and len(synth) > 800
    assert sps.ks_2samp(engine, synth).pvalue > 1e-3
