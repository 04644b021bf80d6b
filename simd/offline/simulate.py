"""Offline simulation: each selected scenario's job run to completion for each seed (``simd simulate``)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from simd.engine import (
    US_PER_SECOND,
    JobResult,
    advance_replicas,
    first_jobs,
    new_state,
    summed_totals,
    to_us,
    work,
)
from simd.models.recovery import restart_by_phase
from simd.scenario import Config, Scenario, translate

# A job that has not finished after this many times its failure-free duration is reported incomplete
# rather than simulated forever (a configuration whose failures outpace its checkpoints never finishes).
LIMIT_FACTOR = 1000
# A job stops, reported unfinished at its *work horizon*, once what it did is this much estimated engine work
# (simd.engine.work.counted_us: events, server events, bursts' passes, straggler-drawn steps, at the kernel's
# costs): 30 s of CPU, where every job of the embedded configuration takes at most ~0.1 s; a scenario at the
# servers' bounds (tests/data/bounds-servers.yaml: bursts of ~10,000 servers) would run for days of CPU up to its
# simulated limit. Checked at a grid of simulated time fixed by the job (HORIZON_CHECK_US of expected work
# apart; the grid's calls are counted too, one per point passed), so where a job stops does not depend on
# --tick-seconds.
HORIZON_WORK_US = 30e6
HORIZON_CHECK_US = 2_000_000


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
    job: JobResult | None  # None: not finished within the limit (or the work horizon)
    limit_seconds: float
    shadow: bool = False  # the scenario has shadow ranks: the JSON line says what they found
    fleet: bool = False  # the scenario has a fleet: the JSON line attributes events to accelerator types
    hyper: bool = False  # checkpoint.hyper: the JSON line says how often and how long it was on
    committed: bool = False  # sdc.semantics committed: the JSON line has the late finds and what they cost
    servers: bool = False  # servers: the JSON line counts the servers that failed
    jit: bool = False  # checkpoint.just_in_time: the JSON line counts the just-in-time saves
    price: float | None = None  # servers.price_per_gpu_hour: the JSON line's cost in money
    horizon_seconds: float | None = None  # stopped at the work horizon at this simulated time (job None)
    # recovery.phases, in_process, crash_loop or migration: (phases or None, each cause's restart, whether a warm
    # swap, an in-process restart's, an escalation's and a migration's us or None) for the JSON line's
    # restart_phases
    phases: tuple | None = None
    restarts: bool = False  # recovery.in_process or crash_loop: the JSON line has their outcomes

    def _restart_phases(self) -> dict[str, float]:
        """The job's restart bucket by phase, seconds (simd.models.recovery.restart_by_phase)."""
        j, (phases, restart_us, warm, ip_us, esc_us, mig_us) = self.job, self.phases
        ip = j.in_process
        parts = restart_by_phase(dict(phases) if phases is not None else None, restart_us, warm,
                                 j.interruptions_by_cause.values(), to_us(j.restart_seconds), to_us(j.load_seconds),
                                 j.restart_attempts_by_cause.values(),
                                 None if ip_us is None else ip_us * (ip["succeeded"] + ip["failed"]),
                                 None if esc_us is None else esc_us * j.escalations,
                                 None if mig_us is None else mig_us * j.migration["migrated"])
        return {k: v / US_PER_SECOND for k, v in parts.items()}

    def as_json(self) -> dict:
        base = {"scenario": self.scenario, "seed": self.seed, "target_steps": self.target_steps}
        j = self.job
        if j is None and self.horizon_seconds is not None:
            return {**base, "completed": False, "stopped": "work horizon", "wall_seconds": self.horizon_seconds}
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
            **({"checkpoints": j.checkpoints, "saves": j.saves} if j.saves else {}),
            **({"loads": j.loads} if j.loads else {}),
            **({"checkpoints": j.checkpoints, "memory_tier": j.tier} if j.tier else {}),
            **({"jit_saves": j.jit_saves} if self.jit else {}),
            **({"restart_phases": self._restart_phases()} if self.phases is not None else {}),
            **({"in_process": j.in_process} if j.in_process else {}),
            **({"migrations": j.migration} if j.migration else {}),
            **({"elastic": j.elastic} if j.elastic else {}),
            **({"restart_attempts": j.restart_attempts_by_cause, "escalations": j.escalations}
               if self.restarts else {}),
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


@dataclass(frozen=True)
class Progress:
    """Where a long job is, for a progress line: simulated seconds reached of at most ``limit_seconds``, and the
    share of the work horizon spent."""

    scenario: str
    seed: int
    seconds: float
    limit_seconds: float
    horizon_share: float


def run(spec, limit_us: int, tick_us: int | None = None,
        progress: Callable[[float, float], None] | None = None) -> tuple[JobResult | None, int | None]:
    """core.run_job's job (the same result, by tick-size invariance), on the engine's batch path (one replica: its
    arrays carried from call to call, no State built per call), in calls that end at the ticks and at a grid of
    simulated time (HORIZON_CHECK_US of expected work apart, engine.work.chunk_us). At each grid point the work so
    far, the totals' (engine.work.counted_us) and one call's per grid point passed, is checked against
    HORIZON_WORK_US. Returns (the job, None), or (None, the simulated us where it stopped at the horizon);
    (None, None) when ``limit_us`` passed first. ``progress(clock_us, horizon share)`` after each call."""
    load = work.load_of(spec)
    grid = max(1, min(limit_us, math.ceil(min(work.chunk_us(work.KERNEL, load, 1, HORIZON_CHECK_US, 0.0), 2.0**62))))
    per_grid = work.call_us(work.KERNEL, load, 1)
    states = (new_state(spec),)  # packed into a batch's arrays by the first call (new_replicas compiles twice)
    while True:
        at = states[0].clock if not hasattr(states, "clock") else states.clock
        until = min(limit_us, (at // grid + 1) * grid)
        if tick_us is not None:
            until = min(until, at + tick_us)
        states = advance_replicas(states, until, max_jobs=1)
        job = first_jobs(states)[0]
        if job is not None:
            return job, None
        clock = states.clock
        if clock >= limit_us:
            return None, None
        done = work.counted_us(work.KERNEL, load, summed_totals(states)) + clock // grid * per_grid
        if clock % grid == 0 and done >= HORIZON_WORK_US:
            return None, clock
        if progress is not None:
            progress(clock, done / HORIZON_WORK_US)


def run_batch(specs, limit_us: int) -> list[tuple[JobResult | None, int | None]]:
    """:func:`run` for each of ``specs`` (one configuration, several seeds: one batch of the engine's replicas),
    with the same results, each replica checked against the horizon at the same grid as alone; a replica whose
    job ended or stopped leaves the batch."""
    load = work.load_of(specs[0])
    grid = max(1, min(limit_us, math.ceil(min(work.chunk_us(work.KERNEL, load, 1, HORIZON_CHECK_US, 0.0), 2.0**62))))
    per_grid = work.call_us(work.KERNEL, load, 1)
    out: list[tuple[JobResult | None, int | None]] = [(None, None)] * len(specs)
    rows = list(range(len(specs)))  # the batch's replicas, by their index in specs
    states = tuple(new_state(s) for s in specs)
    at = 0
    while rows:
        until = min(limit_us, (at // grid + 1) * grid)
        states = advance_replicas(states, until, max_jobs=1)
        jobs, clocks = first_jobs(states), states.clocks
        keep = []
        for k, i in enumerate(rows):
            if jobs[k] is not None:
                out[i] = (jobs[k], None)
            elif until >= limit_us:
                out[i] = (None, None)
            elif until % grid == 0 and work.counted_us(work.KERNEL, load, states.totals_of(k)) \
                    + until // grid * per_grid >= HORIZON_WORK_US:
                out[i] = (None, int(clocks[k]))
            else:
                keep.append(k)
        if len(keep) < len(rows):
            rows = [rows[k] for k in keep]
            states = tuple(states[k] for k in keep)
        at = until
    return out


def simulate(scenario: Scenario, seed: int, tick_seconds: float | None = None,
             progress: Callable[[Progress], None] | None = None) -> Outcome:
    limit_us = simulation_limit_us(scenario)
    tick_us = None if tick_seconds is None else max(1, to_us(tick_seconds))
    report = None if progress is None else (
        lambda clock, share: progress(Progress(scenario.name, seed, clock / US_PER_SECOND, limit_us / US_PER_SECOND,
                                               share)))
    job, stopped = run(scenario.job_spec(seed), limit_us, tick_us, report)
    return Outcome(scenario.name, seed, scenario.target_steps, job, limit_us / US_PER_SECOND,
                   horizon_seconds=None if stopped is None else stopped / US_PER_SECOND,
                   shadow=scenario.shadow is not None, fleet=scenario.fleet is not None,
                   hyper=scenario.checkpoint.hyper is not None, committed=scenario.committed_sdc,
                   jit=scenario.checkpoint.just_in_time is not None,
                   servers=scenario.servers is not None,
                   price=scenario.servers.price_per_gpu_hour if scenario.servers is not None else None,
                   phases=_phases(scenario),
                   restarts=scenario.recovery.in_process is not None or scenario.recovery.crash_loop is not None)


def _phases(scenario: Scenario) -> tuple | None:
    """What the JSON line's split of the restart by phase needs (None without recovery.phases, in_process, crash_loop
    or migration): the phases (us; None without recovery.phases), each cause's restart (us), whether it is a warm
    swap, an in-process restart's, an escalation's and a migration's us (None without them)."""
    phases = scenario.restart_phases_us()
    ip, cl, mig = scenario.recovery.in_process, scenario.recovery.crash_loop, scenario.recovery.migration
    if phases is None and ip is None and cl is None and mig is None:
        return None
    return (tuple(phases.items()) if phases is not None else None,
            tuple(to_us(c.restart_seconds) for c in scenario.causes()), translate.warm_swapped(scenario),
            to_us(ip.seconds) if ip is not None else None, to_us(cl.escalation_seconds) if cl is not None else None,
            to_us(mig.seconds) if mig is not None else None)


def run_all(config: Config, names: list[str] | None, seeds: list[int] | None,
            tick_seconds: float | None, progress: Callable[[Progress], None] | None = None) -> Iterator[Outcome]:
    chosen = config.all_scenarios if not names else [config.scenario(n) for n in names]
    for s in chosen:
        for seed in seeds if seeds is not None else [s.seed]:
            yield simulate(s, seed, tick_seconds, progress)


def json_line(o: Outcome) -> str:
    return json.dumps(o.as_json(), sort_keys=False)


# The table's columns: (title, width). Cells are right-aligned to the width (the scenario left-aligned) and
# joined by a space, so a value wider than its column (10505 interruptions) shifts the rest of its row but never
# runs into its neighbour; the scenario column widens to the longest name the command runs (name_width).
COLUMNS = (("scenario", 15), ("seed", 5), ("util", 7), ("rollback%", 9), ("ckpt%", 6), ("interr", 7),
           ("sdc det", 7), ("sdc baked", 9), ("wall h", 9))


def name_width(names) -> int:
    """The scenario column's width for these scenario names: the longest, at least the column's own."""
    return max([COLUMNS[0][1], *(len(n) for n in names)])


def _line(cells: list[str], width: int = COLUMNS[0][1]) -> str:
    first, *rest = cells
    return " ".join([first.ljust(width)] + [c.rjust(w) for c, (_, w) in zip(rest, COLUMNS[1:], strict=False)])


def header(width: int = COLUMNS[0][1]) -> str:
    """The table's header, its scenario column ``width`` wide (name_width)."""
    return _line([title for title, _ in COLUMNS], width)


HEADER = header()


def table_row(o: Outcome, width: int = COLUMNS[0][1]) -> str:
    j = o.job
    first = _line([o.scenario, str(o.seed)], width)
    if j is None and o.horizon_seconds is not None:
        return first + (f"  stopped at the work horizon ({HORIZON_WORK_US / 1e6:g} s of estimated engine work) at "
                        f"simulated hour {o.horizon_seconds / 3600:.0f}, unfinished")
    if j is None:
        return first + f"  not finished within {o.limit_seconds / 3600:.0f} simulated hours"
    w = j.wall_seconds
    return _line([o.scenario, str(o.seed), f"{j.effective_utilization:.1%}", f"{j.bucket_seconds['rollback'] / w:.1%}",
                  f"{j.checkpoint_seconds / w:.1%}", str(j.interruptions), str(j.sdc_detected), str(j.sdc_baked),
                  f"{w / 3600:.2f}"], width)


class MeanRow:
    """A scenario's running means over its finished jobs, in constant memory whatever the number of seeds."""

    def __init__(self, name: str, width: int = COLUMNS[0][1]):
        self.name, self.seeds, self.done, self.width = name, 0, 0, width
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
            return _line([self.name, "mean"], self.width) + "  no job finished"
        u, r, c, i, d, b, w = (x / self.done for x in self._sums)
        return _line([self.name, "mean", f"{u:.1%}", f"{r:.1%}", f"{c:.1%}", f"{i:.2f}", f"{d:.2f}", f"{b:.2f}",
                      f"{w / 3600:.2f}"], self.width)


def mean_row(name: str, outcomes: list[Outcome]) -> str:
    acc = MeanRow(name)
    for o in outcomes:
        acc.add(o)
    return acc.row()
