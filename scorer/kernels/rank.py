"""Per-row ranking figures from the first k predictions of one row and its sorted truth.

A row is described by `relevant` (the item at rank i is a first occurrence and in the truth),
optional `gains` (the truth grade of the item at rank i; empty = binary relevance),
|truth| and the number of distinct items in the row. One figure per metric is written;
the aggregation over rows (micro / macro, denominators) is done by scorer.spec.metrics.
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scorer.kernels.exact_sum import add_exact
from scorer.kernels.kinds import ROW_AP, ROW_HITS, ROW_NDCG, ROW_NDCG_EXP, ROW_NONE, ROW_RR, ROW_SET_F1


@njit(cache=True, nogil=True, inline="always")
def locate(truth, start, end, value):
    """Index of value in the sorted truth[start:end], or -1."""
    lo, hi = start, end
    while lo < hi:
        mid = (lo + hi) >> 1
        if truth[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and truth[lo] == value:
        return lo
    return -1


@njit(cache=True, nogil=True, inline="always")
def contains(truth, start, end, value):
    """Is value in the sorted truth[start:end]?"""
    if end - start <= 16:
        for j in range(start, end):
            if truth[j] == value:
                return True
        return False
    return locate(truth, start, end, value) >= 0


@njit(cache=True, nogil=True)
def _gain(grade, exponential):
    """The gain of a grade: 2**grade - 1 when exponential, else the grade."""
    return 2.0**grade - 1.0 if exponential else grade


@njit(cache=True, nogil=True)
def row_figures(relevant, gains, n_items, n_truth, n_distinct, ideal_grades, kinds, ks, discount, ideal, out):
    """Write one figure per metric into out; relevant[i]: the (first-occurrence) item at rank i is a hit.

    gains[i] is the grade of the hit at rank i (empty: every hit has grade 1); ideal_grades holds the
    truth's grades sorted from best to worst (empty: all 1). With T the truth and k the cut-off:
    hits = Σ_{i≤k} rel_i;  AP = Σ_{i≤k} P@i·rel_i / min(k, |T|);  RR = 1 / first hit rank;
    NDCG = Σ_{i≤k} g(grade_i) / log2(i+1) ÷ Σ_{i≤min(k,|T|)} g(best grade_i) / log2(i+1), g(x) = x or 2^x − 1;
    set F1 = 2·hits / (n_distinct + |T|). A row with empty truth gets 0 for every figure.
    """
    graded = gains.shape[0] > 0
    for j in range(kinds.shape[0]):
        kind = kinds[j]
        k = ks[j]
        cut = min(k, n_items)
        hits = 0
        total = 0.0
        first = 0
        exponential = kind == ROW_NDCG_EXP
        for i in range(cut):
            if relevant[i]:
                hits += 1
                if first == 0:
                    first = i + 1
                if kind == ROW_AP:
                    total += hits / (i + 1.0)
                elif kind == ROW_NDCG or kind == ROW_NDCG_EXP:
                    total += (_gain(gains[i], exponential) if graded else 1.0) * discount[i]
        if n_truth == 0:
            out[j] = 0.0
        elif kind == ROW_HITS:
            out[j] = hits
        elif kind == ROW_AP:
            out[j] = total / min(k, n_truth)
        elif kind == ROW_NDCG or kind == ROW_NDCG_EXP:
            if ideal_grades.shape[0] == 0:
                out[j] = total / ideal[min(k, n_truth)]
            else:
                best = 0.0
                for i in range(min(k, ideal_grades.shape[0])):
                    best += _gain(ideal_grades[i], exponential) * discount[i]
                out[j] = total / best if best > 0.0 else 0.0
        elif kind == ROW_RR:
            out[j] = 1.0 / first if first > 0 else 0.0
        elif kind == ROW_SET_F1:
            out[j] = 2.0 * hits / (n_distinct + n_truth)
        else:
            out[j] = 0.0


@njit(cache=True, nogil=True)
def score_row(items, relevant, gains, n_items, truth_items, truth_grades, sorted_grades, t_start, t_end, kinds, ks, discount, ideal, out):
    """Figures of one row of item codes against the truth CSR row [t_start, t_end); returns the hit-rank mask.

    relevant[i] enters as "items[i] is a first occurrence" and leaves as "items[i] is a hit".
    truth_grades (parallel to truth_items) and sorted_grades (each CSR row's grades, best first) are
    empty for binary truth; gains is scratch of the same length as items. An empty out: mask only.
    """
    hit_ranks = np.int64(0)
    n_distinct = np.int64(0)
    graded = truth_grades.shape[0] > 0
    for r in range(n_items):
        n_distinct += relevant[r]
        if relevant[r]:
            at = locate(truth_items, t_start, t_end, items[r])
            relevant[r] = at >= 0
            if at >= 0:
                if graded:
                    gains[r] = truth_grades[at]
                if r < 63:
                    hit_ranks |= np.int64(1) << np.int64(r)
    if out.shape[0] < kinds.shape[0]:  # figures not kept: they are derived from the mask later
        return hit_ranks
    if graded:
        row_figures(relevant, gains, n_items, t_end - t_start, n_distinct, sorted_grades[t_start:t_end], kinds, ks, discount, ideal, out)
    else:
        # no grades: empty arrays, of the graded call's types (one compile of row_figures serves both)
        row_figures(relevant, gains[:0], n_items, t_end - t_start, n_distinct, sorted_grades[:0], kinds, ks, discount, ideal, out)
    return hit_ranks


@njit(cache=True, nogil=True, inline="always")
def _mask_figure(mask, n_truth, kind, k, discount, ideal):
    """The row figure of `kind` at cut-off k from a hit-rank mask and |truth|, walking the hit ranks in
    ascending order as row_figures does, so both give the same bits."""
    bits = mask if k >= 64 else mask & ((np.uint64(1) << np.uint64(k)) - np.uint64(1))
    if n_truth == 0 or bits == 0 or kind == ROW_NONE:
        return 0.0
    n_hits = 0
    total = 0.0
    first = 0
    while bits:
        rank = np.int64(trailing_zeros(bits))
        bits &= bits - np.uint64(1)
        n_hits += 1
        if first == 0:
            first = rank + 1
        if kind == ROW_AP:
            total += n_hits / (rank + 1.0)
        elif kind == ROW_NDCG or kind == ROW_NDCG_EXP:
            total += discount[rank]
    if kind == ROW_HITS:
        return float(n_hits)
    if kind == ROW_AP:
        return total / min(k, n_truth)
    if kind == ROW_RR:
        return 1.0 / first
    return total / ideal[min(k, n_truth)]


@njit(cache=True, nogil=True)
def figures_from_hits(hits, starts, ends, kinds, ks, discount, ideal, out):
    """out[i, j] = the row figure of metric j (kinds[j] at cut-off ks[j]) from hit-rank mask hits[i] and
    |truth| = ends[i] - starts[i]."""
    for i in range(hits.shape[0]):
        mask = np.uint64(hits[i])
        if mask == 0:  # most rows: no hit, and |truth| need not be read
            for j in range(kinds.shape[0]):
                out[i, j] = 0.0
            continue
        n_truth = np.int64(ends[i] - starts[i])
        for j in range(kinds.shape[0]):
            out[i, j] = _mask_figure(mask, n_truth, kinds[j], ks[j], discount, ideal)
    return out


@njit(cache=True, nogil=True)
def figure_sums(hits, starts, ends, kinds, ks, discount, ideal, acc):
    """acc[j] += every row's figure of metric j (as figures_from_hits), exactly (scorer.kernels.exact_sum); returns acc."""
    for i in range(hits.shape[0]):
        mask = np.uint64(hits[i])
        if mask == 0:
            continue
        n_truth = np.int64(ends[i] - starts[i])
        for j in range(kinds.shape[0]):
            add_exact(_mask_figure(mask, n_truth, kinds[j], ks[j], discount, ideal), acc, j)
    return acc
