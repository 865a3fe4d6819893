"""The solution's ids and labels read by one kernel pass over their Arrow buffers agree with the Arrow compute
way (parse_ids, _label_items) on every input, and give way to it for anything but plain ids and digit labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import scorer.adapters.kaggle as kaggle
from scorer.adapters.kaggle import HostVisibleError, truth_from_solution
from scorer.api import resolve_competition
from scorer.kernels import door
from scorer.kernels.solution import label_items

OTTO = resolve_competition("otto")


def text(values) -> pa.Array:
    return pa.array(values, pa.large_string())


@pytest.mark.parametrize("ids", [
    ["1_clicks", "22_carts", "333_orders", "0_clicks"],
    ["123456789012345678_orders", "7_carts"],
    ["1_clicks", "x_carts"], ["1_clicks", "1_click"], ["1_clicks", "_carts"], ["1__carts"], ["1234567890123456789_carts"],
    ["1_clicks", "1_carts_"], ["1_clicks", ""], ["１_clicks"],
])
def test_ids_read_by_the_kernel_are_the_arrow_ways_own(ids, monkeypatch):
    array = text(ids)
    read = kaggle._kernel_ids(array, OTTO)
    monkeypatch.setattr(kaggle, "_kernel_ids", lambda *args: None)
    expected = kaggle.parse_ids(array, OTTO)
    if read is None:  # some id is not plain: parse_ids reads the column
        assert not expected[0].all() or any(len(i.split("_")[0]) > 18 for i in ids)
    else:
        assert all(np.array_equal(a, b) for a, b in zip(read, expected))


def test_ids_with_nulls_are_left_to_the_arrow_way():
    assert kaggle._kernel_ids(pa.array(["1_clicks", None], pa.large_string()), OTTO) is None


def test_ids_of_a_sliced_array_are_read_from_its_offset():
    array = text(["9_orders", "5_clicks", "6_carts", "8_orders"]).slice(1, 2)
    assert [list(part) for part in kaggle._kernel_ids(array, OTTO)[1:]] == [[5, 6], [0, 1]]


@pytest.mark.parametrize("labels", [
    ["5", "3 7 9", "", "  12  4 ", "0007"], ["123456789012345678"], ["", ""], ["1", "2"],
])
def test_digit_labels_read_by_the_kernel_are_the_arrow_ways_own(labels):
    array = text(labels)
    ok, items, rows = label_items(*kaggle._buffers(array))
    expected = kaggle._label_items(array, "labels")
    assert ok and np.array_equal(items, expected[0]) and np.array_equal(rows, expected[1])


@pytest.mark.parametrize("labels", [["1\t2"], ["-3"], ["+3"], ["1.0"], ["1234567890123456789"], ["1", "x"]])
def test_other_labels_are_left_to_the_arrow_way(labels):
    assert not label_items(*kaggle._buffers(text(labels)))[0]


def test_the_truth_is_the_same_with_or_without_the_kernels(monkeypatch):
    rows = [("1_clicks", "5"), ("1_carts", "3  7 9"), ("1_orders", ""), ("4_clicks", None), ("4_orders", "2\t11"), ("9_carts", "8")]
    solution = pd.DataFrame(rows, columns=["session_type", "labels"], dtype=object)
    fast = truth_from_solution(solution, "session_type", OTTO)
    monkeypatch.setattr(kaggle, "_kernel_ids", lambda *args: None)
    served = door.kernel
    monkeypatch.setattr(door, "kernel", lambda name: (lambda *args: (False, None, None)) if name == "label_items" else served(name))
    slow = truth_from_solution(solution, "session_type", OTTO)
    assert all(np.array_equal(getattr(fast, name), getattr(slow, name)) for name in ("sessions", "indptr", "items"))


def test_a_bad_id_or_label_is_still_named_for_the_host():
    bad_id = pd.DataFrame([("1_clicks", "5"), ("2_click", "6")], columns=["session_type", "labels"], dtype=object)
    with pytest.raises(HostVisibleError, match="solution row 2: id '2_click'"):
        truth_from_solution(bad_id, "session_type", OTTO)
    bad_label = pd.DataFrame([("1_clicks", "5 x")], columns=["session_type", "labels"], dtype=object)
    with pytest.raises(HostVisibleError, match="not an integer item id"):
        truth_from_solution(bad_label, "session_type", OTTO)
