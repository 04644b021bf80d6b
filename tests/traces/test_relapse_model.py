"""Repairs that do not hold: simd.traces.synth simulates the engine's model (servers.relapse: with a probability a
lifetime after a repair is exponential of a short mean divided by the server's frailty). Logs the engine makes of a
scenario written by the fit's own writer (tests/support/engine_logs.py, no pools: a failed server repaired at once)
against synth's logs of the same model: the share of a server's gaps between faults under 6 hours (the repeats a
relapse makes), and the faults per log."""

import numpy as np
from support.engine_logs import engine_log, spec_of

from simd.traces.log import DAY
from simd.traces.synth import Model, generate

MODEL = Model(lifetime_scale_days=60.0, lifetime_shape=0.7, gamma_shape=1.5, repair="exponential",
              repair_mean_days=1e-9, relapse_probability=0.3, relapse_mean_days=0.05)
SERVERS, SPAN = 200, 200.0


def _repeats(log) -> tuple[float, int]:
    """(the share of the servers' gaps between consecutive faults under 0.25 days, the faults)."""
    by: dict[int, list[float]] = {}
    for f in log.faults:
        by.setdefault(f.server, []).append(f.start / DAY)
    gaps = np.concatenate([np.diff(v) for v in by.values() if len(v) > 1])
    return float(np.mean(gaps < 0.25)), len(log.faults)


def test_synthetic_logs_have_the_engines_repeats_after_a_repair():
    spec = spec_of(MODEL, SERVERS, SPAN)
    assert spec.servers.relapse == (0.3, 1.2)  # the scenario written: 0.05 days = 1.2 hours
    rng = np.random.default_rng(34)
    engine = np.array([_repeats(engine_log(spec, SPAN, seed, rng)) for seed in range(4)])
    synth = np.array([_repeats(generate(MODEL, SERVERS, SPAN, rng)) for _ in range(12)])
    without = np.array([_repeats(generate(Model(**{**MODEL.__dict__, "relapse_probability": 0.0}), SERVERS, SPAN,
                                          rng)) for _ in range(4)])
    for k in range(2):
        se = np.sqrt(engine[:, k].var(ddof=1) / len(engine) + synth[:, k].var(ddof=1) / len(synth))
        assert abs(engine[:, k].mean() - synth[:, k].mean()) < 4 * se, (k, engine[:, k].mean(), synth[:, k].mean())
    assert engine[:, 0].mean() > without[:, 0].mean() + 0.1  # the relapses' repeats, which the Weibull lacks
