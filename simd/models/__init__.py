"""Closed-form and lab models of seed 001 (pure functions, no state; numpy + stdlib only).

- ``availability``: job MTBF and availability against cluster size (scenario 1).
- ``checkpoint``: checkpoint-interval optimization: Young, Daly 2006, the long-run efficiency (scenario 2).
- ``recovery``: failure causes, detection, cold vs warm restart, ETTR over a week (scenario 3).
- ``straggler``: step = max over ranks, median-based detection, NVRx-style scores, normal order statistics
  (scenario 4).
- ``sdc``: bit flips, shard fingerprints, bitwise dual run, loss-spike guard (scenario 5).
- ``analytic``: the closed-form facts the daemon exports beside a configured job (optimum interval,
  first-order efficiency, mean recovery, rates per hour), from the models above.

Every constant names its source (paper, seed) where it is defined.
"""
