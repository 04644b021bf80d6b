"""simd trace fit's recovery (issue 22's must-show): logs simulated from known parameters (simd.traces.synth)
are fitted back with each parameter inside its 95% interval at about the stated rate. Four configurations
(Weibull 0.7 with gamma rates and bursts; exponential with strong over-dispersion; exponential with repairs of a
mixture of three lognormal kinds; wear-out Weibull 1.5 without frailty or bursts), 32 logs each of 300 servers
over 350 days, from a fixed seed. Coverage is counted per parameter; with 32 logs a true 95% gives at least 27
but for P(Binomial(32, 0.95) <= 26) ~ 0.5%, so the check is ``>= 27`` (84%): intervals too narrow by a third (true
coverage ~80%) fail it with probability ~0.64. An interval of no width covers anything (an infinite or huge one
would pass the coverage check whatever the fit), so each must also be informative, its high at most WIDTH times its
low, in as many logs (test_regimes_recovery.py's check). The rate schedules are not tried here (the logs' rate is
steady; their recovery, the other parameters' beside them: test_schedule_recovery.py), which keeps the 128 fits at
half the time."""

import numpy as np
import pytest

from simd.traces.fit import fit
from simd.traces.synth import Model, generate

LOGS = 32
SERVERS = 300
WIDTH = 20.0  # as test_regimes_recovery.py; every interval counted here is within it on each of the 32 logs
CONFIGS = {
    "weibull_0.7_gamma_bursts": Model(lifetime_scale_days=200.0, lifetime_shape=0.7, gamma_shape=1.5,
                                      repair="lognormal", repair_median_days=1.0, repair_sigma=1.5,
                                      burst_per_day=0.08, burst_mean_size=3.0),
    "exponential_gamma_0.5": Model(lifetime_scale_days=150.0, gamma_shape=0.5, repair="exponential",
                                   repair_mean_days=3.0),
    # repairs of three kinds (a reset of ~30 min, a part swap of a day, a vendor's replacement of ~3 weeks): the AIC
    # picks the mixture of 3, each component's weight, median and sigma inside its interval
    "exponential_repair_mixture": Model(lifetime_scale_days=150.0, repair="mixture",
                                        repair_mixture=((0.3, 0.02, 0.8), (0.5, 1.0, 0.7), (0.2, 20.0, 0.6))),
    "weibull_1.5": Model(lifetime_scale_days=120.0, lifetime_shape=1.5, repair="lognormal", repair_median_days=0.5,
                         repair_sigma=0.8, burst_per_day=0.05),
}


def _covered(name: str, m: Model) -> tuple[dict[str, int], dict[str, int]]:
    """Per parameter: the logs whose interval covers the truth, and those whose interval is informative."""
    rng = np.random.default_rng(22)
    hits: dict[str, int] = {}
    narrow: dict[str, int] = {}

    def count(key, est, true):
        hits[key] = hits.get(key, 0) + (est is not None and est.low <= true <= est.high)
        narrow[key] = narrow.get(key, 0) + (est is not None and 0 < est.low and est.high <= WIDTH * est.low)

    for _ in range(LOGS):
        f = fit(generate(m, SERVERS, 350.0, rng), SERVERS, schedules=())
        assert f.lifetime == ("exponential" if m.lifetime_shape == 1.0 else "weibull") or abs(
            m.lifetime_shape - 1.0) < 0.5  # the AIC picks the family (Weibull 0.7 and 1.5 are told from 1)
        count("scale", f.lifetime_scale_days, m.lifetime_scale_days)
        if m.lifetime_shape != 1.0:
            count("shape", f.lifetime_shape, m.lifetime_shape)
        if np.isfinite(m.gamma_shape):
            count("gamma", f.gamma_shape, m.gamma_shape)
        if m.burst_per_day:
            count("burst_rate", f.burst_per_day, m.burst_per_day)
        if m.repair == "mixture":
            assert f.repair == "mixture" and len(f.repair_mixture) == len(m.repair_mixture), f.repair_aic
            for j, (fitted, true) in enumerate(zip(f.repair_mixture, m.repair_mixture, strict=True)):
                for name, est, value in zip(("weight", "median", "sigma"), fitted, true, strict=True):
                    count(f"repair_{name}_{j}", est, value)
        elif m.repair == "lognormal":
            count("repair_median", f.repair_median_days, m.repair_median_days)
            count("repair_sigma", f.repair_sigma, m.repair_sigma)
        else:
            count("repair_mean", f.repair_mean_days, m.repair_mean_days)
    return hits, narrow


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_known_parameters_are_recovered_inside_their_intervals(name):
    hits, narrow = _covered(name, CONFIGS[name])
    assert all(v >= 27 for v in hits.values()), hits
    assert all(v >= 27 for v in narrow.values()), narrow
