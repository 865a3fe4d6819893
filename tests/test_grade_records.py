"""`scorer grade`'s results file (append, repair, resume), its end-of-run leaderboard and its progress bar: no cluster needed."""

from __future__ import annotations

import io
import json

import pytest

from scorer.cli.grade import _Bar
from scorer.cli.grade_report import first_problem, leaderboard, line
from scorer.cli.main import main
from scorer.dask.results_file import Busy, open_results, resume_key, status
from scorer.dask.tasks import submission_key
from scorer.spec.competition import load_competition

OTTO = load_competition("otto")


def scored(name, score, **extra):
    return {"file": name, "path": f"/data/{name}", "content_key": f"key-{name}", "valid": True, "score": score,
            "status": "scored", **extra}


def invalid(name, code="S011", line=None, message="rows are missing"):
    problem = {"code": code, "severity": "error", "line": line, "column": None, "message": message}
    return {"file": name, "path": f"/data/{name}", "content_key": f"key-{name}", "valid": False, "score": None,
            "problems": [{"code": "S014", "severity": "warning", "line": 3, "column": 1, "message": "a warning first"}, problem],
            "status": "invalid"}


def write_lines(path, records, tail=b""):
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)


def test_a_torn_last_line_is_removed_and_the_lines_before_are_left_byte_for_byte(tmp_path):
    path = tmp_path / "results.jsonl"
    kept = [scored("a.csv", 0.5, receipt={"sha256": "ab12", "signed": "someone"}), invalid("b.csv")]
    write_lines(path, kept, tail=json.dumps(scored("c.csv", 0.7)).encode()[:40])
    before = path.read_bytes()
    opened = open_results(str(path))
    try:
        assert "cut short" in opened.repaired
        assert opened.records == kept  # fields this scorer does not know (a receipt) are read and kept as they are
        opened.append(scored("c.csv", 0.7))
    finally:
        opened.close()
    lines = path.read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:2]) == before[: before.rindex(b"\n") + 1]
    assert [json.loads(text) for text in lines] == [*kept, scored("c.csv", 0.7)]


def test_a_whole_last_record_without_its_newline_is_kept_once(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(json.dumps(scored("a.csv", 0.5)).encode())  # killed between the record and its newline
    opened = open_results(str(path))
    opened.append(scored("b.csv", 0.6))
    opened.close()
    assert [json.loads(text) for text in path.read_text().splitlines()] == [scored("a.csv", 0.5), scored("b.csv", 0.6)]
    fresh = open_results(str(tmp_path / "other.jsonl"))
    fresh.close()
    assert fresh.repaired == "" and fresh.records == []


def test_a_line_that_is_not_a_record_is_named_and_left_alone(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(scored("a.csv", 0.5)) + "\nnot json at all\n[1, 2]\n" + json.dumps(invalid("b.csv")) + "\n")
    opened = open_results(str(path))
    opened.close()
    assert opened.unreadable_lines == [2, 3] and len(opened.records) == 2 and opened.repaired == ""
    assert "not json at all" in path.read_text()


def test_one_writer_at_a_time(tmp_path):
    first = open_results(str(tmp_path / "results.jsonl"))
    try:
        with pytest.raises(Busy):
            open_results(str(tmp_path / "results.jsonl"))
    finally:
        first.close()
    open_results(str(tmp_path / "results.jsonl")).close()  # the lock goes with the first


def test_only_scored_and_invalid_records_are_final_and_the_last_one_counts(tmp_path):
    path = tmp_path / "results.jsonl"
    retry = {"file": "c.csv", "path": "/data/c.csv", "valid": False, "score": None, "status": "retryable", "reason": "lost"}
    failed = {"file": "d.csv", "path": "/data/d.csv", "content_key": "key-d.csv", "valid": False, "score": None,
              "status": "failed", "error": "the task failed on every attempt: MemoryError"}
    old = {"file": "e.csv", "path": "/data/e.csv", "content_key": None, "valid": False, "score": None, "problems": []}
    write_lines(path, [scored("a.csv", 0.5), scored("a.csv", 0.6), invalid("b.csv"), retry, failed, old])
    opened = open_results(str(path))
    opened.close()
    final = opened.final()
    assert set(final) == {("/data/a.csv", "key-a.csv"), ("/data/b.csv", "key-b.csv"), ("/data/e.csv", None)}
    assert final[("/data/a.csv", "key-a.csv")]["score"] == 0.6
    assert [status(r) for r in (retry, failed, old)] == ["retryable", "failed", "invalid"]  # an older record: from its fields
    assert resume_key({"file": "x", "score": 1.0}) is None  # without its path it matches nothing


def test_the_content_key_is_of_the_bytes_and_a_link_or_missing_file_has_none(tmp_path):
    (tmp_path / "a.csv").write_text("session_type,labels\n1_clicks,2\n")
    (tmp_path / "b.csv").write_text("session_type,labels\n1_clicks,2\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "a.csv")
    assert submission_key(str(tmp_path / "a.csv")) == submission_key(str(tmp_path / "b.csv")) is not None
    (tmp_path / "b.csv").write_text("session_type,labels\n1_clicks,3\n")
    assert submission_key(str(tmp_path / "b.csv")) != submission_key(str(tmp_path / "a.csv"))
    assert submission_key(str(tmp_path / "link.csv")) is None and submission_key(str(tmp_path / "nope.csv")) is None


def test_the_leaderboard_ranks_by_score_and_lists_every_file_without_one_again():
    records = [scored("low.csv", 0.1), scored("top.csv", 0.9), scored("tie-b.csv", 0.5), scored("tie-a.csv", 0.5),
               invalid("bad.csv", "S008", 12, "item 'x' is not an integer"),
               {"file": "crash.csv", "valid": False, "score": None, "status": "failed", "error": "the task failed on every attempt: X"},
               {"file": "cut.csv", "valid": False, "score": None, "status": "retryable", "reason": "the scheduler was lost"}]
    text = leaderboard(records, OTTO)
    body = text.splitlines()
    assert body[0] == "leaderboard: 4 of 7 submissions scored (recall@20, higher is better)"
    assert [row.split() for row in body[2:6]] == [["1", "0.900000", "top.csv"], ["2", "0.500000", "tie-a.csv"],
                                                   ["2", "0.500000", "tie-b.csv"], ["4", "0.100000", "low.csv"]]
    assert body[7:] == ["not scored: 3",
                        "failed    crash.csv: the task failed on every attempt: X",
                        "invalid   bad.csv: S008 line 12: item 'x' is not an integer",
                        "retryable cut.csv: the scheduler was lost (rerun the same command with --resume)"]


def test_rating_errors_rank_the_lowest_first():
    ratings = load_competition("ratings")
    text = leaderboard([scored("a.csv", 0.9), scored("b.csv", 0.3)], ratings)
    assert "lower is better" in text.splitlines()[0]
    assert [row.split()[2] for row in text.splitlines()[2:4]] == ["b.csv", "a.csv"]


def test_a_line_per_submission_says_its_score_or_its_first_error():
    assert line(scored("a.csv", 0.25)) == "0.250000  a.csv"
    assert line(dict(scored("a.csv", 0.25), attempts=2, workers=["w1", "w2"])) == "0.250000  a.csv  (ran 2 times: w1 then w2)"
    assert line(invalid("b.csv", line=4)) == "invalid   b.csv: S011 line 4: rows are missing"
    assert first_problem({"problems": []}) == "no error was recorded"


def test_the_progress_bar_says_n_of_n_rate_and_eta():
    stream = io.StringIO()
    with _Bar(3, enabled=True, file=stream) as bar:
        bar.update()
        bar.update()
    shown = stream.getvalue()
    assert "grading 2 of 3" in shown and "files/s" in shown and "ETA" in shown


def test_resume_without_a_results_file_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "t.jsonl").write_text('{"session": 1, "labels": {"clicks": 2}}\n')
    assert main(["grade", "x.csv", "--truth", str(tmp_path / "t.jsonl"), "--resume"]) == 2
    assert "--resume reads the records of -o FILE" in capsys.readouterr().err


def test_a_results_file_another_run_writes_is_refused(tmp_path, capsys):
    (tmp_path / "t.jsonl").write_text('{"session": 1, "labels": {"clicks": 2}}\n')
    busy = open_results(str(tmp_path / "results.jsonl"))
    try:
        assert main(["grade", "x.csv", "--truth", str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "results.jsonl")]) == 2
    finally:
        busy.close()
    assert "another scorer grade is writing to" in capsys.readouterr().err


def test_resume_with_everything_graded_needs_no_cluster_and_prints_the_leaderboard(tmp_path, capsys, monkeypatch):
    (tmp_path / "t.jsonl").write_text('{"session": 1, "labels": {"clicks": 2}}\n')
    files = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for path in files:
        path.write_text(f"session_type,labels\n1_clicks,2 {path.name[0]}\n")
    results = tmp_path / "results.jsonl"
    write_lines(results, [dict(scored("a.csv", 0.5), path=str(files[0]), content_key=submission_key(str(files[0]))),
                          dict(invalid("b.csv"), path=str(files[1]), content_key=submission_key(str(files[1])))])
    import scorer.dask.cluster

    monkeypatch.setattr(scorer.dask.cluster, "client_for", None)  # any use of a cluster would fail
    monkeypatch.chdir(tmp_path)
    assert main(["grade", "a.csv", "b.csv", "--truth", "t.jsonl", "-o", "results.jsonl", "--resume"]) == 1
    out, err = capsys.readouterr()
    assert "resuming results.jsonl: 2 of 2 submissions already have a final record (skipped)" in err
    assert "nothing left to grade; all 2: 1 scored, 1 invalid, 0 failed" in err
    assert "    1    0.500000  a.csv" in out and "invalid   b.csv: S011: rows are missing" in out
    assert len(results.read_text().splitlines()) == 2


def test_resume_finds_a_file_graded_under_another_spelling(tmp_path):
    """--resume matches a final record by its file, however the command line spells it now (`x/./a.csv`, a folder
    reached through a link), and by its content key; before, a path through a linked folder was graded again."""
    from scorer.cli.grade import _already_graded

    folder = tmp_path / "uploads"
    folder.mkdir()
    upload = folder / "a.csv"
    upload.write_text("session_type,labels\n1_clicks,5\n")
    (tmp_path / "linked").symlink_to(folder)
    results = tmp_path / "results.jsonl"
    write_lines(results, [{**scored("a.csv", 0.5), "path": str(upload), "content_key": submission_key(str(upload))}])
    opened = open_results(str(results))
    try:
        for spelled in (str(upload), f"{folder}/./a.csv", str(tmp_path / "linked" / "a.csv")):
            assert list(_already_graded(opened, [spelled], resume=True)) == [0], spelled
        upload.write_text("session_type,labels\n1_clicks,6\n")  # other bytes: graded again
        assert _already_graded(opened, [str(upload)], resume=True) == {}
    finally:
        opened.close()
