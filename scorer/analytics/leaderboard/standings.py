"""The figures of a leaderboard from the joint bootstrap's resampled scores (resamples x submissions).

For resample r, submission i has rank ρ_ri = 1 + #{j : x_rj > x_ri} (equal scores share the better rank). Then:
  rank interval: the (α/2, 1 - α/2) quantiles of ρ_i (the lower one rounded down, the upper one up), α = 1 - level;
  p_first = #{r : ρ_ri = 1} / R;  p_top = #{r : ρ_ri <= k} / R;
  pair (i, j): the observed difference d = x_i - x_j over its bootstrap standard error se = sd_r(x_ri - x_rj)
    (the same resamples for both: paired), and the two-sided p-value p_ij = 2 · (1 - Φ(|d| / se)) (1 when d = se = 0);
    the family is every pair, m = S(S - 1)/2, adjusted by Holm or Benjamini–Hochberg
    (scorer.analytics.leaderboard.multiple_testing). The percentile p-value, #{d_r <= 0} / R, cannot go below 1/(R + 1): under
    Holm over m pairs nothing would be significant with fewer than about 2m/α resamples (198,000 for 100
    submissions), hence the normal tail with the bootstrap's standard error;
  tiers: down the ranking, a submission starts a new tier when its difference from the current tier's first
    submission is significant (adjusted p <= α), otherwise it joins that tier;
  public -> private: the ranks on each side in the same resample, rank_change_i = mean_r |ρ^private_ri - ρ^public_ri|.
"""

from __future__ import annotations

import math

import numpy as np

from scorer.analytics.leaderboard.multiple_testing import adjust

erfc = np.vectorize(math.erfc, otypes=[np.float64])  # 2 · (1 - Φ(z)) = erfc(z / √2)


def min_ranks(scores: np.ndarray) -> np.ndarray:
    """(R, S) int32 ranks: 1 + the number of submissions with a strictly higher score in the same row."""
    scores = np.atleast_2d(scores)
    ranks = np.empty(scores.shape, np.int32)
    width = scores.shape[1]
    for r, row in enumerate(scores):
        ranks[r] = width - np.searchsorted(np.sort(row), row, side="right") + 1
    return ranks


def rank_intervals(ranks: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per submission the (α/2, 1 - α/2) quantiles of its ranks, widened to whole ranks."""
    alpha = 1.0 - level
    return (np.quantile(ranks, alpha / 2, axis=0, method="lower").astype(int),
            np.quantile(ranks, 1 - alpha / 2, axis=0, method="higher").astype(int))


def order_of(scores: np.ndarray) -> np.ndarray:
    """Submission indices from the highest observed score down (equal scores keep their input order)."""
    return np.argsort(-np.asarray(scores, np.float64), kind="stable")


def pair_p_values(samples: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """(S, S) two-sided p-values of every pair from the paired bootstrap standard error, NaN on the diagonal."""
    width = samples.shape[1]
    p = np.full((width, width), np.nan)
    for i in range(width - 1):
        d = observed[i] - observed[i + 1:]
        se = np.std(samples[:, i:i + 1] - samples[:, i + 1:], axis=0, ddof=1) if len(samples) > 1 else np.zeros(len(d))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, np.abs(d) / np.where(se > 0, se, 1.0), np.where(d == 0, 0.0, np.inf))
        p[i, i + 1:] = p[i + 1:, i] = erfc(z / np.sqrt(2.0))
    return p


def adjusted_pairs(p: np.ndarray, method: str) -> np.ndarray:
    """The (S, S) matrix of p-values adjusted over the family of the S(S - 1)/2 pairs."""
    upper = np.triu_indices(len(p), 1)
    out = np.full(p.shape, np.nan)
    out[upper] = adjust(p[upper], method)
    out.T[upper] = out[upper]
    return out


def tiers(order: np.ndarray, observed: np.ndarray, adjusted: np.ndarray, alpha: float) -> np.ndarray:
    """Tier per submission (1 = the top): a new tier starts at the first submission significantly below the tier's first."""
    tier = np.zeros(len(order), np.int64)
    if len(order) == 0:
        return tier
    head, current = order[0], 1
    tier[head] = 1
    for i in order[1:]:
        if observed[head] > observed[i] and adjusted[head, i] <= alpha:
            head, current = i, current + 1
        tier[i] = current
    return tier


def standings(observed: np.ndarray, samples: np.ndarray, level: float = 0.95, top: int = 3, method: str = "holm") -> dict:
    """The ranking figures of S submissions from their observed scores (S,) and resampled scores (R, S).

    {"order", "rank", "rank_low", "rank_high", "p_first", "p_top", "score_low", "score_high", "tier",
     "p_values", "adjusted"}: arrays indexed by submission (matrices (S, S)); see the module docstring.
    """
    observed = np.asarray(observed, np.float64)
    order = order_of(observed)
    ranks = min_ranks(samples) if len(samples) else np.zeros((0, len(observed)), np.int32)
    alpha = 1.0 - level
    out = {"order": order, "rank": min_ranks(observed)[0]}
    if len(samples):
        out["rank_low"], out["rank_high"] = rank_intervals(ranks, level)
        out["p_first"] = (ranks == 1).mean(axis=0)
        out["p_top"] = (ranks <= top).mean(axis=0)
        out["score_low"] = np.quantile(samples, alpha / 2, axis=0)
        out["score_high"] = np.quantile(samples, 1 - alpha / 2, axis=0)
        out["p_values"] = pair_p_values(samples, observed)
        out["adjusted"] = adjusted_pairs(out["p_values"], method)
        out["tier"] = tiers(order, observed, out["adjusted"], alpha)
    return out


def rank_change(public: np.ndarray, private: np.ndarray) -> np.ndarray:
    """mean_r |ρ^private_ri - ρ^public_ri| per submission, from the two sides' resampled scores (R, S) each."""
    return np.abs(min_ranks(private) - min_ranks(public)).mean(axis=0)
