"""Issue 25, newcomer frictions: metric lists with options, hints for swapped columns and tab-separated files,
the report's figure."""

from __future__ import annotations

import json
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

import pytest

from conftest import full_rows, submission_text, truth_lines
from scorer.cli.main import main
from scorer.spec.metrics import split_metrics

TRUTH = {1: {"clicks": 5, "carts": [6, 7], "orders": [8]}, 2: {"clicks": 9}}


def run(*argv) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*map(str, argv), "--no-progress"])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    submission = tmp_path / "sub.csv"
    submission.write_text(submission_text(full_rows(TRUTH, {(1, "clicks"): [5, 3], (1, "carts"): [6], (2, "clicks"): [4, 9]})))
    return submission, truth


# -- --metrics: commas inside an option list ------------------------------------------------------------------
def test_metric_lists_split_only_outside_parentheses():
    assert split_metrics("recall@3(average=macro,empty=zero)") == ["recall@3(average=macro,empty=zero)"]
    assert split_metrics("recall@3(average=macro, empty=zero), map@5 ,,ndcg@2") == [
        "recall@3(average=macro, empty=zero)", "map@5", "ndcg@2"]
    assert split_metrics("") == []


def test_metrics_option_with_two_options_scores(files):
    submission, truth = files
    code, out, err = run("score", submission, "--truth", truth, "--metrics", "recall@3(average=macro,empty=zero)", "--format", "json")
    assert code == 0, err
    assert "recall@3(average=macro,empty=zero)" in json.loads(out)["metrics"]["clicks"]
    code, _, err = run("score", submission, "--truth", truth, "--metrics", "recall@3(average=macro,empty=zero")
    assert code == 2 and "bad metric syntax" in err
