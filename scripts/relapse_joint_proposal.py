"""The proposal of the fit of relapses and regimes at once, measured (docs/traces.md, "Relapses and regimes at
once": its weak point): on one log the engine makes of the model (tests/traces/test_relapse_joint.py's: Weibull 0.6
lifetimes of scale 60 days at the stationary mean, a frailty of shape 1.5, 10% of the repairs a short lifetime of
0.05 days, regimes x8 with calm 5 days and stormy 0.3 days; 200 servers over 200 days), at the true parameters:

- the importance weights' log spread over PATHS paths drawn from the proposal (simd.traces.joint.RelapseJoint) and
  the stormy steps a path holds, with each part of the model on or off (exponential or Weibull lifetimes, a frailty
  or none, relapses or none): where the proposal is the model the spread is ~0;
- the likelihood's estimate at the truth (two draws of 256 paths), and the Monte Carlo EM started at the truth
  (simd.traces.joint.fit): where it ends and its likelihood's estimate.

    python scripts/relapse_joint_proposal.py [--seed 12]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import special

sys.path[:0] = [str(Path(__file__).resolve().parent.parent / "tests")]

from support.engine_logs import engine_log, spec_of  # noqa: E402

from simd.traces import fit as fit_module  # noqa: E402
from simd.traces import joint, relapse  # noqa: E402
from simd.traces.synth import Model  # noqa: E402

PATHS = 32
MEAN = (5.0 + 8.0 * 0.3) / 5.3  # the regimes' stationary mean multiplier (calm units)
MODEL = Model(lifetime_scale_days=60.0, lifetime_shape=0.6, gamma_shape=1.5, repair="exponential",
              repair_mean_days=1e-9, relapse_probability=0.1, relapse_mean_days=0.05,
              regimes=((1.0 / MEAN, 5.0), (8.0 / MEAN, 0.3)))


def estimate(j: joint.Joint, x: np.ndarray, d: np.ndarray, paths: int, seed: int) -> float:
    """The negative log-likelihood's estimate at (x, d) from ``paths`` paths (joint.fit's)."""
    p = j.draw(x, d, paths, np.random.default_rng(seed))
    lw, _ = j.weights(x, p)
    top = lw.max()
    return -(p.log_z + top + math.log(np.exp(lw - top).mean()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=12)
    a = ap.parse_args()
    log = engine_log(spec_of(MODEL, 200, 200.0), 200.0, a.seed, np.random.default_rng(a.seed))
    spans = fit_module._spans(log, 200, np.ones(len(log.faults)))
    edges = np.array([0.0, log.span_days])
    j = joint.RelapseJoint(spans, 200, log.span_days, edges, True)
    d = np.log([5.0, 0.3])
    print(f"{len(log.faults)} faults; the regimes' stationary stormy steps: {0.3 / 5.3 * joint.STEPS:.0f} of "
          f"{joint.STEPS}")
    print(f"{'the model at its truth but':<40} {'weights: log spread':>20} {'effective':>10} {'stormy steps':>13}")
    for name, k, shape, p in (("exponential, no frailty, no relapse", 1.0, 1e8, 1e-13),
                              ("exponential, frailty, no relapse", 1.0, 1.5, 1e-13),
                              ("Weibull, no frailty, no relapse", 0.6, 1e8, 1e-13),
                              ("Weibull, frailty, no relapse", 0.6, 1.5, 1e-13),
                              ("exponential, no frailty, relapses", 1.0, 1e8, 0.1),
                              ("the model", 0.6, 1.5, 0.1)):
        x = np.array([math.log(60 * MEAN), math.log(k), math.log(shape), special.logit(p), math.log(0.05 * MEAN),
                      math.log(7.0)])
        paths = j.draw(x, d, PATHS, np.random.default_rng(1))
        lw, omega = j.weights(x, paths)
        print(f"{name:<40} {lw.std():>20.2f} {1 / (omega ** 2).sum():>10.1f} {paths.paths.sum(1).mean():>13.0f}")
    truth = np.array([math.log(60 * MEAN), math.log(0.6), math.log(1.5), special.logit(0.1), math.log(0.05 * MEAN),
                      math.log(7.0)])
    print("the likelihood's estimate at the truth (256 paths, two draws): "
          + ", ".join(f"{estimate(j, truth, d, 256, s):.1f}" for s in (1, 2)))
    bounds = [(math.log(1e-3), math.log(1e5)), (math.log(0.05), math.log(20.0)), (math.log(1e-3), math.log(1e4)),
              relapse.P_BOUNDS, (math.log(relapse.MU_MIN_DAYS), math.log(relapse.MU_MAX_DAYS))]
    got = joint.fit(spans, 200, log.span_days, edges, True, np.delete(truth, 5), bounds, (8.0, 5.0, 0.3),
                    relapse=True)
    x = got.x
    print(f"the EM from the truth: likelihood's estimate {got.nll:.1f} (+-{got.nll_error:.2f}); Weibull shape "
          f"{math.exp(x[1]):.3g} (0.6), frailty {math.exp(x[2]):.3g} (1.5), p {special.expit(x[3]):.3g} (0.1), "
          f"ratio {1 + math.exp(x[5]):.3g} (8), calm days {math.exp(got.d[0]):.3g} (5), stormy days "
          f"{math.exp(got.d[1]):.3g} (0.3)")


if __name__ == "__main__":
    main()
