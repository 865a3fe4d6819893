"""scorer.compare: its to_dict() is `scorer compare --format json` to the last bit and its to_text() the command's text,
from files and frames; the paired per-session table; the display."""

from __future__ import annotations

import json

import polars as pl
import pytest

import scorer
from jobs_case import command, frame, make_case, same_as_command, still_clock


@pytest.fixture(autouse=True)
def _still(monkeypatch):
    still_clock(monkeypatch)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return make_case(tmp_path_factory.mktemp("jobs"))


def test_compare_is_the_command(case):
    _, truth, (a, b, _) = case
    options = ["--bootstrap", "300", "--seed", "3", "--split", "public=0.5", "--no-progress"]
    comparison = scorer.compare(a, b, truth, bootstrap=300, seed=3, split="public=0.5")
    same_as_command(comparison, "compare", a, b, "--truth", truth, *options)
    table = comparison.to_pandas()
    assert list(table["sessions"].unique()) == ["public", "private", "all"] and table.shape == (12, 11)
    assert comparison.exit_code == 0


def test_compare_of_frames_is_the_command_of_their_files(case):
    _, truth, (a, b, _) = case
    comparison = scorer.compare(frame(a), pl.scan_csv(b, schema_overrides={"labels": pl.String}), truth, bootstrap=200, seed=1)
    _, out = command("compare", a, b, "--truth", truth, "--bootstrap", "200", "--seed", "1", "--no-progress", "--format", "json")
    expected = json.loads(out)
    got = json.loads(comparison.to_json())
    for side, path in (("a", a), ("b", b)):
        assert got[side].pop("submission").startswith("<polars ") and expected[side].pop("submission") == path
        assert got["comparison"]["all"].pop(side).startswith("<polars ") and expected["comparison"]["all"].pop(side) == path
        for problem in got[side]["problems"] + expected[side]["problems"]:
            for key in ("line", "row", "column", "field"):
                problem.pop(key, None)
    assert got == expected


def test_compare_per_session_pairs_the_rows_and_counts_the_wins(case):
    _, truth, (a, b, _) = case
    comparison = scorer.compare(a, b, truth, bootstrap=50, per_session=True)
    paired = comparison.sessions.to_pandas()
    assert list(paired.columns) == ["session", "type", "line_a", "line_b", "hits_a", "hits_b", "denominator", "difference",
                                    "contribution", "outcome"]
    figures = comparison.figures["all"]
    for type_name, row in figures["types"].items():
        rows = paired[paired["type"] == type_name]
        counts = rows["outcome"].value_counts()
        assert (counts.get("win", 0), counts.get("tie", 0), counts.get("loss", 0)) == (row["wins"], row["ties"], row["losses"])
        assert rows["difference"].sum() / rows["denominator"].sum() == pytest.approx(row["difference"], abs=1e-15)
    assert paired["contribution"].sum() == pytest.approx(figures["score"]["difference"], abs=1e-12)
    by_session = paired.groupby("session")["contribution"].sum()
    assert ((by_session > 0).sum(), (by_session < 0).sum()) == (figures["score"]["wins"], figures["score"]["losses"])
    with pytest.raises(scorer.UsageError, match="per_session=True"):
        scorer.compare(a, b, truth, bootstrap=10).sessions


def test_compare_without_a_score_says_why_as_the_command(case, tmp_path):
    _, truth, (a, _, _) = case
    missing = str(tmp_path / "missing.csv")
    comparison = scorer.compare(a, missing, truth, bootstrap=10)
    code, out = command("compare", a, missing, "--truth", truth, "--bootstrap", "10", "--no-progress")
    assert (comparison.ok, comparison.exit_code, code) == (False, 1, 1) and comparison.to_text() + "\n" == out
    assert "no score" in comparison._repr_html_()


def test_compare_displays_escaped_html(case, tmp_path):
    _, truth, paths = case
    odd = tmp_path / "<img src=x onerror=alert(1)>.csv"
    odd.write_text(open(paths[0]).read())
    html = scorer.compare(str(odd), paths[1], truth, bootstrap=20)._repr_html_()
    assert html.startswith("<div>") and "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    with pytest.raises(scorer.UsageError, match="bootstrap must be a whole number"):
        scorer.compare(paths[0], paths[1], truth, bootstrap=-1)
