"""Properties of advance(): tick-size invariance, bucket conservation, monotone counters, determinism."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import BUCKETS, US_PER_SECOND, Cause, advance, new_state

specs = st.builds(
    spec,
    n_gpus=st.integers(1, 20000),
    step_seconds=st.sampled_from([0.5, 1.0, 30.0, 60.0, 7.3]),
    target_steps=st.integers(1, 400),
    hard_per_gpu_hour=st.sampled_from([0.0, 1e-5, 2e-4, 1e-3, 3e-2]),
    sdc_per_gpu_hour=st.sampled_from([0.0, 1e-5, 1.5e-4, 1e-3, 3e-2]),
    ckpt_interval_steps=st.integers(1, 60),
    ckpt_seconds=st.sampled_from([0.0, 5.0, 300.0, 12.25]),
    validation_interval_steps=st.integers(0, 40),
    validation_seconds=st.sampled_from([0.0, 2.0, 20.0]),
    restart_seconds=st.sampled_from([0.0, 60.0, 388.2]),
    seed=st.integers(0, 2**32),
)


@st.composite
def vectorizable_specs(draw):
    """Specs whose validation divides the checkpoint interval (or is off), with several causes."""
    v = draw(st.integers(1, 30))
    causes = draw(st.sampled_from([(), CAUSES]))
    return spec(
        n_gpus=draw(st.integers(1, 20000)),
        step_seconds=draw(st.sampled_from([1.0, 30.0, 7.3])),
        target_steps=draw(st.integers(1, 3000)),
        hard_per_gpu_hour=draw(st.sampled_from([0.0, 1e-5, 2e-4, 1e-3, 3e-2])),
        sdc_per_gpu_hour=draw(st.sampled_from([0.0, 1e-5, 1.5e-4, 1e-3, 3e-2])),
        ckpt_interval_steps=v * draw(st.integers(1, 5)),
        ckpt_seconds=draw(st.sampled_from([0.0, 300.0, 12.25])),
        validation_interval_steps=draw(st.sampled_from([0, v])),
        validation_seconds=draw(st.sampled_from([0.0, 20.0])),
        restart_seconds=draw(st.sampled_from([0.0, 60.0])),
        causes=causes,
        seed=draw(st.integers(0, 2**32)),
    )


CAUSES = (Cause("gpu", 0.6, 10.0, 55.0), Cause("network", 0.3, 30.0, 388.2), Cause("software", 0.1, 2.0, 388.2))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=st.one_of(specs, vectorizable_specs()), horizon_steps=st.integers(1, 3000),
       cuts=st.lists(st.floats(0, 1), max_size=12))
def test_any_partition_gives_identical_state(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@settings(max_examples=examples(40), deadline=None)
@given(s=specs, horizon_steps=st.integers(0, 2000))
def test_the_kernels_arrays_round_trip(s, horizon_steps):
    """The seam of the kernel: a State packed into its arrays and read back (layout.py), with no time passing
    (a call to its own clock), is unchanged."""
    state, _ = advance(new_state(s), int(horizon_steps * s.step_seconds * US_PER_SECOND))
    for at in (state, new_state(s)):
        assert advance(at, at.clock, trace=True) == (at, [])


@settings(max_examples=examples(40), deadline=None)
@given(s=specs, horizon_steps=st.integers(1, 2000))
def test_same_seed_same_result(s, horizon_steps):
    horizon = int(horizon_steps * s.step_seconds * US_PER_SECOND)
    assert advance(new_state(s), horizon) == advance(new_state(s), horizon)


def test_bucket_names_are_the_design_vocabulary():
    assert BUCKETS == ("productive", "rollback", "checkpoint", "validation", "restart", "detection",
                       "straggler", "shadow", "waiting")
    # The metrics reference and the design name every bucket (a new one is documented where users read).
    root = Path(__file__).resolve().parents[3] / "docs"
    metrics_row = next(line for line in (root / "metrics.md").read_text().splitlines()
                       if line.startswith("| `simd_bucket_seconds_total`"))
    design = (root / "design.md").read_text().split("**3.5")[1].split("**3.6")[0]
    for bucket in BUCKETS:
        assert f"`{bucket}`" in metrics_row, bucket
        assert bucket in design, bucket
