"""frame_rows' loop for the common row (no null values, at most k items) scores as the CSV of the same rows.

tests/test_frames.py draws null items in most frames, and a frame with one null value takes the general loop for
all its rows; here no value is null, so every row of at most k items takes the common row's loop, with negative
items, repeats, and rows at and just past k."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorer
from conftest import submission_text, truth_lines
from scorer.engine import frame_pass
from test_frames import NEGATIVE, csv_rows, frames_of, same_figures, truths, where

K = 20
few_items = st.integers(0, 12)  # a narrow range: repeats in a row are common
row_items = st.one_of(st.lists(st.one_of(few_items, few_items, few_items, st.just(NEGATIVE)), max_size=K + 2),
                      st.lists(st.integers(0, 40), min_size=K - 1, max_size=K + 1))


@st.composite
def rows_without_nulls(draw):
    truth = draw(truths)
    sessions = list(truth) + draw(st.lists(st.integers(0, 40), max_size=3))
    rows = [(session, t, draw(st.one_of(row_items, st.none())))
            for session in sessions for t in ("clicks", "carts", "orders") if draw(st.booleans())]
    return truth, draw(st.permutations(rows))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=rows_without_nulls(), form=st.sampled_from(["polars_parts", "arrow"]), threads=st.sampled_from([1, 2]),
       chunk=st.sampled_from([3, 1 << 20]))
def test_rows_without_nulls_score_as_their_csv(tmp_path, monkeypatch, case, form, threads, chunk):
    monkeypatch.setattr(frame_pass, "CHUNK_ROWS", chunk)
    truth, rows = case
    (tmp_path / "t.jsonl").write_text(truth_lines(truth))
    (tmp_path / "s.csv").write_text(submission_text(csv_rows(rows)))
    as_written = scorer.score(tmp_path / "s.csv", tmp_path / "t.jsonl", threads=threads, max_per_code=1000)
    got = scorer.score(frames_of(rows, form), tmp_path / "t.jsonl", threads=threads, max_per_code=1000)
    assert same_figures(got, as_written)
    assert got.counts == as_written.counts
    assert got.report.counts == as_written.report.counts
    assert where(got, header=False) == where(as_written, header=True)
