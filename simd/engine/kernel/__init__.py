"""The compiled loop's parts, by mechanism, called from the one loop (simd.engine.loop.advance_all):

- ``draws``: a stream's next uniform and geometric gap, the bucket of a uniform among cumulative shares;
- ``quiet``: the quiet steps before the next event: their time in closed form, how many fit a budget, and the
  counts of a sweep's shared window (crn.py);
- ``late``: committed SDCs: the detectors' latencies (and the normal quantile they need), the corrupt ring;
- ``record``: the optional trace buffer.

The loop itself keeps the handling of each event inline: numba compiles each function apart, so a function
boundary on the loop's path (an event costs ~85 ns on the plain job) cost +45% per event as calls passing a
dozen locals, +10% and +1.5 s of cold compile inlined at numba's IR level (``inline="always"``), and +14-20% and
+1.3 s with the replica's state in its ``pos`` row and only the hard failure a call (docs/engine.md, "One
kernel": the measurements, side by side).

Every function here is compiled with numba (simd.engine.jit); importing ``simd.engine`` imports none of them.
"""
