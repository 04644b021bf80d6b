"""Offline simulation: each selected scenario's job run to completion for each seed (``simd simulate``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from simd.engine import US_PER_SECOND, JobResult, run_job, to_us
from simd.scenario import Config, Scenario

# A job that has not finished after this many times its failure-free duration is reported incomplete
# rather than simulated forever (a configuration whose failures outpace its checkpoints never finishes).
LIMIT_FACTOR = 1000


MAX_SEED = 2**63 - 1  # the scenario file's seed range (config.ScenarioBody.seed)


def parse_seeds(text: str) -> range:
    """``N`` -> seeds 0..N-1; ``A..B`` -> seeds A..B inclusive. A range, so 10^8 seeds cost no memory."""
    m = re.fullmatch(r"\s*(\d{1,19})\s*(?:\.\.\s*(\d{1,19})\s*)?", text)
    if not m:
        raise ValueError(f"--seeds: expected N or A..B with non-negative integers below 2^63, got {text[:40]!r}")
    if m.group(2) is None:
        n = int(m.group(1))
        if not 1 <= n <= MAX_SEED + 1:
            raise ValueError(f"--seeds: N must be in 1..2^63, got {n}")
        return range(n)
    a, b = int(m.group(1)), int(m.group(2))
    if b < a:
        raise ValueError(f"--seeds: A..B needs A <= B, got {text!r}")
    if b > MAX_SEED:
        raise ValueError(f"--seeds: B must be < 2^63, got {b}")
    return range(a, b + 1)


@dataclass(frozen=True)
class Outcome:
    scenario: str
    seed: int
    target_steps: int
    job: JobResult | None  # None: not finished within the limit
    limit_seconds: float
    shadow: bool = False  # the scenario has shadow ranks: the JSON line says what they found
    fleet: bool = False  # the scenario has a fleet: the JSON line attributes events to accelerator types
    hyper: bool = False  # checkpoint.hyper: the JSON line says how often and how long it was on
    committed: bool = False  # sdc.semantics committed: the JSON line has the late finds and what they cost
    servers: bool = False  # servers: the JSON line counts the servers that failed
    price: float | None = None  # servers.price_per_gpu_hour: the JSON line's cost in money

    def as_json(self) -> dict:
        base = {"scenario": self.scenario, "seed": self.seed, "target_steps": self.target_steps}
        j = self.job
        if j is None:
            return {**base, "completed": False, "wall_seconds": self.limit_seconds}
        return {
            **base,
            "completed": True,
            "recompute_steps": j.recompute_steps,
            "interruptions": j.interruptions,
            "sdc_detected": j.sdc_detected,
            "sdc_baked": j.sdc_baked,
            "wall_seconds": j.wall_seconds,
            "checkpoint_seconds": j.checkpoint_seconds,
            "validation_seconds": j.validation_seconds,
            "restart_seconds": j.restart_seconds,
            "effective_utilization": j.effective_utilization,
            "interruptions_by_cause": j.interruptions_by_cause,
            "mean_step_seconds": j.mean_step_seconds,
            "bucket_seconds": j.bucket_seconds,
            **({"shadow_detected": j.shadow_detected} if self.shadow else {}),
            **({"interruptions_by_accelerator": j.interruptions_by_type,
                "sdc_onsets_by_accelerator": j.sdc_onsets_by_type} if self.fleet else {}),
            **({"hyper_activations": j.hyper_activations, "hyper_steps": j.hyper_steps} if self.hyper else {}),
            **({"sdc_late_found": j.sdc_late_found, "sdc_unrecoverable": j.sdc_unrecoverable,
                "checkpoints_lost": j.checkpoints_lost, "sdc_found_by_detector": j.sdc_found_by_detector}
               if self.committed else {}),
            **({"server_failures": j.server_failures} if self.servers else {}),
            **({"bursts": j.bursts} if j.bursts else {}),
            **({"replacements": j.replacements, "repairs": j.repairs, "diagnosis": j.diagnosis,
                "retirements": j.retirements, "gpu_hours": j.gpu_hours,
                "gpu_hours_per_productive_gpu_hour": j.gpu_hours_per_productive_gpu_hour} if j.replacements else {}),
            **({"cost": self.price * (j.gpu_hours["job"] + j.gpu_hours["pools"]),
                "cost_per_productive_gpu_hour": self.price * j.gpu_hours_per_productive_gpu_hour}
               if self.price is not None and j.gpu_hours else {}),
        }


def ideal_seconds(s: Scenario) -> float:
    v = s.validation.interval_steps
    return (s.target_steps * s.step_seconds + (s.target_steps // s.checkpoint.interval_steps) * s.checkpoint.seconds
            + ((s.target_steps // v) * s.validation.seconds if v else 0.0))


def simulation_limit_us(scenario: Scenario) -> int:
    """The simulated time after which a job is reported incomplete (LIMIT_FACTOR)."""
    return to_us(LIMIT_FACTOR * ideal_seconds(scenario)) + 1


def simulate(scenario: Scenario, seed: int, tick_seconds: float | None = None) -> Outcome:
    limit_us = simulation_limit_us(scenario)
    tick_us = None if tick_seconds is None else max(1, to_us(tick_seconds))
    job = run_job(scenario.job_spec(seed), tick_us=tick_us, limit_us=limit_us)
    return Outcome(scenario.name, seed, scenario.target_steps, job, limit_us / US_PER_SECOND,
                   shadow=scenario.shadow is not None, fleet=scenario.fleet is not None,
                   hyper=scenario.checkpoint.hyper is not None, committed=scenario.committed_sdc,
                   servers=scenario.servers is not None,
                   price=scenario.servers.price_per_gpu_hour if scenario.servers is not None else None)


def run_all(config: Config, names: list[str] | None, seeds: list[int] | None,
            tick_seconds: float | None) -> Iterator[Outcome]:
    chosen = config.all_scenarios if not names else [config.scenario(n) for n in names]
    for s in chosen:
        for seed in seeds if seeds is not None else [s.seed]:
            yield simulate(s, seed, tick_seconds)


def json_line(o: Outcome) -> str:
    return json.dumps(o.as_json(), sort_keys=False)


# The table's columns: (title, width). Cells are right-aligned to the width (the scenario left-aligned) and
# joined by a space, so a value wider than its column (a long name, 10505 interruptions) shifts the rest of
# its row but never runs into its neighbour.
COLUMNS = (("scenario", 15), ("seed", 5), ("util", 7), ("rollback%", 9), ("ckpt%", 6), ("interr", 7),
           ("sdc det", 7), ("sdc baked", 9), ("wall h", 9))


def _line(cells: list[str]) -> str:
    first, *rest = cells
    return " ".join([first.ljust(COLUMNS[0][1])] + [c.rjust(w) for c, (_, w) in zip(rest, COLUMNS[1:], strict=False)])


HEADER = _line([title for title, _ in COLUMNS])


def table_row(o: Outcome) -> str:
    j = o.job
    if j is None:
        return _line([o.scenario, str(o.seed)]) + f"  not finished within {o.limit_seconds / 3600:.0f} simulated hours"
    w = j.wall_seconds
    return _line([o.scenario, str(o.seed), f"{j.effective_utilization:.1%}", f"{j.bucket_seconds['rollback'] / w:.1%}",
                  f"{j.checkpoint_seconds / w:.1%}", str(j.interruptions), str(j.sdc_detected), str(j.sdc_baked),
                  f"{w / 3600:.2f}"])


class MeanRow:
    """A scenario's running means over its finished jobs, in constant memory whatever the number of seeds."""

    def __init__(self, name: str):
        self.name, self.seeds, self.done = name, 0, 0
        self._sums = [0.0] * 7  # util, rollback share, checkpoint share, interruptions, sdc det, sdc baked, wall

    def add(self, o: Outcome) -> None:
        self.seeds += 1
        j = o.job
        if j is None:
            return
        self.done += 1
        w = j.wall_seconds
        for i, v in enumerate((j.effective_utilization, j.bucket_seconds["rollback"] / w, j.checkpoint_seconds / w,
                               j.interruptions, j.sdc_detected, j.sdc_baked, w)):
            self._sums[i] += v

    def row(self) -> str:
        if not self.done:
            return _line([self.name, "mean"]) + "  no job finished"
        u, r, c, i, d, b, w = (x / self.done for x in self._sums)
        return _line([self.name, "mean", f"{u:.1%}", f"{r:.1%}", f"{c:.1%}", f"{i:.2f}", f"{d:.2f}", f"{b:.2f}",
                      f"{w / 3600:.2f}"])


def mean_row(name: str, outcomes: list[Outcome]) -> str:
    acc = MeanRow(name)
    for o in outcomes:
        acc.add(o)
    return acc.row()
