"""How many examples a hypothesis test runs, by profile (registered by tests/conftest.py).

``ci`` is hypothesis' own profile for CI (derandomized, no deadline, no example database) with its default of
100 examples where a test names no count, and a test's own count where it names one:
``@settings(max_examples=examples(150))`` runs 150 examples under ``ci``. ``dev``, hypothesis' ``default``
profile (random, its deadline and example database), runs a fifth of each (at least one): the inner loop.
CI=true selects ``ci``; HYPOTHESIS_PROFILE=ci (or pytest's ``--hypothesis-profile=ci``) runs CI's counts
anywhere; otherwise ``dev``."""

from __future__ import annotations

import os

from hypothesis import settings

CI = "ci"
DEV = "dev"
CI_EXAMPLES = 100  # hypothesis' default: the count of a test that names none
DEV_EXAMPLES = 20


def register() -> str:
    """Register ``ci`` and ``dev`` and load the one the environment selects; returns its name."""
    settings.register_profile(CI, settings.get_profile("ci"), max_examples=CI_EXAMPLES)
    settings.register_profile(DEV, settings.get_profile("default"), max_examples=DEV_EXAMPLES)
    name = os.environ.get("HYPOTHESIS_PROFILE") or (CI if os.environ.get("CI", "").lower() == "true" else DEV)
    settings.load_profile(name)
    return name


def examples(ci: int) -> int:
    """A test's example count: ``ci`` under the ``ci`` profile, in proportion under another (at least 1)."""
    return max(1, round(ci * settings.default.max_examples / CI_EXAMPLES))
