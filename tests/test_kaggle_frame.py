"""The Kaggle metric's fast way through a submission frame (scorer.adapters.kaggle_frame): batches of rows parsed
as the file's lines judge every row as `scorer validate` judges the file, whatever the batch size and split."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import scorer
from conftest import TYPES
from scorer.adapters import kaggle
from scorer.adapters.kaggle_frame import gaps_of, judge_rows, strings
from scorer.adapters.message import participant_message
from scorer.api import resolve_competition
from scorer.truth.ids import from_long

ROW_ID = "session_type"
COMP = resolve_competition("otto")


def truth_of(sessions) -> scorer.Truth:
    sessions = np.array(sorted(sessions), np.int64)
    return from_long(np.repeat(sessions, 3), np.tile(np.arange(3), len(sessions)), np.tile(np.arange(3), len(sessions)) + 10, TYPES)


def file_text(rows: list[str]) -> str:
    return "session_type,labels\n" + "".join(row + "\n" for row in rows)


def good_rows(sessions) -> list[str]:
    return [f"{s}_{t},{10 + j} 7" for s in sessions for j, t in enumerate(TYPES)]


def problems(result) -> list[tuple]:
    return sorted((p.code, p.line, p.message) for p in result.problems if p.code not in ("S011", "S012"))


@pytest.mark.parametrize("batch_rows", [1, 2, 5, 1 << 18])
def test_rows_are_judged_as_validate_judges_the_file_at_any_batch_size(tmp_path, batch_rows):
    rows = good_rows(range(1, 7))
    rows[1] = "1_carts,5 x 5"  # an item that is not an integer
    rows[4] = '2_carts,"4,5"'  # a quoted comma: one field for pandas and for the engine
    rows[7] = "3_carts,1  2"  # two spaces
    rows[9] = "1_clicks,3"  # a repeat of line 2, in a session of another split
    rows[12] = '5_clicks,"6 ""7"""'  # quotes inside
    rows[15] = "6_clicks,-4"
    path = tmp_path / "sub.csv"
    path.write_text(file_text(rows))
    frame = pd.read_csv(path)
    expected = problems(scorer.validate(path))
    assert {code for code, *_ in expected} >= {"S008", "S010", "S009"}
    for split in ({1, 2, 3}, {4, 5, 6}):
        assert problems(judge_rows(frame, COMP, truth_of(split), batch_rows=batch_rows)) == expected


def test_a_repeat_in_another_split_rejects_the_submission_in_both_splits():
    rows = good_rows(range(1, 5)) + ["4_orders,1"]  # session 4 is private
    frame = pd.read_csv(io.StringIO(file_text(rows)))
    solution = pd.read_csv(io.StringIO(file_text(good_rows(range(1, 5)))), keep_default_na=False)
    said = set()
    for sessions in ({1, 2}, {3, 4}):
        part = solution[solution[ROW_ID].str.split("_").str[0].astype(int).isin(sessions)]
        with pytest.raises(kaggle.ParticipantVisibleError) as raised:
            kaggle.score(part, frame, ROW_ID)
        said.add(str(raised.value))
    assert len(said) == 1 and next(iter(said)).startswith("Submission rejected: S010 line 14: row '4_orders' repeats line 13")


def test_scores_equal_the_engines_on_the_split_and_ignore_the_other_sessions(tmp_path):
    rows = good_rows(range(1, 9))
    frame = pd.read_csv(io.StringIO(file_text(rows)))
    result = judge_rows(frame, COMP, truth_of({2, 5, 7}), batch_rows=4)
    assert result.score == 1.0 and not result.problems


def test_filtered_frames_keep_the_files_line_numbers():
    rows = good_rows(range(1, 5))
    rows[10] = "4_carts,z"
    frame = pd.read_csv(io.StringIO(file_text(rows))).iloc[[0, 1, 2, 9, 10, 11]]  # Kaggle's filter keeps the index
    assert gaps_of(frame.index.to_numpy()).tolist() == [0, 0, 0, 6, 0, 0]
    result = judge_rows(frame, COMP, truth_of({1, 4}), batch_rows=2)
    assert participant_message(result).startswith("Submission rejected: S008 line 12: item 'z'")


def test_numbers_and_missing_labels_read_as_the_file_has_them():
    frame = pd.DataFrame({ROW_ID: ["1_clicks", "1_carts", "1_orders"], "labels": [10.0, np.nan, 12.0]})
    assert strings(frame["labels"]).to_pylist() == ["10", "", "12"]
    solution = pd.DataFrame({ROW_ID: frame[ROW_ID], "labels": ["10", "", "12"]})
    assert kaggle.score(solution, frame, ROW_ID) == kaggle.score(solution, solution, ROW_ID) == pytest.approx(0.7)  # no carts truth


def test_strings_of_arrow_backed_and_object_columns_agree():
    values = ["1 2", None, "3"]
    object_column = pd.Series(values, dtype=object)
    arrow_column = pd.Series(values, dtype="string[pyarrow]")
    assert strings(object_column).to_pylist() == strings(arrow_column).to_pylist() == ["1 2", "", "3"]
    assert strings(pd.Series([1, "2", None], dtype=object)).to_pylist() == ["1", "2", ""]  # mixed objects: the slow way


@pytest.mark.parametrize("batch_rows", [1, 4])
def test_repeats_are_found_whether_rows_come_in_order_or_not(batch_rows):
    shuffled = good_rows([3, 1, 2])  # out of order, no repeat
    frame = pd.read_csv(io.StringIO(file_text(shuffled)))
    assert not judge_rows(frame, COMP, truth_of({1, 2, 3}), batch_rows=batch_rows).problems
    repeated = good_rows([1, 2, 3]) + ["3_orders,1"]  # in order up to the last row, which repeats line 10
    frame = pd.read_csv(io.StringIO(file_text(repeated)))
    found = problems(judge_rows(frame, COMP, truth_of({1}), batch_rows=batch_rows))
    assert [(code, line) for code, line, _ in found] == [("S010", 11)]
