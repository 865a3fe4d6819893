"""The parameter-free Ladder: the public score a team is shown changes only when a new submission beats its best so far by
a significant margin on the public sessions (Blum and Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning
Competitions", ICML 2015, arXiv 1502.04585: the parameter-free Ladder mechanism; the authors' code, mrtzh/Ladder.jl,
FreeLadder).

Per-session scores. On the n public sessions a submission's public score is a ratio of sums per type t, and the
denominators depend on the truth alone, so it is a mean over sessions:

    S = Σ_t w_t · Σ_s num_st / Σ_s den_st = (1/n) Σ_s x_s,    x_s = Σ_t w_t · num_st / μ_t,    μ_t = Σ_s den_st / n

(a type with no truth on the public side, μ_t = 0, adds 0, as it adds 0 to the score). x_s is session s's share of the
score, the paper's per-example loss with its sign turned, and for two submissions A and B the difference of their public
scores is exactly the mean of the paired differences d_s = x^A_s - x^B_s.

The rule, for each team and its valid submissions in the order they were made (the paper's, for a score that rises
instead of a loss that falls):

    R_0 = -∞, no leader.
    Submission t, public score S_t, per-session scores x:
      no leader yet: released (the first valid submission is shown);
      else d = x - x^leader, s = the sample standard deviation of d (n - 1 in its denominator), and
          released  iff  S_t - S_leader > s / √n,
        a one-sided paired test of d at z = 1 (the new submission beats the team's best so far by more than one
        standard error of the paired difference; the paper's "R_S(f_t) < R_{t-1} - s/√n").
      released: R_t = S_t, and submission t becomes the leader; else R_t = R_{t-1} and the leader stays.
    The board shows R_t: the leader's public score.

The paper's algorithm also rounds a released score to a multiple of 1/n, a device of its analysis; the authors' code does
not, and neither does this (the shown score is the leader's public score as `scorer score --split` gives it).

How the test is decided. With D = Σ d and Q = Σ d², S_t - S_leader = D/n and s² = (Q - D²/n)/(n - 1), and multiplying
the test out leaves

    released  iff  D > 0 and D² > Q,

which is how it is decided: D and Q are summed exactly rounded (math.fsum) over d taken in float64 of x in float64 (8
bytes per public session, the leader's, per team), and a tie is a tie: D² within a relative TIE (10^-9) of Q counts as
equal (not released), far above the rounding of x and of the sums (about 10^-15). The exact ties this keeps: a file
that gains in one public session alone (d is c there and 0 elsewhere, so S_t - S_leader = c/n = s/√n exactly: a
one-row probe), whose release float32 figures or a comparison of two separately rounded numbers would leave to
rounding.

Ties and equal files:
  - the same bytes again, or any file with the same per-session figures as the leader: d = 0, s = 0, and
    S_t - S_leader = 0 is not > 0: not released, the shown score does not move;
  - a file with the leader's public score but other per-session figures: 0 > s/√n fails: not released;
  - a file better on every session by the same amount c > 0 (s = 0): c > 0, released;
  - a file worse than the leader is never released, however its sessions spread;
  - teams whose shown scores are equal share the better rank (as on every board here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TIE = 1e-9  # relative: D² within this of Q is a tie, not a release (see "How the test is decided")


def session_scores(num: np.ndarray, den_mean: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """x_s = Σ_t w_t · num_st / μ_t (float64) of the public sessions' numerators (n, T); μ_t = den_mean (a type with μ_t = 0
    adds 0)."""
    scale = np.where(den_mean > 0, weights / np.where(den_mean > 0, den_mean, 1.0), 0.0)
    return (np.asarray(num, np.float64) * scale).sum(axis=1)


@dataclass
class Offer:
    """One valid submission as the Ladder sees it: its public score S and per-session scores x."""

    name: str
    score: float
    sessions: np.ndarray


@dataclass(frozen=True)
class Decision:
    """What one submission did to its team's board: released or not, the score shown after it (R_t), and the test's
    figures (S_t - S_leader and s/√n; None for a team's first)."""

    released: bool
    shown: float
    difference: float | None
    threshold: float | None


def paired_margin(x: np.ndarray, leader: np.ndarray) -> float:
    """s / √n: the sample standard deviation of d = x - leader (in float64) over √n, as the board shows it."""
    return float(np.std(_differences(x, leader), ddof=1)) / math.sqrt(len(x))


def beats(x: np.ndarray, leader: np.ndarray) -> bool:
    """The paired test mean(d) > s/√n, decided as D > 0 and D² > Q (1 + TIE) with D = Σ d and Q = Σ d² exactly rounded:
    equal means equal (see "How the test is decided")."""
    d = _differences(x, leader)
    total, squares = math.fsum(d.tolist()), math.fsum((d * d).tolist())
    return total > 0 and total * total > squares * (1 + TIE)


def _differences(x: np.ndarray, leader: np.ndarray) -> np.ndarray:
    if len(x) < 2:
        raise ValueError(f"the paired test needs at least 2 public sessions, got {len(x)}")
    return np.asarray(x, np.float64) - np.asarray(leader, np.float64)


class TeamLadder:
    """One team's parameter-free Ladder: offer() each valid submission in the order made; `leader` and `shown` after it."""

    def __init__(self, leader: Offer | None = None):
        self.leader = leader

    @property
    def shown(self) -> float | None:
        return None if self.leader is None else self.leader.score

    def offer(self, offer: Offer) -> Decision:
        if self.leader is None:
            self.leader = offer
            return Decision(True, offer.score, None, None)
        difference = offer.score - self.leader.score
        threshold = paired_margin(offer.sessions, self.leader.sessions)
        released = beats(offer.sessions, self.leader.sessions)
        if released:
            self.leader = offer
        return Decision(released, self.leader.score, difference, threshold)
