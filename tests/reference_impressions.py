"""Slow, obvious implementations of the impression shape's metrics and rules, from their published definitions (no code
shared with scorer/): an impression is (labels, scores); its order puts the highest score first, equal scores in
the order `order(scores)` gives (the evaluators': np.argsort(scores)[::-1]).

- AUC (scikit-learn's roc_auc_score): the share of (clicked, not clicked) pairs whose clicked candidate has the higher
  score, a tie counting one half.
- MRR (MIND's and ebrec's mrr_score): Σ over the clicked of 1 / position, over the number clicked.
- nDCG@k (their ndcg_score): Σ over the first k positions of (2^label − 1) / log2(position + 1), over the same sum
  for the labels sorted best first.
- The rules of MIND's evaluate.py: a truth line with an empty list is skipped (its submission line is not read); a
  submission that ends early has each impression left scored with every rank 1; the mean over the others.
"""

from __future__ import annotations

import math


def later_first(scores):
    """Positions, best first, equal scores the later candidate first (what np.argsort(...)[::-1] gives for up to 16)."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], -i))


def auc(labels, scores):
    clicked = [s for s, y in zip(scores, labels) if y]
    unclicked = [s for s, y in zip(scores, labels) if not y]
    right = sum(1.0 if c > u else 0.5 if c == u else 0.0 for c in clicked for u in unclicked)
    return right / (len(clicked) * len(unclicked))


def mrr(labels, scores, order=later_first):
    ranked = [labels[i] for i in order(scores)]
    return sum(y / (p + 1) for p, y in enumerate(ranked)) / sum(labels)


def dcg(gains_in_order, k):
    return sum((2**g - 1) / math.log2(p + 2) for p, g in enumerate(gains_in_order[:k]))


def ndcg(labels, scores, k, order=later_first):
    ranked = [labels[i] for i in order(scores)]
    return dcg(ranked, k) / dcg(sorted(labels, reverse=True), k)


def figures(labels, ranks, order=later_first):
    """(auc, mrr, ndcg@5, ndcg@10) of one impression whose candidates have these ranks (score 1 / rank)."""
    scores = [1.0 / r for r in ranks]
    return auc(labels, scores), mrr(labels, scores, order), ndcg(labels, scores, 5, order), ndcg(labels, scores, 10, order)


def score(truth, lines, order=later_first):
    """MIND's procedure: truth is [(id, labels)], lines the submission's [(id, ranks)] in order (it may end early).
    Returns the four means, or None where the evaluator stops (an id out of order, a rank count that differs)."""
    rows = []
    for index, (impression, labels) in enumerate(truth):
        if not labels:
            continue
        given = lines[index] if index < len(lines) else (impression, [1] * len(labels))
        if given[0] != impression or len(given[1]) != len(labels):
            return None
        rows.append(figures(labels, given[1], order))
    return tuple(sum(row[j] for row in rows) / len(rows) for j in range(4))
