"""Slow, literal re-implementations of the published evaluators `scorer explain` models (written from their text, not copied).

Each takes plain Python lists: the ranked items of a row and its truth. They are the references of
tests/test_explain.py where the library itself cannot be installed here (OTTO's evaluate.py is a script, not a
package; benhamner's ml_metrics is Python 2 era; microsoft/recommenders pins older numpy and pandas).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd


def otto_evaluate(label_lines: list[str], prediction_lines: list[str], k: int = 20, before_d1e176b: bool = False) -> dict:
    """otto-de/recsys-dataset src/evaluate.py's get_scores, step by step: predictions keyed by session then type (a later
    row replaces an earlier one), labels with `clicks` an int and carts/orders sets, a type counted only where its label
    is truthy (so a click on item 0 counts nowhere), hits within the first k, denominators min(|labels|, k).
    evaluate_session asks whether the session's prediction has the type and it is not empty (commit d1e176b, December
    2022); before_d1e176b: it read prediction[type] unasked, a KeyError for a type the session's rows lack."""
    predictions: dict = {}
    for line in prediction_lines:
        row_id, items = line.strip().split(",")
        session, kind = row_id.split("_")
        predictions.setdefault(int(session), {})[kind] = [int(item) for item in items.split(" ")] if items != "" else []
    labels = {}
    for line in label_lines:
        record = json.loads(line)
        labels[record["session"]] = {"clicks": record["labels"].get("clicks", None), "carts": set(record["labels"].get("carts", [])),
                                     "orders": set(record["labels"].get("orders", []))}
    hits = {"clicks": 0.0, "carts": 0.0, "orders": 0.0}
    events = {"clicks": 0, "carts": 0, "orders": 0}
    for session, truth in labels.items():
        if truth["clicks"]:
            events["clicks"] += 1
        for kind in ("carts", "orders"):
            if truth[kind]:
                events[kind] += min(len(truth[kind]), k)
        if session not in predictions:
            continue
        predicted = predictions[session]
        has = (lambda kind: True) if before_d1e176b else (lambda kind: kind in predicted and predicted[kind])  # noqa: E731
        if truth["clicks"] and has("clicks"):
            hits["clicks"] += float(truth["clicks"] in predicted["clicks"][:k])
        for kind in ("carts", "orders"):
            if truth[kind] and has(kind):
                hits[kind] += len(set(predicted[kind][:k]) & truth[kind])
    return {kind: hits[kind] / events[kind] for kind in hits}


def apk(actual: list, predicted: list, k: int) -> float:
    """benhamner/Metrics apk: cut at k, a hit counts where it is not among the earlier predictions, / min(|actual|, k)."""
    predicted = predicted[:k]
    total, hits = 0.0, 0.0
    for i, item in enumerate(predicted):
        if item in actual and item not in predicted[:i]:
            hits += 1.0
            total += hits / (i + 1.0)
    if not actual:
        return 0.0
    return total / min(len(actual), k)


def mapk(actuals: list, predictions: list, k: int) -> float:
    return float(np.mean([apk(a, p, k) for a, p in zip(actuals, predictions)]))


def recommenders_map(truth: dict, lists: dict, k: int, at_k: bool) -> float:
    """microsoft/recommenders python_evaluation map / map_at_k on frames made from the lists (prediction = n − rank):
    common users, the top k by prediction, merged with the truth on (user, item), rr = (hit count so far) / rank."""
    rating_true = pd.DataFrame([(u, i) for u, items in truth.items() for i in items], columns=["user", "item"])
    rating_pred = pd.DataFrame([(u, i, float(len(items) - r)) for u, items in lists.items() for r, i in enumerate(items)],
                               columns=["user", "item", "prediction"])
    common = set(rating_true["user"]) & set(rating_pred["user"])
    true_common = rating_true[rating_true["user"].isin(common)]
    pred_common = rating_pred[rating_pred["user"].isin(common)]
    top = pred_common.sort_values(["user", "prediction"], ascending=[True, False]).groupby("user", as_index=False).head(k).reset_index(drop=True)
    top["rank"] = top.groupby("user", sort=False).cumcount() + 1
    hit = pd.merge(top, true_common, on=["user", "item"])[["user", "item", "rank"]]
    if hit.shape[0] == 0:
        return 0.0
    actual = true_common.groupby("user").size()
    hit["rr"] = (hit.groupby("user").cumcount() + 1) / hit["rank"]
    per_user = hit.groupby("user")["rr"].sum()
    denominators = actual[per_user.index].clip(upper=k) if at_k else actual[per_user.index]
    return float((per_user / denominators).sum() / len(common))
