"""Per-session numerators and denominators of a Result, and bootstrap percentile intervals.

Every figure is a ratio of sums over the sessions with truth for its type:
recall@k_t = Σ_s hits_st / Σ_s min(k, |T_st|);  map@k_t, ndcg@k_t = Σ_s AP_st / Σ_s [|T_st| > 0];
score = Σ_t w_t · recall@K_t (a type without truth adds 0).
A bootstrap resample re-draws sessions with replacement (Poisson(1) times each) and recomputes
these ratios from the resampled sums; the interval is the (α/2, 1 - α/2) percentile of the resamples.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from scorer.kernels import door
from scorer.spec.metrics import Metric, parse_metric


def ratio_parts(metric: Metric, values: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per session (numerator, denominator) with metric = Σ num / Σ den, or None when it is no such ratio (rmse, coverage,
    the beyond-accuracy metrics): Metric.ratio_parts (scorer.spec.totals has each metric's parts).

    values: the per-row figure of the engine (hits for recall, AP, NDCG, ...); sizes: |T| per session.
    """
    return metric.ratio_parts(values, sizes)


@dataclass
class SessionTable:
    """Per session (rows in truth order) the engine's figure per (type, metric) and |truth| per type."""

    types: tuple[str, ...]
    metrics: tuple[Metric, ...]  # scored metric first
    weights: np.ndarray  # (n_types,)
    values: np.ndarray  # float64 (n_sessions, n_types * n_metrics); column t * n_metrics + m
    sizes: np.ndarray  # int64 (n_sessions, n_types): |truth|
    columns: list = None  # (type index, metric index) of the columns that are ratios of sums

    def __post_init__(self):
        probe = np.zeros((1, len(self.types)), np.int64)
        self.columns = [(t, m) for t in range(len(self.types)) for m, metric in enumerate(self.metrics)
                        if ratio_parts(metric, np.zeros(1), probe[:, t]) is not None]
        if any((t, 0) not in self.columns for t in range(len(self.types))):
            from scorer.errors import UsageError

            raise UsageError(f"the scored metric {self.metrics[0]} is not a ratio of per-session sums: it cannot be resampled")
        self.scored_columns = [self.columns.index((t, 0)) for t in range(len(self.types))]

    @classmethod
    def from_result(cls, result) -> SessionTable:
        if result.slot_values is None or result.truth_sizes is None:
            from scorer.errors import UsageError

            raise UsageError(f"{result.submission}: no per-session figures (the file could not be scored)")
        if getattr(result.outcome, "weights", None) is not None:
            from scorer.errors import UsageError

            raise UsageError(f"{result.submission}: the rules of {result.competition!r} weigh each file's rows by what it gives (missing = "
                             "skip, repeated_key = all), so files differ in what their means divide by: per-session resampling and "
                             "paired tests are not defined for it; compare the scores, or score under missing = zero and "
                             "repeated_key = last")
        types = tuple(result.metrics)
        metrics = tuple(parse_metric(name) for name in next(iter(result.metrics.values())))
        n_types = len(types)
        values = np.ascontiguousarray(result.slot_values.reshape(-1, n_types * len(metrics)))
        return cls(types, metrics, np.array([result.weights[t] for t in types], np.float64), values,
                   np.asarray(result.truth_sizes, np.int64))

    @property
    def names(self) -> list[tuple[str, str]]:
        """(type, metric) of each ratio column."""
        return [(self.types[t], str(self.metrics[m])) for t, m in self.columns]

    def parts(self, values: np.ndarray, sizes: np.ndarray, columns: list | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(numerators, denominators), each (rows, n_columns), of the given sessions' rows (all ratio columns by default)."""
        step = len(self.metrics)
        pairs = [ratio_parts(self.metrics[m], values[:, t * step + m], sizes[:, t]) for t, m in (columns or self.columns)]
        return np.stack([p[0] for p in pairs], axis=1), np.stack([p[1] for p in pairs], axis=1)

    def figures(self, num_sums: np.ndarray, den_sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(weighted score, ratio per column) from column sums; works on stacks of resamples too."""
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = np.where(den_sums > 0, num_sums / np.where(den_sums > 0, den_sums, 1.0), np.nan)
        score = (np.nan_to_num(ratios[..., self.scored_columns], nan=0.0) * self.weights).sum(axis=-1)
        return score, ratios

    def grouped(self, keep: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Identical sessions merged: (values (G, 2C) = [numerators | denominators] of one session, counts (G,))."""
        values = self.values if keep is None else self.values[keep]
        sizes = self.sizes if keep is None else self.sizes[keep]
        group, first = door.kernel("group_rows")(np.ascontiguousarray(values).view(np.int64), np.ascontiguousarray(sizes, np.int64))
        counts = np.bincount(group, minlength=len(first)).astype(np.int64)
        num, den = self.parts(values[first], sizes[first])
        return np.ascontiguousarray(np.concatenate([num, den], axis=1)), counts


CHUNK = 64  # resamples drawn at a time: draws (CHUNK, G) then one matrix product with the values


def resample(values: np.ndarray, counts: np.ndarray, n: int, seed: int, kind: str = "bootstrap", threads: int = 2) -> np.ndarray:
    """(n, width) column sums of n resamples ("bootstrap": sessions redrawn; "flip": signs flipped).

    Resample r uses its own seed (stream_seeds(seed)[r]), so the result does not depend on threads.
    """
    draw = door.kernel("poisson_draws" if kind == "bootstrap" else "sign_flip_draws")
    seeds = door.kernel("stream_seeds")(np.uint64(seed % 2**64), n)
    out = np.zeros((n, values.shape[1]), np.float64)
    if n == 0 or len(counts) == 0:
        return out
    values, counts = np.ascontiguousarray(values, np.float64), np.ascontiguousarray(counts, np.int64)

    def chunk(start: int) -> None:
        stop = min(n, start + CHUNK)
        draws = np.empty((stop - start, len(counts)), np.float64)
        draw(counts, seeds[start:stop], draws)
        np.matmul(draws, values, out=out[start:stop])

    starts = range(0, n, CHUNK)
    if threads <= 1 or n <= CHUNK:
        for start in starts:
            chunk(start)
        return out
    with ThreadPoolExecutor(threads) as pool:  # the kernel and the product release the GIL
        for future in [pool.submit(chunk, start) for start in starts]:
            future.result()
    return out


def interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column: the (1 - level)/2 and (1 + level)/2 quantiles, ignoring NaN."""
    alpha = (1.0 - level) / 2.0
    if len(samples) == 0:
        return np.full(samples.shape[1], np.nan), np.full(samples.shape[1], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column (a type without truth) stays NaN
        return np.nanquantile(samples, alpha, axis=0), np.nanquantile(samples, 1.0 - alpha, axis=0)


def spread(samples: np.ndarray) -> np.ndarray:
    """Bootstrap standard error per column: sqrt(Σ (x_r - x̄)² / (R - 1)), ignoring NaN."""
    if len(samples) < 2:
        return np.full(samples.shape[1], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanstd(samples, axis=0, ddof=1)


def _entry(value: float, low: float, high: float, se: float) -> dict:
    clean = lambda x: None if not np.isfinite(x) else float(x)  # noqa: E731
    return {"value": clean(value), "low": clean(low), "high": clean(high), "se": clean(se)}


def bootstrap(table: SessionTable, n: int, seed: int = 0, level: float = 0.95, keep: np.ndarray | None = None,
              threads: int = 2) -> dict:
    """Percentile intervals of the weighted score and of every (type, metric) over the kept sessions.

    {"score": {value, low, high, se}, "metrics": {type: {metric: {value, low, high, se}}}, "groups": G}
    """
    values, counts = table.grouped(keep)
    width = values.shape[1] // 2
    total = (values * counts[:, None]).sum(axis=0)
    score, ratios = table.figures(total[:width], total[width:])
    sums = resample(values, counts, n, seed, "bootstrap", threads)
    sample_score, sample_ratios = table.figures(sums[:, :width], sums[:, width:])
    stacked = np.concatenate([sample_score[:, None], sample_ratios], axis=1)
    low, high = interval(stacked, level)
    se = spread(stacked)
    metrics: dict[str, dict[str, dict]] = {}
    for c, (type_name, metric) in enumerate(table.names):
        metrics.setdefault(type_name, {})[metric] = _entry(ratios[c], low[c + 1], high[c + 1], se[c + 1])
    return {"score": _entry(score, low[0], high[0], se[0]), "metrics": metrics, "groups": int(len(counts))}
