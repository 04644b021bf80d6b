"""One configuration compiled for many seeds: streams.Seeded derives the streams numpy's SeedSequence
and bit generators give, bit for bit, and spec.compile_seeds the plans compile_spec gives, field for field."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from specs import SPECS, plan_fields, spec

from simd.engine.pcg import words
from simd.engine.spec import compile_seeds, compile_spec, with_seed
from simd.engine.streams import Seeded, first_position, stream_state

# small seeds, both sides of 2**32 (a second entropy word), the largest a JobSpec can hold and 2**64 - 1
SEEDS = [*range(40), 4095, 2**31, 2**32 - 1, 2**32, 2**32 + 7, 123_456_789_012_345, 2**63 - 1, 2**63 + 99,
         2**64 - 1]


@pytest.mark.parametrize("name, kind", [("hard", "PCG64"), ("sdc@3", "PCG64"), ("cause@12", "PCG64"),
                                        ("straggler", "PCG64DXSM"), ("accel-hard", "PCG64")])
def test_seeded_streams_are_numpys(name, kind):
    sd = Seeded(SEEDS, name, kind)
    expected = [stream_state(s, name, kind) for s in SEEDS]
    assert sd.dicts() == expected
    assert np.array_equal(sd.words(), np.stack([words(e) for e in expected]))


@pytest.mark.parametrize("p", [1e-12, 1e-6, 1e-3, 0.5, 1.0 - 1e-9, 1.0])
def test_first_positions_are_first_position(p):
    log1m = -np.inf if p == 1.0 else float(np.log1p(-p))
    sd = Seeded(list(range(5000)) + SEEDS, "hard")
    expected = [first_position(d, log1m) for d in sd.dicts()]
    assert sd.first_positions(log1m).tolist() == expected
    assert len(set(expected)) > 1 or p >= 0.5  # the comparison is not vacuous


def test_first_positions_of_a_zero_rate_are_never():
    assert Seeded([1, 2], "hard").first_positions(0.0).tolist() == [first_position({}, 0.0)] * 2


def test_bad_seeds_and_kinds_are_refused():
    with pytest.raises(ValueError, match=r"\[0, 2\*\*64\)"):
        Seeded([2**64], "hard")
    with pytest.raises(ValueError, match=r"\[0, 2\*\*64\)"):
        Seeded([-1], "hard")
    with pytest.raises(ValueError, match="bit_generator must be one of"):
        Seeded([1], "hard", "MT19937")
    with pytest.raises(ValueError, match="PCG64 streams"):
        Seeded([1], "straggler", "PCG64DXSM").first_positions(-0.1)


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("epoch", [0, 3])
def test_compile_seeds_equals_compile_spec_seed_by_seed(name, epoch):
    base = SPECS[name]
    seeds = [7, 0, 2**32 + 1, *range(100, 112)]
    out = compile_seeds(replace(base, seed=99), seeds, epoch)  # the spec's own seed is ignored
    assert len(out.plans) == len(seeds)
    for seed, plan in zip(seeds, out.plans, strict=True):
        expected = compile_spec(replace(base, seed=seed), epoch)
        assert plan_fields(plan) == plan_fields(expected)
        assert plan.spec == replace(base, seed=seed) and plan.extended == expected.extended
    for f, sd in out.streams.items():  # the streams as arrays are the plans' streams
        got = [p.step_times.stream if f == "step_times" else getattr(p, f) for p in out.plans]
        assert sd.dicts() == got
    assert len({id(p.step_times) for p in out.plans if p.step_times is not None}) in (0, len(seeds))


def test_compile_seeds_of_no_seed_is_empty():
    assert compile_seeds(spec(), []).plans == ()


def test_with_seed_is_replace():
    s = SPECS["committed"]
    assert with_seed(s, 12) == replace(s, seed=12) and hash(with_seed(s, 12)) == hash(replace(s, seed=12))
    assert s.seed == 0  # not changed
