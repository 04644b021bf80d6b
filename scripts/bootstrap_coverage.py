"""Whether a parametric bootstrap's interval covers where the joint fit's own does not (docs/traces.md, "Why the
shape's and the calm days' intervals are narrow, measured", "The joint fit's intervals by a parametric bootstrap"):
on scripts/engine_recovery.py's engine logs of its ``joint`` family (Weibull 0.7 lifetimes, frailty 1.5, a storm 8
times the calm rate, calm 5 days, stormy 0.3 days, 300 servers over 350 days) or its ``relapse_regimes`` family
(Weibull 0.6 lifetimes, frailty 1.5, relapses with p 0.1 and mean 0.05 days, the same regimes, 200 servers over 200
days), each log fitted as `simd trace fit --joint-regimes` (with the relapses' family, and `--relapse`) fits it
(simd.traces.fit), then B logs drawn from its fitted model and each fitted back with its family: the refits `simd
trace fit --bootstrap B` runs (simd.traces.bootstrap.refits, with the seed 1000 + the log's index).

Per parameter, on its interval's scale (log for the scale, shape, frailty, the relapses' mean and both durations,
logit for p, log(r - 1) for the ratio): the truth, the estimate, the fit's own interval, and the refits' estimates;
the bootstrap's interval is the estimate +- 1.96 x the refits' SD (B = all of them, and B = the first 10); beside
them the same about the bias-corrected estimate (twice the estimate less the refits' mean). A log whose fit did not
choose the family (its AIC not the lowest) is kept apart (not refitted) and counted; a frailty at its bound (written
as None) counts as not covered.

    python scripts/bootstrap_coverage.py --logs 80 --seed 36 --boot 20 --part 0/2 --out a.jsonl &
    python scripts/bootstrap_coverage.py --logs 80 --seed 36 --boot 20 --part 1/2 --out b.jsonl
    python scripts/bootstrap_coverage.py --summary a.jsonl b.jsonl
    python scripts/bootstrap_coverage.py --family relapse_regimes --logs 40 --seed 35 --boot 20 --out c.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent / "tests")]

import engine_recovery  # noqa: E402
from support.engine_logs import Unreadable, engine_log, spec_of  # noqa: E402

from simd.traces import bootstrap  # noqa: E402
from simd.traces import fit as fit_module  # noqa: E402

FAMILIES = {"joint": engine_recovery.FAMILIES["joint"], "relapse_regimes": engine_recovery.RELAPSE_REGIMES[1]}
RELAPSE = {"joint": False, "relapse_regimes": True}
Z = fit_module.Z


def names(family: str) -> tuple[str, ...]:
    middle = ("p", "mu") if RELAPSE[family] else ()
    return ("scale", "shape", "gamma", *middle, "ratio", "calm_days", "stormy_days")


def truth(family: str) -> np.ndarray:
    m = FAMILIES[family][0]
    (mc, dc), (ms, ds) = m.regimes
    p = m.relapse_probability
    middle = [math.log(p / (1 - p)), math.log(m.relapse_mean_days)] if RELAPSE[family] else []
    return np.array([math.log(m.lifetime_scale_days), math.log(m.lifetime_shape), math.log(m.gamma_shape), *middle,
                     math.log(ms / mc - 1.0), math.log(dc), math.log(ds)])


def aligned(f, rows: np.ndarray) -> np.ndarray:
    """bootstrap.values' rows as names' (the rate left out), the frailty's place kept (NaN) where the fit wrote none
    (at its bound)."""
    rows = rows[..., :-1]  # (the rate per server-day, last: not one of names')
    return rows if f.gamma_shape is not None else np.insert(rows, 2, np.nan, axis=-1)


def _logit(v: float) -> float:
    return math.log(v / (1 - v)) if 0 < v < 1 else math.nan


def interval(f, family: str) -> list[list[float]]:
    """The Fit's own 95% intervals on the intervals' scales (NaN when the frailty is at its bound)."""
    (_, calm), (_, stormy) = f.regimes
    out = []
    for e in (f.lifetime_scale_days, f.lifetime_shape, f.gamma_shape):
        out.append([math.nan, math.nan] if e is None else [math.log(e.low), math.log(e.high)])
    if RELAPSE[family]:
        p, mu = f.relapse_probability, f.relapse_mean_days
        out += [[_logit(p.low), _logit(p.high)], [math.log(mu.low), math.log(mu.high)]]
    for e, shift in ((f.regime_ratio, 1.0), (calm, 0.0), (stormy, 0.0)):
        out.append([math.log(max(e.low - shift, 1e-300)), math.log(e.high - shift)])
    return out


def engine_logs(family: str, seed: int, logs: int, parts: tuple[int, int]):
    """engine_recovery's logs of its family ``family`` with seed ``seed`` (``logs`` of them, every one drawn in
    order as engine_recovery draws them), those of this part."""
    model, servers, span, _ = FAMILIES[family]
    spec = spec_of(model, servers, span, False)
    rng = np.random.default_rng(seed)
    skipped = 0
    for i in range(logs):
        try:
            log = engine_log(spec, span, seed * 100_000 + i, rng)
        except Unreadable:
            log = engine_log(spec, span, seed * 100_000 + logs + skipped, rng)
            skipped += 1
        if i % parts[1] == parts[0]:
            yield i, log


def run(family: str, seed: int, logs: int, boot: int, parts: tuple[int, int], out: Path) -> None:
    _, servers, _, _ = FAMILIES[family]
    t_true = truth(family)
    for i, log in engine_logs(family, seed, logs, parts):
        c0 = time.process_time()
        f = fit_module.fit(log, servers, schedules=(), joint_regimes=True, relapse=RELAPSE[family])
        chosen = f.regimes is not None and f.regimes_family != "regimes" and (
            ", relapse," in f.regimes_family) == RELAPSE[family]
        line = dict(log=i, seed=seed, family=family, faults=len(log.faults), chosen=chosen, truth=t_true.tolist())
        if chosen:
            line.update(est=aligned(f, bootstrap.values(f, f)).tolist(), fit_interval=interval(f, family))
            got, failed = bootstrap.refits(f, boot, seed=1000 + i)
            line.update(refits=aligned(f, got).tolist(), failed=list(failed))
        line["cpu_s"] = time.process_time() - c0
        with out.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        print(f"log {i}: chosen {chosen}, {line['cpu_s']:.0f} s CPU", flush=True)


def summary(files: list[Path]) -> None:
    lines = [json.loads(s) for p in files for s in p.read_text().splitlines() if s.strip()]
    done = [s for s in lines if s["chosen"]]
    family = {s.get("family", "joint") for s in lines}
    if len(family) != 1:
        sys.exit(f"the files hold more than one family: {sorted(family)}")
    keys = names(family.pop())
    print(f"{len(lines)} logs, the family chosen on {len(done)}; CPU a log (fit + refits): median "
          f"{np.median([s['cpu_s'] for s in done]):.0f} s, mean {np.mean([s['cpu_s'] for s in done]):.0f} s")
    n = len(done)
    t = np.array([s["truth"] for s in done])
    est = np.array([s["est"] for s in done])
    lo, hi = (np.array([[iv[k] for iv in s["fit_interval"]] for s in done]) for k in (0, 1))
    boots = [np.array(s["refits"]) for s in done]
    b_all = min(len(b) for b in boots)
    se_fit = (hi - lo) / (2 * Z)
    rows = [("fit's own", (lo <= t) & (t <= hi), (est - t) / se_fit)]
    for b in sorted({b_all, 10} & set(range(2, b_all + 1)), reverse=True):
        sd = np.array([x[:b].std(axis=0, ddof=1) for x in boots])
        rows.append((f"1.96 SD B={b}", np.abs(est - t) <= Z * sd, (est - t) / sd))
        # the interval simd trace fit --bootstrap writes (simd.traces.bootstrap.intervals; the frailty third)
        iv = np.array([bootstrap.intervals(e, x[:b], 2) for e, x in zip(est, boots, strict=True)])
        half = (iv[:, :, 1] - iv[:, :, 0]) / 2
        rows.append((f"t SD B={b}", (iv[:, :, 0] <= t) & (t <= iv[:, :, 1]), (est - t) / half * Z))
    # beside them, the same interval about the bias-corrected estimate (the estimate less the refits' mean offset)
    sd = np.array([x.std(axis=0, ddof=1) for x in boots])
    centre = 2 * est - np.array([x.mean(axis=0) for x in boots])
    rows.append((f"bias-corr. B={b_all}", np.abs(centre - t) <= Z * sd, (centre - t) / sd))
    half = 1.96 * math.sqrt(0.95 * 0.05 / n)
    print(f"coverage of {n} logs (a true 95% within 95% +- {half:.1%} but for 5% of the time); z = (est - truth) / "
          "the interval's SD, its SD")
    print(f"  {'':<16}" + "".join(f"{k:>18}" for k in keys))
    for label, hit, z in rows:
        print(f"  {label:<16}" + "".join(
            f"{int(np.sum(h)):>5}/{n} z SD {np.nanstd(zz, ddof=1):.2f}" for h, zz in zip(hit.T, z.T, strict=True)))
    sd = np.array([x.std(axis=0, ddof=1) for x in boots])
    print("  the bootstrap SD over the fit's SE, median: " + " ".join(
        f"{k} {v:.2f}" for k, v in zip(keys, np.nanmedian(sd / se_fit, axis=0), strict=True)))
    print("  the refits' mean less the estimate, over the bootstrap SD, mean: " + " ".join(
        f"{k} {v:+.2f}" for k, v in zip(keys, np.nanmean(
            np.array([x.mean(axis=0) for x in boots]) - est, axis=0) / np.nanmedian(sd, axis=0), strict=True)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=int, default=80, help="engine_recovery's logs drawn (this part fits its share)")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="joint", help="engine_recovery's family")
    ap.add_argument("--seed", type=int, default=36, help="engine_recovery's seed of the logs")
    ap.add_argument("--boot", type=int, default=20, help="bootstrap logs a log, each fitted back")
    ap.add_argument("--part", type=engine_recovery.part, default=(0, 1), help="K/N: the logs i with i %% N == K")
    ap.add_argument("--out", type=Path, help="a JSON line a log, appended")
    ap.add_argument("--summary", nargs="+", type=Path, help="the coverage table of these JSON-lines files")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
    else:
        run(a.family, a.seed, a.logs, a.boot, a.part, a.out)


if __name__ == "__main__":
    main()
