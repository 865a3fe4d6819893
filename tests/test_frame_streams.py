"""Frames read as streams (a polars LazyFrame, a pyarrow RecordBatchReader) score as their file does, to the last bit,
without being collected whole; anything that is neither a path nor a frame is refused with a sentence naming what is."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pytest

import scorer
from scorer import frames
from scorer.engine import frame_pass

TRUTH = "fixtures/otto_truth.jsonl"
ROWS = ["session_type,labels", "1_clicks,10 99", "1_carts,21", "1_orders,30 40", "2_clicks,5 11", "2_carts,",
        "2_orders,7 x", "3_clicks,1", "3_carts,1", "3_orders,1", "4_clicks,3", "1_clicks,10"]  # a bad item, an unknown session, a repeat


def _same(a: dict, b: dict) -> None:
    """Two results' JSON, equal but for the submission's name and the seconds."""
    for out in (a, b):
        out.pop("seconds"), out.pop("submission")
    assert a == b


@pytest.fixture
def submission(tmp_path):
    path = tmp_path / "submission.csv"
    path.write_text("\n".join(ROWS) + "\n")
    return path


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 2 rows and stream chunks of 3: rows cross the batches' edges."""
    monkeypatch.setattr(frame_pass, "TEXT_ROWS", 2)
    monkeypatch.setattr(frames, "STREAM_ROWS", 3)


@pytest.fixture
def never_collected(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the LazyFrame was collected whole")

    monkeypatch.setattr(pl.LazyFrame, "collect", refuse)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_scanned_csv_scores_as_its_file(submission, small_pieces, never_collected, threads):
    expected = scorer.score(submission, TRUTH, threads=threads)
    result = scorer.score(pl.scan_csv(submission, schema_overrides={"labels": pl.String}), TRUTH, threads=threads)
    assert result.submission == f"<polars LazyFrame: {len(ROWS) - 1} rows, columns session_type, labels>"
    assert [p.row for p in result.problems if p.code == "S008"] == [5]  # the sixth row, in the second chunk
    expected_json, result_json = expected.to_dict(), result.to_dict()
    assert [(p["code"], p["line"]) for p in expected_json.pop("problems")] == [(p["code"], p["row"] + 2) for p in result_json.pop("problems")]
    _same(expected_json, result_json)  # the file's line is the row + 2 (its header)


def test_a_scanned_parquet_of_lists_scores_as_its_file(tmp_path, small_pieces, never_collected):
    path = tmp_path / "submission.parquet"
    ids = ["1_clicks", "1_carts", "1_orders", "2_clicks", "2_orders", "3_clicks", "3_orders"]
    labels = [[10, 99], [21], [30, 40], [5, 11], [7, 0], [1], [1]]
    pl.DataFrame({"session_type": ids, "labels": labels}).write_parquet(path)
    csv = tmp_path / "submission.csv"
    csv.write_text("session_type,labels\n" + "".join(f"{i},{' '.join(map(str, items))}\n" for i, items in zip(ids, labels)))
    _same(scorer.score(csv, TRUTH).to_dict(), scorer.score(pl.scan_parquet(path), TRUTH).to_dict())


def test_a_record_batch_reader_is_read_a_batch_at_a_time(submission, small_pieces):
    table = pl.read_csv(submission, schema_overrides={"labels": pl.String}).to_arrow()
    handed = []

    def batches():
        for batch in table.to_batches(max_chunksize=2):
            handed.append(batch.num_rows)
            yield batch

    reader = pa.RecordBatchReader.from_batches(table.schema, batches())
    result = scorer.score(reader, TRUTH)
    assert sum(handed) == table.num_rows and len(handed) > 1
    _same(scorer.score(table, TRUTH).to_dict(), result.to_dict())


def test_an_empty_lazy_frame_scores_as_an_empty_file(tmp_path, never_collected):
    empty = pl.LazyFrame(schema={"session_type": pl.String, "labels": pl.List(pl.Int64)})
    result = scorer.score(empty, TRUTH)
    assert result.counts["rows_read"] == 0 and result.counts["rows_missing"] == 9


@pytest.mark.parametrize("bad, kind", [({"session_type": ["1_clicks"]}, "dict"), ([["1_clicks", "10"]], "list"), (3, "int"),
                                       (b"submission.csv", "bytes")])
def test_what_is_neither_a_path_nor_a_frame_is_refused_with_what_is_accepted(bad, kind):
    accepted = "give a file path (str or pathlib.Path) or a data frame: a pandas or polars DataFrame, a polars LazyFrame"
    for call, what in ((lambda: scorer.score(bad, TRUTH), "the submission"), (lambda: scorer.validate(bad), "the submission"),
                       (lambda: scorer.score("fixtures/otto_submission.csv", bad), "the truth"),
                       (lambda: scorer.load_truth(bad), "the truth"), (lambda: scorer.candidates(bad, TRUTH), "the candidate table")):
        with pytest.raises(scorer.UsageError) as caught:
            call()
        assert str(caught.value).startswith(f"{what} is of type {kind}: {accepted}")


def test_a_lazy_truth_and_candidate_table_are_read(tmp_path):
    truth = pl.LazyFrame({"session": [1, 1, 2], "type": ["clicks", "orders", "clicks"], "aid": [10, 30, 11]})
    result = scorer.score("fixtures/otto_submission.csv", truth)
    assert result.truth_sessions == {"clicks": 2, "carts": 0, "orders": 1}


def test_a_lazy_frame_whose_query_fails_is_a_usage_error_naming_it(tmp_path, submission):
    missing = pl.scan_csv(tmp_path / "missing.csv")
    with pytest.raises(scorer.UsageError, match=r"^the polars LazyFrame could not be read: .*missing.csv"):
        scorer.score(missing, TRUTH)
    uncastable = pl.scan_csv(submission).with_columns(pl.col("labels").cast(pl.Int64))  # fails once its rows are read
    with pytest.raises(scorer.UsageError, match=r"^the polars LazyFrame could not be read: conversion from `str` to `i64` failed"):
        scorer.score(uncastable, TRUTH)
