"""`scorer validate`: exit codes, strict and lenient, the report's text and JSON, the clean twin, regressions."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import scorer
from conftest import HEADER, TYPES, full_rows, submission_text
from scorer.cli.main import main
from scorer.errors import UsageError

FIXTURES = Path(__file__).parent.parent / "fixtures"
TRUTH = FIXTURES / "otto_truth.jsonl"
SUBMISSION = FIXTURES / "otto_submission.csv"


def _codes(result) -> dict[str, int]:
    return dict(result.report.counts)


def _dirty_twin(clean: bytes) -> bytes:
    """The same rows with a BOM, CRLF line ends, every field quoted and no final line end."""
    lines = clean.decode().rstrip("\n").split("\n")
    quoted = [lines[0]] + ['"{}","{}"'.format(*line.split(",", 1)) for line in lines[1:]]
    return b"\xef\xbb\xbf" + "\r\n".join(quoted).encode()


def _random_case(seed: int):
    rng = random.Random(seed)
    truth = {}
    for session in rng.sample(range(1, 10_000), 40):
        labels = {}
        if rng.random() < 0.8:
            labels["clicks"] = rng.randrange(50)
        for name in ("carts", "orders"):
            if rng.random() < 0.5:
                labels[name] = rng.sample(range(50), rng.randrange(1, 6))
        truth[session] = labels
    predictions = {(s, t): rng.sample(range(50), rng.randrange(0, 21)) for s in truth for t in TYPES}
    return truth, full_rows(truth, predictions)


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_dirty_twin_scores_exactly_as_the_clean_one(files, tmp_path, seed):
    if seed is None:
        clean, truth_path = SUBMISSION, TRUTH
    else:
        clean, truth_path = files(*_random_case(seed))
    dirty = tmp_path / f"dirty-{clean.name}"  # never beside the bundled fixture
    dirty.write_bytes(_dirty_twin(clean.read_bytes()))
    want, got = scorer.score(clean, truth_path, strict=True), scorer.score(dirty, truth_path, strict=True)
    assert want.score is not None and got.score == want.score
    assert got.metrics == want.metrics and got.counts == want.counts
    assert not want.problems and {p.severity for p in got.problems} == {"note"}
    n_lines = clean.read_bytes().count(b"\n")
    assert _codes(got) == {"S018": 1, "S019": n_lines - 1, "S020": 2 * (n_lines - 1)}
    assert main(["validate", str(dirty), "--truth", str(truth_path)]) == 0


def test_crlf_is_noted_once_and_counted_for_every_line(tmp_path, capsys):
    path = tmp_path / "crlf.csv"
    path.write_bytes(SUBMISSION.read_bytes().replace(b"\n", b"\r\n"))
    result = scorer.validate(path, TRUTH)
    assert [p.code for p in result.problems] == ["S019"] and result.report.counts["S019"] == 10
    assert main(["validate", str(path)]) == 0
    assert "S019 note: CRLF line ends — 10 in all (showing 1)" in capsys.readouterr().out


@pytest.mark.parametrize("extra, code", [("1_clicks,5", "S010"), ("9_orders,5", "S012")])
def test_row_problems_are_errors_unless_lenient(tmp_path, capsys, extra, code):
    path = tmp_path / "sub.csv"
    path.write_bytes(SUBMISSION.read_bytes() + extra.encode() + b"\n")
    assert main(["validate", str(path), "--truth", str(TRUTH)]) == 1
    assert f"{code} error" in capsys.readouterr().out
    assert main(["validate", str(path), "--truth", str(TRUTH), "--lenient"]) == 0
    assert f"{code} warning" in capsys.readouterr().out


def test_missing_rows_give_the_count_and_the_first_five_ids(tmp_path):
    path = tmp_path / "sub.csv"
    path.write_text(HEADER + "\n3_orders,1\n")
    result = scorer.validate(path, TRUTH)
    [missing] = [p for p in result.problems if p.code == "S011"]
    assert missing.severity == "error" and result.report.counts["S011"] == 8
    assert missing.message == "8 rows are missing (every row of the truth must be there); first: 1_clicks, 1_carts, 1_orders, 2_clicks, 2_carts"
    assert scorer.validate(path, TRUTH, strict=False).problems[0].severity == "warning"


def test_unknown_sessions_list_only_real_rows(tmp_path):
    # regression: fewer unknown rows than ids shown used to print "0 (line 0)" fillers
    path = tmp_path / "sub.csv"
    path.write_bytes(SUBMISSION.read_bytes() + b"77_carts,1\n")
    [unknown] = [p for p in scorer.validate(path, TRUTH).problems if p.code == "S012"]
    assert unknown.message.endswith("first: 77 (line 11)") and unknown.line == 11


def test_duplicate_row_without_truth_names_both_lines(tmp_path):
    path = tmp_path / "sub.csv"
    path.write_text(submission_text([(5, "carts", [1]), (6, "carts", [2]), (5, "carts", [3]), (5, "carts", [4])]))
    result = scorer.validate(path)
    assert [(p.line, p.message) for p in result.problems if p.code == "S010"] == [
        (4, "row '5_carts' repeats line 2 (each row may appear once)"),
        (5, "row '5_carts' repeats line 4 (each row may appear once)")]


def test_last_line_without_line_end_quotes_only_its_own_bytes(tmp_path):
    # regression: the message of a last line without "\n" quoted the block's zero padding and stale bytes
    path = tmp_path / "sub.csv"
    path.write_bytes(HEADER.encode() + b"\n" + b"1_clicks," + b"1 " * 40 + b"\n" * 3 + b"\x01")
    for block_bytes in (16, 1 << 20):
        [problem] = [p for p in scorer.validate(path, block_bytes=block_bytes).problems if p.code == "S003"]
        assert problem.message.endswith("found one: '\\x01'") and problem.line == 5


def test_a_header_over_the_line_limit_is_reported_and_the_rows_still_read(tmp_path):
    # regression: a first line without "\n" within the limit swallowed the whole first block
    config = FIXTURES / "bad" / "limits_line.toml"
    path = tmp_path / "sub.csv"
    path.write_bytes(b"x" * 100 + b"\n1_clicks,1 1\n")
    result = scorer.validate(path, config=config)
    assert [(p.code, p.line, p.column) for p in result.problems] == [("S022", 1, 33), ("S014", 2, 12)]
    assert "line of 100 bytes" in result.problems[0].message


def test_caret_sits_under_the_bad_value_after_multibyte_text(tmp_path, capsys):
    path = tmp_path / "sub.csv"
    path.write_bytes(HEADER.encode() + b"\n1_clicks,1 2\n\xc3\xa9\xc3\xa9_clicks,1\n")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if "session id 'éé' is not an integer" in line)
    context, caret = out[at + 1], out[at + 2]
    assert context.endswith("| éé_clicks,1") and caret.endswith("| ^^")


def test_max_per_code_shows_the_first_n_and_counts_all(tmp_path, capsys):
    path = tmp_path / "sub.csv"
    path.write_text(submission_text([f"{s}_views,1" for s in range(1, 8)]))
    assert main(["validate", str(path), "--max-per-code", "2", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [p["line"] for p in out["problems"]] == [2, 3]
    assert out["problem_counts"] == [{"code": "S005", "severity": "error", "title": "unknown type", "count": 7, "shown": 2}]
    assert not out["valid"] and set(out) >= {"submission", "mode", "counts", "problems"}


def test_score_reports_the_same_problems(tmp_path, capsys):
    path = tmp_path / "sub.csv"
    path.write_bytes(SUBMISSION.read_bytes() + b"1_views,1\n")
    assert main(["score", str(path), "--truth", str(TRUTH)]) == 1  # lenient: the score is shown, and an error still exits 1
    out = capsys.readouterr().out
    assert "score  0.340000" in out and "line 11:3: unknown type 'views'" in out
    assert main(["score", str(path), "--truth", str(TRUTH), "--strict"]) == 1


@pytest.mark.parametrize("argv, code", [
    (["validate", "{sub}", "--config", "/nonexistent/c.toml"], 2),
    (["validate", "{sub}", "--truth", "/nonexistent/t.jsonl"], 2),
    (["validate", "/nonexistent/s.csv"], 1),
    (["validate", "{sub}", "--max-per-code", "-1"], 2),
    (["validate", "{sub}", "--format", "xml"], 2),
    (["validate", "{sub}", "--max-per-code", "1000000000"], 2),  # regression: was a MemoryError, exit 3
    (["score", "{sub}", "--truth", "{sub}", "--threads", "100000"], 2),
    (["validate", "{sub}"], 0),
])
def test_exit_codes(capsys, argv, code):
    assert main([arg.format(sub=SUBMISSION) for arg in argv]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err


def test_unreadable_submission_names_the_file(capsys, tmp_path):
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "S027 error" in out and str(tmp_path) in out


@pytest.mark.parametrize("option", [{"max_per_code": 10**9}, {"threads": 0}, {"threads": 2.5}, {"block_bytes": True}])
def test_options_that_would_exhaust_memory_are_usage_errors(option):
    with pytest.raises(UsageError, match=next(iter(option))):
        scorer.validate(SUBMISSION, **option)


@pytest.mark.parametrize("base", [5, 2**62])  # a key per row, and ids too large for one (sorted on three columns)
def test_repeated_rows_without_truth_whatever_the_ids(tmp_path, base):
    path = tmp_path / "sub.csv"
    path.write_text(submission_text([(base + 1, "orders", [1]), (base, "carts", [1]), (base + 1, "orders", [2]),
                                     (base, "clicks", []), (base, "carts", [3])]))
    repeats = [(p.line, p.message) for p in scorer.validate(path).problems]
    assert repeats == [(4, f"row '{base + 1}_orders' repeats line 2 (each row may appear once)"),
                       (6, f"row '{base}_carts' repeats line 3 (each row may appear once)")]
    path.write_text(submission_text([(base + s, t, [1]) for s in range(3) for t in TYPES]))  # in order: no sort
    assert scorer.validate(path).problems == []
