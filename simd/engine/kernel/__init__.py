"""The compiled loop's parts, by mechanism, called from the one loop (simd.engine.xkernel.advance_all):

- ``draws``: a stream's next uniform and geometric gap, the bucket of a uniform among cumulative shares;
- ``quiet``: the quiet steps before the next event: their time in closed form, how many fit a budget, and the
  counts of a sweep's shared window (crn.py);
- ``late``: committed SDCs: the detectors' latencies (and the normal quantile they need), the corrupt ring;
- ``record``: the optional trace buffer.

The loop itself keeps the handling of each event inline: numba does not inline one compiled function into
another, so a function boundary on the loop's path costs either a call with reference-counted array arguments
(+45% per event when the mechanisms were functions: plain job 0.95 against 0.65 ms) or, inlined at numba's IR
level (``inline="always"``), +10% per event and +1.5 s of cold compile (measured side by side on 2026-12-03; the
attempt is on the branch ``issue20-mechanism-functions``).

Every function here is compiled with numba (simd.engine.jit); importing ``simd.engine`` imports none of them.
"""
