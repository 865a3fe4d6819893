"""The Kaggle adapter's ways to fewer fresh pages give what the plain ways give: text made a chunk of rows at a
time (kaggle_frame.ColumnText), the repeated-rows keys kept as one int64 a row (scorer.engine.row_keys.RowKeys), and the
solution read chunk by chunk (kaggle._read_by_chunks), whatever the chunk size and wherever a chunk goes wrong."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import scorer
import scorer.adapters.kaggle as kaggle
from scorer.adapters import kaggle_frame
from scorer.adapters.kaggle import HostVisibleError, truth_from_solution
from scorer.adapters.kaggle_frame import ColumnText, judge_rows, strings
from scorer.engine.row_keys import RowKeys
from scorer.kernels.rows import INDPTR_DTYPE
from test_kaggle_frame import COMP, ROW_ID, file_text, good_rows, problems, truth_of

N_TYPES = len(COMP.types)


@pytest.fixture(params=[1, 2, 3, 1 << 13])
def chunk_rows(request, monkeypatch):
    """Chunks as small as one row, chunks that do not divide a batch, and the real size."""
    monkeypatch.setattr(kaggle_frame, "CHUNK_ROWS", request.param)
    monkeypatch.setattr(kaggle, "CHUNK_ROWS", request.param)
    return request.param


COLUMNS = [
    pd.Series(["1 2", None, "3", np.nan, "", "4 5 6", "7"], dtype=object),
    pd.Series([1, "2", None, 3.5, "x", "y", "z"], dtype=object),  # other objects: those chunks go the slow way
    pd.Series(["1 2", None, "3", "", "4", "5", "6"], dtype="string[pyarrow]"),
    pd.Series([10.0, np.nan, 12.0, 1e20, 0.5, -3.0, 7.0]),
    pd.Series([1, 2, 3, 4, 5, 6, 7]),
]


@pytest.mark.parametrize("column", COLUMNS, ids=["object", "mixed", "arrow", "float", "int"])
def test_a_columns_chunks_join_up_to_its_strings(column, chunk_rows):
    text = ColumnText(column)
    for start, stop in [(0, 7), (2, 7), (3, 4)]:
        chunks = text.chunks(start, stop)
        assert [len(chunk) for chunk in chunks] == [min(chunk_rows, stop - first) for first in range(start, stop, chunk_rows)]
        assert all(chunk.type == pa.large_string() and not chunk.null_count for chunk in chunks)
        joined = [value for chunk in chunks for value in chunk.to_pylist()]
        assert joined == strings(column.iloc[start:stop]).to_pylist() == strings(column).to_pylist()[start:stop]


@pytest.mark.parametrize("batch_rows", [1, 4, 1 << 16])
def test_rows_are_judged_as_validate_judges_the_file_at_any_chunk_size(tmp_path, batch_rows, chunk_rows):
    rows = good_rows(range(1, 7))
    rows[1] = "1_carts,5 x 5"
    rows[4] = '2_carts,"4,5"'  # quoted: its batch is made again with the fields quoted
    rows[9] = "1_clicks,3"  # a repeat of line 2
    rows[12] = '5_clicks,"6 ""7"""'
    rows[15] = "6_clicks,"
    path = tmp_path / "sub.csv"
    path.write_text(file_text(rows))
    frame = pd.read_csv(path)
    expected = problems(scorer.validate(path))
    assert {code for code, *_ in expected} >= {"S008", "S010"}
    for split in ({1, 2, 3}, {4, 5, 6}):
        assert problems(judge_rows(frame, COMP, truth_of(split), batch_rows=batch_rows)) == expected
    filtered = frame.iloc[[0, 1, 2, 9, 10, 11, 12, 13]]  # gaps in the index: blank lines keep the file's line numbers
    expected_lines = sorted((code, line) for code, line, _ in problems(judge_rows(filtered, COMP, truth_of({1, 5}), batch_rows=1 << 16)))
    assert ("S010", 11) in expected_lines and ("S008", 3) in expected_lines
    assert sorted((code, line) for code, line, _ in problems(judge_rows(filtered, COMP, truth_of({1, 5}), batch_rows=batch_rows))) == expected_lines


def _old_in_order(chunks) -> bool:
    """The check RowKeys replaces: keys strictly increasing over all rows (None when they do not fit an int64)."""
    last = -1
    for session, kind in chunks:
        if len(session) == 0:
            continue
        if session.min() < 0 or session.max() >= (2**63 - 1) // N_TYPES - N_TYPES:
            return False
        key = session * N_TYPES + kind
        if key[0] <= last or not np.all(key[1:] > key[:-1]):
            return False
        last = int(key[-1])
    return True


CHUNKS = {
    "in order": [([1, 1, 2], [0, 2, 1], [5, 6, 7]), ([2, 3], [2, 0], [8, 9])],
    "repeat across chunks": [([1, 2], [0, 1], [5, 6]), ([2, 4], [1, 0], [7, 8])],
    "out of order": [([5, 1], [0, 0], [3, 4]), ([], [], [])],
    "lines with gaps": [([1, 2, 3], [0, 0, 0], [2, 9, 10])],
    "negative session": [([1], [0], [2]), ([-3, 4], [1, 1], [3, 4])],
    "huge session": [([2**62, 1], [2, 0], [2, 3])],
    "type out of range": [([1, 1], [0, 7], [2, 3]), ([2], [0], [4])],
}


@pytest.mark.parametrize("name", CHUNKS)
def test_row_keys_give_back_every_rows_session_type_and_line(name):
    keys = RowKeys(N_TYPES)
    chunks = [tuple(np.array(part, np.int64) for part in chunk) for chunk in CHUNKS[name]]
    for offset, (session, kind, line) in enumerate(chunks):
        keys.add(session, kind, line, 100 * offset)
        session[:], kind[:], line[:] = -9, -9, -9  # the kernel reuses its arrays: the keys must not
    chunks = [tuple(np.array(part, np.int64) for part in chunk) for chunk in CHUNKS[name]]
    assert keys.in_order == _old_in_order([(session, kind) for session, kind, _ in chunks])
    expected = [(session, kind, line + 100 * offset) for offset, (session, kind, line) in enumerate(chunks) if len(session)]
    got = keys.triples()
    assert len(got) == len(expected)
    for (session, kind, line), (want_session, want_kind, want_line) in zip(got, expected):
        assert session.tolist() == want_session.tolist() and kind.tolist() == want_kind.tolist() and line.tolist() == want_line.tolist()
        assert session.dtype == kind.dtype == line.dtype == np.int64


SOLUTION = [("1_clicks", "5"), ("1_carts", "3 7 9"), ("1_orders", None), ("4_clicks", ""), ("4_orders", "2 11"),
            ("9_carts", "8"), ("12_clicks", "1 2 3 4"), ("12_orders", None)]


def row_key(row_id: str) -> tuple[int, int]:
    session, kind = row_id.split("_")
    return int(session), COMP.types.index(kind)


def solution_frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[ROW_ID, "labels"], dtype=object)


def whole_way(rows, monkeypatch):
    """The truth (or the error) when the solution is read whole and sorted by from_long, as before the chunks."""
    with monkeypatch.context() as patch:
        patch.setattr(kaggle, "_read_by_chunks", lambda *args: None)
        patch.setattr(kaggle, "_sorted_truth", lambda *args: None)
        try:
            return truth_from_solution(solution_frame(rows), ROW_ID, COMP)
        except HostVisibleError as error:
            return str(error)


def same(left, right) -> bool:
    return (left.types == right.types and all(np.array_equal(getattr(left, name), getattr(right, name)) for name in ("sessions", "indptr", "items"))
            and left.items.dtype == right.items.dtype == np.int64 and left.indptr.dtype == right.indptr.dtype == INDPTR_DTYPE)


@pytest.mark.parametrize("rows", [
    SOLUTION,
    SOLUTION[::-1],  # out of order: the sorting way, from the chunks' items
    SOLUTION[:5] + [("9_carts", "8 3")] + SOLUTION[6:],  # items out of order in a later chunk
    SOLUTION[:6] + [("12_clicks", "1\t2")] + SOLUTION[7:],  # a tab in a later chunk: the whole way reads it
    SOLUTION + [("1_carts", "4")],  # a repeated row
    [(f"{session}_{kind}", " ".join(map(str, range(session % 5)))) for session in range(1, 400) for kind in COMP.types],
], ids=["sorted", "reversed", "items", "tab", "repeat", "many"])
def test_the_solution_read_by_chunks_gives_the_truth_read_whole(rows, chunk_rows, monkeypatch):
    expected = whole_way(rows, monkeypatch)
    frame = solution_frame(rows)
    read = kaggle._read_by_chunks(frame[ROW_ID], frame["labels"], COMP)
    assert (read is None) == any("\t" in (labels or "") for _, labels in rows)  # the chunks' way unless a tab
    if read is not None:
        keys = [row_key(row_id) for row_id, _ in rows]
        direct = kaggle._sorted_truth(*read[:4], COMP.types) if read[4] else None  # the direct way, chunk by chunk
        assert (direct is not None) == (read[4] and all(a < b for a, b in zip(keys, keys[1:])))
    if isinstance(expected, str):  # a repeated row id: the host's error, the same both ways
        assert "have the same id" in expected
        with pytest.raises(HostVisibleError) as raised:
            truth_from_solution(solution_frame(rows), ROW_ID, COMP)
        assert str(raised.value) == expected
        return
    assert same(truth_from_solution(solution_frame(rows), ROW_ID, COMP), expected)


@pytest.mark.parametrize("bad, said", [
    (("12_click", "1"), "solution row 7: id '12_click' does not have the form"),
    (("12_clicks", "1 x"), "not an integer item id"),
    (("12_clicks", "3 -4"), "negative item id"),
])
def test_a_bad_row_in_a_later_chunk_is_named_as_when_read_whole(bad, said, chunk_rows, monkeypatch):
    rows = SOLUTION[:6] + [bad] + SOLUTION[7:]
    expected = whole_way(rows, monkeypatch)
    assert said in expected
    with pytest.raises(HostVisibleError) as raised:
        truth_from_solution(solution_frame(rows), ROW_ID, COMP)
    assert str(raised.value) == expected


def test_a_split_scores_the_same_at_any_chunk_size(chunk_rows):
    rows = good_rows(range(1, 30))
    frame = pd.read_csv(io.StringIO(file_text(rows)))
    solution = pd.read_csv(io.StringIO(file_text(rows)), keep_default_na=False)
    public = solution[solution[ROW_ID].str.split("_").str[0].astype(int) % 3 == 0]
    assert kaggle.score(public, frame, ROW_ID) == 1.0
