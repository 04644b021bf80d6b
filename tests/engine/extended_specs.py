"""Hypothesis strategies of jobs with the extended mechanisms (hyper-checkpointing, committed SDCs: Plan.extended),
with or without the others."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st
from specs import kernel_specs, spec

from simd.engine import Cause, Stragglers
from simd.engine.spec import CommittedSdc, Detector, Hyper

CAUSES = (Cause("gpu", 0.6, 10.0, 55.0), Cause("network", 0.4, 30.0, 388.2))

hypers = st.builds(Hyper, interval_steps=st.integers(1, 30), window_steps=st.integers(1, 600))
detectors = st.builds(
    Detector, name=st.sampled_from(["guard", "ripple", "scan"]),
    distribution=st.sampled_from(["exponential", "lognormal", "uniform"]),
    scale_seconds=st.sampled_from([0.0, 30.0, 600.0, 7200.0, 86400.0]), sigma=st.sampled_from([0.0, 0.5, 1.5]),
    coverage=st.sampled_from([0.0, 0.3, 1.0]))
committed = st.builds(CommittedSdc, detectors=st.lists(detectors, max_size=3).map(tuple),
                      retention_checkpoints=st.integers(1, 6))


@st.composite
def extended_specs(draw, hyper=None, late=None):
    """Jobs with hyper-checkpointing and/or committed SDCs (either forced on with ``hyper``/``late``)."""
    h = draw(hypers) if hyper or (hyper is None and draw(st.booleans())) else None
    c = draw(committed) if late or (late is None and (h is None or draw(st.booleans()))) else None
    return spec(
        n_gpus=draw(st.integers(1, 20000)),
        step_seconds=draw(st.sampled_from([1.0, 30.0, 60.0, 7.3])),
        target_steps=draw(st.integers(1, 600)),
        hard_per_gpu_hour=draw(st.sampled_from([0.0, 1e-5, 2e-4, 1e-3])),
        sdc_per_gpu_hour=draw(st.sampled_from([1e-5, 1.5e-4, 1e-3, 3e-3])),
        ckpt_interval_steps=draw(st.integers(1, 60)),
        ckpt_seconds=draw(st.sampled_from([0.0, 300.0, 12.25])),
        validation_interval_steps=draw(st.integers(0, 40)),
        validation_seconds=draw(st.sampled_from([0.0, 20.0])),
        restart_seconds=draw(st.sampled_from([0.0, 60.0])),
        causes=draw(st.sampled_from([(), CAUSES])),
        stragglers=draw(st.sampled_from([None, Stragglers(0.5, 1, 1.2, replace_after_steps=100)])),
        seed=draw(st.integers(0, 2**32)),
        hyper=h, committed_sdc=c)



@st.composite
def mixed_specs(draw, servers):
    """The kernel's plans and the extended mechanisms' jobs, those with neither extended mechanism on the servers
    ``servers`` draws (None: no servers): every mechanism beside which a new one is checked."""
    s = draw(st.one_of(kernel_specs(), extended_specs()))
    if s.committed_sdc is None and s.hyper is None:
        s = replace(s, servers=draw(servers))
    return s
