"""The rate over a log's span (simd.traces.trend, `simd trace stats`): the months counted independently here, the
exact Poisson interval against scipy.stats' own Poisson, Laplace's U by hand, the change point found where a
synthetic log's rate changes and its p-value near uniform under a constant rate; the text table short for a long
log, --json with every month."""

import json
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sst

from simd.cli import main
from simd.traces.log import parse
from simd.traces.stats import stats, table
from simd.traces.trend import MONTH_DAYS, months, poisson_interval, trend


def test_infinitehbd_months_and_laplace_equal_an_independent_count(infinitehbd):
    events = json.loads(infinitehbd.read_text())
    times = sorted(e["event_time"] for e in events if e["event_type"] == "fault_start")
    span = max(e["event_time"] for e in events)
    s = stats(parse(infinitehbd.read_text()), servers=400, over_time=True)
    by_month = Counter(min(int(t // (365.25 / 12)), 11) for t in times)
    assert [m.faults for m in s.by_month] == [by_month[k] for k in range(12)]
    assert sum(m.days for m in s.by_month) == pytest.approx(span) and s.by_month[-1].days < 30.44
    third = s.by_month[2]
    assert (third.faults, round(third.rate, 5)) == (111, 0.00912)  # the log's storm: 2.2x its mean rate
    u = (sum(times) / span - len(times) / 2) / math.sqrt(len(times) / 12)
    assert s.trend.laplace_u == pytest.approx(u) and s.trend.laplace_p > 0.3  # no trend over the year
    assert s.trend.change_p <= 0.01 and 30 < s.trend.change_day < 60  # a quiet start, then the rest
    assert s.trend.rate_before < s.trend.rate_after


@pytest.mark.parametrize("count", [0, 1, 7, 111, 5000])
def test_the_interval_is_the_exact_poisson_one(count):
    low, high = poisson_interval(count)
    # Garwood's: the means at which P(X >= count) and P(X <= count) are 2.5%
    assert sst.poisson.cdf(count, high) == pytest.approx(0.025, rel=1e-6)
    assert low == 0.0 if count == 0 else sst.poisson.sf(count - 1, low) == pytest.approx(0.025, rel=1e-6)


def test_the_change_point_is_found_where_the_rate_triples():
    rng = np.random.default_rng(3)
    starts = np.sort(np.concatenate([rng.uniform(0, 200, 100), rng.uniform(200, 400, 300)]))
    t = trend(starts, 400.0, None)
    assert t.change_p == 0.001 and 190 <= t.change_day <= 210
    assert t.rate_before == pytest.approx(0.5, rel=0.25) and t.rate_after == pytest.approx(1.5, rel=0.25)
    assert t.laplace_u > 3 and t.laplace_p < 0.01


def test_under_a_constant_rate_the_p_values_are_near_uniform():
    """60 logs of 300 faults uniform over 365 days: about 5% of each test's p-values under 0.05 (at most 9 of
    the 60 but for a probability ~0.1%) and their median near 0.5; tests whose null law were wrong (a change point
    compared with the chi-square of one degree of freedom: 42 of the 60 under 0.05) fail it."""
    rng = np.random.default_rng(5)
    got = [trend(np.sort(rng.uniform(0, 365, 300)), 365.0, None) for _ in range(60)]
    for p in ([t.laplace_p for t in got], [t.change_p for t in got]):
        assert sum(x < 0.05 for x in p) <= 9 and 0.3 < np.median(p) < 0.7


def test_a_long_log_prints_periods_of_months_and_json_has_every_month(tmp_path, capsys):
    rows = ["time,server,event,class"]
    for k in range(600):  # five years, a fault every ~3 days
        t = k * 5 * 365.25 * 86400 / 600
        rows += [f"{t:.0f},s{k % 40},start,gpu", f"{t + 3600:.0f},s{k % 40},end,gpu"]
    log = tmp_path / "five-years.csv"
    log.write_text("\n".join(rows) + "\n")
    assert main(["trace", "stats", str(log), "--servers", "40"]) == 0
    text = capsys.readouterr().out
    lines = text[text.index("rate by 4 months"):].splitlines()
    assert 14 <= sum(1 for x in lines if x.strip()[:1].isdigit()) <= 16
    assert "1-4" in lines[2] and "trend (Laplace)" in text and "one change point" in text
    assert main(["trace", "stats", str(log), "--servers", "40", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["by_month"]) == math.ceil(d["span_days"] / MONTH_DAYS) == 60
    assert d["rate_unit"] == "per server-day" and sum(m["faults"] for m in d["by_month"]) == 600
    assert d["trend"]["change_p"] > 0.01  # an even rate


def test_months_without_the_cluster_size_are_per_day_of_the_cluster():
    ms = months(np.array([0.0, 1.0, 40.0]), 45.0, None)
    assert [(m.faults, round(m.days, 4)) for m in ms] == [(2, 30.4375), (1, 14.5625)]
    assert ms[0].rate == pytest.approx(2 / 30.4375) and "per day (the cluster's" in table(
        stats(parse("time,server,event,class\n0,a,start,x\n86400,b,start,x\n3456000,c,start,x\n3888000,b,end,x\n"),
              over_time=True))


def test_a_log_spanning_a_moment_is_one_month():
    """A log whose faults all fall within a fraction of a second (a span of 1e-225 days) has one month, not a
    negative count of them (`trace stats` read such a log as an error)."""
    out = months(np.array([1.7e-225]), 1.7e-225, None)
    assert len(out) == 1 and out[0].faults == 1
