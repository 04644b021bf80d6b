"""Whether a parametric bootstrap's interval covers where the joint fit's own does not (docs/traces.md, "Why the
shape's and the calm days' intervals are narrow, measured"): on scripts/engine_recovery.py's engine logs of its
``joint`` family (Weibull 0.7 lifetimes, frailty 1.5, a storm 8 times the calm rate, calm 5 days, stormy 0.3 days,
300 servers over 350 days), each log fitted as `simd trace fit --joint-regimes` fits it (simd.traces.fit with
joint_regimes), then B logs drawn from its fitted model (simd.traces.synth, the way scripts/joint_spread.py's
``--bootstrap`` draws them: repairs of 1e-9 days) and each fitted back whole (the renewal fit, the MMPP's regimes,
then simd.traces.joint.fit from there, as simd.traces.fit runs them; the AIC's choice not asked of the refits).

Per parameter, on its interval's scale (log for the scale, shape, frailty and both durations, log(r - 1) for the
ratio): the truth, the estimate, the fit's own interval, and the refits' estimates; the bootstrap's interval is the
estimate +- 1.96 x the refits' SD (B = all of them, and B = the first 10); beside them the same about the
bias-corrected estimate (twice the estimate less the refits' mean). A log whose fit did not choose the joint
family (its AIC not the lowest) is kept apart (not refitted) and counted; a frailty at its bound (written as None)
counts as not covered.

    python scripts/bootstrap_coverage.py --logs 80 --seed 36 --boot 20 --part 0/2 --out a.jsonl &
    python scripts/bootstrap_coverage.py --logs 80 --seed 36 --boot 20 --part 1/2 --out b.jsonl
    python scripts/bootstrap_coverage.py --summary a.jsonl b.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent / "tests")]

import engine_recovery  # noqa: E402
import joint_spread  # noqa: E402
from support.engine_logs import Unreadable, engine_log, spec_of  # noqa: E402

from simd.traces import fit as fit_module  # noqa: E402
from simd.traces import joint  # noqa: E402
from simd.traces.synth import generate  # noqa: E402

NAMES = ("scale", "shape", "gamma", "ratio", "calm_days", "stormy_days")
MODEL, SERVERS, SPAN, _ = engine_recovery.FAMILIES["joint"]
Z = fit_module.Z


def captured(log, fitted: bool = True):
    """(joint.fit's arguments on ``log``, the Fit and that call's JointFit): the whole fit as `simd trace fit
    --joint-regimes` runs it, or (``fitted`` False) only up to that call (the Fit then None): joint_spread's."""
    return joint_spread.captured(log, fitted, relapse=False, servers=SERVERS)


def scaled(g) -> np.ndarray:
    """A JointFit's estimates on the intervals' scales, as simd.traces.fit._joint writes them: the scale at the
    stationary mean (the calm units' over the mean multiplier e), log k, log a, log(r - 1), log d_c, log d_s."""
    r, dc, ds = 1.0 + math.exp(g.x[3]), math.exp(g.d[0]), math.exp(g.d[1])
    e = (dc + r * ds) / (dc + ds)
    return np.array([g.x[0] - math.log(e), g.x[1], g.x[2], g.x[3], g.d[0], g.d[1]])


def truth() -> np.ndarray:
    (mc, dc), (ms, ds) = MODEL.regimes
    return np.array([math.log(MODEL.lifetime_scale_days), math.log(MODEL.lifetime_shape),
                     math.log(MODEL.gamma_shape), math.log(ms / mc - 1.0), math.log(dc), math.log(ds)])


def interval(f) -> list[list[float]]:
    """The Fit's own 95% intervals on the intervals' scales (NaN when the frailty is at its bound)."""
    (_, calm), (_, stormy) = f.regimes
    out = []
    for e, shift in ((f.lifetime_scale_days, 0.0), (f.lifetime_shape, 0.0), (f.gamma_shape, 0.0),
                     (f.regime_ratio, 1.0), (calm, 0.0), (stormy, 0.0)):
        if e is None:
            out.append([math.nan, math.nan])
        else:
            out.append([math.log(max(e.low - shift, 1e-300)), math.log(e.high - shift)])
    return out


def engine_logs(seed: int, logs: int, parts: tuple[int, int]):
    """engine_recovery's logs of its joint family with seed ``seed`` (``logs`` of them, every one drawn in order
    as engine_recovery draws them), those of this part."""
    spec = spec_of(MODEL, SERVERS, SPAN, False)
    rng = np.random.default_rng(seed)
    skipped = 0
    for i in range(logs):
        try:
            log = engine_log(spec, SPAN, seed * 100_000 + i, rng)
        except Unreadable:
            log = engine_log(spec, SPAN, seed * 100_000 + logs + skipped, rng)
            skipped += 1
        if i % parts[1] == parts[0]:
            yield i, log


def run(seed: int, logs: int, boot: int, parts: tuple[int, int], out: Path) -> None:
    t_true = truth()
    for i, log in engine_logs(seed, logs, parts):
        c0 = time.process_time()
        _, f, got = captured(log)
        chosen = f.regimes is not None and f.regimes_family != "regimes"
        line = dict(log=i, seed=seed, faults=len(log.faults), chosen=chosen, truth=t_true.tolist())
        if chosen:
            est = scaled(got)
            line.update(est=est.tolist(), fit_interval=interval(f))
            (_, calm), (_, stormy) = f.regimes
            r, dc, ds = f.regime_ratio.value, calm.value, stormy.value
            e = (dc + r * ds) / (dc + ds)
            m = replace(MODEL, lifetime_scale_days=f.lifetime_scale_days.value, lifetime_shape=f.lifetime_shape.value,
                        gamma_shape=math.exp(est[2]),
                        regimes=((1 / e, dc), (r / e, ds)), repair="exponential", repair_mean_days=1e-9)
            rng = np.random.default_rng(1000 + i)
            refits = []
            for _ in range(boot):
                (b, bkw), _, _ = captured(generate(m, SERVERS, SPAN, rng), fitted=False)
                refits.append(scaled(joint.fit(*b, **bkw)).tolist())
            line["refits"] = refits
        line["cpu_s"] = time.process_time() - c0
        with out.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        print(f"log {i}: chosen {chosen}, {line['cpu_s']:.0f} s CPU", flush=True)


def summary(files: list[Path]) -> None:
    lines = [json.loads(s) for p in files for s in p.read_text().splitlines() if s.strip()]
    done = [s for s in lines if s["chosen"]]
    print(f"{len(lines)} logs, the joint family chosen on {len(done)}; CPU a log (fit + refits): median "
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
        rows.append((f"bootstrap B={b}", np.abs(est - t) <= Z * sd, (est - t) / sd))
    # beside them, the same interval about the bias-corrected estimate (the estimate less the refits' mean offset)
    sd = np.array([x.std(axis=0, ddof=1) for x in boots])
    centre = 2 * est - np.array([x.mean(axis=0) for x in boots])
    rows.append((f"bias-corr. B={b_all}", np.abs(centre - t) <= Z * sd, (centre - t) / sd))
    half = 1.96 * math.sqrt(0.95 * 0.05 / n)
    print(f"coverage of {n} logs (a true 95% within 95% +- {half:.1%} but for 5% of the time); z = (est - truth) / "
          "the interval's SD, its SD")
    print(f"  {'':<16}" + "".join(f"{k:>18}" for k in NAMES))
    for label, hit, z in rows:
        print(f"  {label:<16}" + "".join(
            f"{int(np.sum(h)):>5}/{n} z SD {np.nanstd(zz, ddof=1):.2f}" for h, zz in zip(hit.T, z.T, strict=True)))
    sd = np.array([x.std(axis=0, ddof=1) for x in boots])
    print("  the bootstrap SD over the fit's SE, median: " + " ".join(
        f"{k} {v:.2f}" for k, v in zip(NAMES, np.nanmedian(sd / se_fit, axis=0), strict=True)))
    print("  the refits' mean less the estimate, over the bootstrap SD, mean: " + " ".join(
        f"{k} {v:+.2f}" for k, v in zip(NAMES, np.nanmean(
            np.array([x.mean(axis=0) for x in boots]) - est, axis=0) / np.nanmedian(sd, axis=0), strict=True)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=int, default=80, help="engine_recovery's logs drawn (this part fits its share)")
    ap.add_argument("--seed", type=int, default=36, help="engine_recovery's seed of the logs")
    ap.add_argument("--boot", type=int, default=20, help="bootstrap logs a log, each fitted back")
    ap.add_argument("--part", type=engine_recovery.part, default=(0, 1), help="K/N: the logs i with i %% N == K")
    ap.add_argument("--out", type=Path, help="a JSON line a log, appended")
    ap.add_argument("--summary", nargs="+", type=Path, help="the coverage table of these JSON-lines files")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
    else:
        run(a.seed, a.logs, a.boot, a.part, a.out)


if __name__ == "__main__":
    main()
