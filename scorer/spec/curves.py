"""Figures of all the rows at once, from each row's prediction and its true label (0 or 1): the value shape's
classification metrics, as scikit-learn defines them (Twitter's RecSys Challenge 2020 scored PR-AUC and RCE with it).

Rows are ordered by prediction, highest first; rows of equal prediction form one threshold (scikit-learn's
_binary_clf_curve). With tp_i and fp_i the positives and negatives at or above threshold i (P, N in all):

- roc_auc = Σ_i (fp_i − fp_{i−1}) (tp_i + tp_{i−1}) / 2 ÷ (P·N): the trapezoids of the ROC curve (roc_auc_score), ties
  counting one half; summed as integers, so the figure is the exactly rounded area;
- pr_auc = the trapezoids of the precision-recall curve from (recall 0, precision 1) (auc(recall, precision) of
  precision_recall_curve: Twitter's compute_prauc), precision_i = tp_i / (tp_i + fp_i), recall_i = tp_i / P;
- average_precision = Σ_i (recall_i − recall_{i−1}) · precision_i (average_precision_score: no interpolation);
- log_loss = mean of −ln q, q the predicted probability of the true label after scikit-learn's rule of 2020: the
  prediction clipped to [1e-15, 1 − 1e-15], the pair (1 − p, p) divided by its sum (later releases clip to the dtype's
  machine epsilon instead);
- rce = (1 − log_loss / log_loss of the positive rate predicted for every row) · 100 (Twitter's compute_rce).

Each is NaN without rows, where a label is neither 0 nor 1, or where only one label occurs (scikit-learn raises there).
"""

from __future__ import annotations

import numpy as np

NAN = float("nan")
EPS_2020 = 1e-15  # log_loss's clipping in scikit-learn up to 1.2 (its `eps` argument's default)


def _binary(labels: np.ndarray) -> np.ndarray | None:
    """Labels as 0/1 integers, None unless every label is 0 or 1 and both occur."""
    if len(labels) == 0 or not np.isin(labels, (0.0, 1.0)).all():
        return None
    positives = labels == 1.0
    return positives.astype(np.int64) if 0 < np.count_nonzero(positives) < len(labels) else None


def thresholds(predictions: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tp, fp) at each distinct prediction, highest first: the rows at or above it that are positive and negative."""
    order = np.argsort(-np.asarray(predictions, np.float64), kind="mergesort")
    ranked, truth = predictions[order], labels[order]
    last = np.r_[np.flatnonzero(np.diff(ranked)), len(ranked) - 1]  # the last row of each threshold
    tp = np.cumsum(truth)[last]
    return tp, last + 1 - tp


def roc_auc(predictions: np.ndarray, labels: np.ndarray) -> float:
    truth = _binary(labels)
    if truth is None:
        return NAN
    tp, fp = thresholds(predictions, truth)
    tp0, fp0 = np.r_[0, tp], np.r_[0, fp]
    doubled = int((np.diff(fp0) * (tp0[1:] + tp0[:-1])).sum())  # 2 · area · P · N, an exact integer
    return doubled / (2 * int(tp[-1]) * int(fp[-1]))


def _precision_recall(predictions: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """precision_recall_curve's (precision, recall), recall decreasing, ending at (1, 0); None where undefined."""
    truth = _binary(labels)
    if truth is None:
        return None
    tp, fp = thresholds(predictions, truth)
    tp, fp = tp.astype(np.float64), fp.astype(np.float64)
    precision = tp / (tp + fp)
    recall = tp / tp[-1]
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0]


def pr_auc(predictions: np.ndarray, labels: np.ndarray) -> float:
    curve = _precision_recall(predictions, labels)
    if curve is None:
        return NAN
    precision, recall = curve
    return float(-np.sum(np.diff(recall) * (precision[1:] + precision[:-1]) / 2.0))  # np.trapz's terms; recall decreases


def average_precision(predictions: np.ndarray, labels: np.ndarray) -> float:
    curve = _precision_recall(predictions, labels)
    if curve is None:
        return NAN
    precision, recall = curve
    return float(-np.sum(np.diff(recall) * precision[:-1]))


def _cross_entropy(predictions: np.ndarray, truth: np.ndarray) -> float:
    """scikit-learn's log_loss of 2020 for binary labels (truth 0/1) and the probabilities of label 1."""
    clipped = np.clip(np.asarray(predictions, np.float64), EPS_2020, 1 - EPS_2020)
    other = 1 - clipped
    total = other + clipped  # the row's sum, renormalised by as scikit-learn did
    chosen = np.where(truth == 1, clipped, other) / total
    return float(np.mean(-np.log(chosen)))


def log_loss(predictions: np.ndarray, labels: np.ndarray) -> float:
    truth = _binary(labels)
    return NAN if truth is None else _cross_entropy(predictions, truth)


def rce(predictions: np.ndarray, labels: np.ndarray) -> float:
    truth = _binary(labels)
    if truth is None:
        return NAN
    rate = np.count_nonzero(truth) / float(len(truth))
    return (1.0 - _cross_entropy(predictions, truth) / _cross_entropy(np.full(len(truth), rate), truth)) * 100.0
