"""The bounded types of the scenario file, the command-line flags and the drill API: every limit's one home.

The scenario file's fields, the flags of `simd run`, `simd simulate` and `simd drill`
(simd.scenario.load.parse_value) and the body of the drill API (parse_drill_request) are all checked against
these types, and nothing else re-checks them (the engine takes a JobSpec built from a validated scenario).
The upper bounds keep every product the engine forms in integer microseconds finite and far inside int64
(9.2e18 us = 292,000 years): no real job comes near them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

Speedup = Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)]  # simulated seconds per wall second
TickSeconds = Annotated[float, Field(ge=0.01, le=3600, allow_inf_nan=False)]  # wall seconds between ticks
# a stretch of simulated time (a drill's duration, an offline tick): up to ~31,700 years
SimulatedSeconds = Annotated[float, Field(gt=0, le=1e12, allow_inf_nan=False)]
# a blocking cost (checkpoint, validation, restart): up to 10^6 s (11.6 days; a real one takes minutes)
CostSeconds = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
# step time: 1 ms (the engine counts microseconds; a real step takes 0.1-100 s) to a day
StepSeconds = Annotated[float, Field(ge=1e-3, le=86400, allow_inf_nan=False)]
# The codes of ScenarioBody.warnings: SDCs that validation cannot catch before a checkpoint (or a hyper checkpoint
# or a memory tier's save); a peer tier that nothing can lose (no servers: docs/model.md, "Memory tiers", "Loss")
WARNING_CODES = ("sdc-baked", "sdc-baked-hyper", "sdc-baked-tier", "peer-no-servers")
WarningCode = Literal["sdc-baked", "sdc-baked-hyper", "sdc-baked-tier", "peer-no-servers"]
# checkpoint and validation intervals: up to 10^9 steps (beyond target_steps simply means "never")
IntervalSteps = Annotated[int, Field(gt=0, le=10**9)]
Rate = Annotated[float, Field(ge=0, le=3.6e6, allow_inf_nan=False)]  # per GPU-hour (bounded again per step)
MAX_JOB_SECONDS = 1e12  # target_steps * step_seconds: a failure-free job of at most ~31,700 years


# A late SDC detector's latency, simulated seconds from the end of the SDC's onset step (0 .. 10^10 s, ~317 years:
# a latency beyond the job means "not in this job").
LatencySeconds = Annotated[float, Field(ge=0, le=1e10, allow_inf_nan=False)]

# Sane upper limits of a scenario file: each scenario is work on every tick.
MAX_SCENARIOS, MAX_SWEEPS, MAX_DRILLS = 1000, 100, 100
MAX_ALL_SCENARIOS = 2000  # scenarios plus every sweep point
# Replicas in all (every scenario's and every sweep point's): what one daemon holds in memory. A replica takes
# 4-7 kB resident between ticks and 16-20 kB while a tick advances it (its old and new states and the
# kernel's arrays), measured on llama3-16k, optimized and optimized-layered-sdc at 10,000 replicas each
# (`python bench/daemon.py --replica-memory`): 50,000 replicas are ~0.35 GB between ticks and ~1 GB at the
# peak of a tick or a reload, on a machine of a few GB. The daemon's scale target is 10,000 in one scenario.
MAX_TOTAL_REPLICAS = 50_000
# The work one scenario may do in one tick of the daemon, in estimated CPU microseconds of the engine (all its
# replicas together; simd.engine.work's cost model): 0.2 s, so that a tick at the default 1 s interval stays on
# time with a few busy scenarios. The daemon cuts a lane's tick there (simd.live.lane: the kernel stops each
# replica once it has spent its share); a scenario whose expected tick (speedup x tick_seconds of simulated time,
# simd.engine.work.expected_us) exceeds it would fall further behind every tick, and the file is refused.
TICK_WORK_US = 200_000
