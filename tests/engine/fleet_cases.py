"""The fleet tests' cases, shared by their fast checks (tests/engine/test_fleet.py) and
their statistical ones (tests/engine/statistical/test_fleet_oracle.py)."""

from specs import llama3_causes, spec

from simd.engine.fleet import Accelerator


def rate_for(step_hazard: float, n: int, step_seconds: float = 60.0) -> float:
    """The per-GPU-hour rate at which ``n`` GPUs fail (at least one) with probability ``step_hazard`` a step."""
    return (1 - (1 - step_hazard) ** (1 / n)) * 3600 / step_seconds


# Two types with test rates (not figures of real accelerators): 768 GPUs at docs/design.md 5.1's example rates, 256 at
# five and four times them.
TWO = (Accelerator("a", 768, 2e-4, 1.5e-4), Accelerator("b", 256, 1e-3, 6e-4))


# Three small types whose step hazards (2%, 50%, 10% for hard failures; 30%, 5%, 20% for SDCs) make steps in
# which two or more types fail common, so that the attribution rule matters: shares proportional to the step
# hazards would charge type "a" 3.2% of the interruptions instead of the exact 2.5%.
STORM = (Accelerator("a", 40, rate_for(0.02, 40), rate_for(0.3, 40)),
         Accelerator("b", 10, rate_for(0.5, 10), rate_for(0.05, 10)),
         Accelerator("c", 5, rate_for(0.1, 5), rate_for(0.2, 5)))


CONFIGS = {
    "two_types": spec(n_gpus=1024, fleet=TWO),
    "two_types_nondividing_llama3": spec(n_gpus=1024, fleet=TWO, ckpt_interval_steps=50, validation_interval_steps=40,
                                         causes=llama3_causes("warm"), restart_seconds=388.2),
    # a checkpoint and a validation every step: a failure loses one step, so the job gets through the storm
    "storm": spec(n_gpus=55, fleet=STORM, target_steps=150, ckpt_interval_steps=1, validation_interval_steps=1,
                  ckpt_seconds=1.0, validation_seconds=1.0),
}
