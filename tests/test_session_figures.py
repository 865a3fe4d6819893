"""scorer.score(..., per_session=True): result.sessions, one row per truth session and type, sums to every metric of
every bundled config exactly as the metric's definition says (docs/metrics.md), and to the score; Result's frames and
its display."""

from __future__ import annotations

import math

import numpy as np
import pyarrow.compute as pc
import pytest

import scorer
from scorer.spec.competition import bundled_names, load_competition
from scorer.spec.totals import RatingMean, RowRatio, SignedJaccard
from test_configs import SUBMISSIONS, TRUTHS, fixture


def files(name: str):
    if name == "otto":
        return "fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl"
    return fixture(name, SUBMISSIONS), fixture(name, TRUTHS)


def option(metric, name: str):
    return metric.option(name) if name in dict(metric.kind.options) else None


def total(metric, column: np.ndarray, truth: np.ndarray, present: np.ndarray, weight: np.ndarray | None) -> float | None:
    """The metric's total from its column of the table, written from its definition (docs/metrics.md), sums exact; weight:
    how many times each row counts, where the rules weigh rows (missing = skip, repeated_key = all)."""
    counted = np.ones(len(truth), bool) if option(metric, "empty") == "zero" else truth > 0
    kind, k = metric.kind.name, metric.k
    if kind in ("rmse", "mae"):
        use = (truth > 0) & present
        mean = column[use].sum() / use.sum() if use.any() else None  # numpy's sum, as the engine's: not an exact one
        return None if mean is None else math.sqrt(mean) if kind == "rmse" else mean
    if kind == "signed_jaccard":  # a sum: b + J per row given with truth, -b per row given without; b = share of rows with truth
        given = present.astype(np.float64) if weight is None else weight
        share = np.count_nonzero(truth > 0) / len(truth)
        return math.fsum(np.where(truth > 0, column, 0.0)) + share * float(given[truth > 0].sum() - given[truth <= 0].sum())
    n = int(counted.sum())
    if n == 0:
        return None
    if kind == "recall" and option(metric, "average") == "micro":
        d = np.minimum(truth, k) if option(metric, "denominator") == "min" else truth
        return math.fsum(column) / (int(d.sum()) if weight is None else float((d * weight).sum())) if d.sum() else None
    if weight is not None:  # a mean over the rows that count, each as many times as it counts: Σ figure / Σ weight
        figure = {"precision": column / (k or 1), "hitrate": (column > 0).astype(np.float64)}.get(kind, column)
        return math.fsum(figure[counted]) / float(weight[counted].sum())
    if kind == "recall":
        d = np.minimum(truth, k) if option(metric, "denominator") == "min" else truth
        return math.fsum(np.divide(column, d, out=np.zeros(len(d)), where=d > 0)) / n
    if kind == "precision":
        return math.fsum(column) / (k * n)
    if kind == "hitrate":
        return int(np.count_nonzero(column[counted])) / n
    if kind == "f1@k":
        return math.fsum(2.0 * column / (k + truth)) / n
    if kind == "map" and option(metric, "denominator") == "truth":
        return math.fsum(column * np.divide(np.minimum(truth, k), truth, out=np.zeros(len(truth)), where=truth > 0)) / n
    if kind == "auc" and option(metric, "weight") == "candidates":
        return math.fsum(column * truth) / int(truth.sum())
    return math.fsum(column[counted]) / n  # a mean over the rows that count: map, ndcg, mrr, jaccard, set f1, auc, ...


@pytest.mark.parametrize("name", bundled_names())
def test_the_per_session_table_sums_to_every_metric_and_the_score(name):
    submission, truth = files(name)
    result = scorer.score(submission, truth, name, per_session=True)
    competition = load_competition(name)
    table = result.sessions
    weighted_rows = "weight" in table.column_names
    fixed = ["session", "type", "line", "truth", *(["weight"] if weighted_rows else []), "hits", "denominator"]
    assert table.column_names[: len(fixed)] == fixed
    per_row = [m for m in competition.metrics if isinstance(m.kind.total, (RowRatio, RatingMean, SignedJaccard))]
    assert table.column_names[len(fixed):] == [str(m) for m in per_row]
    weighted = 0.0
    for type_name in competition.types:
        rows = table.filter(pc.equal(table["type"].cast("string"), type_name))
        truth_sizes = rows["truth"].to_numpy()
        present = rows["line"].is_valid().to_numpy(zero_copy_only=False)
        weight = rows["weight"].to_numpy() if weighted_rows else None
        assert len(truth_sizes) >= result.truth_sessions[type_name]  # a row per session with truth of the type (or every one)
        for metric in per_row:
            expected = result.metrics[type_name][str(metric)]
            got = total(metric, rows[str(metric)].to_numpy(), truth_sizes, present, weight)
            if metric.kind.name in ("rmse", "mae"):
                assert got == pytest.approx(expected, rel=1e-12), (type_name, metric)
            else:
                assert got == expected, (type_name, metric)  # to the last bit
        scored = result.metrics[type_name][result.scored_metric]
        if rows["hits"].null_count == 0 and len(rows) and scored is not None:  # the scored metric as a ratio of its parts
            hits, denominator = rows["hits"].to_numpy(), rows["denominator"].to_numpy()
            assert math.fsum(hits) / math.fsum(denominator) == scored
        weighted += competition.weights[competition.types.index(type_name)] * (scored or 0.0)
    assert weighted == result.score


def test_otto_rows_are_the_truth_rows_with_their_lines_and_hits():
    result = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl", per_session=True)
    rows = result.sessions.to_pylist()
    assert [(r["session"], r["type"], r["line"], r["truth"], r["hits"], r["denominator"]) for r in rows] == [
        (1, "clicks", 2, 1, 1.0, 1.0), (2, "clicks", 5, 1, 1.0, 1.0), (1, "carts", 3, 1, 0.0, 1.0),
        (1, "orders", 4, 4, 1.0, 4.0), (2, "orders", 7, 1, 1.0, 1.0)]


def test_a_frame_keeps_the_same_per_session_figures():
    import polars as pl

    from_file = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl", per_session=True).sessions
    frame = pl.read_csv("fixtures/otto_submission.csv", schema_overrides={"labels": pl.String})
    from_frame = scorer.score(frame, "fixtures/otto_truth.jsonl", per_session=True).sessions
    assert from_frame.drop(["line"]).equals(from_file.drop(["line"]))
    assert [line + 1 for line in from_frame["line"].to_pylist()] == from_file["line"].to_pylist()  # a frame's row + 1; the file's line counts its header


def test_without_per_session_the_table_is_asked_for_by_name():
    result = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl")
    with pytest.raises(scorer.UsageError, match=r"score with per_session=True"):
        result.sessions
    unread = scorer.score("no-such-file.csv", "fixtures/otto_truth.jsonl", per_session=True)
    with pytest.raises(scorer.UsageError, match="could not be read"):
        unread.sessions


def test_result_frames_hold_a_row_per_type():
    result = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl")
    frame = result.to_pandas()
    assert list(frame.columns) == ["type", "weight", "recall@20", "map@20", "ndcg@20", "sessions"]
    assert frame.set_index("type")["recall@20"].to_dict() == {t: v["recall@20"] for t, v in result.metrics.items()}
    assert result.to_polars().to_dicts() == frame.to_dict("records")


def test_without_pandas_or_polars_the_frame_says_what_to_install(monkeypatch):
    import sys

    result = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl")
    for method, library in ((result.to_pandas, "pandas"), (result.to_polars, "polars")):
        monkeypatch.setitem(sys.modules, library, None)  # its import fails, as where it is not installed
        with pytest.raises(scorer.UsageError, match=rf"^Result.to_{library}\(\) needs {library}, which is not installed here: pip install {library}$"):
            method()


def test_the_display_escapes_what_a_participant_chose(tmp_path):
    path = tmp_path / "<b>x<i>.csv"
    path.write_text("session_type,labels\n1_clicks,10\n<script>_clicks,1\n")
    html = scorer.score(path, "fixtures/otto_truth.jsonl")._repr_html_()
    assert "<script>" not in html and "<b>x<i>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;x&lt;i&gt;" in html
    assert "S006" in html and "line 3:1" in html and "score 0.05" in html and "recall@20" in html
    assert "score none:" in scorer.score(tmp_path / "none.csv", "fixtures/otto_truth.jsonl")._repr_html_()
