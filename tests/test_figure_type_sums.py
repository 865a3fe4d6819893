"""SlotFigures.sums works out every type's sums at once (on two threads, each type in halves): each equals that type's
own kernel sums in one call, to the last bit."""

import numpy as np

from scorer.engine.figures import SlotFigures
from scorer.kernels import door
from scorer.kernels.kinds import ROW_AP, ROW_HITS, ROW_NDCG, ROW_RR, discounts, ideal_dcg
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.spec.exact_sums import ExactSum, new_accumulators


def test_the_sums_of_every_type_equal_each_types_own():
    rng = np.random.default_rng(7)
    n_types, n_slots = 3, 3000
    kinds = np.array([ROW_HITS, ROW_AP, ROW_NDCG, ROW_RR], np.int64)
    ks = np.full(len(kinds), 20, np.int64)
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 4, n_slots))]).astype(INDPTR_DTYPE)
    hits = rng.integers(0, 1 << 20, n_slots).astype(np.int64)
    together = SlotFigures(kinds, ks, indptr, hits, None)
    for t in range(n_types):
        acc = door.kernel("figure_sums")(hits[t::n_types], indptr[t:-1:n_types], indptr[t + 1 :: n_types], kinds, ks, discounts(20),
                                         ideal_dcg(20), new_accumulators(len(kinds)))
        expected = [ExactSum.of_buckets(buckets) for buckets in acc]
        assert together.sums(t, n_types) == expected
        one_type = SlotFigures(kinds, ks, np.concatenate([[0], np.cumsum(np.diff(indptr)[t::n_types])]).astype(INDPTR_DTYPE),
                               np.ascontiguousarray(hits[t::n_types]), None)
        assert together.sums(t, n_types) == one_type.sums()
    assert sorted(together._sums) == list(range(n_types))
