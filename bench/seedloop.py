"""Seed 000's own per-step loop (its ``TrainingSimulator.run``, without simd's extensions): what the engine's
speed ratios were first stated against. bench/engine.py times it beside simd's oracle (simd/engine/oracle.py,
the same loop with every mechanism, slower per step) so that the two kinds of ratio can be related. Not a
reference for correctness: the oracle is."""

from __future__ import annotations

import random

from simd.engine import JobSpec, per_step_cluster_hazard


def seed_run(cfg: JobSpec) -> dict:
    rng = random.Random(cfg.seed)
    hard_hazard = per_step_cluster_hazard(cfg.hard_per_gpu_hour, cfg.n_gpus, cfg.step_seconds)
    sdc_hazard = per_step_cluster_hazard(cfg.sdc_per_gpu_hour, cfg.n_gpus, cfg.step_seconds)
    wall = 0.0
    last_ckpt = cur = 0
    corrupted = False
    interruptions = sdc_detected = sdc_baked = recompute = 0
    while cur < cfg.target_steps:
        cur += 1
        wall += cfg.step_seconds
        if rng.random() < hard_hazard:  # (a) hard failure: roll back to last_ckpt
            interruptions += 1
            recompute += cur - last_ckpt
            cur = last_ckpt
            corrupted = False
            wall += cfg.restart_seconds
            continue
        if not corrupted and rng.random() < sdc_hazard:  # (b) SDC onset, silent
            corrupted = True
        if cfg.validation_interval_steps and cur % cfg.validation_interval_steps == 0:  # (c) validation
            wall += cfg.validation_seconds
            if corrupted:
                sdc_detected += 1
                recompute += cur - last_ckpt
                cur = last_ckpt
                corrupted = False
                wall += cfg.restart_seconds
                continue
        if cur % cfg.ckpt_interval_steps == 0:  # (d) checkpoint: commit or bake in
            wall += cfg.ckpt_seconds
            if corrupted:
                sdc_baked += 1
                recompute += cur - last_ckpt
                cur = last_ckpt
                corrupted = False
                wall += cfg.restart_seconds
            else:
                last_ckpt = cur
    if corrupted:
        sdc_baked += 1
        recompute += cur - last_ckpt
    return {"interruptions": interruptions, "sdc_detected": sdc_detected, "sdc_baked": sdc_baked,
            "recompute_steps": recompute, "wall_seconds": wall}
