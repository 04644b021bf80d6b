"""simd.traces.stats on the InfiniteHBD trace, against an independent count written here with json and
collections only (the issue's must-show: faults, servers, classes, the zero-gap count, per-server counts), and on
small hand-made logs whose every statistic is known."""

import json
import math
import statistics
from collections import Counter

import pytest

from simd.traces.log import parse
from simd.traces.stats import stats


def test_infinitehbd_numbers_equal_an_independent_count(infinitehbd):
    events = json.loads(infinitehbd.read_text())
    starts = [e for e in events if e["event_type"] == "fault_start"]
    times = sorted(e["event_time"] for e in starts)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    per_server = Counter(e["node_id"] for e in starts)
    classes = Counter(e["fault_type"]["Class"] for e in starts)

    s = stats(parse(infinitehbd.read_text()), servers=400)
    assert (s.faults, s.servers_named) == (len(starts), len(per_server)) == (584, 231)
    assert s.by_class == dict(classes.most_common()) and list(s.by_class)[:3] == ["GPU", "Unknown Error",
                                                                                   "Stress Test Failure"]
    assert s.zero_gaps == sum(g == 0 for g in gaps) == 55
    assert s.gap_cv == pytest.approx(statistics.pstdev(gaps) / statistics.mean(gaps), rel=1e-9)
    assert round(s.gap_cv, 2) == 1.76
    hist = Counter(per_server.values())
    hist[0] = 400 - len(per_server)
    assert s.per_server == {k: hist.get(k, 0) for k in range(max(hist) + 1)}
    assert (s.per_server[0], sum(v for k, v in s.per_server.items() if k >= 6), max(per_server.values())) == \
        (169, 23, 14)
    mean = 584 / 400
    assert s.per_server_poisson[0] == pytest.approx(400 * math.exp(-mean)) and round(s.per_server_poisson[0]) == 93
    assert round(sum(v for k, v in s.per_server_poisson.items() if k >= 6), 1) == 1.6
    assert s.span_days == pytest.approx(max(e["event_time"] for e in events))
    assert s.rate_per_server_day == pytest.approx(584 / (400 * s.span_days))
    assert s.repairs == 584 and s.open_repairs == 0
    assert s.repair_days_quantiles["0.5"] == pytest.approx(0.85, abs=0.01) and round(s.repair_days_mean, 1) == 5.5


def test_without_the_clusters_size_the_statistics_that_need_it_say_so(infinitehbd):
    s = stats(parse(infinitehbd.read_text()))
    assert s.servers is None and s.per_server is None and s.rate_per_server_day is None
    assert "per_server" in s.needs_servers and s.servers_at_least[1] == 231
    with pytest.raises(ValueError, match="fewer than the 231 servers the log names"):
        stats(parse(infinitehbd.read_text()), servers=100)


HAND = """time,server,event,class
0,a,start,GPU
10,b,start,NIC
10,c,start,GPU
10,a,end,GPU
20,b,end,NIC
40,a,start,GPU
50,a,end,GPU
100,c,end,GPU
"""


def test_a_hand_made_log():
    """Starts at 0, 10, 10, 40 s: gaps 10, 0, 30 (one zero gap, a burst of two); a has two faults, b and c one;
    repairs of 10, 10, 90 and 10 s."""
    s = stats(parse(HAND), servers=5)
    assert (s.faults, s.servers_named, s.zero_gaps, s.bursts, s.burst_sizes) == (4, 3, 1, 1, {2: 1})
    assert s.burst_share == 0.5 and s.gap_cv == pytest.approx(statistics.pstdev([10, 0, 30]) / (40 / 3))
    assert s.per_server == {0: 2, 1: 2, 2: 1} and s.per_server_mean == 4 / 5
    assert s.dispersion_index == pytest.approx(statistics.pvariance([2, 1, 1, 0, 0]) / 0.8)
    assert s.repair_days_max * 86400 == pytest.approx(90) and s.span_days * 86400 == 100
    assert stats(parse(HAND), servers=5, burst_seconds=10).burst_sizes == {3: 1}  # 0, 10, 10 within 10 s
    assert s.by_class == {"GPU": 3, "NIC": 1}
