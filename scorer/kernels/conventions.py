"""The figures of one type's rows under each published convention, and the rows each of its rules changes.

A convention's metric is one of ours (BASE_*) with rules applied one after the other (RULE_* bits, in
scorer.analytics.explain.conventions). A *step* is a base metric and a set of rules; step s's value differs from
step prev[s]'s by one rule. For each step the kernel sums, over the rows it averages, the row's numerator,
denominator and their ratio, and counts the rows whose figure (or whether they count) differs from prev[s]'s.

Per row (from scorer.kernels.explain_rows): masks of 0-based ranks < 63 — `hit_masks` (a truth item), `repeats`
(any item repeated), so `first` = hit_masks & ~repeats (a truth item's first occurrence) and `again` = hit_masks &
repeats (a truth item repeated) — the items read, and |T|.
Hits within K, by rule: ours `first`; REPEATS_TWICE `first | again` (every occurrence of a truth item is a
hit); REPEATS_COLLAPSED `first` at ranks with the repeats before them taken out (a run is a dict: a repeat
takes no slot). With h hits at 0-based ranks r_1 < r_2 < ...:
  recall    h / d               d = min(K, |T|), or |T| under DENOM_TRUTH; pooled Σh / Σd unless PER_ROW_MEAN
  precision h / K
  AP        Σ_j (j / (r_j + 1)) / d
  NDCG      Σ_j 1 / log2(r_j + 2)  /  Σ_{r < min(K, |T|)} 1 / log2(r + 2)
Rows: those with truth; NO_PREDICTIONS_SKIPPED leaves out rows with no item, ITEM0_DROPPED rows whose
label is item 0 (`zero_label`).
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scorer.kernels.explain_layout import (
    BASE_MAP,
    BASE_NDCG,
    BASE_PRECISION,
    BASE_RECALL,
    N_BASES,
    N_ROWS,
    N_TOUCHED,
    RULE_DENOM_TRUTH,
    RULE_ITEM0_DROPPED,
    RULE_NO_PREDICTIONS_SKIPPED,
    RULE_PER_ROW_MEAN,
    RULE_REPEATS_COLLAPSED,
    RULE_REPEATS_TWICE,
    SUM_DEN,
    SUM_NUM,
    SUM_RATIO,
)


@njit(cache=True, nogil=True)
def _collapse(first, repeats):
    """`first` with each bit moved down past the repeats before it (the list without its repeats)."""
    out = np.int64(0)
    bits = first
    while bits != 0:
        r = np.int64(trailing_zeros(bits))
        bits &= bits - 1
        before = repeats & ((np.int64(1) << r) - 1)
        moved = r
        while before != 0:
            before &= before - 1
            moved -= 1
        out |= np.int64(1) << moved
    return out


@njit(cache=True, nogil=True, inline="always")
def _figures(mask, discount):
    """(hits, Σ precision at the hits, DCG) of a hit mask."""
    hits = 0
    precision = 0.0
    dcg = 0.0
    bits = mask
    while bits != 0:
        r = np.int64(trailing_zeros(bits))
        bits &= bits - 1
        hits += 1
        precision += hits / (r + 1.0)
        dcg += discount[r]
    return hits, precision, dcg


@njit(cache=True, nogil=True)
def _numerator(base, hits, precision, dcg):
    """A row's numerator under a base metric, from its mask's figures (_figures)."""
    if base == BASE_MAP:
        return float(precision)
    if base == BASE_NDCG:
        return float(dcg)
    return float(hits)  # recall and precision


@njit(cache=True, nogil=True)
def _denominator(base, k, d, ideal_dcg):
    """A row's denominator under a base metric: K for precision, the ideal DCG of min(K, |T|) items for NDCG, else d
    (min(K, |T|), or |T| under DENOM_TRUTH)."""
    if base == BASE_PRECISION:
        return float(k)
    if base == BASE_NDCG:
        return float(ideal_dcg)
    return float(d)


@njit(cache=True, nogil=True)
def convention_sums(hit_masks, repeats, n_items, sizes, zero_label, k, step_base, step_rules, step_prev, step_regroups,
                    sums, counts, shown):
    """Sum the rows of one type under every step (see the module's docstring); shown[s] gets the indices of the first
    rows step s changes: rows that start or stop counting, or whose contribution changes (numerator and denominator of
    a pooled metric, the ratio of a mean). step_regroups[s]: step s averages differently from prev[s] (a row with a hit
    counts as changed)."""
    n_steps = step_base.shape[0]
    discount = np.zeros(64)
    ideal = np.zeros(65)
    for r in range(64):
        discount[r] = 1.0 / np.log2(r + 2.0)
        ideal[r + 1] = ideal[r] + (discount[r] if r < k else 0.0)
    mask_of = np.zeros(n_steps, np.int64)  # which hit mask: 0 ours, 1 repeats twice, 2 repeats collapsed
    pooled = np.zeros(n_steps, np.bool_)
    for s in range(n_steps):
        rules = step_rules[s]
        mask_of[s] = 1 if (rules & RULE_REPEATS_TWICE) != 0 else (2 if (rules & RULE_REPEATS_COLLAPSED) != 0 else 0)
        pooled[s] = step_base[s] == BASE_RECALL and (rules & RULE_PER_ROW_MEAN) == 0
    within = (np.int64(1) << np.int64(k)) - 1
    counted = np.zeros(n_steps, np.bool_)
    nums = np.zeros(n_steps)
    dens = np.zeros(n_steps)
    ratios = np.zeros(n_steps)
    figures = np.zeros((3, 3))  # per hit mask: hits, Σ precision at the hits, DCG
    # Simple rows: 0 < |T| <= K, items read, no label 0, and one hit mask under every rule (no hit, or no repeat). Every
    # step of a base gives such a row the same figure and the same denominator, so they are summed by base, once: by
    # |T| (the denominators), and for the rows with a hit within K, each base's numerator and ratio. Their only change
    # from a step before is a regrouped mean's (a row with a hit), counted here and its first rows kept in order.
    simple = np.zeros(k + 1, np.int64)
    simple_nums = np.zeros(N_BASES)
    simple_ratios = np.zeros(N_BASES)
    simple_hits = 0
    simple_first = np.full(shown.shape[1], -1, np.int64)
    for i in range(hit_masks.shape[0]):
        size = np.int64(sizes[i])
        first = hit_masks[i] & ~repeats[i]  # a truth item's first occurrence
        quiet = hit_masks[i] == 0  # no hit under any rule
        if 0 < size <= k and n_items[i] > 0 and not zero_label[i] and (quiet or repeats[i] == 0):
            simple[size] += 1
            if not quiet:
                hits, precision, dcg = _figures(first & within, discount)
                if hits > 0:
                    for base in range(N_BASES):
                        num = _numerator(base, hits, precision, dcg)
                        simple_nums[base] += num
                        simple_ratios[base] += num / _denominator(base, k, size, ideal[size])
                    if simple_hits < simple_first.shape[0]:
                        simple_first[simple_hits] = i
                    simple_hits += 1
            continue
        if not quiet:
            for m in range(3):
                mask = first
                if m == 1:
                    mask = hit_masks[i]
                elif m == 2 and repeats[i] != 0:
                    mask = _collapse(first, repeats[i])
                hits, precision, dcg = _figures(mask & within, discount)
                figures[m, 0] = hits
                figures[m, 1] = precision
                figures[m, 2] = dcg
        shortest = min(k, size)
        for s in range(n_steps):
            rules = step_rules[s]
            skipped = ((rules & RULE_NO_PREDICTIONS_SKIPPED) != 0 and n_items[i] == 0) or ((rules & RULE_ITEM0_DROPPED) != 0 and zero_label[i])
            counts_row = size > 0 and not skipped
            base = step_base[s]
            den = _denominator(base, k, size if (rules & RULE_DENOM_TRUTH) != 0 else shortest, ideal[shortest])
            num = 0.0
            if not quiet:
                m = mask_of[s]
                num = _numerator(base, figures[m, 0], figures[m, 1], figures[m, 2])
            ratio = num / den if num != 0.0 else 0.0
            if counts_row:
                sums[s, SUM_NUM] += num
                sums[s, SUM_DEN] += den
                sums[s, SUM_RATIO] += ratio
                counts[s, N_ROWS] += 1
            p = step_prev[s]
            if p >= 0:
                changed = counted[p] != counts_row
                if counts_row and not changed:
                    changed = (num != nums[p] or den != dens[p]) if pooled[s] else ratio != ratios[p]
                    changed = changed or (step_regroups[s] and num > 0)
                if changed:
                    if counts[s, N_TOUCHED] < shown.shape[1]:
                        shown[s, counts[s, N_TOUCHED]] = i
                    counts[s, N_TOUCHED] += 1
            counted[s] = counts_row
            nums[s] = num
            dens[s] = den
            ratios[s] = ratio
    for s in range(n_steps):  # the simple rows, after the others: the steps of a base add the same sums
        base = step_base[s]
        sums[s, SUM_NUM] += simple_nums[base]
        sums[s, SUM_RATIO] += simple_ratios[base]
        for size in range(1, k + 1):
            sums[s, SUM_DEN] += simple[size] * _denominator(base, k, size, ideal[size])
            counts[s, N_ROWS] += simple[size]
        if step_prev[s] >= 0 and step_regroups[s] and simple_hits > 0:
            _merge_first(shown[s], min(counts[s, N_TOUCHED], shown.shape[1]), simple_first, min(simple_hits, shown.shape[1]))
            counts[s, N_TOUCHED] += simple_hits


@njit(cache=True, nogil=True)
def _merge_first(kept, n_kept, more, n_more):
    """kept[:n_kept] and more[:n_more], two ascending lists of row indices, merged into kept, the first of them."""
    merged = np.empty(kept.shape[0], np.int64)
    a = b = 0
    for j in range(min(kept.shape[0], n_kept + n_more)):
        if b >= n_more or (a < n_kept and kept[a] < more[b]):
            merged[j] = kept[a]
            a += 1
        else:
            merged[j] = more[b]
            b += 1
    kept[: a + b] = merged[: a + b]
