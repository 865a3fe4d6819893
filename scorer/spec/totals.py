"""How a metric's per-row figures become its total: one strategy object per way, attached to each kind in the registry.

A strategy answers, for a Metric, everything that depends on how its total is formed:
- of(metric, rows): the total of one pass for the rows of one type. `rows` is the engine's view of those rows
  (scorer.engine.metric_rows.MetricRows): sizes (|T| per row), column() and column_sum() (the metric's per-row
  figures and their sum, None when not kept), present() (the rows the submission has), coverage, and for the
  beyond-accuracy metrics side, side_figure(), item_counts(), hit_masks(), exposure(), subset;
- from_rows / sums_suffice / from_sum: the total from per-row figures, or from their sum alone;
- ratio_parts: per row (numerator, denominator) with total = Σ num / Σ den, or None when the total is no such
  ratio (bootstrap resamples only those: rating, catalogue and beyond-accuracy metrics are left out).
Formulas: scorer.spec.metrics (the registry's summaries) and docs/metrics.md.
"""

from __future__ import annotations

import numpy as np

from scorer.spec.exact_sums import exact_sum

NAN = float("nan")


def rows_counted(metric, sizes: np.ndarray) -> int:
    """N: every row, or the rows with truth (the `empty` option)."""
    return len(sizes) if metric.option("empty") == "zero" else int(np.count_nonzero(sizes))


class Total:
    """A total that is not formed from per-row accuracy figures (the catalogue and beyond-accuracy metrics)."""

    def of(self, metric, rows) -> float:
        raise NotImplementedError

    def sums_suffice(self, metric) -> bool:
        """Is the total a function of Σ row figures and the truth sizes alone (no per-row array needed)?"""
        return False

    def from_sum(self, metric, total: float, sizes: np.ndarray) -> float:
        raise ValueError(f"{metric} is not formed from the sum of its row figures")

    def from_rows(self, metric, values: np.ndarray, sizes: np.ndarray, present: np.ndarray | None = None) -> float:
        raise ValueError(f"{metric} is counted from the item side and the whole file, not from per-row figures")

    def ratio_parts(self, metric, values: np.ndarray, sizes: np.ndarray, weights: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray] | None:
        return None


# --- accuracy: a ratio of sums over the rows --------------------------------------------------------------
class RowRatio(Total):
    """mean_N of the row figure (map, ndcg, mrr, f1): Σ figure / N; subclasses change the figure or the denominator."""

    def of(self, metric, rows) -> float:
        weights = rows.weights()
        if weights is not None:  # rules that weigh rows (missing = skip, repeated_key = all): Σ num / Σ den·weight
            numerators, denominators = self.ratio_parts(metric, rows.column(), rows.sizes, weights)
            total = float(denominators.sum())
            return NAN if total == 0 else exact_sum(numerators) / total
        column_sum = rows.column_sum() if self.sums_suffice(metric) else None
        if column_sum is not None:
            return self.from_sum(metric, float(column_sum), rows.sizes)
        return self.from_rows(metric, rows.column(), rows.sizes)

    def sums_suffice(self, metric) -> bool:
        return True

    def from_sum(self, metric, total: float, sizes: np.ndarray) -> float:
        n = rows_counted(metric, sizes)
        return NAN if n == 0 else total / n

    def from_rows(self, metric, values: np.ndarray, sizes: np.ndarray, present: np.ndarray | None = None) -> float:
        """The total from the per-row figures of the rows of one type (rows without truth hold 0)."""
        if self.sums_suffice(metric):
            return self.from_sum(metric, exact_sum(values), sizes)
        n = rows_counted(metric, sizes)
        return NAN if n == 0 else self.row_mean(metric, values, sizes, n)

    def row_mean(self, metric, values: np.ndarray, sizes: np.ndarray, n: int) -> float:
        raise NotImplementedError  # only strategies whose sums do not suffice

    def ratio_parts(self, metric, values: np.ndarray, sizes: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per row (numerator, denominator) with total = Σ num / Σ den: here (figure, [row ∈ N]). weights: how many times
        each row counts (the rules missing = skip and repeated_key = all; its figure is then the sum of its rows')."""
        sizes = np.asarray(sizes, np.float64)
        values = np.asarray(values, np.float64)
        counted = np.ones_like(sizes) if metric.option("empty") == "zero" else (sizes > 0).astype(np.float64)
        numerators, denominators = self.parts(metric, values, sizes, counted)
        return (numerators, denominators) if weights is None else (numerators, denominators * weights)

    def parts(self, metric, values: np.ndarray, sizes: np.ndarray, counted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return values, counted


class AveragePrecision(RowRatio):
    """map: AP is computed with d = min(k, |T|); denominator=truth rescales it by min(k, |T|) / |T|."""

    def sums_suffice(self, metric) -> bool:
        return metric.option("denominator") == "min"

    @staticmethod
    def _scale(metric, sizes: np.ndarray) -> np.ndarray:
        return np.divide(np.minimum(sizes, metric.k), sizes, out=np.zeros(len(sizes)), where=sizes > 0)

    def row_mean(self, metric, values, sizes, n):
        return exact_sum(values * self._scale(metric, sizes)) / n

    def parts(self, metric, values, sizes, counted):
        return (values * self._scale(metric, sizes), counted) if metric.option("denominator") == "truth" else (values, counted)


class Recall(RowRatio):
    """recall: micro Σ h / Σ d, macro mean_N h / d; d = min(k, |T|) (denominator=min) or |T|."""

    @staticmethod
    def denominators(metric, sizes: np.ndarray) -> np.ndarray:
        return np.minimum(sizes, metric.k) if metric.option("denominator") == "min" else sizes

    @classmethod
    def denominator_sum(cls, metric, sizes: np.ndarray, piece: int = 1 << 16) -> int:
        """Σ of the denominators (integers: the sum is exact), a piece of the rows at a time: no array of them all."""
        return sum(int(cls.denominators(metric, sizes[start : start + piece]).sum()) for start in range(0, len(sizes), piece))

    def sums_suffice(self, metric) -> bool:
        return metric.option("average") == "micro"

    def from_sum(self, metric, total, sizes):
        if rows_counted(metric, sizes) == 0:
            return NAN
        denominator = self.denominator_sum(metric, sizes)
        return total / denominator if denominator > 0 else NAN

    def row_mean(self, metric, values, sizes, n):
        denominator = self.denominators(metric, sizes)
        return exact_sum(np.divide(values, denominator, out=np.zeros(len(sizes)), where=denominator > 0)) / n

    def parts(self, metric, values, sizes, counted):
        d = self.denominators(metric, sizes)
        if metric.option("average") == "micro":
            return values, d
        return np.divide(values, d, out=np.zeros_like(d), where=d > 0), counted


class Precision(RowRatio):
    """precision: Σ h / (k·N)."""

    def from_sum(self, metric, total, sizes):
        n = rows_counted(metric, sizes)
        return NAN if n == 0 else total / (metric.k * n)

    def parts(self, metric, values, sizes, counted):
        return values / metric.k, counted


class HitRate(RowRatio):
    """hitrate: mean_N [h > 0]."""

    def sums_suffice(self, metric) -> bool:
        return False

    def row_mean(self, metric, values, sizes, n):
        return float(np.count_nonzero(values) / n)

    def parts(self, metric, values, sizes, counted):
        return (values > 0).astype(np.float64), counted


class F1AtK(RowRatio):
    """f1@k: mean_N 2·h / (k + |T|)."""

    def sums_suffice(self, metric) -> bool:
        return False

    def row_mean(self, metric, values, sizes, n):
        return exact_sum(2.0 * values / (metric.k + sizes)) / n

    def parts(self, metric, values, sizes, counted):
        return 2.0 * values / (metric.k + sizes), counted


class ImpressionMean(RowRatio):
    """auc of the impression shape: mean_N of each impression's AUC (weight=impressions, the evaluators'), or weighted by
    its candidates, Σ n·AUC / Σ n (weight=candidates: the gauc convention)."""

    def sums_suffice(self, metric) -> bool:
        return metric.option("weight") == "impressions"

    def row_mean(self, metric, values, sizes, n):
        weights = np.asarray(sizes, np.float64)
        total = weights.sum()
        return NAN if total == 0 else exact_sum(values * weights) / total

    def parts(self, metric, values, sizes, counted):
        return (values * sizes, sizes) if metric.option("weight") == "candidates" else (values, counted)


# --- ratings and the catalogue ------------------------------------------------------------------------------
class RatingMean(Total):
    """rmse and mae: the mean over the rows with truth that the submission has (no score for a missing row)."""

    def __init__(self, root: bool):
        self.root = root

    def of(self, metric, rows) -> float:
        return self.from_rows(metric, rows.column(), rows.sizes, rows.present())

    def from_rows(self, metric, values, sizes, present=None):
        use = sizes > 0 if present is None else (sizes > 0) & present
        n = np.count_nonzero(use)
        if n == 0:
            return NAN
        mean = float(np.where(use, values, 0.0).sum() / n)
        return float(np.sqrt(mean)) if self.root else mean


class SignedJaccard(Total):
    """YooChoose's score (RecSys Challenge 2015), a sum and not a mean: Σ over the rows the file gives of b + J for a row
    whose truth is not empty and −b for one whose truth is empty; b = (rows of the truth with items) / (rows of the truth),
    J the row's Jaccard figure. A row the file does not give adds nothing."""

    def of(self, metric, rows) -> float:
        sizes = rows.sizes
        if len(sizes) == 0:
            return NAN
        given = rows.weights()
        given = rows.present().astype(np.float64) if given is None else given
        buyers = sizes > 0
        share = np.count_nonzero(buyers) / len(sizes)
        jaccards = exact_sum(np.where(buyers, rows.column(), 0.0))  # the figure of a row is 0 where the file lacks it
        return jaccards + share * float(given[buyers].sum() - given[~buyers].sum())


class ValueCurve(Total):
    """A figure of all the rows at once from their predictions and true labels (0/1), over the rows both files give:
    scorer.spec.curves (roc_auc, pr_auc, average_precision, log_loss, rce); NaN where a label is not 0 or 1 or only one
    label occurs."""

    def __init__(self, figure):
        self.figure = figure

    def of(self, metric, rows) -> float:
        use = rows.present() & (rows.sizes > 0)
        return self.figure(rows.column()[use], rows.labels()[use])


class CatalogueCoverage(Total):
    """coverage: counted by the pass over the whole file."""

    def of(self, metric, rows) -> float:
        return rows.coverage


# --- beyond accuracy: the kernel's side figures -------------------------------------------------------------
class SideTotal(Total):
    """A beyond-accuracy total (NaN when the pass has no side figures)."""

    def of(self, metric, rows) -> float:
        return NAN if rows.side is None else self.of_side(metric, rows)

    def of_side(self, metric, rows) -> float:
        raise NotImplementedError


class ListMean(SideTotal):
    """mean_R of the row's side figure, divided by n = min(items, k) (per_item) or not; R = rows with >= min_items."""

    def __init__(self, min_items: int = 1, per_item: bool = True):
        self.min_items, self.per_item = min_items, per_item

    def of_side(self, metric, rows) -> float:
        counts, present = rows.item_counts()
        figure = rows.side_figure()
        n = np.minimum(counts, metric.k)
        use = present & (n >= self.min_items)
        if not use.any():
            return NAN
        per_row = figure[use] / n[use] if self.per_item else figure[use]
        return float(per_row.mean())


class Serendipity(SideTotal):
    """Σ over the rows with truth of the hits outside the k most popular items / (k·N)."""

    def of_side(self, metric, rows) -> float:
        figure, sizes = rows.side_figure(), rows.sizes
        counted = np.count_nonzero(sizes)
        return float(figure[sizes > 0].sum() / (metric.k * counted)) if counted else NAN


class PairAuc(SideTotal):
    """auc (impression_weighted=False) against the catalogue, or gauc (True) over the row's own list."""

    def __init__(self, impression_weighted: bool):
        self.impression_weighted = impression_weighted

    def of_side(self, metric, rows) -> float:
        k = metric.k
        counts, _ = rows.item_counts()
        figure = rows.side_figure()
        n = np.minimum(counts, k)
        hits = np.bitwise_count(rows.hit_masks() & np.int64((1 << k) - 1)).astype(np.float64)
        if self.impression_weighted:
            return gauc(hits, figure, n)
        return auc_at_k(hits, figure + hits * (k - n), rows.sizes, k, rows.side.items.catalogue)  # ranks past the list: misses


class ExposureGini(SideTotal):
    """gini of the catalogue's exposure counts: a whole-run figure, NaN for a subset of the rows."""

    def of_side(self, metric, rows) -> float:
        return NAN if rows.subset else gini(rows.exposure())


def auc_at_k(hits: np.ndarray, before: np.ndarray, sizes: np.ndarray, k: int, catalogue: int) -> float:
    """implicit's AUC@K: mean over rows with truth of the limited AUC against the catalogue's items.

    hits: hits within k; before: Σ over the misses within k (ranks past the list included) of the hits before them."""
    negatives = catalogue - sizes
    use = (sizes > 0) & (negatives > 0)
    if not use.any():
        return float("nan")
    p, neg, h = sizes[use].astype(np.float64), negatives[use].astype(np.float64), hits[use]
    return float(((before[use] + (h + p) / 2.0 * (neg - (k - h))) / (p * neg)).mean())


def gauc(hits: np.ndarray, before: np.ndarray, n: np.ndarray) -> float:
    """Impression-weighted mean of per-row AUC over the row's own list (rows with a hit and a miss)."""
    misses = n - hits
    use = (hits > 0) & (misses > 0)
    if not use.any():
        return float("nan")
    auc = before[use] / (hits[use] * misses[use])  # before: the (hit, miss) pairs with the hit ranked first
    return float((n[use] * auc).sum() / n[use].sum())


def gini(exposure: np.ndarray) -> float:
    """Gini index of exposure counts (0: every item shown equally; → 1: all exposure on one item)."""
    total = exposure.sum()
    if len(exposure) == 0 or total == 0:
        return float("nan")
    x = np.sort(exposure).astype(np.float64)
    c = len(x)
    return float(((2 * np.arange(1, c + 1) - c - 1) * x).sum() / (c * total))
