"""``simd trace stats --out DIR``: three or four PNGs of a fault log (matplotlib, Agg).

- ``faults-per-server.png``: how many of the cluster's servers had k faults, bars, beside the Poisson count of
  the same mean (the independent identical-servers model), on a log count axis so the tail shows (needs the
  cluster's size; without it, the servers named only);
- ``gaps.png``: the survival function of the gaps between the cluster's consecutive faults (the share of gaps
  longer than x) against the exponential of the same mean, log y (an exponential is a straight line there;
  zero gaps, the bursts, are the drop at x = 0);
- ``repair-times.png``: the empirical distribution of repair times, log x (days), with the median and mean;
- ``rate-by-month.png`` (a log of more than one month): each month's rate with its exact Poisson 95% interval
  (simd.traces.trend), the log's mean rate and the likeliest change point of one (the rates before and after it).

``simd trace fit --plots DIR``: the goodness of fit as three PNGs, the log's curve against the fitted model's
median and 95% range point by point over its synthetic logs (simd.traces.scenario.goodness with ``curves``):

- ``fit-gaps.png``: the gaps' survival function (log y);
- ``fit-faults-per-server.png``: the cluster's servers with at least k faults (symmetric log y);
- ``fit-repair-times.png``: the repair times' distribution (log x, days).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from simd.traces.log import DAY, FaultLog  # noqa: E402
from simd.traces.stats import Stats  # noqa: E402

FIT_PNGS = {"gaps": ("fit-gaps.png", "Gaps between the cluster's faults", "gap between consecutive fault starts "
                     "(days)", "share of gaps at least this long (log)"),
            "per_server": ("fit-faults-per-server.png", "Faults per server", "k faults",
                           "servers with at least k faults (symmetric log)"),
            "repairs": ("fit-repair-times.png", "Repair times", "repair time (days, log scale)",
                        "share of repairs done within")}


def write_fit(curves: dict, replicas: int, out: str | Path) -> list[Path]:
    """The goodness of fit's PNGs in ``out`` (created if missing): each curve of ``curves`` (name -> a
    simd.traces.scenario.Curve) against the model's median and 95% range over its ``replicas`` synthetic logs."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, c in curves.items():
        filename, title, xlabel, ylabel = FIT_PNGS[name]
        fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
        ax.fill_between(c.x, c.low, c.high, step="post", color="tab:orange", alpha=0.25,
                        label=f"fitted model: 95% range of {replicas} synthetic logs")
        ax.step(c.x, c.median, where="post", color="tab:orange", linestyle="--", label="fitted model: median")
        ax.step(c.x, c.log, where="post", color="tab:blue", linewidth=1.6, label="the log")
        if name == "gaps":
            ax.set_yscale("log")
            positive = c.log[c.log > 0]
            ax.set_ylim(positive.min() / 2 if len(positive) else 1e-3, 1.5)
        elif name == "per_server":
            ax.set_yscale("symlog", linthresh=1)
            ax.set_ylim(0, max(c.log.max(), c.high.max()) * 1.5)
        else:
            ax.set_xscale("log")
            ax.set_ylim(0, 1.02)
        ax.set_title(f"{title}: the log against the fitted model")
        paths.append(_save(fig, ax, out / filename, xlabel, ylabel))
    return paths


def write(log: FaultLog, s: Stats, out: str | Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [_per_server(log, s, out / "faults-per-server.png"), _gaps(log, s, out / "gaps.png")]
    if s.repairs:
        paths.append(_repairs(log, s, out / "repair-times.png"))
    if s.by_month and len(s.by_month) >= 2:
        paths.append(_months(s, out / "rate-by-month.png"))
    return paths


def _months(s: Stats, path: Path) -> Path:
    ms = s.by_month
    unit = "per server-day" if s.servers is not None else "per day of the cluster"
    mid = np.array([m.start_day + m.days / 2 for m in ms])
    rate = np.array([m.rate for m in ms])
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    ax.errorbar(mid, rate, yerr=[rate - np.array([m.low for m in ms]), np.array([m.high for m in ms]) - rate],
                xerr=np.array([m.days for m in ms]) / 2, fmt="o", color="tab:blue", capsize=3,
                label="each month's rate, exact Poisson 95%")
    mean = s.faults / (s.span_days * (s.servers or 1))
    ax.axhline(mean, color="tab:orange", linestyle="--", label=f"the log's mean rate ({mean:.4g})")
    t = s.trend
    if t is not None:
        ax.plot([0, t.change_day, t.change_day, s.span_days], [t.rate_before, t.rate_before, t.rate_after,
                                                               t.rate_after], ":", color="tab:red",
                label=f"one change point: day {t.change_day:.0f} (p = {t.change_p:.2g})")
        ax.set_title(f"Rate by month: trend U = {t.laplace_u:.2f} (p = {t.laplace_p:.2g})")
    else:
        ax.set_title("Rate by month")
    ax.set_ylim(bottom=0)
    return _save(fig, ax, path, "day of the log (months of 30.44 days)", f"faults {unit}", "major")


def _save(fig, ax, path: Path, xlabel: str, ylabel: str, grid: str = "both") -> Path:
    """The axes' labels, grid (``grid``: its lines, major or both) and legend; the figure written and closed."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which=grid, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # (a plot without a curve: no legend, nor matplotlib's warning)
        ax.legend(fontsize=8)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _per_server(log: FaultLog, s: Stats, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    if s.per_server is not None:
        ks = list(s.per_server)
        ax.bar(ks, [s.per_server[k] for k in ks], color="tab:blue", label=f"servers of the log ({s.servers})")
        ax.plot(ks, [s.per_server_poisson[k] for k in ks], "o--", color="tab:orange",
                label=f"Poisson, same mean ({s.per_server_mean:.2f}): independent identical servers")
        ax.set_title(f"Faults per server: dispersion index {s.dispersion_index:.2f} (Poisson: 1)")
    else:
        counts = np.bincount([f.server for f in log.faults], minlength=len(log.servers))
        hist = np.bincount(counts)
        ax.bar(range(1, len(hist)), hist[1:], color="tab:blue", label=f"servers named ({s.servers_named})")
        ax.set_title("Faults per server named (the cluster's size unknown: --servers N adds those with none)")
    ax.set_yscale("symlog", linthresh=1)
    return _save(fig, ax, path, "faults of a server over the log", "servers (symmetric log scale)", "major")


def _gaps(log: FaultLog, s: Stats, path: Path) -> Path:
    starts = np.array([f.start for f in log.faults]) / DAY
    gaps = np.sort(np.diff(starts))
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    if len(gaps) and s.gap_cv is not None:  # (every gap zero: no curve, the title says it)
        surv = 1.0 - np.arange(len(gaps)) / len(gaps)  # P(gap >= x) at each sorted gap
        ax.step(gaps, surv, where="post", color="tab:blue", label=f"the log's {len(gaps)} gaps (CV {s.gap_cv:.2f})")
        x = np.linspace(0, gaps.max(), 200)
        ax.plot(x, np.exp(-x / gaps.mean()), "--", color="tab:orange",
                label=f"exponential, same mean ({gaps.mean():.3f} days; CV 1)")
        ax.set_yscale("log")
        ax.set_ylim(0.5 / len(gaps), 1.5)  # below one gap in the log the exponential's tail says nothing
    ax.set_title(gaps_title(s))
    return _save(fig, ax, path, "gap between consecutive fault starts (days)", "share of gaps at least this long (log)")


def gaps_title(s: Stats) -> str:
    """gaps.png's title: the zero gaps, and with a burst window (``--burst-seconds``) the gaps within it, which
    are the bursts then (the one definition of stats, the fit and the goodness of fit), as the text's gaps line."""
    if not s.burst_seconds:
        return f"Gaps between the cluster's faults: {s.zero_gaps} of {s.gaps} are zero (bursts)"
    return (f"Gaps between the cluster's faults: {s.zero_gaps} of {s.gaps} are zero, {s.burst_gaps} within the "
            f"burst window ({s.burst_seconds:g} s)")


def _repairs(log: FaultLog, s: Stats, path: Path) -> Path:
    days = np.sort([f.repair_seconds / DAY for f in log.faults if f.end is not None])
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    positive = days[days > 0]
    ax.step(positive, np.arange(1, len(positive) + 1) / len(days) + (len(days) - len(positive)) / len(days),
            where="post", color="tab:blue", label=f"{s.repairs} repairs" + (f" ({s.open_repairs} still open)"
                                                                          if s.open_repairs else ""))
    median = s.repair_days_quantiles["0.5"]
    ax.axvline(median, color="tab:green", linestyle=":", label=f"median {median:.2f} days")
    ax.axvline(s.repair_days_mean, color="tab:red", linestyle="--", label=f"mean {s.repair_days_mean:.2f} days")
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_title("Repair times: from a fault's start to its end")
    return _save(fig, ax, path, "repair time (days, log scale)", "share of repairs done within")
