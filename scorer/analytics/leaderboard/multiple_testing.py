"""Adjusted p-values for a family of m tests: Holm (family-wise error) and Benjamini–Hochberg (false discovery rate).

With p_(1) <= ... <= p_(m) the sorted p-values:
  Holm:  p̃_(i) = max_{j <= i} min(1, (m - j + 1) · p_(j))    (a test is rejected when p̃ <= α: FWER <= α)
  BH:    p̃_(i) = min_{j >= i} min(1, m / j · p_(j))          (FDR <= α for independent or positively dependent tests)
"""

from __future__ import annotations

import numpy as np

METHODS = {"holm": "Holm (family-wise error rate)", "bh": "Benjamini-Hochberg (false discovery rate)"}


def adjust(p_values: np.ndarray, method: str) -> np.ndarray:
    """The adjusted p-values, in the order given; NaN stays NaN and is not counted in m."""
    if method not in METHODS:
        raise ValueError(f"unknown multiple-comparison method {method!r}: expected one of {', '.join(METHODS)}")
    p = np.asarray(p_values, np.float64)
    out = np.full(p.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p))
    m = len(present)
    if m == 0:
        return out
    order = present[np.argsort(p[present], kind="stable")]
    ranked = p[order]
    position = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - position + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m / position * ranked)[::-1])[::-1]
    out[order] = adjusted
    return out
