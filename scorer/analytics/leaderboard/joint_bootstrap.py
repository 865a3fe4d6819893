"""One joint, paired session bootstrap of many submissions: the same resampled sessions for every submission.

The scored metric of every submission is a ratio of per-session sums per type t (scorer.spec.totals):
figure_t = Σ_s num_st / Σ_s den_st, and the denominators depend on the truth alone, so they are shared.
Resample r gives session s the weight w_rs ~ Poisson(1) (scorer.kernels.resample.session_poisson_weights,
a function of (seed, r, s) alone), and every column's resampled sum is Σ_s w_rs x_s. The columns are held as
one float32 matrix, sessions x ([den_t] + [num_t of each submission]), filled one submission at a time
(no Result is kept), and summed block by block of sessions: the block's weights are drawn once, then one
float32 matrix product (w_block @ x_block) serves every submission, and the block's sums go into float64
accumulators. A block sum of integer figures (hits, counts) is exact in float32 (below 2^24); fractional
figures (AP, NDCG) carry the rounding of a float32 sum of up to BLOCK terms (a few 1e-7 to a few 1e-6 relative).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from scorer.analytics.bootstrap import SessionTable
from scorer.errors import UsageError
from scorer.kernels import door

POISSON_ONE_MAX = 16  # a Poisson(1) weight is capped here (P(w >= 16) < 1e-13)


def poisson_one_thresholds() -> np.ndarray:
    """t[c] = P(Poisson(1) <= c) · 2^32, the 32-bit thresholds of session_poisson_weights' inversion."""
    from math import exp, factorial

    cdf = np.cumsum([exp(-1.0) / factorial(c) for c in range(POISSON_ONE_MAX)])
    return np.minimum(np.floor(cdf * 2.0**32), 2.0**32 - 1).astype(np.uint64)


THRESHOLDS = poisson_one_thresholds()
BLOCK = 4096  # sessions per matrix product: the block's float32 sums of integer figures stay exact


class SessionColumns:
    """The scored metric's per-session numerators of many submissions (float32), added one at a time, and the shared
    denominators (the first n_types columns)."""

    def __init__(self, first: SessionTable, capacity: int):
        self.types, self.weights, self.metric = first.types, first.weights, first.metrics[0]
        self.sizes = first.sizes
        self.scored = [(t, 0) for t in range(len(self.types))]
        _, den = first.parts(first.values, first.sizes, self.scored)
        n_sessions, n_types = den.shape
        self.matrix = np.zeros((n_sessions, n_types * (capacity + 1)), np.float32)
        self.matrix[:, :n_types] = den
        self.count = 0

    @property
    def n_types(self) -> int:
        return len(self.types)

    def add(self, table: SessionTable) -> int:
        """Copy one submission's numerators in; its index among the added submissions."""
        if table.types != self.types or str(table.metrics[0]) != str(self.metric) or not np.array_equal(table.sizes, self.sizes):
            raise UsageError("the submissions were not scored against the same truth and competition")
        if self.count + 1 >= self.matrix.shape[1] // self.n_types:
            raise ValueError(f"SessionColumns holds at most {self.matrix.shape[1] // self.n_types - 1} submissions")
        num, _ = table.parts(table.values, table.sizes, self.scored)
        start = self.n_types * (self.count + 1)
        self.matrix[:, start:start + self.n_types] = num
        self.count += 1
        return self.count - 1

    def used(self) -> np.ndarray:
        """The filled columns: denominators, then each added submission's numerators."""
        return self.matrix[:, :self.n_types * (self.count + 1)]


def resample_weights(seeds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(resamples, len(rows)) float32 Poisson(1) weights of the given sessions (see session_poisson_weights)."""
    out = np.empty((len(seeds), len(rows)), np.float32)
    door.kernel("session_poisson_weights")(np.ascontiguousarray(seeds, np.int64), np.ascontiguousarray(rows, np.int64), THRESHOLDS, out)
    return out


def joint_sums(matrix: np.ndarray, sides: list[np.ndarray], n: int, seed: int, threads: int = 2,
               block: int = BLOCK) -> list[np.ndarray]:
    """Per side (an array of session rows) the (n, columns) float64 resampled column sums Σ_s w_rs x_s.

    Every side and column uses the same weights w_rs (seeded by `seed`); the figures do not depend on `threads`
    or `block` beyond float64 rounding of the block order.
    """
    def product(seeds: np.ndarray, rows: np.ndarray) -> np.ndarray:
        part = matrix[rows[0]:rows[-1] + 1] if rows[-1] - rows[0] + 1 == len(rows) else matrix[rows]
        return resample_weights(seeds, rows) @ np.ascontiguousarray(part)

    return blockwise_sums(product, matrix.shape[1], sides, n, seed, threads, block)


def blockwise_sums(product, columns: int, sides: list[np.ndarray], n: int, seed: int, lanes: int = 2, block: int = BLOCK,
                   threads: int | None = None) -> list[np.ndarray]:
    """Per side the (n, columns) float64 sums of product(seeds, rows), the float32 resampled sums of one block of a side's
    rows (`block` rows at a time, in order).

    The blocks of every side, in order, are dealt to `lanes` accumulators in turn; each adds its blocks in order into
    float64, and the lanes are added last. So the arithmetic depends on `lanes` and `block`, never on `threads` (how
    many lanes run at once: default all), and two callers with the same lanes and blocks add the same float32 block
    sums in the same order.
    """
    seeds = door.kernel("stream_seeds")(np.uint64(seed % 2**64), n)
    jobs = [(side, rows[start:start + block]) for side, rows in enumerate(sides) for start in range(0, len(rows), block)]
    lanes = max(1, min(lanes, len(jobs)))
    sums = np.zeros((lanes, len(sides), n, columns), np.float64)
    if n == 0 or not jobs:
        return list(sums.sum(axis=0))

    def lane(index: int) -> None:
        for side, rows in jobs[index::lanes]:
            sums[index, side] += product(seeds, rows)

    running = lanes if threads is None else max(1, min(threads, lanes))
    if running == 1:
        for index in range(lanes):
            lane(index)
    else:
        with ThreadPoolExecutor(running) as pool:  # the kernels and the product release the GIL
            for future in [pool.submit(lane, index) for index in range(lanes)]:
                future.result()
    return list(sums.sum(axis=0))


def resampled_scores(sums: np.ndarray, n_types: int, weights: np.ndarray) -> np.ndarray:
    """(..., submissions) weighted scores from column sums laid out as SessionColumns' matrix.

    score = Σ_t w_t · Σ num_t / Σ den_t, a type whose resampled denominator is 0 adding 0 (as Result.score does).
    """
    den = sums[..., :n_types]
    num = sums[..., n_types:].reshape(*sums.shape[:-1], sums.shape[-1] // n_types - 1, n_types)
    safe = np.where(den > 0, den, 1.0)[..., None, :]
    ratios = np.where(den[..., None, :] > 0, num / safe, 0.0)
    return (ratios * weights).sum(axis=-1)


def row_blocks(matrix: np.ndarray, rows: np.ndarray, block: int = 16 * BLOCK):
    """The matrix's given rows (sorted), a block at a time: a view where the block's rows are consecutive, else a copy."""
    for start in range(0, len(rows), block):
        part = rows[start:start + block]
        yield matrix[part[0]:part[-1] + 1] if part[-1] - part[0] + 1 == len(part) else matrix[part]


def observed_sums(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The column sums (float64) over the given sessions (sorted), without resampling."""
    total = np.zeros(matrix.shape[1], np.float64)
    for chunk in row_blocks(matrix, rows):
        total += chunk.sum(axis=0, dtype=np.float64)
    return total
