"""Per-slot metric figures of a pass: stored by the kernel, or worked out from the hit-rank masks.

For binary relevance and cut-offs up to 63, a row's figures follow from its hit-rank mask and
|truth| alone, so the OTTO pass keeps one mask per slot instead of one float64 per slot and
metric: a uint32 where the cut-off is at most 32 (hits_dtype), else an int64. Most aggregates
need only the sum of a type's figures, which one kernel call per type works out with no per-row
array; the others get the figures of one (type, metric) column.
"""

from __future__ import annotations

import numpy as np

from scorer.kernels import door
from scorer.kernels.kinds import discounts, ideal_dcg
from scorer.spec.exact_sums import ExactSum, new_accumulators


def hits_dtype(kmax: int) -> type:
    """The narrowest dtype of the hit-rank masks of cut-off kmax that the kernels take: uint32 up to 32 ranks."""
    return np.uint32 if kmax <= 32 else np.int64


def hits_kernel(name: str, hits: np.ndarray):
    """The kernel `name` for masks of hits' dtype (the uint32 one is exported as name_uint32)."""
    return door.kernel(f"{name}_uint32" if hits.dtype == np.uint32 else name)


class SlotFigures:
    def __init__(self, kinds: np.ndarray, ks: np.ndarray, indptr: np.ndarray, hits: np.ndarray, stored: np.ndarray | None):
        """kinds, ks: row kind and cut-off per metric; indptr: the truth's CSR over slots (|truth| of slot s is
        indptr[s + 1] - indptr[s]); hits: hit-rank mask per slot; stored: (slots, metrics) figures, or None to
        derive them from hits."""
        self.kinds, self.ks, self.indptr, self.hits, self.stored = kinds, ks, indptr, hits, stored
        self._sums: dict[int, list[ExactSum]] = {}
        self._started: dict[int, list] = {}  # per type: its halves' sums under way (start_sums)
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
        return hits_kernel("figures_from_hits", hits)(hits, self.indptr[t:-1:n_types], self.indptr[t + 1 :: n_types],
                                                      self.kinds[j : j + 1], self.ks[j : j + 1], self.discount, self.ideal, out)[:, 0]

    def start_sums(self, n_types: int) -> None:
        """Set every type's sums going on two threads (each type in halves; the kernel lets go of the GIL), for sums() to
        collect: a pass starts them as it ends, so they run while the caller works out the truth's sizes. The halves'
        exact sums add up to the same bits as one sum."""
        if self.stored is not None or self._started or self._sums:
            return
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(2)
        self._started = {t: [pool.submit(self._type_sums, t, n_types, half) for half in (0, 1)] for t in range(n_types)}
        pool.shutdown(wait=False)  # its threads end once the sums are done

    def sums(self, t: int = 0, n_types: int = 1) -> list[ExactSum] | None:
        """Σ over the slots of type t of each metric's figures (exact sums, no per-row arrays), or None
        when the figures are stored (their aggregation sums the stored arrays)."""
        if self.stored is not None:
            return None
        if t not in self._sums:
            self.start_sums(n_types)  # every type's at once: the aggregate asks for each
            first, second = (future.result() for future in self._started.pop(t))
            self._sums[t] = [a + b for a, b in zip(first, second)]
        return self._sums[t]

    def _type_sums(self, t: int, n_types: int, half: int) -> list[ExactSum]:
        """The sums of the first (half 0) or second half of type t's slots."""
        hits, starts, ends = self.hits[t::n_types], self.indptr[t:-1:n_types], self.indptr[t + 1 :: n_types]
        cut = len(hits) // 2
        part = slice(0, cut) if half == 0 else slice(cut, len(hits))
        acc = hits_kernel("figure_sums", hits)(hits[part], starts[part], ends[part], self.kinds, self.ks, self.discount, self.ideal,
                                               new_accumulators(len(self.kinds)))
        return [ExactSum.of_buckets(buckets) for buckets in acc]

    def array(self) -> np.ndarray:
        """All figures, (slots, metrics) (derived ones made once, for the analyses that ask)."""
        if self.stored is not None:
            return self.stored
        if self._all is None:
            out = np.empty((len(self.hits), len(self.kinds)), np.float64)
            self._all = hits_kernel("figures_from_hits", self.hits)(self.hits, self.indptr[:-1], self.indptr[1:], self.kinds, self.ks,
                                                                    self.discount, self.ideal, out)
        return self._all
