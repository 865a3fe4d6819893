"""The joint bootstrap streamed: each submission reduced, where it is scored, to its resampled numerators per type.

The in-memory path (scorer.analytics.leaderboard.joint_bootstrap) holds every submission's per-session numerators, 4 bytes x
sessions x types x (S + 1), and sums them block by block. Here a submission's numerators (float32, as there) are
reduced on their own as soon as it is scored: per side, for each block of BLOCK of the side's sessions (the same
blocks), the float32 sums Σ_{s in block} w_rs num_st (the kernel resampled_block_sums, which draws the same weights
w_rs again from (seed, r, s)), added into float64 accumulators in the same lanes and order as joint_sums. What is
kept of a submission is R x types float64 per side and its observed sums (48 KB for R = 1,000, 3 types and a split),
whatever the number of sessions. The denominators depend on the truth alone and are reduced once.

A column's float32 block sum does not depend on the other columns, so a submission reduced alone, in a batch, on a Dask
worker or among all of them in memory adds the same float32 block sums in the same order: integer figures (hits) give
the in-memory path's bits; fractional ones (AP, NDCG) differ only by the order of float32 additions within a block
(the kernel adds in session order, a BLAS product in its own): the rounding of a float32 sum of up to BLOCK terms, a few
1e-7 to a few 1e-6 relative (5.0e-7 on tests/test_streamed_leaderboard.py's ndcg@20 case, 1.3e-6 at H&M size).

For --mde, whose adjacent pairs are known only once every submission is ranked, each reduction also keeps its
numerators on a fixed sample of the planning side's sessions (at most MDE_SAMPLE, chosen by a seeded hash of the row):
the per-session variance is estimated from them (relative standard error of the standard deviation about
1/√(2 · MDE_SAMPLE) = 0.55 %); with fewer sessions than that, all are kept and the figure is the in-memory one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.leaderboard.joint_bootstrap import BLOCK, THRESHOLDS, blockwise_sums, observed_sums
from scorer.errors import UsageError
from scorer.kernels import door

MDE_SAMPLE = 16_384  # sessions of the planning side whose numerators each reduction keeps for --mde
SAMPLE_SEED = 0x6D6465  # the sample's hash seed ("mde"): the same sessions whatever --seed
BATCH_BYTES = 256 << 20  # the numerators a batch of submissions reduced together in this process may hold


@dataclass(frozen=True)
class Plan:
    """What every reduction of one leaderboard shares: the sides' session rows (sorted), the resamples, the blocks and
    lanes of the arithmetic, and the rows kept for --mde (None: no --mde)."""

    sides: dict[str, np.ndarray]
    n: int
    seed: int
    lanes: int = 2
    block: int = BLOCK
    sample: np.ndarray | None = None

    @classmethod
    def make(cls, sides: dict[str, np.ndarray], n: int, seed: int, lanes: int = 2, mde_side: str | None = None,
             block: int = BLOCK) -> Plan:
        return cls(sides, n, seed, lanes, block, None if mde_side is None else sample_rows(sides[mde_side]))


def sample_rows(rows: np.ndarray, size: int | None = None) -> np.ndarray:
    """All the rows when there are at most `size` (default MDE_SAMPLE), else the `size` rows of the smallest hash units
    (sorted): a uniform sample, the same for every submission and run."""
    size = MDE_SAMPLE if size is None else size
    if len(rows) <= size:
        return rows
    units = door.kernel("hash_units")(np.ascontiguousarray(rows, np.int64), np.uint64(SAMPLE_SEED))
    return np.sort(rows[np.argpartition(units, size)[:size]])


def reduce_columns(values: np.ndarray, plan: Plan, threads: int | None = None) -> tuple[dict, dict]:
    """({side: (C,) observed float64 sums}, {side: (n, C) resampled float64 sums}) of float32 per-session columns (N, C)."""
    values = np.ascontiguousarray(values, np.float32)
    kernel = door.kernel("resampled_block_sums")

    def product(seeds: np.ndarray, rows: np.ndarray) -> np.ndarray:
        out = np.zeros((len(seeds), values.shape[1]), np.float32)
        kernel(seeds, np.ascontiguousarray(rows, np.int64), values, THRESHOLDS, out)
        return out

    names = list(plan.sides)
    resampled = blockwise_sums(product, values.shape[1], list(plan.sides.values()), plan.n, plan.seed, plan.lanes,
                               plan.block, threads)
    observed = {name: observed_sums(values, plan.sides[name]) for name in names}
    return observed, dict(zip(names, resampled))


def truth_digest(table: SessionTable) -> str:
    """What two reductions must share to be ranked together: the types, the scored metric and every |truth|."""
    digest = hashlib.blake2b(np.ascontiguousarray(table.sizes, np.int64).tobytes(), digest_size=16)
    digest.update(repr((table.types, str(table.metrics[0]))).encode())
    return digest.hexdigest()


@dataclass
class Reduced:
    """One or more submissions' reduction: observed and resampled sums per side ((C,), (n, C); C = types x submissions)
    and, for --mde, their numerators on the plan's sample rows ((M, C) float32)."""

    observed: dict[str, np.ndarray]
    resampled: dict[str, np.ndarray]
    sample: np.ndarray | None
    truth: str  # truth_digest of the tables it came from

    @property
    def width(self) -> int:
        return next(iter(self.observed.values())).shape[0]


def scored_numerators(table: SessionTable) -> np.ndarray:
    """The scored metric's per-session numerators (N, types) as float32, as SessionColumns stores them."""
    num, _ = table.parts(table.values, table.sizes, [(t, 0) for t in range(len(table.types))])
    return num.astype(np.float32)


def reduce_tables(tables: list[SessionTable], plan: Plan, threads: int | None = None) -> Reduced:
    """The reduction of a batch of submissions (their columns side by side; each column's sums as if alone)."""
    values = np.concatenate([scored_numerators(table) for table in tables], axis=1)
    return _reduced(values, plan, threads, truth_digest(tables[0]))


def _reduced(values: np.ndarray, plan: Plan, threads: int | None, truth: str) -> Reduced:
    observed, resampled = reduce_columns(values, plan, threads)
    sample = None if plan.sample is None else np.ascontiguousarray(values[plan.sample], np.float32)
    return Reduced(observed, resampled, sample, truth)


class StreamedColumns:
    """The leaderboard's sums of many submissions, reduced as they come (add: in batches of `batch` tables in this
    process; add_reduced: a reduction made elsewhere, a Dask worker's), and the truth's denominators reduced once."""

    def __init__(self, first: SessionTable, plan: Plan, batch: int = 1, threads: int | None = None):
        self.types, self.weights, self.metric = first.types, first.weights, first.metrics[0]
        self.plan, self.batch, self.threads = plan, batch, threads
        self.truth = truth_digest(first)
        _, den = first.parts(first.values, first.sizes, [(t, 0) for t in range(len(self.types))])
        self.denominators = _reduced(den.astype(np.float32), plan, threads, self.truth)
        self.parts: list[Reduced] = []
        self.buffer: np.ndarray | None = None  # the float32 numerators of a batch, side by side, as they wait
        self.waiting = 0
        self.count = 0

    @property
    def n_types(self) -> int:
        return len(self.types)

    def add(self, table: SessionTable) -> int:
        """Queue one submission's numerators (reduced with its batch; the table is not kept); its index among the added."""
        if truth_digest(table) != self.truth:
            raise UsageError("the submissions were not scored against the same truth and competition")
        t = self.n_types
        if self.buffer is None:
            self.buffer = np.empty((table.sizes.shape[0], t * self.batch), np.float32)
        self.buffer[:, t * self.waiting:t * (self.waiting + 1)] = scored_numerators(table)
        self.waiting += 1
        if self.waiting == self.batch:
            self.flush()
        self.count += 1
        return self.count - 1

    def add_reduced(self, reduced: Reduced) -> int:
        if reduced.truth != self.truth:
            raise UsageError("the submissions were not scored against the same truth and competition")
        self.flush()
        self.parts.append(reduced)
        self.count += reduced.width // self.n_types
        return self.count - 1

    def flush(self) -> None:
        if self.waiting:
            used = self.buffer if self.waiting == self.batch else self.buffer[:, :self.n_types * self.waiting]
            self.waiting = 0
            self.parts.append(_reduced(used, self.plan, self.threads, self.truth))

    def sums(self) -> tuple[dict, dict, np.ndarray | None]:
        """(observed {side: (C,)}, resampled {side: (n, C)}, the --mde sample (M, C) or None) in SessionColumns' layout:
        the denominators, then each submission's numerators in the order added."""
        self.flush()
        self.buffer = None
        every = [self.denominators, *self.parts]
        observed = {side: np.concatenate([part.observed[side] for part in every]) for side in self.plan.sides}
        resampled = {side: np.concatenate([part.resampled[side] for part in every], axis=1) for side in self.plan.sides}
        sample = None if self.plan.sample is None else np.concatenate([part.sample for part in every], axis=1)
        return observed, resampled, sample


def truth_table(truth, competition) -> SessionTable:
    """A SessionTable of no hits against `truth`: all the denominators need (the types, the scored metric, every |truth|),
    so they are reduced before, or without, any submission here."""
    sizes = np.asarray(truth.sizes, np.int64)
    return SessionTable(tuple(competition.types), (competition.metric,), np.asarray(competition.weights, np.float64),
                        np.zeros(sizes.shape, np.float64), sizes)


def batch_size(n_sessions: int, n_types: int, budget: int = BATCH_BYTES) -> int:
    """How many submissions' float32 numerators (4 · sessions · types bytes each) fit in `budget` bytes, at least one."""
    return max(1, budget // max(1, 4 * n_sessions * n_types))
