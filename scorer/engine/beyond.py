"""Beyond-accuracy metrics (auc, gauc, novelty, diversity, serendipity, arp, aplt, gini): the kernel's side figures, aggregated.

The parse kernel adds per row, only when one of these metrics is configured, the figures of
scorer.kernels.beyond (item count, Σ self-information, Σ popularity, ...) and counts each item's
exposure per type (for gini); auc needs only the hit-rank masks. Formulas: scorer.spec.metrics and
docs/metrics.md, "Beyond-accuracy metrics and AUC".
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from scorer.engine.metric_rows import MetricRows
from scorer.engine.result import finite_or_none
from scorer.errors import UsageError
from scorer.kernels.kinds import SIDE_DIVERSITY_CATEGORY, SIDE_DIVERSITY_EMBEDDING, SIDE_EXPOSURE
from scorer.kernels.rows import ROWS_PER_CALL

_NONE = np.empty(0, np.int64)
NO_SIDE = (_NONE, _NONE, np.empty((0, 1), np.uint32), np.empty(0), np.empty((0, 0)), 0, np.zeros((0, 0, 0), np.int32), np.empty((0, 0)), _NONE,
           np.empty(0), np.zeros((3, 0), np.int64))  # parse_block's `side` without such metrics (the types of a real one)
SIDE_OUTPUT = 7  # the rows' output array in `side`


@dataclass
class SideFigures:
    """What a pass keeps for the beyond-accuracy metrics."""

    slot_side: np.ndarray  # (slots, 1 + metrics): item count, then one figure per metric with a side kind
    exposure: np.ndarray  # (gini metrics, types, items of the table): rows showing the item within k
    columns: dict  # str(metric) -> its column of slot_side (or its first index of exposure, for gini)
    items: object  # scorer.truth.items.ItemSide
    _by_type: dict = field(default_factory=dict)

    def type_rows(self, outcome, t: int, n_types: int) -> tuple[np.ndarray, np.ndarray]:
        """The item counts and the presence of the rows of type t (read once for every metric of the type)."""
        if t not in self._by_type:
            self._by_type[t] = (self.slot_side[t::n_types, 0].copy(), outcome.slot_line[t::n_types] > 0)
        return self._by_type[t]


class SideKernel:
    """The side arrays of one pass: checks the item side the metrics need, hands parse_block its `side`, merges rows."""

    def __init__(self, competition, items, n_sessions: int):
        from scorer.truth.items import empty

        beyond = [m for m in competition.metrics if m.family == "beyond"]
        for metric in beyond:
            if metric.kind.needs_items and items is None:
                raise UsageError(f"metric {metric} needs item-side input: --items FILE (item table) or --train FILE (training log)")
            if metric.side_kind == SIDE_DIVERSITY_EMBEDDING and not items.has_embedding:
                raise UsageError(f"metric {metric} needs item embeddings: emb* columns in --items FILE")
            if metric.side_kind == SIDE_DIVERSITY_CATEGORY and not items.has_category:
                raise UsageError(f"metric {metric} needs item categories: a category column in --items FILE "
                                 "(or diversity@K(by=embedding) with emb* columns)")
        self.items = items if items is not None else empty()
        side = [m for m in beyond if m.side_kind]
        self.columns = {str(m): j + 1 for j, m in enumerate(side)}
        gini = [m for m in side if m.side_kind == SIDE_EXPOSURE]
        self.columns.update({str(m): g for g, m in enumerate(gini)})
        self.n_types, self.kmax = len(competition.types), competition.k
        it = self.items
        self.spec = (np.array([m.side_kind for m in side], np.int64), np.array([m.k for m in side], np.int64), it.packed,
                     it.popularity, it.embedding, it.unknown_word)
        self.n_gini = len(gini)
        self.slot_side = np.zeros((n_sessions * self.n_types, 1 + len(side)), np.float64) if side else None
        self.local = threading.local()
        self.exposures: list[np.ndarray] = []
        self.spare: list[np.ndarray] = []

    def for_call(self) -> tuple:
        """parse_block's `side` for one call: this thread's exposure counts and fresh output rows."""
        if self.slot_side is None:
            return NO_SIDE
        exposure = getattr(self.local, "exposure", None)
        if exposure is None:
            shape = (self.n_gini, self.n_types, len(self.items.popularity)) if self.n_gini else (0, 0, 0)
            exposure = self.local.exposure = np.zeros(shape, np.int32)  # a row count per item: int32 halves the random writes' footprint
            self.exposures.append(exposure)
        try:
            out = self.spare.pop()
        except IndexError:
            out = np.empty((ROWS_PER_CALL, self.slot_side.shape[1]), np.float64)
        table = np.full((3, 512), -1, np.int64)  # diversity's per-row category tally: stamps (the row), codes, counts
        table[2] = 0  # codes in the packed word index the counts directly (kernels/beyond.py)
        return (*self.spec, exposure, out, np.empty(self.kmax, np.int64), np.empty(self.items.embedding.shape[1]), table)

    def absorb(self, parsed) -> None:
        """Rows of the truth into the per-slot array (in line order: a repeated row's last figures stay)."""
        if self.slot_side is None:
            return
        for (row_ints, _, n_rows), out in zip(parsed.chunks, parsed.sides):
            slots = row_ints[:n_rows, 0]
            keep = slots >= 0
            if keep.all():
                self.slot_side[slots] = out[:n_rows]  # without the masks' copies
            else:
                self.slot_side[slots[keep]] = out[:n_rows][keep]
            self.spare.append(out)

    def finish(self) -> SideFigures:
        exposure = sum(self.exposures[1:], self.exposures[0].astype(np.int64)) if self.exposures else np.zeros((0, 0, 0), np.int64)
        return SideFigures(self.slot_side, exposure, self.columns, self.items)


def aggregate(metric, outcome, t: int, n_types: int, sizes: np.ndarray, rows: np.ndarray | None = None) -> float:
    """One beyond-accuracy metric for the rows of type t (NaN when no row counts or the pass has no side figures).

    rows: indices of the sessions to average over (a breakdown's bin; sizes then covers these rows only), or None
    for all; gini, a catalogue-level figure, has no per-row value: NaN for a subset. Formulas: scorer.spec.totals."""
    return metric.total_of(MetricRows(outcome, metric, t, n_types, sizes, rows=rows))


def per_row_metrics(result) -> list:
    """The Result's beyond-accuracy metrics that have a per-row figure (all but gini), as Metric objects."""
    from scorer.spec.metrics import parse_metric

    if result.outcome is None or getattr(result.outcome, "side", None) is None:
        return []
    names = next(iter(result.metrics.values()), {})
    metrics = [parse_metric(name) for name in names]
    return [m for m in metrics if m.family == "beyond" and m.kind.name != "gini"]


def subset_figures(result, metrics, t: int, rows: np.ndarray) -> dict:
    """{metric: value or None} of type t over the given session rows (indices into the truth's sessions)."""
    n_types = len(result.metrics)
    sizes = result.truth_sizes.reshape(-1, n_types)[rows, t]
    out = {}
    for metric in metrics:
        value = aggregate(metric, result.outcome, t, n_types, sizes, rows)
        out[str(metric)] = finite_or_none(value)
    return out
