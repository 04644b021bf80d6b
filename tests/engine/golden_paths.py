"""The engine's golden paths: a fixed corpus of jobs over every mechanism and accepted combination, each advanced
through a few calls (some with a drill's retarget between them), and a digest of where each ended: its state
and its events, interruptions and SDC verdicts included (``trace``).

The digests in golden/paths.json were written on 2026-12-03 (issue 20) by the Python walks that were then the
kernel's references (walk.py and work.py, xwalk.py), and the kernel gave every one of them bit for bit. The
walks are retired; the digests keep what they proved: a change that moves any trajectory of the corpus shows
here. A change of draw order made on purpose rewrites them (``python tests/engine/golden_paths.py --write``)
and says in its commit why, with the oracle's distribution tests (tests/engine/statistical) as its check.

The corpus is drawn by ``random.Random(k)`` for case k (not hypothesis: its draws change with its version).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import fields, replace
from pathlib import Path

from simd.engine import Accelerator, Cause, JobSpec, Shadow, Stragglers, advance, new_state, retarget
from simd.engine.spec import CommittedSdc, Detector, Hyper

GOLDEN = Path(__file__).parent / "golden" / "paths.json"
CASES = 200
S = 10**6
CAUSES = (Cause("gpu", 0.6, 10.0, 55.0), Cause("network", 0.4, 30.0, 388.2))
STRAGGLERS = (Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2, replace_after_steps=40), Stragglers(0.5, 1, 1.2),
              Stragglers(0.0, 2, 1.5))


def _detector(rng: random.Random, i: int) -> Detector:
    return Detector(f"d{i}", rng.choice(["exponential", "lognormal", "uniform"]),
                    rng.choice([0.0, 30.0, 600.0, 7200.0, 86400.0]), rng.choice([0.0, 0.5, 1.5]),
                    rng.choice([0.0, 0.3, 1.0]))


def case(k: int) -> tuple[JobSpec, list[int], JobSpec | None]:
    """Case ``k``: its job, the ends of its calls (microseconds) and the job a drill retargets it to after the
    first call (None: no drill)."""
    rng = random.Random(k)
    step = rng.choice([1.0, 7.3, 30.0, 60.0])
    s = JobSpec(n_gpus=rng.choice([1, 8, 1024, 20000]), step_seconds=step, target_steps=rng.randint(1, 600),
                hard_per_gpu_hour=rng.choice([0.0, 1e-5, 2e-4, 1e-3, 3e-3]),
                sdc_per_gpu_hour=rng.choice([0.0, 1e-5, 1.5e-4, 1e-3, 3e-3]),
                ckpt_interval_steps=rng.randint(1, 60), ckpt_seconds=rng.choice([0.0, 12.25, 300.0]),
                validation_interval_steps=rng.choice([0, rng.randint(1, 40)]),
                validation_seconds=rng.choice([0.0, 20.0]), restart_seconds=rng.choice([0.0, 60.0]),
                causes=rng.choice([(), CAUSES]), seed=rng.randrange(2**32))
    if rng.random() < 0.25:
        s = replace(s, shadow=Shadow(rng.choice([0.1, 0.5, 1.0]), rng.choice([0.0, 0.05])))
    else:
        if rng.random() < 0.25:
            n = rng.randint(2, 3)
            s = replace(s, fleet=tuple(Accelerator(f"t{i}", rng.randint(1, 3000), rng.choice([0.0, 1e-4, 1e-3]),
                                                   rng.choice([0.0, 1e-4, 1e-3])) for i in range(n)))
        if rng.random() < 0.3:
            s = replace(s, stragglers=rng.choice(STRAGGLERS))
    if rng.random() < 0.3:
        s = replace(s, hyper=Hyper(rng.randint(1, 30), rng.randint(1, 600)))
    if k % 5 == 0:  # every fifth: committed SDCs that checkpoints take before a detector finds them
        s = replace(s, n_gpus=1024 if not s.fleet else s.n_gpus, sdc_per_gpu_hour=3e-3, validation_interval_steps=0,
                    committed_sdc=CommittedSdc(tuple(replace(_detector(rng, i), scale_seconds=rng.choice(
                        [600.0, 7200.0])) for i in range(rng.randint(1, 3))), rng.randint(1, 6)))
    elif rng.random() < 0.3:
        s = replace(s, committed_sdc=CommittedSdc(tuple(_detector(rng, i) for i in range(rng.randint(0, 3))),
                                                  rng.randint(1, 6)),
                    # without validation more SDCs reach a checkpoint: the detectors' findings come late
                    validation_interval_steps=rng.choice([0, s.validation_interval_steps]))
    horizon = int(s.target_steps * step * S * rng.uniform(0.5, 4.0))
    cuts = sorted(int(rng.random() * horizon) for _ in range(rng.randint(0, 3))) + [horizon]
    drill = None
    if rng.random() < 0.25:
        drill = replace(s, hard_per_gpu_hour=s.hard_per_gpu_hour * 3, sdc_per_gpu_hour=s.sdc_per_gpu_hour / 2,
                        fleet=tuple(replace(a, hard_per_gpu_hour=a.hard_per_gpu_hour * 3) for a in s.fleet))
    return s, cuts, drill


def run(k: int, **kw) -> tuple:
    """Case ``k`` advanced through its calls: its final state and all its events."""
    s, cuts, drill = case(k)
    state, events = new_state(s), []
    for i, c in enumerate(cuts):
        state, ev = advance(state, c, trace=True, **kw)
        events += ev
        if i == 0 and drill is not None:
            state = retarget(state, drill)
    return state, events


# Fields added to State, Totals and JobResult since the digests were written (2026-12-03), with the mechanism that
# brought them: no path here uses it, so each keeps its default (checked) and is left out of the digest, which then
# covers what it covered when written.
SINCE = {"lifetimes": 0, "srv_next": (), "srv_mult": (), "server_failures": 0, "srv_role": (), "srv_repair": (),
         "repair_draws": 0, "wait_until": 0, "waiting_us": 0, "replacements_standby": 0, "replacements_spare": 0,
         "replacements_waited": 0, "replacements": {}, "repairs_manual": 0, "repairs_false": 0, "lemons_fixed": 0,
         "repairs": {}, "gpu_hours": {}, "srv_fixed": (), "diagnosis_draws": 0, "srv_blamed": (), "diagnosis_missed": 0,
         "diagnosis_wrong": 0, "retirements": 0, "diagnosis": {}, "retired_at_s": 0,
         "repairs_started": 0, "repairs_false_manual": 0, "burst_draws": 0, "burst_at": 0, "burst_picks": 0,
         "bursts": {}, "burst_events": 0, "burst_servers": 0,  # servers (issue 21)
         "write_end": 0, "write_step": 0, "write_sdc": False, "checkpoint_write_us": 0, "checkpoint_wait_us": 0,
         "saves_aborted": 0, "saves": {}, "saves_failed": 0, "write_fails": False,
         "save_draws": 0,  # asynchronous and failing saves
         "loads_corrupt": 0, "fallbacks_to_start": 0, "corrupt_draws": 0, "hw": 0, "loads": {},  # corrupt loads
         "tier_saves": 0, "tier_losses": 0, "recoveries_tier": 0, "recoveries_persistent": 0, "recoveries_start": 0,
         "persist_last": 0, "load_end": 0, "tier": {}, "persist_clean": 0, "tier_clean": 0,  # a memory tier
         "jit_end": 0, "tier_saves_failed": 0,
         "load_us": 0, "load_seconds": 0.0,  # the restart bucket's loads
         "regime": (), "jit_saves": 0, "tier_loads_corrupt": 0,  # operational time's regimes
         "in_process_ok": 0, "in_process_failed": 0, "restart_attempts": (), "escalations": 0, "in_process": {},
         "restart_attempts_by_cause": {},  # in-process restarts and crash loops
         "migrations": 0, "migrations_no_standby": 0, "migration": {},  # live migration
         "tier_saves_aborted": 0, "tier_write_end": 0, "tier_write_step": 0,
         "tier_write_fails": False,  # a memory tier's writes
         "degraded_us": 0, "elastic_drops": 0, "elastic_rejoins": 0, "rejoin": (), "elastic": {},  # elastic groups
         "tier_ckpts": (),  # a memory tier's copies kept
         "group_ready": (), "srv_group": (),  # elastic groups with servers
         "srv_relapse": (), "relapses": 0,  # repairs that do not hold
         "low_saves": 0, "low_saves_failed": 0, "low_saves_aborted": 0, "low_losses": 0, "low_recoveries": 0,
         "low_loads_corrupt": 0, "voided_us": 0, "low_ckpts": (), "low_write_end": 0, "low_write_step": 0,
         "low_write_fails": False,  # two memory tiers
         "ring_filled": False}  # corrupt loads: the start no longer kept


def _kept(obj) -> list:
    """(name, value) of a dataclass' fields, those of SINCE checked to be at their default and left out."""
    out = []
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.name in SINCE:
            assert v == SINCE[f.name], f"{f.name} = {v!r} on a golden path"
            continue
        out.append((f.name, v))
    return out


def _repr(job) -> str:
    """A JobResult's dataclass repr, over the fields _kept keeps (and its buckets without the waiting bucket, added
    since with servers' capacity: 0 here, checked)."""
    kept = dict(_kept(job))
    assert kept["bucket_seconds"].get("waiting", 0.0) == 0.0
    kept["bucket_seconds"] = {b: s for b, s in kept["bucket_seconds"].items() if b != "waiting"}
    return f"JobResult({', '.join(f'{k}={v!r}' for k, v in kept.items())})"


def digest(state, events) -> str:
    """sha256 of the state's every field but its plan (the totals field by field) and of the events (SINCE's
    fields apart)."""
    parts = [state.plan.spec.seed, state.epoch]
    for name, v in _kept(state):
        if name == "plan":
            continue
        parts.append((name, tuple(_kept(v)) if hasattr(v, "bucket_us") else v))
    parts.append([(e.t_us, e.kind, e.cause, None if e.job is None else _repr(e.job)) for e in events])
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def digests(**kw) -> dict[str, str]:
    return {str(k): digest(*run(k, **kw)) for k in range(CASES)}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/engine/golden_paths.py --write  (rewrites golden/paths.json from the kernel)")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(digests(), indent=0) + "\n")
    print(f"wrote {GOLDEN} ({CASES} cases)")
