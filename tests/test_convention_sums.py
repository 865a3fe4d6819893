"""scorer.kernels.conventions.convention_sums against a literal reading of its rules, row by row and step by step.

The kernel sums the simple rows (one hit mask under every rule, |T| <= K) by base, once, and merges their first rows
into each regrouped step's; the reference below computes every row under every step, as the module's docstring
defines them, so the sums, the rows each step changes and the first of them must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from scorer.analytics.explain.conventions import OTTO_TYPES
from scorer.analytics.explain.published import _Steps, choose
from scorer.kernels.conventions import convention_sums
from scorer.kernels.explain_layout import (
    BASE_MAP,
    BASE_NDCG,
    BASE_PRECISION,
    BASE_RECALL,
    RULE_DENOM_TRUTH,
    RULE_ITEM0_DROPPED,
    RULE_NO_PREDICTIONS_SKIPPED,
    RULE_PER_ROW_MEAN,
    RULE_REPEATS_COLLAPSED,
    RULE_REPEATS_TWICE,
)


def _ranks(mask: int) -> list[int]:
    return [r for r in range(63) if mask >> r & 1]


def _collapsed(first: int, repeats: int) -> int:
    """first's ranks in the list with its repeats taken out."""
    return sum(1 << (r - len([q for q in _ranks(repeats) if q < r])) for r in _ranks(first))


def _reference(rows, k, base, rules, prev, regroups, width):
    discount = [1.0 / np.log2(r + 2.0) for r in range(64)]
    n_steps = len(base)
    sums, counts, shown = np.zeros((n_steps, 3)), np.zeros((n_steps, 2), np.int64), [[] for _ in range(n_steps)]
    for i, (first, again, repeats, n_items, size, zero_label) in enumerate(rows):
        seen = []
        for s in range(n_steps):
            if rules[s] & RULE_REPEATS_TWICE:
                mask = first | again
            elif rules[s] & RULE_REPEATS_COLLAPSED:
                mask = _collapsed(first, repeats)
            else:
                mask = first
            ranks = _ranks(mask & ((1 << k) - 1))
            figure = {BASE_RECALL: len(ranks), BASE_PRECISION: len(ranks), BASE_MAP: sum((j + 1) / (r + 1) for j, r in enumerate(ranks)),
                      BASE_NDCG: sum(discount[r] for r in ranks)}[base[s]]
            shortest = min(k, size)
            den = {BASE_RECALL: size if rules[s] & RULE_DENOM_TRUTH else shortest, BASE_MAP: size if rules[s] & RULE_DENOM_TRUTH else shortest,
                   BASE_PRECISION: k, BASE_NDCG: sum(discount[:shortest])}[base[s]]
            skipped = (rules[s] & RULE_NO_PREDICTIONS_SKIPPED and n_items == 0) or (rules[s] & RULE_ITEM0_DROPPED and zero_label)
            counts_row = size > 0 and not skipped
            ratio = figure / den if figure else 0.0
            if counts_row:
                sums[s] += (figure, den, ratio)
                counts[s, 0] += 1
            seen.append((counts_row, figure, den, ratio))
            p = prev[s]
            if p >= 0:
                pooled = base[s] == BASE_RECALL and not rules[s] & RULE_PER_ROW_MEAN
                before = seen[p]
                changed = before[0] != counts_row or (counts_row and (
                    ((figure, den) != before[1:3] if pooled else ratio != before[3]) or (regroups[s] and figure > 0)))
                if changed:
                    counts[s, 1] += 1
                    shown[s].append(i)
    return sums, counts, [first_rows[:width] for first_rows in shown]


@pytest.mark.parametrize("seed", range(4))
def test_convention_sums_is_the_rules_row_by_row(seed):
    rng = np.random.default_rng(seed)
    k, width, n = 5, 3, 400
    rows = []
    for _ in range(n):
        n_items = int(rng.choice([0, 3, 8, 63]))
        repeats = int(rng.choice([0, 0, 0, 1 << int(rng.integers(1, 10))]))
        hits = sum(1 << int(r) for r in rng.choice(12, size=int(rng.integers(0, 4)), replace=False))
        rows.append((hits & ~repeats, hits & repeats, repeats, n_items, int(rng.integers(1, 9)), bool(rng.random() < 0.1)))
    steps = _Steps()
    for convention in choose(None, OTTO_TYPES):
        for metric in convention.metrics:
            steps.chain(metric.base, metric.rules)
    step_arrays = steps.arrays()
    first, again, repeats, n_items, sizes, zero_label = zip(*rows)
    columns = [np.bitwise_or(first, again, dtype=np.int64), np.array(repeats, np.int64), np.array(n_items, np.uint8), np.array(sizes, np.int32),
               np.array(zero_label, np.bool_)]
    sums = np.zeros((len(steps.base), 3))
    counts = np.zeros((len(steps.base), 2), np.int64)
    shown = np.full((len(steps.base), width), -1, np.int64)
    convention_sums(*columns, np.int64(k), *step_arrays, sums, counts, shown)

    want_sums, want_counts, want_shown = _reference(rows, k, *step_arrays, width)
    simple_with_hits = [i for i, row in enumerate(rows) if 0 < row[4] <= k and row[3] > 0 and not row[5] and not row[1] | row[2]
                        and row[0] & ((1 << k) - 1)]
    assert len(simple_with_hits) > width and counts[:, 1].max() > width  # the merge of the first rows is exercised
    np.testing.assert_allclose(sums, want_sums, rtol=1e-12, atol=1e-12)
    assert counts.tolist() == want_counts.tolist()
    assert [[i for i in row if i >= 0] for row in shown.tolist()] == want_shown
