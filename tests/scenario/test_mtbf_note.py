"""check-config's job MTBF is the servers' mean rate (their exponential equivalent): a scenario whose servers fail
otherwise (new servers of a Weibull shape below 1, a rate schedule, regimes, bursts: the file `simd trace fit`
writes for InfiniteHBD says 123 h where simd simulate averages an interruption per ~14.5 h of its 10,000 steps)
says so on the line, naming what is left out; a memoryless one's line stays as it was."""

import pytest
from support.scenarios import job, scenario_file

from simd.scenario import parse_config, summary

FAILURES = {"hard_per_gpu_hour": 2.5e-6, "sdc_per_gpu_hour": 0.0}


def line(servers: dict) -> str:
    text = scenario_file(job("s", n_gpus=3200, step_seconds=60, target_steps=10_000, validation=None,
                             failures=FAILURES, servers=servers))
    return summary(parse_config(text).scenarios[0])


MTBF = f"job MTBF {60 / (3200 * 2.5e-6 * 60 / 3600) / 3600:.3g} h"  # 3200 GPUs at 2.5e-6 per GPU-hour: 125 h


@pytest.mark.parametrize(("servers", "said"), [
    ({"lifetime": {"distribution": "weibull", "shape": 0.3233}},
     " (the servers' mean rate; new servers (at the job's start, after a repair) of Weibull shape 0.3233 fail more "
     "often at first: simd simulate counts them)"),
    ({"lifetime": {"distribution": "weibull", "shape": 2.0}}, "of Weibull shape 2 fail less often at first"),
    ({"lifetime": {"distribution": "lognormal", "sigma": 1.5}}, "lognormal lifetimes (sigma 1.5)"),
    ({"lifetime": {"distribution": "weibull", "shape": 0.5}, "rate_schedule": [
        {"from_day": 0, "multiplier": 0.1}, {"from_day": 30, "multiplier": 1.9}],
      "bursts": {"per_day": 0.1, "mean_size": 3.0}},
     "fail more often at first; its rate schedule and bursts not in it: simd simulate counts them)"),
    ({"regimes": {"calm": {"multiplier": 0.5, "mean_days": 2}, "stormy": {"multiplier": 5, "mean_days": 0.1}}},
     " (the servers' mean rate; regimes not in it: simd simulate counts them)"),
])
def test_the_mtbf_says_what_it_leaves_out(servers, said):
    out = line(servers)
    assert MTBF + " (the servers' mean rate; " in out and said in out


@pytest.mark.parametrize("servers", [{}, {"rates": {"gamma_shape": 0.4}},
                                     {"lifetime": {"distribution": "weibull", "shape": 1.0}}])
def test_memoryless_servers_at_their_mean_rate_keep_the_line(servers):
    """Memoryless servers (a frailty only changes which fail, not the mean rate): the MTBF is theirs, no note."""
    out = line(servers)
    assert f"{MTBF}, " in out and "mean rate" not in out
