"""One definition of a burst (docs/traces.md, "Bursts and the burst window"): faults each starting at most
``--burst-seconds`` after the one before (simd.traces.stats.bursts) are a burst for the fit, for `trace stats` and
for the goodness of fit, whose statistic is the gaps within the window (the zero gaps at window 0). With a window,
the fitted model's 95% range of that statistic holds the log's: for a synthetic log whose bursts spread over the
window as a log's records of one event do, and for the InfiniteHBD log."""

import numpy as np
import pytest

from simd.cli import main
from simd.traces.fit import fit
from simd.traces.log import load
from simd.traces.scenario import goodness
from simd.traces.stats import stats
from simd.traces.synth import Model, generate


def _row(f, log, replicas=200):
    (row,) = [r for r in goodness(f, log, replicas).rows if r[0].startswith(("gaps <=", "zero gaps"))]
    return row


def test_the_gaps_within_the_window_are_the_bursts_sizes_less_one():
    log = generate(Model(lifetime_scale_days=50.0, burst_per_day=0.2, burst_mean_size=3.0,
                         burst_spread_days=600 / 86400), 200, 100.0, np.random.default_rng(1))
    gaps = np.diff([f.start for f in log.faults])
    for window in (0.0, 60.0, 600.0, 3600.0):
        s = stats(log, 200, window)
        assert s.burst_gaps == int((gaps <= window).sum()) == sum((k - 1) * v for k, v in s.burst_sizes.items())
    assert stats(log, 200, 0.0).burst_gaps == stats(log, 200, 0.0).zero_gaps


@pytest.mark.parametrize("window", [600.0, 3600.0])
def test_a_log_with_spread_bursts_is_inside_the_fitted_models_range(window):
    m = Model(lifetime_scale_days=150.0, lifetime_shape=0.7, gamma_shape=1.5, repair_median_days=1.0,
              repair_sigma=1.5, burst_per_day=0.1, burst_mean_size=3.0, burst_spread_days=window / 86400)
    log = generate(m, 400, 350.0, np.random.default_rng(7))
    f = fit(log, 400, window)
    name, observed, _, low, high = _row(f, log)
    assert name == f"gaps <= {window:g} s" and low <= observed <= high, (observed, low, high)
    assert stats(log, 400, 0.0).zero_gaps < observed / 4  # (spread: the same instant says little)


@pytest.mark.parametrize("window", [600.0, 3600.0])
def test_infinitehbd_with_a_window_is_inside_the_fitted_models_range(infinitehbd, window):
    log = load(infinitehbd)
    f = fit(log, 400, window)
    name, observed, _, low, high = _row(f, log)
    assert observed == {600.0: 102, 3600.0: 159}[window]  # counted: 55 same-instant gaps, the rest within minutes
    assert low <= observed <= high, (observed, low, high)


def test_a_window_long_against_the_span_leaves_no_burst_to_tell_from_chance(capsys, tmp_path):
    """Ten faults a second apart in a 10 s log, a window of a day: every gap within it by chance alone; the fit
    keeps no burst and counts every fault as independent, and says what the window's groups hold."""
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n" + "".join(f"{i},s{i % 3},start,x\n{i}.5,s{i % 3},end,x\n"
                                                          for i in range(10)))
    f = fit(load(log), 3, 86400.0)
    assert (f.bursts, f.burst_per_day, f.joined_by_chance) == (1, None, 10.0)
    assert main(["trace", "fit", str(log), "--servers", "3", "--burst-seconds", "600", "--replicas", "0"]) == 0
    assert "lifetimes:" in capsys.readouterr().err
    assert fit(load(log), 3, 0.6).joined_by_chance == 0.0  # (no gap within 0.6 s: no group)


def test_the_fit_says_what_the_windows_groups_hold(infinitehbd, capsys, tmp_path):
    """The groups the window makes (57 on InfiniteHBD at 600 s: stats' bursts) hold the fitted bursts and the
    independent faults that joined them by chance: the groups' faults are the bursts' and those."""
    log = load(infinitehbd)
    f = fit(log, 400, 600.0)
    groups = stats(log, 400, 600.0)
    bursts = f.burst_per_day.value * f.span_days
    assert f.bursts == groups.bursts == 57 and 0 < f.joined_by_chance < 0.2 * groups.bursts
    assert bursts * f.burst_mean_size.value + f.joined_by_chance == pytest.approx(groups.burst_share * 584)
    args = ["trace", "fit", str(infinitehbd), "--servers", "400", "--burst-seconds", "600", "--replicas", "0"]
    assert main(args) == 0
    assert (f"  the 57 groups within 600 s: {bursts:.1f} bursts and {f.joined_by_chance:.1f} independent faults "
            "joined by chance") in capsys.readouterr().err
    out = tmp_path / "fitted.yaml"
    assert main(args + ["--out", str(out)]) == 0
    assert f"# 57 groups within 600 s in the log ({bursts:.1f} bursts, {f.joined_by_chance:.1f} faults joined by " \
           "chance): " in out.read_text()
