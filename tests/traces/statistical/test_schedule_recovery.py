"""simd trace fit's recovery of a rate that varies over the log's span: logs simulated by simd.traces.synth with the
engine's rate schedule (a time change of the servers' ages: pieces of three months at x0.5, x1.8, x0.8 and x1.0 of
the rate) over Weibull 0.8 lifetimes with a gamma frailty of shape 2 and bursts, 32 logs of 200 servers over 350 days
from a fixed seed, fitted back: a schedule whose pieces hold the truth's (by three months, or by month) written on at
least 27 of the 32 (its likelihood ratio test against a steady rate: simd.traces.fit.SCHEDULE_LEVEL), and the scale,
the shape, the frailty, the burst rate and each piece's multiplier (the truth's normalised as the fit's are, to a
time-weighted mean of 1 over the span, the scale with them) inside its 95% interval in at least 27 of the 32
(P(Binomial(32, 0.95) <= 26) ~ 0.5%, as test_fit_recovery.py), each interval informative (its high at most WIDTH
times its low) in as many."""

import numpy as np

from simd.traces.fit import fit, schedule_edges
from simd.traces.synth import Model, generate

LOGS, SERVERS, SPAN = 32, 200, 350.0
EDGES = schedule_edges(SPAN, 3)  # 0, 91.3, 182.6, 273.9, 350
RAW = np.array([0.5, 1.8, 0.8, 1.0])
MEAN = float(np.diff(EDGES) @ RAW) / SPAN
WIDTH = 20.0  # as test_regimes_recovery.py's
MODEL = Model(lifetime_scale_days=120.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
              repair_mean_days=2.0, burst_per_day=0.05, burst_mean_size=3.0,
              rate_schedule=tuple(zip(EDGES[:-1].tolist(), RAW.tolist(), strict=True)))


def _truth_at(day: float) -> float:
    """The truth's normalised multiplier of the piece that holds ``day`` (a fitted piece's first day)."""
    return float(RAW[np.searchsorted(EDGES, day + 1e-9, "right") - 1]) / MEAN


def test_a_rate_schedule_is_fitted_back_with_its_intervals_covering_the_truth():
    rng = np.random.default_rng(34)
    hits: dict[str, int] = {}
    narrow: dict[str, int] = {}
    chosen = 0

    def count(key, est, true):
        hits[key] = hits.get(key, 0) + (est is not None and est.low <= true <= est.high)
        narrow[key] = narrow.get(key, 0) + (est is not None and 0 < est.low and est.high <= WIDTH * est.low)

    for _ in range(LOGS):
        f = fit(generate(MODEL, SERVERS, SPAN, rng), SERVERS)
        count("scale", f.lifetime_scale_days, MODEL.lifetime_scale_days / MEAN)
        count("shape", f.lifetime_shape, MODEL.lifetime_shape)
        count("gamma", f.gamma_shape, MODEL.gamma_shape)
        count("burst_rate", f.burst_per_day, MODEL.burst_per_day)
        # pieces inside the truth's, free (not the trend's): each has one true multiplier
        if f.schedule_months in (1, 3) and f.schedule_trend is None:
            chosen += 1
            # one per log and true piece: the fitted piece that starts with it (by month, its first month)
            starts = {round(day, 6): m for day, m in f.rate_schedule}
            for piece, day in enumerate(EDGES[:-1]):
                count(f"multiplier_{piece}", starts[round(float(day), 6)], _truth_at(float(day)))
    assert chosen >= 27, chosen
    assert min(hits.values()) >= 27 and min(narrow.values()) >= 27, (hits, narrow)
