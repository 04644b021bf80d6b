"""Job specifications shared by the engine tests."""

from dataclasses import fields

import numpy as np
from hypothesis import strategies as st

from simd.engine import Cause, JobSpec, Stragglers
from simd.engine.fleet import Accelerator
from simd.engine.servers import Servers
from simd.engine.shadow import Shadow
from simd.engine.spec import CommittedSdc, Detector, Hyper, Plan
from simd.engine.stragglers import StepTimes
from simd.models import recovery


def spec(**overrides) -> JobSpec:
    """Seed 000's optimized job (1024 GPUs, 60 s steps, 3000 steps), with overrides."""
    base = dict(n_gpus=1024, step_seconds=60.0, target_steps=3000, hard_per_gpu_hour=2.0e-4,
                sdc_per_gpu_hour=1.5e-4, ckpt_interval_steps=25, ckpt_seconds=300.0,
                validation_interval_steps=25, validation_seconds=20.0, restart_seconds=60.0, seed=0)
    base.update(overrides)
    return JobSpec(**base)


# Configurations for the statistical equivalence with seed 000's per-step loop.
ORACLE_CONFIGS = {
    "optimized": spec(),
    # validation every 40 does not divide checkpoint every 50: SDCs get baked in (seed README, errata)
    "nondividing": spec(ckpt_interval_steps=50, validation_interval_steps=40),
    # no validation at all: every SDC is baked in at the next checkpoint or at the end
    "no_validation": spec(ckpt_interval_steps=200, validation_interval_steps=0, sdc_per_gpu_hour=3.0e-4),
    # zero hard-failure rate: only SDCs interrupt
    "sdc_only": spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=4.0e-4, ckpt_interval_steps=50,
                     validation_interval_steps=25),
    # failures so frequent that most checkpoint intervals are lost
    "stormy": spec(n_gpus=4096, hard_per_gpu_hour=1.0e-3, ckpt_interval_steps=40, target_steps=600,
                   validation_interval_steps=20),
}


def llama3_causes(strategy: str = "cold", restart: float = recovery.COLD_RESTART_SECONDS) -> tuple[Cause, ...]:
    """Llama 3 cause shares, seed 001 detection latencies, cold or warm recovery (as config.py builds them)."""
    warm = strategy == "warm"
    return tuple(Cause(name, share, recovery.DETECTION_SECONDS[name],
                       recovery.WARM_SWAP_SECONDS if warm and name in recovery.WARM_CAPABLE_CAUSES else restart)
                 for name, share in recovery.LLAMA3_CAUSE_SHARES.items())


ORACLE_CONFIGS["llama3_warm"] = spec(causes=llama3_causes("warm"), restart_seconds=recovery.COLD_RESTART_SECONDS)
# stragglers: one rank 20% slow for the first 500 steps of the job, jitter 0.5 s on 1024 ranks
ORACLE_CONFIGS["stragglers"] = spec(stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=500))


# One job of each mechanism (compiled for many seeds, run as replicas).
DETECTOR = Detector("scanner", "exponential", 86400.0)
SPECS = {
    **ORACLE_CONFIGS,
    "llama3_cold": spec(causes=llama3_causes("cold")),
    "no_failures": spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0),
    "fleet": spec(fleet=(Accelerator("a", 768, 2e-4, 1.5e-4), Accelerator("b", 256, 1e-3, 6e-4))),
    "shadow": spec(shadow=Shadow(0.25, 0.1)),
    "committed": spec(committed_sdc=CommittedSdc((DETECTOR,), 2), validation_interval_steps=0),
    "hyper": spec(hyper=Hyper(5, 200)),
    # servers (simd/engine/servers.py): a table of lifetimes (the plain path when identical and exponential)
    "servers_lemons": spec(servers=Servers(lemon_fraction=0.25, lemon_multiplier=5.0)),
    "servers_weibull": spec(servers=Servers(lemon_fraction=0.1, lemon_multiplier=4.0, lifetime="weibull", shape=0.7)),
    "servers_pools": spec(servers=Servers(rate_shape=1.0, warm_standbys=2, spares=3, preemption_seconds=900.0,
                                          repair=("lognormal", 20000.0, 1.0))),
}


def plan_fields(plan: Plan) -> dict:
    """Every field of a plan, its StepTimes as what defines one (Plan.__eq__ compares the specs only)."""
    out = {f.name: getattr(plan, f.name) for f in fields(Plan)}
    st = out["step_times"]
    if st is not None:  # every attribute but caches (_...): the tables (shared) by identity, arrays by value
        assert isinstance(st, StepTimes)
        out["step_times"] = {k: id(v) if k in ("healthy", "slow") else v.tolist() if isinstance(v, np.ndarray)
                             else v for k, v in vars(st).items() if not k.startswith("_")}
        out["step_times_attributes"] = sorted(vars(st))
    return out


# Straggler settings the kernel paths are checked under: none, jitter alone, slow ranks replaced after 40 steps,
# slow ranks kept, slow ranks without jitter.
KERNEL_STRAGGLERS = (None, Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2, replace_after_steps=40),
                     Stragglers(0.5, 1, 1.2), Stragglers(0.0, 2, 1.5))


@st.composite
def kernel_specs(draw):
    """Plans the kernel has every mechanism of: odd and dividing validation intervals, none, stragglers with
    slow ranks and mitigation, Llama 3 causes with warm recovery (the property tests of one replica and of the
    batch path draw from it)."""
    v = draw(st.integers(1, 12))
    return spec(n_gpus=draw(st.sampled_from([8, 1024, 4096])), step_seconds=draw(st.sampled_from([30.0, 60.0])),
                target_steps=draw(st.integers(1, 900)),
                hard_per_gpu_hour=draw(st.sampled_from([0.0, 2e-4, 3e-3])),
                sdc_per_gpu_hour=draw(st.sampled_from([0.0, 1.5e-4, 3e-3])),
                ckpt_interval_steps=v * draw(st.integers(1, 4)),
                validation_interval_steps=draw(st.sampled_from([0, v, v + 1, 2 * v + 3])),
                causes=draw(st.sampled_from([(), llama3_causes("warm")])),
                stragglers=draw(st.sampled_from(KERNEL_STRAGGLERS)), seed=draw(st.integers(0, 2**32)))
