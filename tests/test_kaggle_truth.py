"""The Kaggle solution's truth: rows sorted as an export writes them take a direct path; any other order, repeated
items or odd spacing take the sorting one, and both give the same Truth; a repeated row id is the host's error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorer.adapters.kaggle as kaggle
from scorer.adapters.kaggle import HostVisibleError, truth_from_solution
from scorer.api import resolve_competition

OTTO = resolve_competition("otto")
ROWS = [("1_clicks", "5"), ("1_carts", "3 7 9"), ("1_orders", ""), ("4_clicks", None), ("4_orders", "2 11"), ("9_carts", "8")]


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["session_type", "labels"], dtype=object)


def sorting_only(rows):
    """The truth through from_long alone (the direct path switched off)."""
    original = kaggle._sorted_truth
    kaggle._sorted_truth = lambda *args: None
    try:
        return truth_from_solution(frame(rows), "session_type", OTTO)
    finally:
        kaggle._sorted_truth = original


def same(left, right) -> bool:
    return all(np.array_equal(getattr(left, name), getattr(right, name)) for name in ("sessions", "indptr", "items")) and left.types == right.types


def test_sorted_rows_take_the_direct_path_and_match_the_sorting_one(monkeypatch):
    expected = sorting_only(ROWS)
    calls = []
    original = kaggle._sorted_truth
    monkeypatch.setattr(kaggle, "_sorted_truth", lambda *args: calls.append(1) or original(*args))
    monkeypatch.setattr(kaggle, "from_long", lambda *args, **kwargs: pytest.fail("sorted rows need no sort"))
    truth = truth_from_solution(frame(ROWS), "session_type", OTTO)
    assert calls and same(truth, expected)
    assert truth.labels(1, "carts") == [3, 7, 9] and truth.labels(4, "orders") == [2, 11] and truth.labels(9, "clicks") == []


@pytest.mark.parametrize("rows", [
    ROWS[::-1],  # rows out of order
    [("1_carts", "9 3 7 3")] + ROWS[2:],  # items out of order and repeated
    [("1_carts", " 3\t7  9 ")] + ROWS[2:],  # tabs and runs of spaces
])
def test_other_solutions_give_the_truth_the_sorting_path_gives(rows):
    expected = sorting_only(rows)
    assert same(truth_from_solution(frame(rows), "session_type", OTTO), expected)


def test_a_repeated_row_id_is_the_hosts_error_on_either_path():
    for rows in (ROWS + [("1_carts", "4")], [("1_carts", "4")] + ROWS):
        with pytest.raises(HostVisibleError, match="solution rows [0-9]+ and [0-9]+ have the same id '1_carts'"):
            truth_from_solution(frame(rows), "session_type", OTTO)
        with pytest.raises(HostVisibleError, match="have the same id '1_carts'"):
            sorting_only(rows)


@pytest.mark.parametrize("labels, said", [("3 x", "not an integer item id"), ("3 -4", "negative item id")])
def test_bad_labels_are_the_hosts_error(labels, said):
    with pytest.raises(HostVisibleError, match=said):
        truth_from_solution(frame([("1_carts", labels)]), "session_type", OTTO)
