"""One metric's figures of one pass for the rows of one type: what a metric's total reads (scorer.spec.totals).

Nothing is read before a total asks for it: a ratio metric whose sums suffice reads only its column sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class MetricRows:
    """The rows of type t of a pass's outcome (or a subset of them, `rows`), for the metric in column j.

    sizes: |T| of those rows; j: the metric's column among the competition's metrics (None for a metric with
    side figures, which are found by the metric's name)."""

    outcome: object
    metric: object
    t: int
    n_types: int
    sizes: np.ndarray
    j: int | None = None
    rows: np.ndarray | None = None

    @property
    def subset(self) -> bool:
        return self.rows is not None

    def column(self) -> np.ndarray:
        """The metric's per-row figures."""
        return self.outcome.figures.column(self.j, self.t, self.n_types)

    def column_sum(self):
        """Σ of the metric's per-row figures (a scorer.spec.exact_sums.ExactSum), or None when the pass keeps the rows' figures instead."""
        sums = self.outcome.figures.sums(self.t, self.n_types)
        return None if sums is None else sums[self.j]

    def present(self) -> np.ndarray:
        """The rows the submission has."""
        return self._pick(self.outcome.slot_line[self.t :: self.n_types] > 0)

    def weights(self) -> np.ndarray | None:
        """How many times each row counts in a mean where the rules weigh rows (missing = skip, repeated_key = all);
        None where each counts once."""
        weights = getattr(self.outcome, "weights", None)
        return None if weights is None else self._pick(weights[self.t :: self.n_types])

    def labels(self) -> np.ndarray:
        """The value shape's true value of each row."""
        return self._pick(self.outcome.labels[self.t :: self.n_types])

    @property
    def coverage(self) -> float:
        """coverage@K of this metric's K, counted by the pass (NaN where the pass has no catalogue)."""
        return self.outcome.coverage.get(self.metric.k, float("nan"))

    @property
    def side(self):
        """The pass's beyond-accuracy figures (scorer.engine.beyond.SideFigures), None without such metrics."""
        return self.outcome.side

    def _pick(self, values: np.ndarray) -> np.ndarray:
        return values if self.rows is None else values[self.rows]

    def item_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Items per row and the rows' presence (read once per type for every metric)."""
        counts, present = self.side.type_rows(self.outcome, self.t, self.n_types)
        return self._pick(counts), self._pick(present)

    def side_figure(self) -> np.ndarray:
        """The metric's side figure per row."""
        side = self.side
        return self._pick(side.slot_side[self.t :: self.n_types, side.columns[str(self.metric)]])

    def hit_masks(self) -> np.ndarray:
        """Per row the bit mask of the ranks that hit."""
        return self._pick(self.outcome.slot_hits[self.t :: self.n_types])

    def exposure(self) -> np.ndarray:
        """Exposure counts of the catalogue's listed items for this type (gini)."""
        side = self.side
        listed = side.items.popularity_rank < len(side.items.popularity)
        return side.exposure[side.columns[str(self.metric)], self.t][listed]
