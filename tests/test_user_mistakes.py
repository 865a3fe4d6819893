"""Common mistakes when writing a submission: lenient mode still shows the score, exits 1 on any error, and the
message names the likely cause."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import full_rows, run_cli, submission_text, truth_lines

TRUTH = {1: {"clicks": 5, "carts": [6, 7], "orders": [8]}, 2: {"clicks": 9}}
GOOD = full_rows(TRUTH, {(1, "clicks"): [5], (1, "carts"): [6, 7], (2, "clicks"): [9, 3]})


run = run_cli


@pytest.fixture
def truth(tmp_path):
    path = tmp_path / "truth.jsonl"
    path.write_text(truth_lines(TRUTH))
    return path


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.csv"
    path.write_text(submission_text(GOOD))
    return path


def frame(good) -> pd.DataFrame:
    return pd.read_csv(good, dtype=str, keep_default_na=False)


def written(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def lenient(submission, truth) -> tuple[int, dict, str]:
    """Exit code, JSON output and the text output of a lenient score."""
    code, out, _ = run("score", submission, "--truth", truth, "--format", "json")
    assert run("score", submission, "--truth", truth)[0] == code
    return code, json.loads(out), run("score", submission, "--truth", truth)[1]


def messages(report: dict) -> str:
    return "\n".join(problem["message"] for problem in report["problems"])


def test_a_clean_file_and_a_file_with_only_warnings_exit_0(good, truth, tmp_path):
    assert run("score", good, "--truth", truth)[0] == 0
    partial = written(tmp_path, "partial.csv", submission_text(GOOD[:-1]))  # a missing row: a warning in lenient mode
    code, report, _ = lenient(partial, truth)
    assert code == 0 and report["valid"] and report["score"] is not None


def test_pandas_index_column(good, truth, tmp_path):
    path = tmp_path / "indexed.csv"
    frame(good).to_csv(path)  # index=True: ",session_type,labels" and "0,1_clicks,5"
    code, report, text = lenient(path, truth)
    assert code == 1 and report["score"] == 0.0 and not report["valid"]
    assert text.startswith("score  0.000000")
    assert "looks like a pandas index column: write with index=False" in messages(report)
    assert {p["code"] for p in report["problems"]} >= {"S002", "S003"}
    assert all("index=False" in p["message"] for p in report["problems"] if p["code"] == "S003")


def test_pandas_index_column_without_header(good, truth, tmp_path):
    path = tmp_path / "indexed.csv"
    frame(good).to_csv(path, header=False)
    code, report, _ = lenient(path, truth)
    header = next(p for p in report["problems"] if p["code"] == "S002")
    assert code == 1 and "header missing" in header["message"] and "index=False" in header["message"]


@pytest.mark.parametrize("written_as, code", [('"[5, 1]"', "S008"), ("[5, 1]", "S003"), ("[5]", "S008"), ("[]", "S008")])
def test_labels_written_as_a_python_list(good, truth, tmp_path, written_as, code):
    text = good.read_text().replace("1_clicks,5\n", f"1_clicks,{written_as}\n")
    exit_code, report, _ = lenient(written(tmp_path, "list.csv", text), truth)
    assert exit_code == 1 and report["score"] is not None
    assert "looks like a Python list" in next(p["message"] for p in report["problems"] if p["code"] == code)
    assert report["counts"]["rows_with_errors"] == 1 and report["metrics"]["clicks"]["recall@20"] == 0.5


def test_pandas_writes_a_list_column_as_python_lists(good, truth, tmp_path):
    lists = frame(good)
    lists["labels"] = lists["labels"].map(lambda text: [int(item) for item in text.split()])
    path = tmp_path / "lists.csv"
    lists.to_csv(path, index=False)
    code, report, _ = lenient(path, truth)
    assert code == 1 and report["score"] == 0.0 and "looks like a Python list" in messages(report)


@pytest.mark.parametrize("name, text", [
    ("truth.jsonl", truth_lines(TRUTH)),
    ("truth.csv", "session,type,aid\n1,0,5\n1,1,6\n"),
])
def test_a_truth_file_given_as_the_submission(truth, tmp_path, name, text):
    code, report, _ = lenient(written(tmp_path, name, text), truth)
    header = next(p for p in report["problems"] if p["code"] == "S002")
    assert code == 1 and "this looks like a truth file" in header["message"] and "arguments swapped?" in header["message"]


@pytest.mark.parametrize("first_line, says", [
    ("session,labels", "header is 'session,labels'; expected 'session_type,labels'"),
    (None, "header missing: line 1 is a data row"),
])
def test_a_wrong_or_missing_header(good, truth, tmp_path, first_line, says):
    lines = good.read_text().splitlines(keepends=True)
    text = (first_line + "\n" if first_line else "") + "".join(lines[1:])
    code, report, _ = lenient(written(tmp_path, "header.csv", text), truth)
    assert code == 1 and report["score"] is not None and says in messages(report)


def test_arguments_swapped(good, truth):
    code, _, err = run("score", truth, "--truth", good)
    assert code == 2 and "arguments swapped?" in err and "scorer score SUBMISSION --truth TRUTH" in err


def test_a_bad_truth_that_is_no_submission_gets_no_swap_hint(good, tmp_path):
    code, _, err = run("score", good, "--truth", written(tmp_path, "odd.csv", "a,b\n1,2\n"))
    assert code == 2 and "arguments swapped" not in err


def test_strict_mode_is_unchanged_no_score_and_exit_1(good, truth, tmp_path):
    bad = written(tmp_path, "bad.csv", good.read_text().replace("1_clicks,5\n", "1_clicks,5 x\n"))
    code, out, _ = run("score", bad, "--truth", truth, "--strict", "--format", "json")
    assert code == 1 and json.loads(out)["score"] is None


def test_lenient_errors_say_so_on_stderr_and_validate_agrees(good, truth, tmp_path):
    bad = written(tmp_path, "bad.csv", good.read_text().replace("1_clicks,5\n", "1_clicks,5 x\n"))
    code, out, err = run("score", bad, "--truth", truth)
    assert code == 1 and out.startswith("score  ") and "lines with an error score 0" in err
    assert run("validate", bad, "--lenient")[0] == 1
    assert run("validate", good, "--truth", truth)[0] == 0
