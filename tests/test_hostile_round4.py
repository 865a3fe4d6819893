"""Round 4 of the hostile trials (issue 29): the newer commands held to the core's contract.

Exit 0, 1 or 2 with one sentence that names the cause; never exit 3, a traceback, a hang or unbounded memory;
nothing lost; the same figures for the same content. Files a user hands back to us (receipts, grade records,
bundles, compiled truths) are inputs like submissions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

import pytest

from scorer.cli.main import main

OTTO_SUBMISSION, OTTO_TRUTH = "fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl"


def run_cli(*argv) -> tuple[int, str, str]:
    """`scorer ARGV` in this process: (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(map(str, argv)))
    return code, out.getvalue(), err.getvalue()


def run_process(*args: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in a child process: a hang fails the test instead of stopping the run."""
    return subprocess.run([sys.executable, "-m", "scorer", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "SCORER_DEBUG": "", **(env or {})})


def one_sentence(stderr: str) -> str:
    """The error line of a refusal: exactly one, and no traceback."""
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("scorer: error:")]
    assert len(errors) == 1, stderr
    return errors[0]


# -- receipts -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def receipt() -> dict:
    code, out, _ = run_cli("score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--format", "json", "--split", "public=0.5",
                           "--bootstrap", "5")
    assert code == 0
    return json.loads(out)["receipt"]


def changed(document: dict, where: str, value) -> dict:
    """A deep copy of the document with the field at the dotted path set to value."""
    document = json.loads(json.dumps(document))
    *outer, last = where.split(".")
    inner = document
    for key in outer:
        inner = inner[key]
    inner[last] = value
    return document


@pytest.mark.parametrize("where, value, expected", [
    ("split", "half", "field 'split' is 'half'"),
    ("bootstrap.resamples", "many", "field 'bootstrap.resamples' is 'many', expected a whole number from 1 to 100,000"),
    ("bootstrap.resamples", 10**12, "field 'bootstrap.resamples' is 1,000,000,000,000"),
    ("bootstrap.level", float("nan"), "field 'bootstrap.level' is NaN"),
    ("bootstrap", [1, 2], "field 'bootstrap' is a list"),
    ("split.public", 7, "field 'split.public' is 7"),
    ("split.seed", -1, "field 'split.seed' is -1"),
    ("mode", None, "field 'mode' is null"),
    ("figures.score", "0.3", "field 'figures.score' is '0.3'"),
    ("figures.metrics", {"clicks": {"recall@20": float("inf")}}, "field 'figures.metrics.clicks.recall@20' is Infinity"),
    ("competition", "otto", "field 'competition' is 'otto'"),
    ("competition.metrics", {"a": 1}, "field 'competition.metrics' is an object"),
    ("scorer.version", 3, "field 'scorer.version' is 3"),
    ("receipt", True, "field 'receipt' is true"),
    ("extra", 1, "field 'extra' is unknown"),
])
def test_a_receipt_field_of_the_wrong_type_or_range_is_named(tmp_path, receipt, where, value, expected):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(changed(receipt, where, value)))
    code, _, err = run_cli("verify", path, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2, err
    assert expected in one_sentence(err) and "r.json" in err


def test_a_receipt_nested_100000_deep_or_not_json_is_refused(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run_cli("verify", deep, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2 and "more than 64 deep" in one_sentence(err)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run_cli("verify", binary, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2 and "not JSON" in one_sentence(err)


def test_a_receipt_naming_a_path_as_its_competition_reads_no_file_outside_the_configs(tmp_path, receipt):
    config = tmp_path / "evil.toml"
    config.write_text("this is not read")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(changed(receipt, "competition.name", os.path.relpath(tmp_path / "evil", "scorer/spec/configs"))))
    code, _, err = run_cli("verify", path, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2 and "unknown competition" in one_sentence(err)


@pytest.mark.parametrize("kind", ["fifo", "zero", "folder"])
def test_a_receipt_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    path = {"zero": "/dev/zero", "folder": str(tmp_path)}.get(kind, str(tmp_path / "fifo"))
    if kind == "fifo":
        os.mkfifo(path)
    elif not os.path.exists(path):
        pytest.skip(f"no {path} here")
    done = run_process("verify", path, OTTO_SUBMISSION, "--truth", OTTO_TRUTH, timeout=60)
    assert done.returncode == 2 and "not a regular file" in one_sentence(done.stderr)
