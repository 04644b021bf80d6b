"""Fault logs the engine itself makes (simd.engine), for the fit's recovery from the engine's own model
(tests/traces/statistical/, scripts/engine_recovery.py; docs/traces.md, "The fit on logs of known parameters").

A synth.Model is written as a scenario file by the fit's own writer (simd.traces.scenario.scenario_text, from a
Fit whose estimates are the model's values), read by the scenario parser and run by the engine for a span of days
of compute. The job has no overheads (a checkpoint every step taking no time, no restart time), so its clock is
its executed steps: step ``g`` ends at ``g * step_seconds``, and a day of the log is a day of compute, the engine's
lifetimes', bursts', regimes' and rate schedule's time.

Each server's faults are read from the engine's state between consecutive interruptions (a server fails at most
once an interruption): its lifetime's end (``State.srv_next``) changed, or, with pools, its role turned to repair,
its repair's end (``State.srv_repair``) less the interruption's time its repair time (a repair that ends past
the span open, as a log's). A fault whose lifetime ended
(``srv_next`` before it the interruption's step) is placed uniformly within that step, where the continuous
lifetime ended (the engine resolves a lifetime to its step; two servers' lifetimes ending in one step would
otherwise be a same-instant pair, a burst to the fit); a burst's struck servers (their lifetimes not ended) share
one instant, the burst's, uniform within its step.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from simd.engine import US_PER_SECOND, advance, new_state
from simd.engine.servers import REPAIR, REPAIR_MANUAL
from simd.scenario import parse_config
from simd.traces.fit import Estimate, Fit
from simd.traces.log import DAY, Fault, FaultLog
from simd.traces.scenario import Job, scenario_text
from simd.traces.synth import Model

STEP = 60.0  # seconds a step (the fit's written scenarios' default)


class Unreadable(Exception):
    """A failed server the state does not show: a burst struck a server whose new lifetime ends in the very step
    its old one did (its lifetime's end unchanged; seen once in ~2,000 strikes, on a long log of a rising rate)."""


def _one(v: float) -> Estimate:
    return Estimate(v, v, v)


def known_fit(m: Model, servers: int, span_days: float) -> Fit:
    """A Fit whose estimates are ``m``'s values (scenario_text writes it as it writes a fit)."""
    k = m.lifetime_shape
    rate = 1.0 / (m.lifetime_scale_days * math.gamma(1.0 + 1.0 / k))
    if m.regimes:
        (mc, dc), (ms, ds) = m.regimes
        regimes = ((_one(mc), _one(dc)), (_one(ms), _one(ds)))
    return Fit(servers=servers, span_days=span_days, faults=1, independent_faults=1,
               lifetime="exponential" if k == 1.0 else "weibull", lifetime_scale_days=_one(m.lifetime_scale_days),
               lifetime_shape=None if k == 1.0 else _one(k),
               gamma_shape=_one(m.gamma_shape) if math.isfinite(m.gamma_shape) else None,
               rate_per_server_day=_one(rate), aic={"exponential": 0.0, "weibull": 0.0, "regimes": 0.0,
                                                     "exponential, by 3 months": 0.0, "weibull, by 3 months": 0.0},
               bursts=1, burst_per_day=_one(m.burst_per_day) if m.burst_per_day else None,
               burst_mean_size=_one(m.burst_mean_size) if m.burst_per_day else None,
               repair=m.repair, repair_median_days=_one(m.repair_median_days), repair_sigma=_one(m.repair_sigma),
               repair_mean_days=_one(m.repair_mean_days),
               repair_mixture=tuple((_one(w), _one(md), _one(sg)) for w, md, sg in m.repair_mixture),
               repair_aic={"exponential": 0.0, "lognormal": 0.0}, causes={"fault": 1.0},
               regimes=regimes if m.regimes else None, regime_ratio=_one(m.regimes[1][0] / m.regimes[0][0])
               if m.regimes else None, rate_schedule=tuple((d, _one(x)) for d, x in m.rate_schedule),
               schedule_months=3 if m.rate_schedule else 0, schedule_p=0.0 if m.rate_schedule else None,
               relapse_probability=_one(m.relapse_probability) if m.relapse_probability else None,
               relapse_mean_days=_one(m.relapse_mean_days) if m.relapse_probability else None)


def spec_of(m: Model, servers: int, span_days: float, pools: bool = False):
    """The engine's JobSpec of ``m`` on ``servers`` servers (no pools: a failed server back at once, its repairs
    not simulated; ``pools``: the written warm standbys, a standby for every server so that the job never
    waits for a repair)."""
    steps = int(span_days * DAY / STEP)
    job = Job(target_steps=10 * steps, step_seconds=STEP, checkpoint_steps=1, checkpoint_seconds=0.0,
              restart_seconds=0.0, warm_standbys=servers if pools else None)
    spec = parse_config(scenario_text(known_fit(m, servers, span_days), job, "a known model")).scenarios[0].job_spec()
    return spec if pools else replace(spec, servers=replace(spec.servers, warm_standbys=None))


def engine_log(spec, span_days: float, seed: int, rng: np.random.Generator) -> FaultLog:
    """The engine's faults of ``spec`` over ``span_days`` of compute with seed ``seed`` as a fault log of the
    cluster's servers (module docstring); ``rng`` places each fault within its step. With pools each fault's end
    is its repair's."""
    s = replace(spec, seed=seed)
    end = int(span_days * DAY * US_PER_SECOND)
    state = new_state(s)
    _, events = advance(state, end, trace=True)
    times = [e.t_us for e in events if e.kind == "interruption"]
    step_us = int(STEP * US_PER_SECOND)
    state, _ = advance(state, 0)  # the servers' first lifetimes drawn
    before = np.array(state.srv_next)
    pools = bool(state.srv_role)
    if pools:
        role, repair = np.array(state.srv_role), np.array(state.srv_repair)
    faults: list[Fault] = []
    for at in times:
        state, _ = advance(state, at + 1)  # the interruption at ``at`` done, none of its repairs over yet
        g, rest = divmod(at, step_us)  # the interruption's step: the lifetimes that ended in it
        assert rest == 0 and state.g == g, "the job's clock is its executed steps"
        now = np.array(state.srv_next)
        if pools:
            was_down = (role == REPAIR) | (role == REPAIR_MANUAL)
            role, old, repair = np.array(state.srv_role), repair, np.array(state.srv_repair)
            down = (role == REPAIR) | (role == REPAIR_MANUAL)
            failed = np.flatnonzero(down & (~was_down | (repair != old)))
        else:
            failed = np.flatnonzero(now != before)
        assert len(failed), "an interruption without a failed server"
        burst_at = (g - rng.random()) * STEP  # a burst's instant within its step
        for i in failed.tolist():
            t = (g - rng.random()) * STEP if before[i] == g else burst_at
            done = t + (int(repair[i]) - at) / US_PER_SECOND if pools else t
            faults.append(Fault(i, t, done if done <= end / US_PER_SECOND else None, "", "fault", ""))
        before = now
    if len(faults) != state.totals.server_failures:
        raise Unreadable
    faults.sort(key=lambda f: f.start)
    return FaultLog(tuple(f"s{i}" for i in range(len(before))), tuple(faults), span_days * DAY, "engine")


def engine_times(spec, span_days: float, seed: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """The engine's interruptions of ``spec`` (no pools) over ``span_days`` of compute as days, each placed
    uniformly within its step, and its failed servers (several failing in one step are one interruption): the
    faults' times without reading who failed, in one call of the engine."""
    s = replace(spec, seed=seed)
    state, events = advance(new_state(s), int(span_days * DAY * US_PER_SECOND), trace=True)
    at = np.array([e.t_us for e in events if e.kind == "interruption"], dtype=float) / US_PER_SECOND
    assert state.g * STEP == span_days * DAY, "the job's clock is its executed steps"
    return (at - rng.random(len(at)) * STEP) / DAY, state.totals.server_failures
