"""simd trace fit's recovery of faults clustered in time: logs simulated by simd.traces.synth with the engine's
regimes (a calm regime of 20 days at x0.5 and a stormy one of 4 days at x3.5: a stationary mean of 1; exponential
lifetimes of mean 150 days, no frailty), 32 logs of 300 servers over 350 days from a fixed seed, fitted back: the
regimes' family chosen by AIC on every log, and the mean rate, the stormy-over-calm ratio and both mean durations
each inside its 95% interval in at least 27 of the 32 logs (P(Binomial(32, 0.95) <= 26) ~ 0.5%, as
test_fit_recovery.py), and each interval informative (its high at most WIDTH times its low) in as many: an interval
of no width covers anything. The rate schedules are not tried (half the time; with them tried the regimes are
still chosen on all 32: stretches of days are no rate by the month)."""

import numpy as np

from simd.traces.fit import fit
from simd.traces.synth import Model, generate

LOGS, SERVERS, SPAN = 32, 300, 350.0
(MC, DC), (MS, DS) = REGIMES = ((0.5, 20.0), (3.5, 4.0))
WIDTH = 20.0  # these intervals span at most ~5x at 300 servers x 350 days (the durations')
MODEL = Model(lifetime_scale_days=150.0, repair="exponential", repair_mean_days=2.0, regimes=REGIMES)


def test_regimes_are_fitted_back_with_their_intervals_covering_the_truth():
    rng = np.random.default_rng(34)
    hits = dict.fromkeys(("rate", "ratio", "calm_days", "stormy_days"), 0)
    narrow = dict.fromkeys(hits, 0)
    truth = {"rate": 1 / 150.0, "ratio": MS / MC, "calm_days": DC, "stormy_days": DS}
    for _ in range(LOGS):
        f = fit(generate(MODEL, SERVERS, SPAN, rng), SERVERS, schedules=())
        assert f.regimes is not None, f.aic
        (_, calm), (_, stormy) = f.regimes
        got = {"rate": f.rate_per_server_day, "ratio": f.regime_ratio, "calm_days": calm, "stormy_days": stormy}
        for k, e in got.items():
            hits[k] += e.low <= truth[k] <= e.high
            narrow[k] += 0 < e.low and e.high <= WIDTH * e.low
    assert min(hits.values()) >= 27 and min(narrow.values()) >= 27, (hits, narrow)
