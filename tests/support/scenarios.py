"""Scenario files for the tests, built from mappings: the jobs and drills several tests share are here once.

``job(name, **keys)`` is the small job below with keys replaced (a key given None is left out);
``scenario_file(*jobs, drills=..., **top)`` is the YAML text of a file; ``drills(*drills)`` is a ``drills:``
section to append to one. The daemon's fixture file, with a comment on what each scenario exercises, is
SMALL_YAML.
"""

from __future__ import annotations

import copy

import yaml

# The smallest valid file: one scenario with every required key (512 GPUs, 400 steps of 30 s, failing every
# ~3.9 h of compute, SDCs as often; a checkpoint every 20 steps, validation every 10). Literal texts here are
# what tests edit as text (YAML's own quirks, a key's spelling); job() builds on the same job.
SMALL = """scenarios:
  - name: small
    n_gpus: 512
    step_seconds: 30
    target_steps: 400
    failures: {hard_per_gpu_hour: 5.0e-4, sdc_per_gpu_hour: 5.0e-4}
    checkpoint: {interval_steps: 20, seconds: 60}
    validation: {interval_steps: 10, seconds: 5}
"""
SMALL_JOB = {k: v for k, v in yaml.safe_load(SMALL)["scenarios"][0].items() if k != "name"}


def job(name: str, **keys) -> dict:
    """SMALL_JOB named ``name``, ``keys`` replacing (or, given None, removing) its keys; seed goes first."""
    out = {"name": name, **({"seed": keys.pop("seed")} if "seed" in keys else {})}
    out.update(copy.deepcopy(SMALL_JOB))
    out.update(keys)
    return {k: v for k, v in out.items() if v is not None}


def replaying(log: str, **replay) -> str:
    """A file of one small job on 8 servers replaying the fault log ``log`` (``replay``: its other keys)."""
    return scenario_file(job("s", n_gpus=64, step_seconds=60, target_steps=300,
                             failures={"hard_per_gpu_hour": 2.0e-4, "sdc_per_gpu_hour": 1.5e-4},
                             checkpoint={"interval_steps": 25, "seconds": 300}, validation=None,
                             servers={"replay": {"log": log, **replay}}))


def _dump(data) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120)


def scenario_file(*jobs: dict, drills: tuple[dict, ...] = (), **top) -> str:
    """The text of a scenario file: the top-level keys (speedup, tick_seconds, ...), the jobs, the drills."""
    data = {**top, "scenarios": list(jobs)}
    if drills:
        data["drills"] = list(drills)
    return _dump(data)


def drills(*items: dict) -> str:
    """A ``drills:`` section, to append to a file's text."""
    return _dump({"drills": list(items)})


# Seed 000's optimized job, alone in a file with the daemon's defaults written out.
OPTIMIZED = """
speedup: 600
tick_seconds: 1.0
scenarios:
  - name: optimized
    seed: 8
    n_gpus: 1024
    step_seconds: 60
    target_steps: 3000
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
    checkpoint: {interval_steps: 25, seconds: 300}
    validation: {interval_steps: 25, seconds: 20}
    restart_seconds: 60
"""

# A drill on SMALL_YAML's scenario "big": its checkpoints 12x slower for two simulated hours.
STORAGE = {"name": "storage", "description": "big's checkpoints 12x slower", "duration_seconds": 7200,
           "scenarios": ["big"], "effects": {"checkpoint_seconds_factor": 12}}

# The sweep tests' job, of a few milliseconds: 512 GPUs failing every ~3.9 h of compute, ~2000 steps of 30 s
# (16.7 h), the llama3 cause mix, SDCs, validation not dividing every interval, stragglers: every bucket gets time.
SWEEP_SMALL = """scenarios:
  - name: small
    seed: 7
    n_gpus: 512
    step_seconds: 30
    target_steps: 2000
    failures: {hard_per_gpu_hour: 5.0e-4, sdc_per_gpu_hour: 2.0e-4, causes: llama3}
    checkpoint: {interval_steps: 40, seconds: 60}
    validation: {interval_steps: 20, seconds: 5}
    restart_seconds: 120
    stragglers: {jitter_seconds: 0.5, slow_ranks: 1, slowdown: 1.5, mitigation: {detect_after_steps: 30}}
"""

# The daemon tests' configuration: every feature the metrics read (replicas, a sweep, causes, warm recovery,
# stragglers with mitigation, a failure-free scenario, jobs that complete within minutes of simulated time).
SMALL_YAML = """
speedup: 600
tick_seconds: 1.0
scenarios:
  - name: plain        # seed 000's job with 10x the failure rates, so that things happen within hours
    seed: 5
    n_gpus: 1024
    step_seconds: 60
    target_steps: 300
    failures: {hard_per_gpu_hour: 2.0e-3, sdc_per_gpu_hour: 1.5e-3}
    checkpoint: {interval_steps: 25, seconds: 300}
    validation: {interval_steps: 25, seconds: 20}
    restart_seconds: 60
  - name: calm         # no failures at all, two replicas
    seed: 6
    replicas: 2
    n_gpus: 8
    step_seconds: 10
    target_steps: 100
    failures: {hard_per_gpu_hour: 0.0, sdc_per_gpu_hour: 0.0}
    checkpoint: {interval_steps: 10, seconds: 5}
  - name: big          # causes, warm recovery, stragglers replaced after 50 steps
    seed: 7
    replicas: 2
    n_gpus: 16384
    step_seconds: 6
    target_steps: 2000
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.0e-5, causes: llama3}
    checkpoint: {interval_steps: 100, seconds: 30}
    validation: {interval_steps: 50, seconds: 5}
    recovery: {strategy: warm}
    stragglers: {jitter_seconds: 0.5, slow_ranks: 1, slowdown: 1.25, mitigation: {detect_after_steps: 50}}
sweeps:
  - name: sw
    checkpoint_intervals: [10, 40]
    scenario:
      seed: 20
      replicas: 3
      n_gpus: 1024
      step_seconds: 30
      target_steps: 100000
      failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 0.0}
      checkpoint: {interval_steps: 10, seconds: 60}
      restart_seconds: 120
"""
