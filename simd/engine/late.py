"""Committed SDCs and layered, late detection (the extension the seeds README names; seed 000's comparison with
production: Fleetscanner over 45-60 days, Ripple within days, in-job checks within seconds to minutes).

Opt-in (``JobSpec.committed_sdc``); seed 000's reference semantics stays the default. In this model:

- Validation works as in the seed: it catches an SDC that has not yet reached a checkpoint. It compares against
  the last committed state, so it cannot see an SDC that is already in a checkpoint.
- An SDC present at a checkpoint point is *committed* with it (counted baked in, once) instead of being rolled
  back there; the state stays corrupted, and so does every later checkpoint, until the SDC is found. A hard
  failure rolls back to the newest checkpoint, so it clears an SDC only if that checkpoint predates it.
- Each detector finds an SDC with probability ``coverage``, after a latency drawn at the onset, in *simulated
  seconds* from the end of the onset step: the layers are defined by time (a scanner visits hosts on its own
  cycle, whatever the job does meanwhile: restarts and checkpoints count), and seconds are what a user knows of
  them. The first detector to find it wins. A detection due by the end of a step is acted on there, before the
  step's validation and checkpoint (one due inside a pause is acted on at the end of the next step).
- Found before any checkpoint took it: rolled back to the last checkpoint as a validation would (counted
  detected). Found after (``sdc_late_found``): rolled back to the newest retained checkpoint older than the onset;
  the checkpoints after it are lost (``checkpoints_lost``). The job keeps its ``retention_checkpoints`` newest
  checkpoints (the job's start counts as one). If the newest checkpoint older than the onset is no longer
  retained, the SDC is *unrecoverable*: the job rolls back to the oldest retained checkpoint, as far as it can,
  and carries on from it with the SDC's effect accepted (counted; its steps up to there are kept).
- A restart follows every SDC rollback (restart_seconds). An SDC still present when the job ends is counted baked
  in (if no checkpoint took it yet) and the steps since the newest clean checkpoint are void (seed 000's rule).

Accounting: steps committed by a checkpoint that holds the SDC are not productive (they stay in flight) until
the SDC is found (then rollback) or accepted (unrecoverable: productive), so no counter ever goes down.

Draws: per SDC candidate of the epoch's SDC stream (index i), two uniforms per detector from the stream
``sdc-detect`` (coverage, latency), so they do not depend on ticks and change no other mechanism's draws.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from simd.engine.hazard import NEVER

DISTRIBUTIONS = ("exponential", "lognormal", "uniform")  # latency_us's laws; the loop takes them as codes 0, 1, 2

_STANDARD_NORMAL = NormalDist()
_BELOW_ONE = 1.0 - 2.0**-53  # inv_cdf needs p < 1; a uniform in (0, 1] is 1 with probability 2**-53
_LATENCY_CAP_US = NEVER // 4  # latencies stay far inside int64 (5e4 years)


def latency_us(distribution: str, scale_us: float, sigma: float, u: float) -> int:
    """The latency of a detector from a uniform ``u`` in (0, 1] (inverse transform), microseconds."""
    if distribution == "exponential":  # mean scale
        x = -scale_us * math.log(u)
    elif distribution == "lognormal":  # median scale, log standard deviation sigma
        x = scale_us * math.exp(sigma * _STANDARD_NORMAL.inv_cdf(min(u, _BELOW_ONE))) if sigma else scale_us
    elif distribution == "uniform":  # on [0, scale]: a scanner that visits each host once per cycle of scale
        x = scale_us * u
    else:
        raise ValueError(f"unknown latency distribution {distribution!r}")
    return min(round(x), _LATENCY_CAP_US)
