"""Planning a split: the smallest score difference that n sessions detect, from the per-session variance.

A submission's score is Σ_t w_t · Σ_s num_st / Σ_s den_st. Linearized (the delta method), session s adds
  c_s = Σ_t w_t · (num_st - f_t · den_st) / μ_t,   f_t = Σ num_t / Σ den_t,   μ_t = Σ den_t / N,
and the score over n sessions drawn like these has variance Var(c) / n. For two submissions A and B scored on the
same sessions, the difference's per-session term is c^A_s - c^B_s, so a two-sided test at level α has power 1 - β
against a true difference of
  MDE(n) = (z_{1-α/2} + z_{1-β}) · sd(c^A - c^B) / √n.
Unpaired (two independent submissions with A's spread): MDE = (z_{1-α/2} + z_{1-β}) · √2 · sd(c^A) / √n.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def linearized(num: np.ndarray, den: np.ndarray, ratio: np.ndarray, mean_den: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """c_s = Σ_t w_t (num_st - f_t den_st) / μ_t, summed over the last axis (types); the arrays broadcast (ratio = f_t,
    mean_den = μ_t; a type with μ_t = 0 adds nothing)."""
    scale = np.where(mean_den > 0, weights / np.where(mean_den > 0, mean_den, 1.0), 0.0)
    return ((num - ratio * den) * scale).sum(axis=-1)


def contributions(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """c_s per session (see the module docstring) from one submission's numerators and the denominators, (N, T) each."""
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    den_total = den.sum(axis=0)
    ratio = num.sum(axis=0) / np.where(den_total > 0, den_total, 1.0)
    return linearized(num, den, ratio, den_total / max(len(den), 1), weights)


def multiplier(alpha: float, power: float) -> float:
    """z_{1-α/2} + z_{power}."""
    normal = NormalDist()
    return normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)


def mde(spread: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The minimum detectable difference for a per-session standard deviation `spread` and n sessions."""
    return multiplier(alpha, power) * spread / np.sqrt(n) if n > 0 else float("nan")
