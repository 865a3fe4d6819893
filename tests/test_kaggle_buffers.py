"""Buffers of lines are reused from batch to batch (kaggle_frame.ended_lines_data): a short batch after a long one
must read only its own bytes, so its problems are those `scorer validate` finds in the file."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

import scorer
from scorer.adapters import kaggle_frame
from scorer.adapters.kaggle_frame import SLACK, ended_lines_data, judge_rows
from test_kaggle_frame import COMP, file_text, problems, truth_of


def test_a_reused_buffer_holds_only_the_new_lines_then_zeros():
    spare = [bytearray(b"x" * 100)]
    buffer, size = ended_lines_data(pa.array(["1_clicks,5\n", "1_carts,\n"], pa.large_string()), None, spare)
    assert not spare and len(buffer) == 100  # the spare one, not a new one
    assert bytes(buffer[:size]) == b"1_clicks,5\n1_carts,\n" and bytes(buffer[size : size + SLACK]) == bytes(SLACK)


def test_a_short_batch_after_a_long_one_is_judged_as_the_file_is(tmp_path, monkeypatch):
    taken = []
    original = kaggle_frame._buffer_of
    monkeypatch.setattr(kaggle_frame, "_buffer_of", lambda size, spare: taken.append(len(spare or [])) or original(size, spare))
    long_labels = " ".join(str(item) for item in range(10, 400))
    rows = [f"1_clicks,{long_labels}", "1_carts,7", "1_orders,12", "2_clicks,4", "2_carts,1", "2_orders,9"]
    rows[2] = "1_orders,1"  # short lines after the long one, with problems of their own
    rows[3] = "2_clicks,"
    rows[5] = "2_orders,8 8"  # a repeated item
    rows[4] = "2_carts,3 x"
    path = tmp_path / "sub.csv"
    path.write_text(file_text(rows))
    expected = problems(scorer.validate(path))
    assert expected
    assert problems(judge_rows(pd.read_csv(path), COMP, truth_of({1, 2}), batch_rows=1)) == expected
    assert any(taken)  # buffers were handed on from batch to batch
