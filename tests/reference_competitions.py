"""Slow, obvious implementations of the RecSys challenges' published definitions, one row at a time (no code shared
with scorer/). Each takes the truth and the submission as plain Python objects, as the definitions speak of them."""

from __future__ import annotations

import math


def trivago_mrr(truth: dict, rows: list) -> float:
    """trivago 2019 (score_submission/functions.py, March 2019): the submission's rows inner-joined to the truth on their
    key (a key given twice joins twice), each scoring 1/rank of the clicked item where it is listed exactly once, else 0;
    the mean over the joined rows. truth: key -> clicked item; rows: (key, items)."""
    scores = []
    for key, items in rows:
        if key not in truth:
            continue
        places = [rank for rank, item in enumerate(items, 1) if item == truth[key]]
        scores.append(1.0 / places[0] if len(places) == 1 else 0.0)
    return sum(scores) / len(scores) if scores else float("nan")


def _distinct(items: list) -> list:
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def spotify(targets: dict, predictions: dict, k: int = 500) -> tuple[float, float, float]:
    """The MPD challenge (metrics.py): per playlist R-precision (the set of the first R predictions, R = distinct
    targets), NDCG (the first k cut, then de-duplicated; binary gains) and clicks (⌊index of the first hit / 10⌋, k/10 + 1
    without one); a playlist without predictions scores 0 on all three; the means over the truth's playlists."""
    sums = [0.0, 0.0, 0.0]
    for pid, hidden in targets.items():
        if pid not in predictions:
            continue
        relevant = set(hidden)
        listed = predictions[pid][:k]
        r = len(relevant)
        sums[0] += len(set(listed[:r]) & relevant) / r
        dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(_distinct(listed)) if item in relevant)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, r)))
        sums[1] += dcg / ideal
        first = next((i for i, item in enumerate(listed) if item in relevant), None)
        sums[2] += first // 10 if first is not None else k / 10 + 1
    return tuple(total / len(targets) for total in sums)


def spotify_artist_r_precision(targets: dict, predictions: dict, artist_of: dict, k: int = 500) -> float:
    """The RecSys Challenge 2018 rules' R-precision: (|S_T ∩ G_T| + 0.25·|S_A ∩ G_A|) / |G_T| per playlist, G_T its
    distinct hidden tracks, S_T the first |G_T| of its first k predictions, G_A and S_A their artists (a track with no
    artist has none); a playlist without predictions scores 0; the mean over the truth's playlists."""
    total = 0.0
    for pid, hidden in targets.items():
        if pid not in predictions:
            continue
        g_t = set(hidden)
        s_t = set(predictions[pid][:k][: len(g_t)])
        g_a = {artist_of[track] for track in g_t if track in artist_of}
        s_a = {artist_of[track] for track in s_t if track in artist_of}
        total += (len(s_t & g_t) + 0.25 * len(s_a & g_a)) / len(g_t)
    return total / len(targets)


def is_track_uri(uri: bytes) -> bool:
    """verify_submission.py's check of a track (Python 2: a field of bytes): three fields at ':', 'spotify', 'track' and 22
    bytes."""
    fields = uri.split(b":")
    return len(fields) == 3 and fields[0] == b"spotify" and fields[1] == b"track" and len(fields[2]) == 22


def yoochoose(bought: dict, predicted: dict) -> float:
    """YooChoose 2015: Σ over the predicted sessions of |Sb|/|S| + Jaccard where the session bought, −|Sb|/|S| where it
    did not. bought: every test session -> its set of items (empty: no buy); predicted: session -> its set."""
    share = sum(1 for items in bought.values() if items) / len(bought)
    total = 0.0
    for session, items in predicted.items():
        if session not in bought:
            continue
        truth = bought[session]
        total += share + len(items & truth) / len(items | truth) if truth else -share
    return total


def apk(actual: list, predicted: list, k: int) -> float:
    """Kaggle's apk (benhamner/Metrics): a repeated prediction counts once, the denominator min(len(actual), k) with the
    truth's repeats."""
    score, hits = 0.0, 0
    for i, item in enumerate(predicted[:k]):
        if item in actual and item not in predicted[:i]:
            hits += 1
            score += hits / (i + 1.0)
    return score / min(len(actual), k) if actual else 0.0


def pr_auc(predictions: list, labels: list) -> float:
    """Area under the precision-recall curve by trapezoids, from (recall 0, precision 1), one point per distinct
    prediction from the highest (Twitter's compute_prauc)."""
    positives = sum(labels)
    points = [(0.0, 1.0)]
    for threshold in sorted(set(predictions), reverse=True):
        tp = sum(1 for p, y in zip(predictions, labels) if p >= threshold and y == 1)
        fp = sum(1 for p, y in zip(predictions, labels) if p >= threshold and y == 0)
        points.append((tp / positives, tp / (tp + fp)))
    return sum((r1 - r0) * (p0 + p1) / 2 for (r0, p0), (r1, p1) in zip(points, points[1:]))


def roc_auc(predictions: list, labels: list) -> float:
    """The share of (positive, negative) pairs with the positive predicted higher, ties one half."""
    pairs = [(p, q) for p, y in zip(predictions, labels) if y == 1 for q, z in zip(predictions, labels) if z == 0]
    return sum(1.0 if p > q else 0.5 if p == q else 0.0 for p, q in pairs) / len(pairs)


def log_loss_2020(predictions: list, labels: list) -> float:
    """scikit-learn's log_loss as of 2020: each prediction clipped to [1e-15, 1 − 1e-15]."""
    eps = 1e-15
    total = 0.0
    for p, y in zip(predictions, labels):
        p = min(max(p, eps), 1 - eps)
        total -= math.log(p if y == 1 else 1 - p)
    return total / len(labels)


def rce(predictions: list, labels: list) -> float:
    """Twitter's compute_rce: (1 − CE / CE of the positive rate for every row) · 100."""
    rate = sum(labels) / len(labels)
    return (1 - log_loss_2020(predictions, labels) / log_loss_2020([rate] * len(labels), labels)) * 100
