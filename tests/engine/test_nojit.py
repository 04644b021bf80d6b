"""Debugging without compiling: under NUMBA_DISABLE_JIT=1 numba runs the engine's kernels as the Python they are
written in (pcg.py gives its two LLVM intrinsics a Python twin), and the results are the same bit for bit. Each
path of the engine is run as a real `simd simulate` and `simd sweep` with and without the switch, on tiny jobs:
the one kernel with plain jobs (causes, stragglers) and with hyper-checkpointing, committed SDCs, shadow ranks, a
fleet, committed SDCs under stragglers (the step sampler) and servers with lognormal lifetimes, gamma rates and
pools (two of them with a checkpoint load, two with asynchronous saves), repairs of a mixture with in-process
restarts, crash loops and live migration, elastic replica groups under stragglers and on servers with pools,
bursts and misdiagnosis, and a sweep.
The sweep's common random numbers under stragglers (crn.py) are left out: their window is 2**18 steps, 16 s of
Python (checked by hand: `simd sweep --scenario causes-stragglers` on PATHS gives the same table either way)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PATHS = """
scenarios:
  - {name: plain, seed: 1, replicas: 2, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 1.0e-3},
     checkpoint: {interval_steps: 25, seconds: 300}, validation: {interval_steps: 40, seconds: 20}}
  - {name: causes-stragglers, seed: 2, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 1.0e-3, causes: llama3},
     checkpoint: {interval_steps: 25, seconds: 300}, validation: {interval_steps: 25, seconds: 20},
     stragglers: {jitter_seconds: 0.5, slow_ranks: 1, slowdown: 1.3, mitigation: {detect_after_steps: 50}}}
  - {name: shadow-hyper-committed, seed: 3, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 2.0e-3},
     checkpoint: {interval_steps: 25, seconds: 300, load_seconds: 90, hyper: {interval_steps: 5, window_steps: 50}},
     validation: {interval_steps: 5, seconds: 20}, shadow: {fraction: 0.5, overhead: 0.05},
     sdc: {semantics: committed, retention_checkpoints: 3, detectors: [
       {name: scan, latency: {distribution: lognormal, median_seconds: 600, sigma: 1.0}}]}}
  - {name: fleet, seed: 4, step_seconds: 60, target_steps: 300,
     fleet: [{type: a, count: 768, hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 1.0e-3},
             {type: b, count: 256, hard_per_gpu_hour: 4.0e-3, sdc_per_gpu_hour: 2.0e-3}],
     checkpoint: {interval_steps: 25, seconds: 300}, validation: {interval_steps: 25, seconds: 20}}
  - {name: committed-stragglers, seed: 5, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 2.0e-3},
     checkpoint: {interval_steps: 25, seconds: 300, write_seconds: 700, write_slowdown: 1.2},
     stragglers: {jitter_seconds: 0.5}, sdc: {semantics: committed, retention_checkpoints: 3, detectors: [
       {name: scan, latency: {distribution: exponential, mean_seconds: 3600}}]}}
  - {name: servers, seed: 6, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 1.0e-3},
     checkpoint: {interval_steps: 25, seconds: 300, load_seconds: 93.6, write_seconds: 900, write_slowdown: 1.1},
     validation: {interval_steps: 25, seconds: 20},
     servers: {lemons: {fraction: 0.1, multiplier: 5}, rates: {gamma_shape: 0.5},
               lifetime: {distribution: lognormal, sigma: 1.0}, warm_standbys: 2, spares: {count: 3},
               repair: {automatic: {distribution: exponential, mean_seconds: 36000},
                        manual: {probability: 0.5, time: {distribution: uniform, max_seconds: 90000}},
                        false_success: {automatic: 0.3, manual: 0.1}}}}
  - {name: servers-mixture, seed: 7, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 1.0e-3},
     checkpoint: {interval_steps: 25, seconds: 300}, validation: {interval_steps: 25, seconds: 20},
     servers: {warm_standbys: 1, repair: {automatic: {distribution: mixture, components: [
       {weight: 0.6, time: {distribution: lognormal, median_seconds: 600, sigma: 1.5}},
       {weight: 0.4, time: {distribution: exponential, mean_seconds: 86400}}]}}},
     recovery: {in_process: {causes: [hardware], seconds: 30, success_probability: 0.5},
                crash_loop: {failure_probability: 0.5, max_attempts: 2, escalation_seconds: 3600},
                migration: {seconds: 30, causes: {hardware: 0.5}}}}
  - {name: elastic, seed: 8, n_gpus: 1024, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 2.0e-3, sdc_per_gpu_hour: 1.0e-3, causes: llama3},
     checkpoint: {interval_steps: 25, seconds: 300, load_seconds: 90}, validation: {interval_steps: 25, seconds: 20},
     recovery: {elastic: {groups: 8, min_groups: 6, replace_seconds: 600, heal_seconds: 900, overhead: 0.02},
                crash_loop: {failure_probability: 0.5, max_attempts: 2, escalation_seconds: 3600}},
     stragglers: {jitter_seconds: 0.5, slow_ranks: 1, slowdown: 1.3, mitigation: {detect_after_steps: 50}}}
  - {name: elastic-servers, seed: 9, n_gpus: 256, step_seconds: 60, target_steps: 300,
     failures: {hard_per_gpu_hour: 1.0e-2, sdc_per_gpu_hour: 1.0e-3, causes: llama3},
     checkpoint: {interval_steps: 25, seconds: 300, load_seconds: 90}, validation: {interval_steps: 25, seconds: 20},
     recovery: {elastic: {groups: 8, min_groups: 4, replace_seconds: 600, heal_seconds: 900}},
     servers: {warm_standbys: 1, spares: {count: 1, preemption_seconds: 600}, bursts: {per_day: 20, mean_size: 3},
               repair: {automatic: {distribution: exponential, mean_seconds: 7200}},
               diagnosis: {probability: 0.9, misattribution: 0.3}}}
"""


def _simd(args: list[str], nojit: bool, cwd) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    if nojit:
        env["NUMBA_DISABLE_JIT"] = "1"
    out = subprocess.run([sys.executable, "-m", "simd", *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.integration  # real processes, the kernels run as Python in half of them
def test_the_kernels_run_as_python_with_the_same_results(tmp_path):
    (tmp_path / "paths.yaml").write_text(PATHS)
    simulate = ["simulate", "--config", "paths.yaml", "--seeds", "2", "--json"]
    sweep = ["sweep", "--config", "paths.yaml", "--scenario", "plain", "--param",
             "checkpoint.interval_steps=20,50", "--replicas", "3", "--workers", "1", "--quiet"]
    for args in (simulate, sweep):
        compiled = _simd(args, False, tmp_path)
        assert compiled.strip() and _simd(args, True, tmp_path) == compiled, args[0]


@pytest.mark.integration
def test_simd_compile_says_there_is_nothing_to_compile_without_the_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-m", "simd", "compile"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 1 and out.stderr.strip().splitlines() == [
        "simd compile: error: NUMBA_DISABLE_JIT=1 runs the kernels as Python: there is nothing to compile"]
