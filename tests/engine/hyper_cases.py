"""The hyper tests' cases, shared by their fast checks (tests/engine/test_hyper.py) and
their statistical ones (tests/engine/statistical/test_hyper_oracle.py)."""

from dataclasses import replace

from specs import llama3_causes, spec

from simd.engine import Stragglers
from simd.engine.spec import Hyper

# small jobs (1000 steps of seed 000's optimized job) with a high SDC rate, so that windows open often
BASE = spec(target_steps=1000, sdc_per_gpu_hour=4.0e-4)


CONFIGS = {
    # validation at every normal checkpoint, hyper checkpoints every 5 steps in between: SDCs get baked in there
    "optimized_hyper5": replace(BASE, hyper=Hyper(5, 200)),
    # no validation: checkpoints are the only detection points, and hyper ones come sooner
    "no_validation": replace(BASE, ckpt_interval_steps=50, validation_interval_steps=0, hyper=Hyper(10, 300)),
    # validation every 10 divides both intervals (no SDC baked in), Llama 3 causes, stragglers
    "dividing_causes_stragglers": replace(BASE, ckpt_interval_steps=50, validation_interval_steps=10,
                                          causes=llama3_causes("warm"), restart_seconds=388.2,
                                          stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=300),
                                          hyper=Hyper(10, 150)),
}
