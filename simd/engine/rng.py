"""Named random streams: one generator per mechanism, derived from the seed and the mechanism's name.

``SeedSequence(seed, spawn_key=(crc32(name),))`` gives each mechanism its own independent stream, so adding
a mechanism (or a draw to one) never changes the draws of the others (DESIGN.md section 3.4). The
generators' states live in the engine state as plain dicts; a generator is rebuilt only when a draw is due.
"""

from __future__ import annotations

import zlib

import numpy as np

STREAMS = ("hard", "sdc", "cause")


def stream_seed(seed: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence(seed, spawn_key=(zlib.crc32(name.encode()),))


def initial_states(seed: int) -> tuple[dict, ...]:
    return tuple(np.random.PCG64(stream_seed(seed, name)).state for name in STREAMS)


class Streams:
    """Working copies of the named generators for one ``advance`` call (never shared between states)."""

    __slots__ = ("_states", "_gens")

    def __init__(self, states: tuple[dict, ...]):
        self._states = states
        self._gens: list[np.random.Generator | None] = [None] * len(states)

    def gen(self, index: int) -> np.random.Generator:
        g = self._gens[index]
        if g is None:
            bits = np.random.PCG64(0)
            bits.state = self._states[index]
            g = self._gens[index] = np.random.Generator(bits)
        return g

    def states(self) -> tuple[dict, ...]:
        return tuple(
            s if g is None else g.bit_generator.state for s, g in zip(self._states, self._gens, strict=True)
        )
