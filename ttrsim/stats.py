"""Interval estimates used by every analysis table.

One helper per statistic:

- :func:`wilson_interval`: Wilson score interval of a binomial rate (a share of games,
  tickets, attempts ...); vectorised over arrays.
- :func:`bootstrap_mean`, :func:`bootstrap_diff`, :func:`bootstrap_ratio`: percentile
  bootstrap of a mean, of a difference of means (paired or unpaired) and of a ratio of
  paired means, from a seeded numpy ``Generator``.
- :func:`normal_mean_interval`: normal interval of a mean known only from the count, the
  sum and the sum of squares (summary-mode tables).
- :func:`cluster_ratio`: a ratio of sums over clusters (seat-games grouped by game) with its
  cluster-robust variance; :func:`welch_interval`: the interval of a difference of two
  independent estimates with Welch–Satterthwaite degrees of freedom.
- :func:`centred_percentile`: a bootstrap percentile interval centred on its estimate,
  for a statistic the resampling itself biases (the spread between ticket values).
- :func:`bh_q`: Benjamini–Hochberg q-values; :func:`fmt_p_text`: a p- or q-value in words.

Interval functions return :class:`Estimate` ``(estimate, low, high)``; the Wilson interval
returns ``(low, high)`` since its estimate is simply ``successes / trials``.
"""
from __future__ import annotations

from statistics import NormalDist
from typing import NamedTuple

import numpy as np

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000

# Memory bound (number of drawn indices) of one block of direct bootstrap resamples.
_BLOCK = 1 << 22


class Estimate(NamedTuple):
    """A point estimate with the bounds of its confidence interval."""

    estimate: float
    low: float
    high: float


def z_value(confidence: float = DEFAULT_CONFIDENCE) -> float:
    """Two-sided standard normal quantile for ``confidence`` (1.96 for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes, trials, confidence: float = DEFAULT_CONFIDENCE):
    """Wilson score interval for the rate ``successes / trials``.

    Works on scalars or arrays (element-wise); returns ``(low, high)`` of the same shape,
    NaN where ``trials == 0``. Unlike the Wald interval it stays inside [0, 1] and keeps
    its coverage for rates near 0 or 1 and for few trials.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    z2 = z_value(confidence) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1 + z2 / n
        centre = (p + z2 / (2 * n)) / denom
        half = np.sqrt(z2 * p * (1 - p) / n + z2 * z2 / (4 * n * n)) / denom
        low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(k >= n, 1.0, np.clip(centre + half, 0.0, 1.0))
    low = np.where(n > 0, low, np.nan)
    high = np.where(n > 0, high, np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def rate_columns(name: str, successes, trials, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """Columns ``name, name_low, name_high`` of a rate with its Wilson interval."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(n > 0, k / n, np.nan)
    low, high = wilson_interval(k, n, confidence)
    return {name: rate, f"{name}_low": low, f"{name}_high": high}


def as_generator(seed) -> np.random.Generator:
    """A numpy Generator from an int seed (or None), or the Generator itself."""
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _resampled_means(data: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column means of ``n_resamples`` bootstrap resamples of the rows of ``data`` (n, k).

    Returns an array (n_resamples, k); all columns of one resample use the same rows, so
    paired statistics stay paired.
    """
    n = len(data)
    if data.shape[1] == 1:  # the 1-D unique is much faster than the row-wise one
        values, counts = np.unique(data[:, 0], return_counts=True)
        values = values.reshape(-1, 1)
    else:
        values, counts = np.unique(data, axis=0, return_counts=True)
    if 4 * len(values) <= n:
        # Few distinct rows (integer scores, 0/1 outcomes): drawing how many times each
        # distinct row is picked is the same resampling distribution, at a cost that does
        # not grow with the number of games.
        weights = rng.multinomial(n, counts / n, size=n_resamples)
        return weights @ values / n
    out = np.empty((n_resamples, data.shape[1]))
    step = max(1, _BLOCK // n)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        rows = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = data[rows].mean(axis=1)
    return out


def _percentile(estimate: float, replicates: np.ndarray, confidence: float) -> Estimate:
    z_value(confidence)  # validates confidence
    alpha = 1 - confidence
    low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    return Estimate(float(estimate), float(low), float(high))


def _column(values) -> np.ndarray:
    return np.asarray(values, dtype=float).reshape(-1, 1)


_NAN = Estimate(float("nan"), float("nan"), float("nan"))


def bootstrap_mean(
    values,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> Estimate:
    """Mean of ``values`` with a percentile bootstrap interval.

    ``seed`` is an int or a ``numpy.random.Generator``; the same seed gives the same interval.
    """
    x = _column(values)
    if len(x) == 0:
        return _NAN
    means = _resampled_means(x, n_resamples, as_generator(seed))[:, 0]
    return _percentile(x.mean(), means, confidence)


def bootstrap_diff(
    x,
    y,
    paired: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> Estimate:
    """Difference of means ``mean(x) - mean(y)`` with a percentile bootstrap interval.

    ``paired=True``: ``x[i]`` and ``y[i]`` belong together (the same game under common random
    numbers) and pairs are resampled together, i.e. the bootstrap of ``mean(x - y)``.
    ``paired=False``: the two samples are resampled independently.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    rng = as_generator(seed)
    if paired:
        if x.shape != y.shape:
            raise ValueError("paired samples must have the same length")
        return bootstrap_mean(x - y, confidence, n_resamples, rng)
    if len(x) == 0 or len(y) == 0:
        return _NAN
    diffs = (
        _resampled_means(_column(x), n_resamples, rng)[:, 0]
        - _resampled_means(_column(y), n_resamples, rng)[:, 0]
    )
    return _percentile(x.mean() - y.mean(), diffs, confidence)


def bootstrap_ratio(
    numerator,
    denominator,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> Estimate:
    """Ratio of paired means ``sum(numerator) / sum(denominator)`` with a bootstrap interval.

    Rows are resampled together (e.g. points gained and stations built in the same game).
    Resamples whose denominator sums to 0 are left out of the interval.
    """
    data = np.column_stack([np.asarray(numerator, float), np.asarray(denominator, float)])
    if len(data) == 0 or data[:, 1].sum() == 0:
        return _NAN
    means = _resampled_means(data, n_resamples, as_generator(seed))
    ok = means[:, 1] != 0
    ratios = means[ok, 0] / means[ok, 1]
    return _percentile(data[:, 0].sum() / data[:, 1].sum(), ratios, confidence)


def centred_percentile(estimate: float, replicates, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """``estimate`` with the percentile interval of its bootstrap ``replicates`` moved by
    their median's distance from it: the resamples' spread around their own median, placed
    around the estimate. For a statistic that resampling itself biases (a spread between
    noisy values gains the resamples' noise on top of the sample's), the plain percentile
    interval sits beside the estimate and can leave it outside; this one always holds it.
    NaN replicates (no value in that resample) are left out."""
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if not len(r) or not np.isfinite(estimate):
        return Estimate(float(estimate), float("nan"), float("nan"))
    alpha = 1 - confidence
    low, mid, high = np.quantile(r, [alpha / 2, 0.5, 1 - alpha / 2])
    return Estimate(float(estimate), float(estimate + low - mid), float(estimate + high - mid))


def normal_mean_interval(total, total_sq, n, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """Mean from ``n`` values known by their sum and sum of squares, with a normal interval.

    ``mean ± z * s / sqrt(n)`` where ``s`` is the sample standard deviation
    ``sqrt((total_sq - total**2 / n) / (n - 1))``. Vectorised; NaN bounds where ``n < 2``.
    """
    total = np.asarray(total, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(n > 0, total / n, np.nan)
        half = z_value(confidence) * std_from_sums(total, total_sq, n) / np.sqrt(n)
    out = Estimate(mean, mean - half, mean + half)
    if out.estimate.ndim == 0:
        return Estimate(*(float(v) for v in out))
    return out


def std_from_sums(total, total_sq, n):
    """Sample standard deviation from count, sum and sum of squares (NaN where n < 2)."""
    total = np.asarray(total, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.clip((np.asarray(total_sq, float) - total * total / n) / (n - 1), 0.0, None)
    return np.where(n >= 2, np.sqrt(var), np.nan)


#: Below this a p- or q-value is printed as "< 1e-10": its digits say nothing more (the
#: normal or t tail that far out is the model's, not the games'), and it underflows to 0.
SMALLEST_P = 1e-10


def fmt_p_text(value) -> str:
    """A p- or q-value in a sentence: two significant digits, "< 1e-10" below
    :data:`SMALLEST_P` (never "1.4e-178" or "0"), "–" where there is none."""
    if value is None or not np.isfinite(value):
        return "–"
    return f"< {SMALLEST_P:.0e}" if value < SMALLEST_P else f"{value:.2g}"


def bh_q(p) -> np.ndarray:
    """Benjamini–Hochberg q-values of the finite p-values (NaN elsewhere)."""
    from scipy import stats as sps

    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = sps.false_discovery_control(p[ok], method="bh")
    return q


def cluster_ratio(a, b, aa, ab, bb, clusters):
    """A ratio ``r = sum(A_i) / sum(B_i)`` over ``clusters`` independent clusters and its
    cluster-robust variance, from five sums over the clusters: ``a = sum(A_i)``, ``b =
    sum(B_i)``, ``aa = sum(A_i**2)``, ``ab = sum(A_i * B_i)``, ``bb = sum(B_i**2)``.

    A mean over the seat-games of a group is such a ratio (A_i: the sum of the values of
    game i's seat-games in the group, B_i: their count), and the games are the clusters:
    the seat-games of one game are not independent (one game's length sets every seat's
    turns), so they count as one observation. The variance is the linearised (sandwich)
    one, ``G / (G - 1) * sum((A_i - r B_i)**2) / b**2`` with ``G = clusters``; for clusters
    of equal size it is the variance of the mean of the cluster means. Vectorised; NaN
    where ``b == 0`` or ``clusters < 2``. Returns ``(ratio, variance)``."""
    a, b, aa, ab, bb, g = (np.asarray(v, dtype=float) for v in (a, b, aa, ab, bb, clusters))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(b > 0, a / b, np.nan)
        spread = np.clip(aa - 2 * r * ab + r * r * bb, 0.0, None)
        var = np.where((b > 0) & (g >= 2), g / (g - 1) * spread / (b * b), np.nan)
    return r, var


def welch_interval(difference, var_a, df_a, var_b, df_b,
                   confidence: float = DEFAULT_CONFIDENCE):
    """``(low, high)`` of ``difference`` = estimate a - estimate b of two independent
    estimates with variances ``var_a``, ``var_b`` on ``df_a``, ``df_b`` degrees of freedom:
    Student's t with the Welch–Satterthwaite degrees of freedom (``scipy.stats.t``), as
    Welch's two-sample test has it for two plain means. Vectorised; NaN where a variance
    is NaN, the difference itself where both variances are 0."""
    from scipy import stats as sps

    z_value(confidence)  # validates confidence
    d, va, vb = (np.asarray(v, dtype=float) for v in (difference, var_a, var_b))
    fa, fb = np.asarray(df_a, dtype=float), np.asarray(df_b, dtype=float)
    var = va + vb
    with np.errstate(divide="ignore", invalid="ignore"):
        df = var * var / (va * va / fa + vb * vb / fb)
        half = np.where(var > 0, sps.t.ppf(0.5 + confidence / 2, df) * np.sqrt(var), 0.0)
    half = np.where(np.isnan(var), np.nan, half)
    low, high = d - half, d + half
    if low.ndim == 0:
        return float(low), float(high)
    return low, high
