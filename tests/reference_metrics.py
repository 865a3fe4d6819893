"""Slow, obvious implementations of every ranking metric, one row at a time (no code shared with scorer/).

A row is (predictions: list, truth: dict item -> grade). Binary truth has grade 1 for every item.
Repeated predictions count once, at their first rank. mean_over() averages a per-row function over
the rows with truth (empty="skip") or over every row (empty="zero", where empty truth scores 0).
"""

from __future__ import annotations

import math


def first_k(predictions, k):
    """The first k predictions, with later repeats replaced by None (they waste their slot)."""
    seen, out = set(), []
    for item in predictions[:k]:
        out.append(None if item in seen else item)
        seen.add(item)
    return out


def hits(predictions, truth, k):
    return sum(1 for item in first_k(predictions, k) if item is not None and item in truth)


def recall(predictions, truth, k, denominator="min"):
    return hits(predictions, truth, k) / (min(k, len(truth)) if denominator == "min" else len(truth))


def precision(predictions, truth, k):
    return hits(predictions, truth, k) / k


def hitrate(predictions, truth, k):
    return 1.0 if hits(predictions, truth, k) > 0 else 0.0


def f1_at_k(predictions, truth, k):
    p, r = hits(predictions, truth, k) / k, hits(predictions, truth, k) / len(truth)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def f1_set(predictions, truth):
    predicted = set(predictions)
    common = len(predicted & set(truth))
    if common == 0:
        return 0.0
    p, r = common / len(predicted), common / len(truth)
    return 2 * p * r / (p + r)


def average_precision(predictions, truth, k, denominator="min"):
    """Kaggle's apk (benhamner/Metrics): Σ P@i over the ranks of new hits ÷ min(k, |T|) (or |T|)."""
    score, found = 0.0, 0
    for rank, item in enumerate(first_k(predictions, k), 1):
        if item is not None and item in truth:
            found += 1
            score += found / rank
    return score / (min(k, len(truth)) if denominator == "min" else len(truth))


def reciprocal_rank(predictions, truth, k):
    for rank, item in enumerate(first_k(predictions, k), 1):
        if item is not None and item in truth:
            return 1.0 / rank
    return 0.0


def ndcg(predictions, truth, k, gain="linear"):
    g = (lambda x: x) if gain == "linear" else (lambda x: 2.0**x - 1.0)
    dcg = sum(g(truth[item]) / math.log2(rank + 1)
              for rank, item in enumerate(first_k(predictions, k), 1) if item is not None and item in truth)
    best = sorted(truth.values(), reverse=True)[:k]
    idcg = sum(g(grade) / math.log2(rank + 1) for rank, grade in enumerate(best, 1))
    return dcg / idcg if idcg > 0 else 0.0


def mean_over(rows, figure, empty="skip"):
    values = [figure(p, t) if t else 0.0 for p, t in rows if t or empty == "zero"]
    return sum(values) / len(values) if values else float("nan")


def micro_recall(rows, k, denominator="min"):
    num = sum(hits(p, t, k) for p, t in rows if t)
    den = sum(min(k, len(t)) if denominator == "min" else len(t) for p, t in rows if t)
    return num / den if den else float("nan")


def value(metric_name: str, k: int | None, options: dict, rows) -> float:
    """The reference value of a metric (by its registry name and options) over rows."""
    empty = options.get("empty", "skip")
    if metric_name == "recall":
        denominator = options.get("denominator", "min")
        if options.get("average", "micro") == "micro":
            return micro_recall(rows, k, denominator)
        return mean_over(rows, lambda p, t: recall(p, t, k, denominator), empty)
    figures = {
        "precision": lambda p, t: precision(p, t, k),
        "hitrate": lambda p, t: hitrate(p, t, k),
        "f1@k": lambda p, t: f1_at_k(p, t, k),
        "f1": lambda p, t: f1_set(p, t),
        "map": lambda p, t: average_precision(p, t, k, options.get("denominator", "min")),
        "ndcg": lambda p, t: ndcg(p, t, k, options.get("gain", "linear")),
        "mrr@k": lambda p, t: reciprocal_rank(p, t, k),
    }
    return mean_over(rows, figures[metric_name], empty)
