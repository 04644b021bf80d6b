"""The model `simd trace fit` fits is the model the engine simulates (docs/traces.md, "The fit"): Weibull lifetimes
of shape k != 1 whose scale a server's gamma frailty divides (the engine's ``rates.gamma_shape``), with bursts.

- Recovery: LOGS logs of known parameters fitted back, made by the engine itself (a scenario of those
  parameters, each server's faults read as below; synthetic logs of the same model: test_fit_recovery.py's
  Weibull-gamma-bursts configuration), each parameter inside
  its 95% interval in at least the count a true 95% coverage reaches but for 0.1% of the time
  (scipy.stats.binom.ppf(0.001, LOGS, 0.95)): intervals a third too narrow (coverage ~80%) fail it with
  probability ~0.9 per parameter. The rate schedules are not tried (the logs' rate is steady; their recovery:
  test_schedule_recovery.py), which keeps the 60 fits at half the time.
- End to end: a scenario written from a fit (simd.traces.scenario) run by the engine (simd.engine), its faults per
  server read from each server's lifetime end (State.srv_next) between consecutive interruptions, against
  synthetic logs of the same fitted model: the dispersion index, the share of servers without a fault and the mean
  count each within 4 standard errors of the two means' difference. The engine without pools (a failed server back
  at once), the synthetic logs with repairs of 1e-9 days: both the renewal processes of the servers, over the
  engine's executed steps."""

import math
from dataclasses import replace

import numpy as np
from scipy import stats

from simd.engine import US_PER_SECOND, advance, new_state
from simd.scenario import parse_config
from simd.traces.fit import Estimate, Fit, fit
from simd.traces.log import Fault, FaultLog
from simd.traces.scenario import Job, scenario_text
from simd.traces.synth import Model, columns, generate

LOGS = 60
TRUE = Model(lifetime_scale_days=150.0, lifetime_shape=0.5, gamma_shape=1.0, repair="lognormal",
             repair_median_days=1.0, repair_sigma=1.5, burst_per_day=0.05, burst_mean_size=3.0)


def _count(hits: dict[str, int], f: Fit, m: Model) -> None:
    for key, est, true in (("scale", f.lifetime_scale_days, m.lifetime_scale_days),
                           ("shape", f.lifetime_shape, m.lifetime_shape), ("gamma", f.gamma_shape, m.gamma_shape),
                           ("burst_rate", f.burst_per_day, m.burst_per_day),
                           ("burst_size", f.burst_mean_size, m.burst_mean_size)):
        hits[key] += est is not None and est.low <= true <= est.high


SERVERS, SPAN_DAYS, STEP = 200, 200.0, 60.0
REPLICAS = 30
NO_REPAIR = replace(TRUE, lifetime_scale_days=60.0, lifetime_shape=0.6, gamma_shape=1.5, repair_median_days=1e-9,
                    repair_sigma=0.1)


def _engine_faults(spec, seed: int) -> tuple[list[tuple[int, float]], int]:
    """The engine's faults over SPAN_DAYS as (server, second), read from each server's lifetime end (State.srv_next)
    in states taken between consecutive interruptions (a server fails at most once an interruption: its lifetime
    ends, or a burst strikes it, and a new one begins), and the executed steps."""
    s = replace(spec, seed=seed)
    end = int(SPAN_DAYS * 86400 * US_PER_SECOND)
    state = new_state(s)
    _, events = advance(state, end, trace=True)
    times = [e.t_us for e in events if e.kind == "interruption"]
    faults, before = [], None
    for at, mark in zip([0, *times], [times[0] // 2] + [(a + b) // 2 for a, b in zip(times, times[1:] + [end],
                                                                                     strict=True)], strict=True):
        state, _ = advance(state, mark)
        now = np.array(state.srv_next)
        if before is not None:
            faults += [(int(i), at / US_PER_SECOND) for i in np.flatnonzero(now != before)]
        before = now
    assert len(faults) == state.totals.server_failures
    return faults, state.g


def _engine_counts(spec, seed: int) -> tuple[np.ndarray, int]:
    faults, g = _engine_faults(spec, seed)
    return np.bincount([i for i, _ in faults], minlength=SERVERS), g


def _job(steps: int) -> Job:
    """A job without overheads (its clock is its executed steps), long enough for the span."""
    return Job(target_steps=10 * steps, step_seconds=STEP, checkpoint_steps=1, checkpoint_seconds=0.0,
               restart_seconds=0.0)


def _spec(f: Fit):
    steps = int(SPAN_DAYS * 86400 / STEP)
    spec = parse_config(scenario_text(f, _job(steps), "a synthetic log")).scenarios[0].job_spec()
    return replace(spec, servers=replace(spec.servers, warm_standbys=None))  # no pools: back at once


def test_the_engines_own_faults_are_recovered_inside_their_intervals():
    m = NO_REPAIR
    one = lambda v: Estimate(v, v, v)  # noqa: E731
    rate = 1.0 / (m.lifetime_scale_days * math.gamma(1.0 + 1.0 / m.lifetime_shape))
    known = Fit(servers=SERVERS, span_days=SPAN_DAYS, faults=1, independent_faults=1, lifetime="weibull",
                lifetime_scale_days=one(m.lifetime_scale_days), lifetime_shape=one(m.lifetime_shape),
                gamma_shape=one(m.gamma_shape), rate_per_server_day=one(rate), aic={"exponential": 1.0, "weibull": 0.0},
                bursts=1, burst_per_day=one(m.burst_per_day), burst_mean_size=one(m.burst_mean_size),
                repair="exponential", repair_median_days=None, repair_sigma=None, repair_mean_days=one(1e-9),
                repair_aic={"exponential": 0.0}, causes={"fault": 1.0})
    spec = _spec(known)
    assert (spec.servers.shape, spec.servers.rate_shape) == (m.lifetime_shape, m.gamma_shape)
    hits = dict.fromkeys(("scale", "shape", "gamma", "burst_rate", "burst_size"), 0)
    for seed in range(LOGS):
        faults, g = _engine_faults(spec, seed)
        log = FaultLog(tuple(f"s{i}" for i in range(SERVERS)), tuple(Fault(i, t, t, "", "fault", "")
                                                                   for i, t in sorted(faults, key=lambda x: x[1])),
                       g * STEP, "engine")
        f = fit(log, SERVERS, schedules=())  # (a steady rate: the schedules' own recovery elsewhere)
        assert f.lifetime == "weibull"
        _count(hits, f, m)
    assert min(hits.values()) >= stats.binom.ppf(0.001, LOGS, 0.95), hits


def _summary(counts: np.ndarray) -> tuple[float, float, float]:
    return counts.var() / counts.mean(), float((counts == 0).mean()), counts.mean()


def test_the_engine_simulates_the_fitted_model():
    f = fit(generate(NO_REPAIR, SERVERS, SPAN_DAYS, np.random.default_rng(5)), SERVERS)
    assert f.lifetime == "weibull" and f.gamma_shape is not None and f.burst_per_day is not None
    spec = _spec(f)
    assert (spec.servers.lifetime, spec.servers.rate_shape) == ("weibull", float(f"{f.gamma_shape.value:.4g}"))
    engine, executed = [], []
    for seed in range(REPLICAS):
        counts, g = _engine_counts(spec, seed)
        engine.append(_summary(counts))
        executed.append(g)
    rng = np.random.default_rng(6)
    model = f.model()
    synthetic = [_summary(np.bincount(columns(model, SERVERS, g * STEP / 86400, rng).server, minlength=SERVERS))
                 for g in executed]
    e, s = np.array(engine), np.array(synthetic)
    z = (e.mean(axis=0) - s.mean(axis=0)) / np.sqrt(e.var(axis=0, ddof=1) / REPLICAS
                                                    + s.var(axis=0, ddof=1) / REPLICAS)
    assert np.all(np.abs(z) < 4), dict(zip(("dispersion", "no fault", "mean"), z.round(2).tolist(), strict=True))
