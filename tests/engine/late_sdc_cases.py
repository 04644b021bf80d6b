"""The late sdc tests' cases, shared by their fast checks (tests/engine/test_late_sdc.py) and
their statistical ones (tests/engine/statistical/test_late_sdc_oracle.py)."""

from dataclasses import replace

from specs import llama3_causes, spec

from simd.engine import Stragglers
from simd.engine.spec import CommittedSdc, Detector, Hyper

GUARD = Detector("loss_spike", "lognormal", 600.0, 1.0, 0.5)  # half the SDCs, after ~10 minutes


RIPPLE = Detector("ripple", "uniform", 2 * 86400.0)  # every host once in 2 days


SCANNER = Detector("fleetscanner", "exponential", 86400.0)


BASE = spec(target_steps=1000, sdc_per_gpu_hour=4.0e-4, ckpt_interval_steps=25, validation_interval_steps=0)


CONFIGS = {
    # no validation: every SDC that reaches a checkpoint is committed; three layers find it, retention 4
    "layers_no_validation": replace(BASE, committed_sdc=CommittedSdc((GUARD, RIPPLE, SCANNER), 4)),
    # validation every 40 does not divide checkpoint every 50: some SDCs slip into checkpoints
    "nondividing_retention1": replace(BASE, ckpt_interval_steps=50, validation_interval_steps=40,
                                      committed_sdc=CommittedSdc((SCANNER,), 1)),
    # with hyper-checkpointing, Llama 3 causes (detection and restart times) and stragglers
    "with_hyper_causes_stragglers": replace(
        BASE, causes=llama3_causes("cold"), restart_seconds=388.2, hyper=Hyper(5, 200),
        stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=300),
        committed_sdc=CommittedSdc((GUARD, Detector("ripple", "uniform", 6 * 3600.0)), 6)),
}
