"""Data frames as submissions and truth: the same figures as the CSV of the same rows, to the last bit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorer
from conftest import TYPES, submission_text, truth_lines
from scorer.engine import frame_pass
from scorer.engine.result import render_problems
from scorer.errors import TruthError, UsageError

items = st.integers(0, 40)
label_sets = st.lists(items, min_size=1, max_size=36, unique=True)
truths = st.dictionaries(st.integers(0, 30), st.fixed_dictionaries({}, optional={"clicks": items, "carts": label_sets, "orders": label_sets}),
                         min_size=1, max_size=10)
NULL, NEGATIVE = "null", -7  # a null item, a negative one: errors of the row
row_items = st.lists(st.one_of(items, items, items, items, st.just(NULL), st.just(NEGATIVE)), max_size=26)


@st.composite
def cases(draw):
    """(truth, rows): rows of (session or None, type, items or None) with repeats, > K items, missing and unknown
    sessions, unknown types, empty and null lists, null and negative items."""
    truth = draw(truths)
    sessions = list(truth) + draw(st.lists(st.integers(0, 40), max_size=3)) + draw(st.lists(st.just(None), max_size=1))
    rows = []
    for session in sessions:
        for type_name in TYPES + ("views",):
            if (type_name != "views" and draw(st.booleans())) or draw(st.integers(0, 11)) == 0:
                rows.append((session, type_name, draw(st.one_of(row_items, row_items, row_items, st.none()))))
    rows = draw(st.permutations(rows))
    repeated = draw(st.lists(st.sampled_from(rows), max_size=2)) if rows else []
    return truth, rows + [(s, t, draw(st.lists(items, max_size=5))) for s, t, _ in repeated]


def csv_rows(rows):
    """The rows as CSV lines; a null item is written 'x' (not an integer: both are errors of the row, which holds its
    slot and scores 0)."""
    out = []
    for session, type_name, labels in rows:
        labels = labels or []
        text = " ".join("x" if item == NULL else str(item) for item in labels)
        out.append(f"{'' if session is None else session}_{type_name},{text}")
    return out


def arrow_rows(rows):
    labels = pa.array([None if labels is None else [None if item == NULL else item for item in labels] for _, _, labels in rows],
                      pa.large_list(pa.int64()))
    ids = pa.array([f"{'' if s is None else s}_{t}" for s, t, _ in rows], pa.large_string())
    return ids, labels


def frames_of(rows, form: str):
    ids, labels = arrow_rows(rows)
    if form == "pandas":
        return pd.DataFrame({"session_type": ids.to_pylist(), "labels": labels.to_pylist()})
    if form == "polars_parts":
        whole = pl.from_arrow(pa.table({"session": pa.array([s for s, _, _ in rows], pa.int64()),
                                        "type": [t for _, t, _ in rows], "labels": labels}))
        half = len(rows) // 2
        return pl.concat([whole[:half], whole[half:]], rechunk=False)
    if form == "arrow_text":
        text = [None if x is None else " ".join("x" if v == NULL else str(v) for v in x) for _, _, x in rows]
        return pa.table({"session_type": ids, "labels": pa.array(text, pa.string())})
    return pa.table({"session_type": ids, "labels": labels})


def same_figures(a, b) -> bool:
    same = lambda x, y: (x is None and y is None) or (x is not None and y is not None and (x == y or (math.isnan(x) and math.isnan(y))))  # noqa: E731
    return same(a.score, b.score) and all(same(a.metrics[t][m], b.metrics[t][m]) for t in a.metrics for m in a.metrics[t])


def where(result, header: bool):
    """(code, row) of every kept problem that names a place, rows 0-based."""
    out = set()
    for problem in result.problems:
        if problem.row is not None:
            out.add((problem.code, problem.row))
        elif problem.line is not None:
            out.add((problem.code, problem.line - (2 if header else 1)))
    return out


STORED = """name = "stored"
[submission]
header = ["session_type", "labels"]
id_pattern = "s{session}-{type}"
[scoring]
types = ["clicks", "carts", "orders"]
weights = [0.2, 0.3, 0.5]
k = 20
metric = "f1"
diagnostics = ["map@20", "mrr@20"]
"""  # figures stored per row (set F1), ids not of the plain form


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases(), form=st.sampled_from(["pandas", "polars_parts", "arrow_text", "arrow"]), strict=st.booleans(),
       threads=st.sampled_from([1, 2]), chunk=st.sampled_from([3, 1 << 20]), stored=st.booleans())
@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_frame_scores_as_its_csv(tmp_path, monkeypatch, case, form, strict, threads, chunk, stored):
    monkeypatch.setattr(frame_pass, "CHUNK_ROWS", chunk)
    truth, rows = case
    (tmp_path / "t.jsonl").write_text(truth_lines(truth))
    (tmp_path / "s.csv").write_text(submission_text(csv_rows(rows)))
    options = dict(strict=strict, threads=threads, max_per_code=1000)
    if stored:
        (tmp_path / "stored.toml").write_text(STORED)
        options["competition"] = scorer.load_competition(path=tmp_path / "stored.toml")
        pattern = lambda text: "s" + text.replace("_", "-", 1)  # noqa: E731
        lines = (tmp_path / "s.csv").read_text().splitlines()
        (tmp_path / "s.csv").write_text("\n".join(lines[:1] + [pattern(line) for line in lines[1:]]) + "\n")
    as_written = scorer.score(tmp_path / "s.csv", tmp_path / "t.jsonl", **options)
    frame = frames_of(rows, form)
    if stored and form != "polars_parts":
        ids = [f"s{'' if s is None else s}-{t}" for s, t, _ in rows]
        frame = frame.assign(session_type=ids) if form == "pandas" else frame.set_column(0, "session_type", pa.array(ids))
    got = scorer.score(frame, tmp_path / "t.jsonl", **options)
    assert same_figures(got, as_written)
    assert got.counts == as_written.counts
    assert got.report.counts == as_written.report.counts
    assert where(got, header=False) == where(as_written, header=True)


def test_frame_problems_name_row_and_column(tmp_path):
    (tmp_path / "t.jsonl").write_text(truth_lines({1: {"carts": [5]}}))
    frame = pl.DataFrame({"session_type": ["1_carts", "1_views", "x_orders", "1_clicks"], "labels": [[5, None], [1], [], [-3, 2]]})
    result = scorer.validate(frame, tmp_path / "t.jsonl")
    found = {(p.code, p.row, p.field) for p in result.problems if p.row is not None}
    assert {("S008", 0, "labels"), ("S005", 1, "session_type"), ("S006", 2, "session_type"), ("S009", 3, "labels")} <= found
    item = next(p for p in result.problems if p.code == "S009")
    assert "-3" in item.message and item.line is None
    assert item.to_dict()["row"] == 3 and item.to_dict()["field"] == "labels"
    assert "row 3, column 'labels'" in render_problems(result.report)
    assert result.score is None


def test_repeated_and_unknown_rows_speak_of_rows(tmp_path):
    (tmp_path / "t.jsonl").write_text(truth_lines({1: {"carts": [5]}, 2: {"orders": [1]}}))
    frame = pa.table({"session": [1, 1, 9], "type": ["carts", "carts", "clicks"], "labels": [[5], [6], [1]]})
    result = scorer.score(frame, tmp_path / "t.jsonl")
    repeat = next(p for p in result.problems if p.code == "S010")
    assert repeat.row == 1 and "repeats row 0" in repeat.message
    unknown = next(p for p in result.problems if p.code == "S012")
    assert unknown.row == 2 and "9 (row 2)" in unknown.message
    assert result.report.counts["S011"] == 5  # 2 sessions x 3 types, one row counts


@pytest.mark.parametrize("form", ["lists", "text"])
def test_a_frame_of_more_rows_than_slot_line_holds_is_refused(tmp_path, monkeypatch, form):
    """slot_line is int32: a frame whose row numbers pass it is refused (SubmissionError), never numbered wrong."""
    from scorer.engine import file_pass
    from scorer.errors import SubmissionError

    (tmp_path / "t.jsonl").write_text(truth_lines({1: {"carts": [5]}}))
    labels = [[5], [6], [7], [8]] if form == "lists" else ["5", "6", "7", "8"]
    frame = pa.table({"session_type": ["1_carts", "1_clicks", "1_orders", "1_carts"], "labels": labels})
    monkeypatch.setattr(file_pass, "MAX_LINES", 3)
    with pytest.raises(SubmissionError, match="more than 3 lines"):
        scorer.score(frame, tmp_path / "t.jsonl")
    monkeypatch.setattr(file_pass, "MAX_LINES", 5)
    assert scorer.score(frame, tmp_path / "t.jsonl").counts["rows_duplicate"] == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases(), ranked=st.booleans(), seed=st.integers(0, 2**31))
def test_long_form_scores_as_its_grouped_csv(tmp_path, case, ranked, seed):
    truth, rows = case
    groups = {}
    for session, type_name, labels in rows:  # the long form has one list per (session, type): the first row's
        if session is not None and type_name != "views":
            groups.setdefault((session, type_name), [x for x in labels or [] if x != NULL and x != NEGATIVE])
    wide = [(s, t, labels) for (s, t), labels in groups.items()]
    long = [(s, t, item, rank) for s, t, labels in wide for rank, item in enumerate(labels)]
    if ranked:
        long = [long[i] for i in np.random.default_rng(seed).permutation(len(long))]
    table = {"session": pa.array([r[0] for r in long], pa.int64()), "type": pa.array([r[1] for r in long], pa.string()), "aid": pa.array([r[2] for r in long], pa.int64())}
    if ranked:
        table["rank"] = pa.array([r[3] for r in long], pa.int64())
    (tmp_path / "t.jsonl").write_text(truth_lines(truth))
    (tmp_path / "s.csv").write_text(submission_text(csv_rows([row for row in wide if row[2]])))
    expected = scorer.score(tmp_path / "s.csv", tmp_path / "t.jsonl")
    got = scorer.score(pa.table(table), tmp_path / "t.jsonl")
    assert same_figures(got, expected)
    assert {c: n for c, n in got.report.counts.items() if c not in ("S010",)} == expected.report.counts


def test_truth_from_frames_equals_the_file(tmp_path):
    truth = {1: {"clicks": 4, "carts": [5, 6]}, 3: {"orders": [7]}, 8: {}}
    (tmp_path / "t.jsonl").write_text(truth_lines(truth))
    from_file = scorer.load_truth(tmp_path / "t.jsonl", competition="otto")
    long = pd.DataFrame({"session": [1, 1, 1, 3, 8], "type": ["clicks", "carts", "carts", "orders", "clicks"],
                         "aid": pd.array([4, 5, 6, 7, None], dtype="Int64")})
    wide = pl.DataFrame({"session": [1, 3, 8], "clicks": [4, None, None], "carts": [[5, 6], None, []], "orders": [None, [7], None]})
    for frame in (long, wide):
        got = scorer.load_truth(frame, competition="otto")
        assert np.array_equal(got.sessions, from_file.sessions) and np.array_equal(got.indptr, from_file.indptr)
        assert np.array_equal(got.items, from_file.items)
    sub = pl.DataFrame({"session_type": ["1_carts"], "labels": [[6, 5]]})
    assert scorer.score(sub, long).score == scorer.score(sub, tmp_path / "t.jsonl").score


def test_truth_frame_errors_name_the_row():
    with pytest.raises(TruthError, match="row 1: unknown type 'views'"):
        scorer.load_truth(pd.DataFrame({"session": [1, 2], "type": ["carts", "views"], "aid": [1, 2]}))


def test_string_shape_frames(tmp_path):
    (tmp_path / "t.csv").write_text("customer_id,prediction\na,0108 0200\nb,0300\n")
    (tmp_path / "s.csv").write_text("customer_id,prediction\na,0200 0108 0999\nb,\n")
    expected = scorer.score(tmp_path / "s.csv", tmp_path / "t.csv", competition="hm")
    frame = pd.DataFrame({"customer_id": ["a", "b"], "prediction": [["0200", "0108", "0999"], []]})
    assert same_figures(scorer.score(frame, tmp_path / "t.csv", competition="hm"), expected)
    truth = scorer.load_truth(pl.DataFrame({"customer_id": ["a", "b"], "prediction": [["0108", "0200"], ["0300"]]}), competition="hm")
    assert same_figures(scorer.score(frame, truth, competition="hm"), expected)


def test_frames_do_not_import_polars_for_pandas():
    import subprocess
    import sys

    code = ("import sys, pandas as pd, scorer; scorer.validate(pd.DataFrame({'session_type': ['1_clicks'], 'labels': [[1]]}));"
            "print('polars' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_a_frame_of_other_columns_is_a_usage_error():
    with pytest.raises(UsageError, match="expected 'session_type' and 'labels'"):
        scorer.score(pd.DataFrame({"a": [1]}), scorer.load_truth(pd.DataFrame({"session": [1], "type": ["clicks"], "aid": [1]})))


def test_record_batch_reader_and_validation_without_truth():
    table = pa.table({"session_type": ["1_clicks", "2_carts", "1_clicks"], "labels": [[1], None, [2]]})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=1))
    result = scorer.validate(reader)
    repeat = next(p for p in result.problems if p.code == "S010")
    assert (repeat.row, repeat.line) == (2, None) and "repeats row 0" in repeat.message
    assert result.counts["rows_read"] == 3  # the null list is a row with no predictions


def test_rows_are_positions_whatever_the_pandas_index(tmp_path):
    (tmp_path / "t.jsonl").write_text(truth_lines({1: {"carts": [5]}}))
    frame = pd.DataFrame({"session_type": ["1_carts", "1_views"], "labels": [[5], [1]]}, index=[10, 20])
    assert {(p.code, p.row) for p in scorer.validate(frame, tmp_path / "t.jsonl").problems} >= {("S005", 1)}


def test_a_null_list_is_an_empty_field(tmp_path):
    (tmp_path / "t.jsonl").write_text(truth_lines({1: {"carts": [5], "clicks": 3}}))
    (tmp_path / "s.csv").write_text(submission_text(["1_clicks,3", "1_carts,", "1_orders,"]))
    frame = pl.DataFrame({"session_type": ["1_clicks", "1_carts", "1_orders"], "labels": [[3], None, None]})
    got, expected = scorer.score(frame, tmp_path / "t.jsonl", strict=True), scorer.score(tmp_path / "s.csv", tmp_path / "t.jsonl", strict=True)
    assert same_figures(got, expected) and got.score is not None and got.report.counts == expected.report.counts == {}
