"""The state file's read limit (simd.live.persist.MAX_STATE_BYTES) admits the state of any file the memory
budget admits (simd.scenario.schema.MAX_FILE_BYTES): at 256 MiB, the per-scenario cap alone (64 replicas of a
131,072-server cluster with pools) saved 405 MB, moved aside as too large at every restart."""

from __future__ import annotations

import math
from dataclasses import replace

from support.scenarios import job, scenario_file

from simd.engine.replicas import advance_replicas
from simd.live import persist
from simd.live.drills import DrillRunner
from simd.live.lane import new_lane
from simd.scenario import parse_config
from simd.scenario.limits import MAX_TOTAL_REPLICAS
from simd.scenario.schema import MAX_FILE_BYTES, SERVER_SLOT_BYTES, server_slots


def test_the_state_of_a_file_at_the_memory_budget_is_read_back():
    # the most bytes of state per server slot measured: pools, Weibull lifetimes and gamma rates, failing often
    text = scenario_file(job("dense", seed=3, replicas=2, n_gpus=8 * 65536, step_seconds=10, target_steps=10**6,
                             failures={"hard_per_gpu_hour": 1e-3, "sdc_per_gpu_hour": 0.0},
                             servers={"warm_standbys": 32768, "spares": {"count": 32768},
                                      "lifetime": {"distribution": "weibull", "shape": 0.7},
                                      "rates": {"gamma_shape": 0.8},
                                      "repair": {"automatic": {"distribution": "exponential",
                                                               "mean_seconds": 20000}}}))
    config = parse_config(text)
    s = config.all_scenarios[0]
    lane = new_lane(s, s, 0)
    lane = replace(lane, states=advance_replicas(lane.states, 86_400 * 10**6))
    per_slot = len(persist.encode(86_400 * 10**6, (lane,), DrillRunner(config), 0.0)) / (2 * server_slots(s))
    largest = math.ceil(per_slot * MAX_FILE_BYTES / SERVER_SLOT_BYTES) + MAX_TOTAL_REPLICAS * 1000
    assert largest <= persist.MAX_STATE_BYTES, (per_slot, largest)
