"""What a fault log says (``simd trace stats``): counts, rates, the gaps between the cluster's faults
against the exponential, faults per server against a Poisson count, bursts, repair times.

Definitions (docs/traces.md):

- the **span** is from the log's start (time 0) to its last event; the **rate** is faults per server-day over
  the cluster's servers (``servers``: the log names only the servers that failed, so the cluster's size is an
  input; without it the statistics that need it are None and ``needs_servers`` says which);
- the **gaps** are the times between the cluster's consecutive fault starts; their coefficient of variation
  (population standard deviation over mean) is 1 for a Poisson process; a **zero gap** is a fault starting at
  the same instant as the one before;
- a **burst** is a maximal run of faults whose starts are at most ``burst_seconds`` apart (default 0: the same
  instant), of two faults or more (:func:`bursts`, the one definition: the fit's, these statistics' and the
  goodness of fit's); ``burst_share`` is the share of faults in one, ``burst_gaps`` the gaps within the window
  (each burst of s faults holds s - 1 of them; the zero gaps at window 0);
- **faults per server**: how many of the cluster's servers had k faults, beside the Poisson count with the same
  mean (the independent identical-servers model; in log space, any k), and the dispersion index (variance over
  mean; 1 for Poisson);
- **repair times**: from a fault's start to its end (open repairs apart), quantiles by linear interpolation
  (numpy's default).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass

import numpy as np

from simd.quoting import quoted
from simd.traces.log import DAY, FaultLog
from simd.traces.trend import Month, Trend, months, periods, trend

QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class Stats:
    faults: int
    servers_named: int  # servers with at least one event in the log
    servers: int | None  # the cluster's servers (given), None if unknown
    span_days: float
    by_class: dict[str, int]  # most frequent first
    by_level: dict[str, int]
    rate_per_server_day: float | None
    gaps: int
    gap_mean_days: float | None
    gap_cv: float | None
    zero_gaps: int
    bursts: int
    burst_gaps: int  # gaps at most burst_seconds long: the bursts' sizes less one, summed
    burst_share: float
    burst_sizes: dict[int, int]  # size -> how many bursts
    per_server: dict[int, int] | None  # k faults -> servers (every k from 0 to the most), with the cluster's size
    per_server_poisson: dict[int, float] | None  # the Poisson count of servers with k faults, same mean
    per_server_mean: float | None
    dispersion_index: float | None  # variance over mean of the faults per server
    servers_at_least: dict[int, int]  # of the servers named: how many had at least k faults (k = 1, 2, 4, 6, 10)
    repairs: int  # closed faults
    open_repairs: int
    repair_days_mean: float | None
    repair_days_quantiles: dict[str, float] | None  # "0.5" -> days
    repair_days_max: float | None
    burst_seconds: float = 0.0
    needs_servers: tuple[str, ...] = ()  # the statistics left out for want of the cluster's size
    # over time (stats(over_time=True), simd.traces.trend): the faults per month, their rate (per server-day with
    # the cluster's size, else per day) with its exact 95% interval; the tests of trend and of one change point
    by_month: tuple[Month, ...] | None = None
    trend: Trend | None = None

    def as_json(self) -> dict:
        d = asdict(self)
        for k in ("burst_sizes", "per_server", "per_server_poisson", "servers_at_least"):
            if d[k] is not None:
                d[k] = {str(i): v for i, v in d[k].items()}
        d["needs_servers"] = list(d["needs_servers"])
        if d["by_month"] is not None:
            d["by_month"] = list(d["by_month"])
            d["rate_unit"] = "per server-day" if self.servers is not None else "per day"
        return d


@dataclass(frozen=True)
class Columns:
    """A fault log as arrays, one entry per fault by start (what the statistics read; synth's logs are made as
    these, without a Fault object each)."""

    server: np.ndarray  # index of the fault's server (int)
    start: np.ndarray  # seconds since the log's start
    end: np.ndarray  # seconds; nan: still in repair at the log's end
    cls: np.ndarray  # index into classes (int)
    classes: tuple[str, ...]  # in the order of their first fault
    level: np.ndarray  # index into levels (int)
    levels: tuple[str, ...]  # in the order of their first fault ("" among them: no level)
    servers_named: int
    span_days: float

    @classmethod
    def of(cls, log: FaultLog) -> Columns:
        classes: dict[str, int] = {}
        levels: dict[str, int] = {}
        f = log.faults
        return cls(server=np.array([x.server for x in f], dtype=np.int64),
                   start=np.array([x.start for x in f], dtype=float),
                   end=np.array([math.nan if x.end is None else x.end for x in f], dtype=float),
                   cls=np.array([classes.setdefault(x.cls, len(classes)) for x in f], dtype=np.int64),
                   classes=tuple(classes),
                   level=np.array([levels.setdefault(x.level, len(levels)) for x in f], dtype=np.int64),
                   levels=tuple(levels), servers_named=len(log.servers), span_days=log.span_days)


def _by_count(codes: np.ndarray, names: tuple[str, ...], skip: str | None = None) -> dict[str, int]:
    """How many faults of each name, most frequent first (ties: the first seen first, as Counter.most_common)."""
    counts = np.bincount(codes, minlength=len(names))
    order = sorted(range(len(names)), key=lambda i: -counts[i])
    return {names[i]: int(counts[i]) for i in order if counts[i] and names[i] != skip}


def stats(log: FaultLog | Columns, servers: int | None = None, burst_seconds: float = 0.0,
          over_time: bool = False) -> Stats:
    """The statistics of ``log`` on a cluster of ``servers`` (at least the servers the log names); with
    ``over_time``, the rate by month and the tests of trend and of a change point too."""
    c = log if isinstance(log, Columns) else Columns.of(log)
    if servers is not None and servers < c.servers_named:
        raise ValueError(f"--servers {servers} is fewer than the {c.servers_named} servers the log names")
    if not math.isfinite(burst_seconds) or burst_seconds < 0:
        raise ValueError(f"burst_seconds must be a finite number >= 0, got {burst_seconds}")
    n = len(c.start)
    starts = c.start
    gaps = np.diff(starts)
    burst_sizes = Counter(bursts(starts, burst_seconds)[1])
    per_named = np.bincount(c.server, minlength=c.servers_named)
    at_least = {k: int((per_named >= k).sum()) for k in (1, 2, 4, 6, 10)}
    closed = ~np.isnan(c.end)
    repairs = (c.end[closed] - starts[closed]) / DAY
    per_server = poisson = mean = dispersion = rate = None
    if servers is not None:
        per = np.concatenate([per_named, np.zeros(servers - len(per_named), dtype=per_named.dtype)])
        hist = np.bincount(per)
        per_server = {k: int(v) for k, v in enumerate(hist)}
        mean = n / servers
        poisson = {k: poisson_count(servers, mean, k) for k in per_server}
        dispersion = float(np.var(per)) / mean if mean > 0 else None
        rate = n / (servers * c.span_days) if c.span_days > 0 else None
    return Stats(
        faults=n, servers_named=c.servers_named, servers=servers, span_days=c.span_days,
        by_class=_by_count(c.cls, c.classes), by_level=_by_count(c.level, c.levels, skip=""),
        rate_per_server_day=rate, gaps=len(gaps),
        gap_mean_days=float(gaps.mean()) / DAY if len(gaps) else None,
        gap_cv=float(gaps.std() / gaps.mean()) if len(gaps) and gaps.mean() > 0 else None,
        zero_gaps=int((gaps == 0).sum()),
        bursts=sum(burst_sizes.values()), burst_gaps=sum((k - 1) * v for k, v in burst_sizes.items()),
        burst_share=sum(k * v for k, v in burst_sizes.items()) / n if n else 0.0,
        burst_sizes=dict(sorted(burst_sizes.items())),
        per_server=per_server, per_server_poisson=poisson, per_server_mean=mean, dispersion_index=dispersion,
        servers_at_least=at_least,
        repairs=len(repairs), open_repairs=n - len(repairs),
        repair_days_mean=float(repairs.mean()) if len(repairs) else None,
        repair_days_quantiles={str(q): float(np.quantile(repairs, q)) for q in QUANTILES} if len(repairs) else None,
        repair_days_max=float(repairs.max()) if len(repairs) else None,
        burst_seconds=burst_seconds,
        needs_servers=() if servers is not None else ("rate_per_server_day", "per_server", "per_server_poisson",
                                                       "dispersion_index"),
        by_month=tuple(months(starts / DAY, c.span_days, servers)) if over_time else None,
        trend=trend(starts / DAY, c.span_days, servers) if over_time else None,
    )


# The faults-per-server table's rows (docs/traces.md): a row for each count k that some server has, or that the
# Poisson model expects at least SHOWN_EXPECTED servers to have (the others, no server and under half a server
# expected, elided as "..."); at most TABLE_ROWS rows, the last summing every count from its k to the most.
# Both for reading: 16 rows hold a Poisson count's bulk up to a mean of ~10 faults a server; --json has every k.
SHOWN_EXPECTED = 0.5
TABLE_ROWS = 16


def per_server_rows(s: Stats) -> list[tuple[str, int, float]]:
    """The faults-per-server table's rows as (k, or "k-max" for the last row summing the tail; servers; the Poisson
    count), elided as :data:`TABLE_ROWS` says; every server in one row."""
    if s.per_server is None:
        return []
    ks = [k for k, v in s.per_server.items() if v > 0 or s.per_server_poisson[k] >= SHOWN_EXPECTED]
    rows = [(str(k), s.per_server[k], s.per_server_poisson[k]) for k in ks[:TABLE_ROWS]]
    if len(ks) > TABLE_ROWS:
        lo, hi = ks[TABLE_ROWS - 1], max(s.per_server)
        tail = [k for k in s.per_server if k >= lo]
        rows[-1] = (f"{lo}-{hi}", sum(s.per_server[k] for k in tail), sum(s.per_server_poisson[k] for k in tail))
    return rows


def poisson_count(servers: int, mean: float, k: int) -> float:
    """Of ``servers`` servers with Poisson(mean) faults each, how many are expected to have ``k``: computed in log
    space (``mean ** k / k!`` overflows a float from k = 171 on, ``exp(-mean)`` underflows from mean ~745 on)."""
    if mean <= 0:
        return float(servers) if k == 0 else 0.0
    return math.exp(math.log(servers) - mean + k * math.log(mean) - math.lgamma(k + 1))


def bursts(starts: np.ndarray, within: float) -> tuple[np.ndarray, list[int]]:
    """The bursts of sorted fault starts: which faults are in one, and the bursts' sizes, in order (maximal runs of
    >= 2 consecutive starts each at most ``within`` after the one before, in the starts' unit)."""
    n = len(starts)
    close = np.concatenate([[False], np.diff(starts) <= within, [False]])  # close[i]: fault i joins fault i - 1's
    edges = np.diff(close.astype(np.int8))
    first = np.flatnonzero(edges == 1)  # each burst's first fault: the next one joins it
    last = np.flatnonzero(edges == -1)  # and its last: the next one does not join it
    marks = np.zeros(n + 1, dtype=np.int64)
    marks[first] += 1
    marks[last + 1] -= 1
    in_burst = np.cumsum(marks)[:n] > 0
    return in_burst, (last - first + 1).tolist()


def table(s: Stats) -> str:
    """The statistics as text, for people."""
    out = [f"faults {s.faults} on {s.servers_named} servers named"
           + (f" of {s.servers}" if s.servers is not None else " (cluster size unknown: --servers N)")
           + f", over {s.span_days:.1f} days"]
    if s.rate_per_server_day is not None:
        out.append(f"rate: {s.rate_per_server_day:.4g} faults per server-day "
                   f"(a server's MTBF {1 / s.rate_per_server_day:.0f} days)")
    # a log's class is any text of up to 200 characters: one that is not printable (a terminal's escape sequence)
    # is shown as an error quotes a value (escaped, cut), never written to the terminal as it is
    out.append("classes: " + ", ".join(f"{c if c.isprintable() else quoted(c)} {v} ({v / s.faults:.0%})"
                                       for c, v in s.by_class.items()))
    if s.gap_cv is not None:
        out.append(f"gaps between the cluster's faults: mean {s.gap_mean_days:.3f} days, coefficient of variation "
                   f"{s.gap_cv:.3f} (exponential: 1), {s.zero_gaps} of {s.gaps} zero"
                   + (f", {s.burst_gaps} within the burst window ({s.burst_seconds:g} s)" if s.burst_seconds else ""))
    window = "at the same instant" if s.burst_seconds == 0 else f"within {s.burst_seconds:g} s"
    out.append(f"bursts (faults {window} as the one before): {s.bursts}, holding {s.burst_share:.1%} of the faults; "
               "sizes " + (", ".join(f"{k}: {v}" for k, v in s.burst_sizes.items()) or "none"))
    if s.per_server is not None:
        out.append(f"faults per server: mean {s.per_server_mean:.3f}, dispersion index (variance / mean) "
                   f"{s.dispersion_index:.2f} (Poisson: 1)")
        out.append("  k faults   servers   Poisson (same mean)")
        last = -1
        for label, v, expected in per_server_rows(s):
            if int(label.split("-")[0]) > last + 1:
                out.append("       ...")
            out.append(f"  {label:>8s}   {v:7d}   {expected:9.2f}")
            last = int(label.split("-")[-1])
    out.append("of the servers named, at least k faults: "
               + ", ".join(f"{k}: {v}" for k, v in s.servers_at_least.items()))
    if s.repair_days_quantiles is not None:
        q = s.repair_days_quantiles
        out.append(f"repairs: {s.repairs} closed, {s.open_repairs} open; days: mean {s.repair_days_mean:.2f}, "
                   + ", ".join(f"p{round(float(k) * 100)} {v:.2f}" for k, v in q.items())
                   + f", max {s.repair_days_max:.1f}")
    out += _over_time(s)
    return "\n".join(out)


def _over_time(s: Stats) -> list[str]:
    """The rate by month (in periods of several months past trend.ROWS of them) and the two tests, as text; nothing
    for a log of one month or less (--json has them)."""
    if not s.by_month or len(s.by_month) < 2:
        return []
    unit = "per server-day" if s.servers is not None else "per day (the cluster's: --servers N for a server's)"
    shown = periods(list(s.by_month), s.servers)
    months_each = math.ceil(len(s.by_month) / len(shown))
    out = [f"rate by {'month' if months_each == 1 else f'{months_each} months'} (months of 30.44 days; faults "
           f"{unit}, exact Poisson 95%):",
           f"  {'month':>7s}  {'days':>6s}  {'faults':>6s}  {'rate':>10s}  95% interval"]
    last = len(s.by_month)
    for m in shown:
        end = min(m.month + months_each - 1, last)
        label = str(m.month) if end == m.month else f"{m.month}-{end}"
        out.append(f"  {label:>7s}  {m.days:6.1f}  {m.faults:6d}  {m.rate:10.4g}  {m.low:.4g} .. {m.high:.4g}")
    t = s.trend
    if t is not None:
        out.append(f"trend (Laplace): U = {t.laplace_u:.2f}, p = {t.laplace_p:.2g} (U > 0: the faults lean late, a "
                   "rising rate); `simd trace fit` fits a rate by months when a likelihood ratio test prefers one")
        out.append(f"one change point: likeliest at day {t.change_day:.1f} ({t.rate_before:.4g} -> "
                   f"{t.rate_after:.4g}), likelihood ratio {t.change_lr:.1f}, p = {t.change_p:.2g} ({t.simulations} "
                   "simulated constant-rate logs; bursts make a small p likelier)")
    return out
