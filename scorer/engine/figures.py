"""Per-slot metric figures of a pass: stored by the kernel, or worked out from the hit-rank masks.

For binary relevance and cut-offs up to 63, a row's figures follow from its hit-rank mask and
|truth| alone, so the OTTO pass keeps one int64 per slot instead of one float64 per slot and
metric. Most aggregates need only the sum of a type's figures, which one kernel call per type
works out with no per-row array; the others get the figures of one (type, metric) column.
"""

from __future__ import annotations

import numpy as np

from scorer.kernels import door
from scorer.kernels.kinds import discounts, ideal_dcg
from scorer.spec.exact_sums import ExactSum, new_accumulators


class SlotFigures:
    def __init__(self, kinds: np.ndarray, ks: np.ndarray, indptr: np.ndarray, hits: np.ndarray, stored: np.ndarray | None):
        """kinds, ks: row kind and cut-off per metric; indptr: the truth's CSR over slots (|truth| of slot s is
        indptr[s + 1] - indptr[s]); hits: hit-rank mask per slot; stored: (slots, metrics) figures, or None to
        derive them from hits."""
        self.kinds, self.ks, self.indptr, self.hits, self.stored = kinds, ks, indptr, hits, stored
        self._sums: dict[int, list[ExactSum]] = {}
        self._all: np.ndarray | None = None
        kmax = int(ks.max()) if len(ks) else 1
        self.discount, self.ideal = discounts(kmax), ideal_dcg(kmax)

    @classmethod
    def of(cls, competition, indptr: np.ndarray, hits: np.ndarray, stored: np.ndarray | None) -> SlotFigures:
        """The figures of a competition's metrics; stored is None, or (slots, metrics) figures."""
        return cls(*competition.row_kinds(), indptr, hits, stored)

    def column(self, j: int, t: int = 0, n_types: int = 1) -> np.ndarray:
        """Figures of metric j for the slots of type t (every n_types-th slot from t)."""
        if self.stored is not None:
            return self.stored[t::n_types, j]
        hits = self.hits[t::n_types]
        out = np.empty((len(hits), 1), np.float64)
        return door.kernel("figures_from_hits")(hits, self.indptr[t:-1:n_types], self.indptr[t + 1 :: n_types], self.kinds[j : j + 1],
                                           self.ks[j : j + 1], self.discount, self.ideal, out)[:, 0]

    def sums(self, t: int = 0, n_types: int = 1) -> list[ExactSum] | None:
        """Σ over the slots of type t of each metric's figures (exact sums, no per-row arrays), or None
        when the figures are stored (their aggregation sums the stored arrays)."""
        if self.stored is not None:
            return None
        if t not in self._sums:
            if n_types == 1:
                self._sums[t] = self._type_sums(t, n_types)
            else:  # every type's at once, on threads (the kernel lets go of the GIL): the aggregate asks for each
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(min(n_types, 2)) as pool:
                    self._sums.update(zip(range(n_types), pool.map(self._type_sums, range(n_types), [n_types] * n_types)))
        return self._sums[t]

    def _type_sums(self, t: int, n_types: int) -> list[ExactSum]:
        acc = door.kernel("figure_sums")(self.hits[t::n_types], self.indptr[t:-1:n_types], self.indptr[t + 1 :: n_types],
                                    self.kinds, self.ks, self.discount, self.ideal, new_accumulators(len(self.kinds)))
        return [ExactSum.of_buckets(buckets) for buckets in acc]

    def array(self) -> np.ndarray:
        """All figures, (slots, metrics) (derived ones made once, for the analyses that ask)."""
        if self.stored is not None:
            return self.stored
        if self._all is None:
            out = np.empty((len(self.hits), len(self.kinds)), np.float64)
            self._all = door.kernel("figures_from_hits")(self.hits, self.indptr[:-1], self.indptr[1:], self.kinds, self.ks, self.discount,
                                                    self.ideal, out)
        return self._all
