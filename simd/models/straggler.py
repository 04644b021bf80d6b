"""Stragglers in a synchronous job (seed 001, scenario 4), and the normal order statistics the engine uses.

Model. Each rank's step takes ``(base + jitter * Z) * slowdown`` seconds, ``Z`` standard normal, independent
across ranks and steps; a healthy rank has ``slowdown = 1``. A synchronous step waits for every rank, so the
step time is the maximum over ranks: with 1024 healthy ranks it sits about 3.25 sigma above the base (the
expected maximum of 1024 normal draws, ``expected_max_normal``), and one rank 20% slower drags every step to
its own time.

Detection (seed 001): a rank whose time exceeds the median over ranks by more than ``DETECTION_THRESHOLD``
is flagged. The median is robust: one slow rank does not move it. Replacing a flagged rank with a healthy one
restores the step time of a cluster without stragglers.

Scores (NVIDIA nvidia-resiliency-ext, straggler detection, ``reporting.py``): scores in [0, 1], the ratio of a
reference time to the rank's median time over a reporting window. Relative score: the reference is the
smallest median over all ranks (the best rank). Individual score: the reference is the rank's own smallest
median so far (its own best). A rank is a straggler when a score falls below a threshold (0.75 by default in
``Report.identify_stragglers``).

Numerics. ``norm_ppf`` is Wichura's algorithm AS 241 (PPND16, Applied Statistics 37(3), 1988), relative
accuracy about 1e-16, vectorized with numpy. ``expected_max_normal`` integrates the density of the maximum.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

# Seed 001, scenario 4: 1024 ranks, base step 30 s, jitter sigma 0.5 s, rank 7 slower by 20%.
SCENARIO_RANKS = 1024
BASE_STEP_SECONDS = 30.0
JITTER_SIGMA_SECONDS = 0.5
SLOW_RANK = 7
SLOWDOWN = 1.2

# simd's choice (the seed gives no number): flag a rank more than 10% above the median. A 20% straggler is
# twice as far; healthy jitter (sigma 0.5 s on 30 s = 1.7%) would need a 6-sigma draw to cross it.
DETECTION_THRESHOLD = 0.10

# nvidia-resiliency-ext, straggler/reporting.py: Report.identify_stragglers' default score thresholds.
NVRX_SCORE_THRESHOLD = 0.75
# simd's choice: a 20% straggler scores about 1/1.2 = 0.83, above NVRx's default, so the report also applies a
# threshold that catches it while clearing healthy jitter (healthy scores stay above 0.98 in scenario 4).
SCORE_THRESHOLD = 0.9


# --- Wichura AS 241 (PPND16) coefficients -------------------------------------------------------------------
_A = (
    3.387132872796366608,
    133.14166789178437745,
    1971.5909503065514427,
    13731.693765509461125,
    45921.953931549871457,
    67265.770927008700853,
    33430.575583588128105,
    2509.0809287301226727,
)
_B = (
    1.0,
    42.313330701600911252,
    687.1870074920579083,
    5394.1960214247511077,
    21213.794301586595867,
    39307.89580009271061,
    28729.085735721942674,
    5226.495278852545925,
)
_C = (
    1.42343711074968357734,
    4.6303378461565452959,
    5.7694972214606914055,
    3.64784832476320460504,
    1.27045825245236838258,
    0.24178072517745061177,
    0.0227238449892691845833,
    7.7454501427834140764e-4,
)
_D = (
    1.0,
    2.05319162663775882187,
    1.6763848301838038494,
    0.68976733498510000455,
    0.14810397642748007459,
    0.0151986665636164571966,
    5.475938084995344946e-4,
    1.05075007164441684324e-9,
)
_E = (
    6.6579046435011037772,
    5.4637849111641143699,
    1.7848265399172913358,
    0.29656057182850489123,
    0.026532189526576123093,
    0.0012426609473880784386,
    2.71155556874348757815e-5,
    2.01033439929228813265e-7,
)
_F = (
    1.0,
    0.59983220655588793769,
    0.13692988092273580531,
    0.0148753612908506148525,
    7.868691311456132591e-4,
    1.8463183175100546818e-5,
    1.4215117583164458887e-7,
    2.04426310338993978564e-15,
)


def _poly(coeffs: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    """Horner evaluation of ``sum(coeffs[i] * x**i)``."""
    acc = np.full_like(x, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = acc * x + c
    return acc


def norm_ppf(p):
    """Inverse of the standard normal CDF (AS 241), elementwise; ``p`` scalar or array in [0, 1].

    Returns -inf at 0, +inf at 1, nan outside [0, 1]. Scalars in, float out.
    """
    arr = np.asarray(p, dtype=float)
    q = arr - 0.5
    out = np.empty_like(arr)
    with np.errstate(divide="ignore", invalid="ignore"):
        central = np.abs(q) <= 0.425
        r = 0.180625 - q * q
        out = np.where(central, q * _poly(_A, r) / _poly(_B, r), out)
        tail = np.minimum(arr, 1.0 - arr)
        s = np.sqrt(-np.log(tail))
        near = s - 1.6
        far = s - 5.0
        t = np.where(s <= 5.0, _poly(_C, near) / _poly(_D, near), _poly(_E, far) / _poly(_F, far))
        t = np.where(q < 0, -t, t)
        out = np.where(central, out, t)
        out = np.where(arr == 0.0, -np.inf, out)
        out = np.where(arr == 1.0, np.inf, out)
        out = np.where((arr < 0.0) | (arr > 1.0) | np.isnan(arr), np.nan, out)
    return float(out) if out.ndim == 0 else out


# --- expected maximum of n normal draws ---------------------------------------------------------------------
_X_LO, _X_HI, _X_STEP = -12.0, 12.0, 1e-3  # the density of the max is negligible (< 1e-30) beyond


@lru_cache(maxsize=1)
def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x grid, log phi(x) and log Phi(x) (read-only), computed once."""
    n = round((_X_HI - _X_LO) / _X_STEP) + 1
    x = np.linspace(_X_LO, _X_HI, n)
    log_phi = -0.5 * x * x - 0.5 * math.log(2.0 * math.pi)
    log_cdf = np.array([math.log(0.5 * math.erfc(-v / math.sqrt(2.0))) for v in x])
    for a in (x, log_phi, log_cdf):
        a.flags.writeable = False
    return x, log_phi, log_cdf


def expected_max_normal(n: int, mu: float = 0.0, sigma: float = 1.0) -> float:
    """E[max of n independent N(mu, sigma^2) draws], by Simpson integration of ``x n phi(x) Phi(x)^(n-1)``.

    Absolute error (in units of sigma) below 1e-11 for n <= 1e6 and below 1e-8 for n <= 1e9.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    x, log_phi, log_cdf = _grid()
    density = np.exp(math.log(n) + log_phi + (n - 1) * log_cdf)
    f = x * density
    # Composite Simpson (the grid has an odd number of points).
    integral = _X_STEP / 3.0 * (f[0] + f[-1] + 4.0 * f[1:-1:2].sum() + 2.0 * f[2:-1:2].sum())
    return mu + sigma * float(integral)


# --- the straggler model ------------------------------------------------------------------------------------
def rank_step_seconds(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    base_seconds: float,
    jitter_seconds: float,
    slowdown: dict[int, float] | None = None,
) -> np.ndarray:
    """Per-rank step times, ``shape = (..., n_ranks)``: ``(base + jitter * Z) * slowdown[rank]``."""
    times = base_seconds + jitter_seconds * rng.standard_normal(shape)
    return apply_slowdown(times, slowdown or {})


def apply_slowdown(times: np.ndarray, slowdown: dict[int, float]) -> np.ndarray:
    """A copy of ``times`` with the ranks (last axis) of ``slowdown`` multiplied by their factor."""
    out = np.array(times, dtype=float, copy=True)
    for rank, factor in slowdown.items():
        out[..., rank] *= factor
    return out


def synchronous_step_seconds(times: np.ndarray) -> np.ndarray | float:
    """A synchronous step waits for the slowest rank: max over the last axis."""
    m = np.max(times, axis=-1)
    return float(m) if np.ndim(m) == 0 else m


def detect_stragglers(times: np.ndarray, threshold: float = DETECTION_THRESHOLD) -> np.ndarray:
    """Boolean mask of ranks (last axis) slower than ``(1 + threshold) * median`` over ranks."""
    if threshold < 0:
        raise ValueError("threshold must be >= 0")
    med = np.median(times, axis=-1, keepdims=True)
    return times > (1.0 + threshold) * med


def precision_recall(flagged: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Precision and recall of ``flagged`` against ``truth`` (boolean masks of equal shape), pooled.

    Precision is 1.0 when nothing is flagged (no false positive was made); recall is 1.0 when there is
    nothing to find.
    """
    flagged = np.asarray(flagged, dtype=bool)
    truth = np.asarray(truth, dtype=bool)
    tp = int(np.sum(flagged & truth))
    fp = int(np.sum(flagged & ~truth))
    fn = int(np.sum(~flagged & truth))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall


def relative_scores(median_seconds: np.ndarray) -> np.ndarray:
    """NVRx relative performance scores: the best (smallest) median over ranks / each rank's median."""
    med = np.asarray(median_seconds, dtype=float)
    if np.any(med <= 0):
        raise ValueError("median times must be > 0")
    return np.min(med, axis=-1, keepdims=True) / med


def individual_scores(median_history: np.ndarray) -> np.ndarray:
    """NVRx individual performance scores from ``(windows, ranks)`` medians: own best so far / latest."""
    hist = np.asarray(median_history, dtype=float)
    if hist.ndim != 2 or hist.shape[0] < 1 or np.any(hist <= 0):
        raise ValueError("median_history must be (windows >= 1, ranks) of times > 0")
    return np.min(hist, axis=0) / hist[-1]
