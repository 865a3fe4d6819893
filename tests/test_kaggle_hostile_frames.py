"""The Kaggle metric against hostile submission frames: whatever a participant's DataFrame holds (odd objects,
odd dtypes, odd columns or index, rows around the chunk and batch boundaries), `score` gives a finite float or a
ParticipantVisibleError of at most 280 characters that quotes nothing of the solution and reads the same in the
Public and the Private split, and the frame is left as it was."""

from __future__ import annotations

import functools
import math
import os
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import scorer.adapters.kaggle as kaggle
from conftest import TYPES
from scorer.adapters import kaggle_frame
from scorer.adapters.kaggle import MAX_MESSAGE, ParticipantVisibleError, score
from scorer.adapters.kaggle_frame import BATCH_ROWS, CHUNK_ROWS, judge_rows

ROW_ID = "session_type"
SESSIONS = range(1, 9)
PUBLIC = {1, 2, 5}
SECRET = "4242424"  # every solution item starts so; no submission here holds it


def solution_rows(sessions) -> pd.DataFrame:
    return pd.DataFrame({ROW_ID: [f"{s}_{t}" for s in sessions for t in TYPES],
                         "labels": [f"{SECRET}{s}{j} 7" for s in sessions for j, _ in enumerate(TYPES)]})


SPLITS = {"Public": solution_rows(sorted(PUBLIC)), "Private": solution_rows(sorted(set(SESSIONS) - PUBLIC))}


def base_frame(n_rows: int = 3 * len(SESSIONS)) -> pd.DataFrame:
    """A valid submission (scoring below 1): the ids of sessions 1, 2, ... in order, object columns."""
    ids = [f"{1 + row // len(TYPES)}_{TYPES[row % len(TYPES)]}" for row in range(n_rows)]
    return pd.DataFrame({ROW_ID: pd.Series(ids, dtype=object), "labels": pd.Series(["7 3"] * n_rows, dtype=object)})


def with_cell(frame: pd.DataFrame, row: int, column: str, value) -> pd.DataFrame:
    """The frame with one cell replaced by any object (the column becomes an object column)."""
    values = frame[column].to_numpy(dtype=object).copy()
    values[row] = value
    out = frame.copy()
    out[column] = pd.Series(values, dtype=object, index=frame.index)
    return out


def verdicts(frame: pd.DataFrame) -> dict[str, tuple[str, object]]:
    """Each split's verdict, ("score", value) or ("rejected", message), checked against the contract."""
    before = frame.copy()
    out = {}
    for usage, part in SPLITS.items():
        try:
            value = score(part.copy(), frame, ROW_ID)
        except ParticipantVisibleError as error:
            message = str(error)
            assert message.startswith("Submission rejected") and len(message) <= MAX_MESSAGE, message
            assert SECRET not in message, message
            out[usage] = ("rejected", message)
        else:
            assert isinstance(value, float) and math.isfinite(value), value
            out[usage] = ("score", value)
    pd.testing.assert_frame_equal(frame, before)  # score leaves the participant's frame alone
    rejections = {verdict for verdict in out.values() if verdict[0] == "rejected"}
    if rejections - {("rejected", kaggle.MISSING_ROWS)}:  # only a split's missing rows may tell the splits apart
        assert out["Public"] == out["Private"], out
    return out


def message_of(frame: pd.DataFrame) -> str:
    said = verdicts(frame)
    assert said["Public"][0] == "rejected", said
    return said["Public"][1]


# -- hand cases: one odd cell -----------------------------------------------------------------------
ODD_VALUES = {
    "int": 5, "float": 5.0, "nan": float("nan"), "none": None, "bytes": b"5 6", "bad utf-8 bytes": b"\xff\xfe",
    "list": [1, 2], "dict": {"a": 1}, "tuple": (1, 2), "set": {1}, "decimal": Decimal("5"), "huge int": 10**40,
    "numpy int": np.int64(5), "bool": True, "complex": 1 + 2j, "inf": float("inf"), "series": pd.Series([1, 2]),
    "newline": "5\n6", "cr": "5\r6", "crlf": "5\r\n", "quote": '5"6', "comma": "5,6", "nul": "5\x006",
    "surrogate": "\ud800", "surrogate after text": "5 \udfff", "bom": "\ufeff5", "tab": "5\t6",
    "long with spaces": "1 " * 1_500_000, "long one item": "9" * 3_000_000,
}


@pytest.mark.parametrize("column", [ROW_ID, "labels"])
@pytest.mark.parametrize("name", ODD_VALUES)
def test_an_odd_object_in_a_cell_is_scored_or_rejected_alike_in_both_splits(name, column):
    verdicts(with_cell(base_frame(), 4, column, ODD_VALUES[name]))


def test_rows_read_as_their_text_say():
    assert message_of(with_cell(base_frame(), 4, "labels", "5 x")).startswith("Submission rejected: S008 line 6: item 'x'")
    assert message_of(with_cell(base_frame(), 4, "labels", "1 " * 1_500_000)).startswith("Submission rejected: S022 line 6")
    assert message_of(with_cell(base_frame(), 4, "labels", "5\x006")).startswith("Submission rejected: S017 line 6")
    unreadable = with_cell(base_frame(), 4, "labels", "\ud800")
    assert message_of(unreadable) == kaggle.UNREADABLE


def test_a_bad_row_and_rows_missing_from_one_split_give_one_message():
    frame = with_cell(base_frame(), 4, "labels", "x").drop(index=[9, 10])  # session 4's rows: private
    assert message_of(frame) == "Submission rejected: S008 line 6: item 'x' is not an integer."


# -- hand cases: dtypes, columns, index, length ---------------------------------------------------------
def _dtype(name: str):
    def change(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.astype(name)
    return change


FRAMES = {
    "str": _dtype("str"),
    "string[pyarrow]": _dtype("string[pyarrow]"),
    "string[python]": _dtype("string[python]"),
    "category": _dtype("category"),
    "bool labels": lambda f: f.assign(labels=True),
    "float labels": lambda f: f.assign(labels=[7.0, np.nan, 3.5] * (len(f) // 3)),
    "Int64 labels": lambda f: f.assign(labels=pd.array([7, None, 3] * (len(f) // 3), dtype="Int64")),
    "int64[pyarrow] labels": lambda f: f.assign(labels=pd.array([7] * len(f), dtype="int64[pyarrow]")),
    "uint64 labels": lambda f: f.assign(labels=np.uint64(2**64 - 1)),
    "datetime labels": lambda f: f.assign(labels=pd.Timestamp("2020-01-01")),
    "interval labels": lambda f: f.assign(labels=pd.Interval(0, 1)),
    "sparse labels": lambda f: f.assign(labels=pd.arrays.SparseArray([7] * len(f))),
    "float ids": lambda f: f.assign(session_type=1.5),
    "category ids": lambda f: f.assign(session_type=f[ROW_ID].astype("category")),
    "extra column": lambda f: f.assign(extra=1),
    "missing column": lambda f: f[[ROW_ID]],
    "renamed column": lambda f: f.rename(columns={"labels": "label"}),
    "columns swapped": lambda f: f[["labels", ROW_ID]],
    "column repeated": lambda f: pd.concat([f, f["labels"]], axis=1),
    "id column twice": lambda f: pd.concat([f[ROW_ID], f[ROW_ID]], axis=1),
    "integer column names": lambda f: f.set_axis([0, 1], axis=1),
    "None column name": lambda f: f.set_axis([ROW_ID, None], axis=1),
    "column name with a newline": lambda f: f.set_axis([ROW_ID, "labels\n"], axis=1),
    "column name with a comma": lambda f: f.set_axis([f"{ROW_ID},labels", "x"], axis=1),
    "MultiIndex columns": lambda f: f.set_axis(pd.MultiIndex.from_tuples([(ROW_ID, "a"), ("labels", "b")]), axis=1),
    "no columns": lambda f: f[[]],
    "no rows": lambda f: f.iloc[:0],
    "nothing": lambda f: pd.DataFrame(),
    "repeated index": lambda f: f.set_axis([0] * len(f), axis=0),
    "string index": lambda f: f.set_axis([f"r{i}" for i in range(len(f))], axis=0),
    "negative index": lambda f: f.set_axis(range(-len(f), 0), axis=0),
    "float index": lambda f: f.set_axis([i + 0.5 for i in range(len(f))], axis=0),
    "descending index": lambda f: f.set_axis(range(len(f) - 1, -1, -1), axis=0),
    "index with gaps": lambda f: f.set_axis(range(0, 3 * len(f), 3), axis=0),
    "huge index": lambda f: f.set_axis([i * 10**15 for i in range(len(f))], axis=0),
    "uint64 index past int64": lambda f: f.set_axis(pd.Index(np.arange(len(f), dtype=np.uint64) + np.uint64(2**63)), axis=0),
    "MultiIndex": lambda f: f.set_axis(pd.MultiIndex.from_arrays([range(len(f)), range(len(f))]), axis=0),
    "rows repeated": lambda f: pd.concat([f, f.iloc[:2]]),
    "rows shuffled": lambda f: f.iloc[::-1],
    "a row missing": lambda f: f.drop(index=4),
}


@pytest.mark.parametrize("name", FRAMES)
def test_odd_frames_are_scored_or_rejected_alike_in_both_splits(name):
    verdicts(FRAMES[name](base_frame()))


@pytest.mark.parametrize("id_name", ["\ufeffsession_type", " session_type", "session_type ", '"session_type"'])
def test_an_id_column_named_as_the_engine_accepts_the_header_is_scored_on_the_splits_rows(id_name):
    """The file these columns make is valid (`scorer validate` accepts its header): each split scores its own rows,
    those of the other split ignored, rather than a false S011 in both."""
    frame = base_frame().rename(columns={ROW_ID: id_name})
    expected = {usage: ("score", score(part.copy(), base_frame(), ROW_ID)) for usage, part in SPLITS.items()}
    assert verdicts(frame) == expected
    missing = frame.drop(index=[9, 10, 11])  # session 4's rows: only the Private split misses them
    assert verdicts(missing) == {"Public": expected["Public"], "Private": ("rejected", kaggle.MISSING_ROWS)}


# -- boundaries: a bad row just before, at and after a chunk's or a batch's first row -------------------
LONG = BATCH_ROWS + CHUNK_ROWS + 3  # rows of sessions outside both splits past the first 24: ignored but judged
BAD_CELLS = {"not an integer": "5 x", "comma": "5,6", "quote": '5"6', "newline": "5\n6", "int": 7, "none": None,
             "surrogate": "\ud800", "bad utf-8 bytes": b"\xff"}


@pytest.fixture(scope="module")
def long_frame() -> pd.DataFrame:
    return base_frame(LONG)


@pytest.mark.parametrize("bad", BAD_CELLS)
@pytest.mark.parametrize("row", [CHUNK_ROWS - 1, CHUNK_ROWS, CHUNK_ROWS + 1, BATCH_ROWS - 1, BATCH_ROWS, BATCH_ROWS + 1])
def test_a_bad_row_at_a_chunk_or_batch_boundary_is_named_alike_in_both_splits(long_frame, row, bad):
    said = verdicts(with_cell(long_frame, row, "labels", BAD_CELLS[bad]))
    if bad == "not an integer":
        assert said["Public"][1].startswith(f"Submission rejected: S008 line {row + 2}: item 'x'")


@pytest.mark.parametrize("row", [CHUNK_ROWS, BATCH_ROWS])
def test_a_repeat_across_a_boundary_is_named_alike_in_both_splits(long_frame, row):
    frame = with_cell(long_frame, row, ROW_ID, "1_clicks")  # repeats line 2, a public session's row
    assert message_of(frame).startswith(f"Submission rejected: S010 line {row + 2}: row '1_clicks' repeats line 2")


# -- the property: any mix of the above ------------------------------------------------------------------
CELLS = st.one_of(
    st.lists(st.sampled_from([*"0123456789 _,\"\n\r\t\x00x-.", "clicks", "carts", "orders", "\ud800", "é"]), max_size=12).map("".join),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, b"5 6", b"\xff", [1, 2], {"a": 1}, Decimal("7"), True, np.int64(3), 1 + 2j]),
)
DTYPES = st.sampled_from([None, "str", "string[pyarrow]", "category", "float64", "Int64", "bool"])
SHAPES = st.sampled_from([None, "extra column", "missing column", "renamed column", "columns swapped", "column repeated",
                          "no rows", "repeated index", "string index", "descending index", "index with gaps", "MultiIndex",
                          "rows repeated", "rows shuffled", "a row missing"])
COLUMN_SHAPES = {"extra column", "missing column", "renamed column", "columns swapped", "column repeated"}


EXAMPLES = int(os.environ.get("HOSTILE_FRAME_EXAMPLES", "150"))  # more for a longer hunt


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(st.tuples(st.integers(0, 3 * len(SESSIONS) - 1), st.sampled_from([ROW_ID, "labels"]), CELLS), max_size=4),
       dtype=DTYPES, dtype_column=st.sampled_from([ROW_ID, "labels"]), shape=SHAPES,
       chunk_rows=st.sampled_from([1, 2, 3, CHUNK_ROWS]), batch_rows=st.sampled_from([1, 4, 5, BATCH_ROWS]))
@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_any_hostile_frame_is_scored_or_rejected_alike_in_both_splits(cells, dtype, dtype_column, shape, chunk_rows, batch_rows):
    """Small chunks and batches put the odd cells on their boundaries."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kaggle_frame, "CHUNK_ROWS", chunk_rows)
        patch.setattr(kaggle, "CHUNK_ROWS", chunk_rows)
        patch.setattr(kaggle, "judge_rows", functools.partial(judge_rows, batch_rows=batch_rows))
        verdicts(hostile_frame(cells, dtype, dtype_column, shape))


def hostile_frame(cells, dtype, dtype_column, shape) -> pd.DataFrame:
    frame = base_frame()
    for row, column, value in cells:
        frame = with_cell(frame, row, column, value)
    if dtype is not None:
        try:
            frame[dtype_column] = frame[dtype_column].astype(dtype)
        except (TypeError, ValueError, OverflowError, UnicodeError, ArithmeticError):
            pass  # pandas refuses the cast: the frame stays as it was
    if shape is not None:
        frame = FRAMES[shape](frame)
    return frame


ACCEPTED_ID_NAMES = ["\ufeffsession_type", " session_type", "session_type ", '"session_type"']  # `scorer validate` takes these


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(st.tuples(st.integers(0, 3 * len(SESSIONS) - 1), st.sampled_from([ROW_ID, "labels"]), CELLS), max_size=4),
       dtype=DTYPES, dtype_column=st.sampled_from([ROW_ID, "labels"]), shape=SHAPES.filter(lambda shape: shape not in COLUMN_SHAPES),
       id_name=st.sampled_from(ACCEPTED_ID_NAMES))
@example(cells=[(1, "labels", 0), (0, "labels", "\ud800")], dtype="category", dtype_column="labels", shape="no rows",
         id_name="\ufeffsession_type")  # an unused category that does not encode: it was read on the slow way only
def test_an_id_column_named_as_the_engine_accepts_changes_no_verdict(cells, dtype, dtype_column, shape, id_name):
    """The frame's slow way (its CSV validated, then scored) and its fast way (judge_rows) agree on any rows."""
    frame = hostile_frame(cells, dtype, dtype_column, shape)
    assert verdicts(frame.rename(columns={ROW_ID: id_name})) == verdicts(frame)
