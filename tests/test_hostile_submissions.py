"""Hostile submissions (issue 12): links out of the upload, endless gzip members, floods of blank lines,
lines with no end, damaged archives. Each is refused or stopped with a located problem and exit 1,
and no message quotes a byte of a file that is not the submission."""

from __future__ import annotations

import gzip
import os
import shutil
import time
import zipfile
from pathlib import Path

import pytest

import scorer
import scorer.engine.reader as submission
from scorer.adapters.codabench import find_submission, find_truth, grade
from scorer.adapters.evalai import SubmissionRejected, evaluate
from scorer.cli.main import main
from scorer.engine.reader import BlockReader, Deadline, LimitExceeded
from scorer.errors import SubmissionError, TruthError

FIXTURES = Path(__file__).parent.parent / "fixtures"
OTTO_TRUTH = FIXTURES / "otto_truth.jsonl"
OTTO_SUBMISSION = FIXTURES / "otto_submission.csv"
HM = FIXTURES / "hm"
HEADER = b"session_type,labels\n"


def _codabench(root: Path, truth: Path) -> tuple[Path, Path]:
    (root / "input" / "ref").mkdir(parents=True)
    shutil.copy(truth, root / "input" / "ref" / truth.name)
    (root / "input" / "res").mkdir()
    return root / "input", root / "output"


def _truth_lines(truth: Path) -> list[str]:
    return [line for line in truth.read_text().splitlines()[1:] if len(line) > 8]


def _quotes_none_of(text: str, lines: list[str]) -> bool:
    return not any(line in text for line in lines)


# -- links in res/ (Codabench) --------------------------------------------------------------------
@pytest.mark.parametrize("competition, truth", [("otto", OTTO_TRUTH), ("hm", HM / "truth.csv")])
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_link_to_the_truth_is_refused_and_quotes_nothing(tmp_path, capsys, competition, truth, link):
    input_dir, output = _codabench(tmp_path, truth)
    planted = input_dir / "res" / "submission.csv"
    target = input_dir / "ref" / truth.name
    os.symlink(os.path.relpath(target, planted.parent), planted) if link == "symlink" else os.link(target, planted)
    code = main(["codabench", str(input_dir), str(output), "--competition", competition])
    out = capsys.readouterr()
    assert code == 1
    assert "Submission rejected" in out.err and ("symbolic link" if link == "symlink" else "hard link") in out.err
    assert _quotes_none_of(out.out + out.err, _truth_lines(truth)) and truth.name not in out.out + out.err
    assert not (output / "scores.json").exists()


def test_a_link_to_the_graders_environment_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SCORER_TEST_SECRET", "s3cr3t-value-of-the-grader")
    input_dir, output = _codabench(tmp_path, OTTO_TRUTH)
    os.symlink("/proc/self/environ", input_dir / "res" / "submission.csv")
    assert main(["codabench", str(input_dir), str(output)]) == 1
    out = capsys.readouterr()
    assert "symbolic link" in out.err and "s3cr3t" not in out.out + out.err and "environ" not in out.out + out.err


def test_links_to_folders_fifos_and_files_outside_are_refused(tmp_path):
    input_dir, _ = _codabench(tmp_path, OTTO_TRUTH)
    res = input_dir / "res"
    os.symlink("../ref", res / "upload")
    with pytest.raises(SubmissionError, match="upload is a symbolic link"):
        find_submission(res)
    os.unlink(res / "upload")
    os.mkfifo(res / "submission.csv")
    with pytest.raises(SubmissionError, match="not a regular file"):
        find_submission(res)
    os.unlink(res / "submission.csv")
    shutil.copy(OTTO_SUBMISSION, res / "submission.csv")
    assert find_submission(res) == res / "submission.csv"


def test_a_truth_link_out_of_ref_is_the_hosts_error_and_one_inside_is_fine(tmp_path):
    ref = tmp_path / "ref"
    (ref / "data").mkdir(parents=True)
    os.symlink(OTTO_TRUTH, ref / "data" / "truth.jsonl")
    with pytest.raises(TruthError, match="outside"):
        find_truth(ref)
    os.unlink(ref / "data" / "truth.jsonl")
    shutil.copy(OTTO_TRUTH, ref / ".real.jsonl")  # hidden: not a second truth file
    os.symlink("../.real.jsonl", ref / "data" / "truth.jsonl")
    assert find_truth(ref) == ref / "data" / "truth.jsonl"


def test_a_good_upload_still_scores(tmp_path):
    input_dir, output = _codabench(tmp_path, OTTO_TRUTH)
    shutil.copy(OTTO_SUBMISSION, input_dir / "res" / "submission.csv")
    assert grade(input_dir, output).exit_code == 0


# -- the reader's rule: untrusted (every grader path) refuses links; trusted (local) reads through them --
def _link_hard_fifo(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    own = tmp_path / "own.csv"
    shutil.copy(OTTO_SUBMISSION, own)
    link = tmp_path / "link.csv"
    os.symlink(own, link)
    hard = tmp_path / "hard.csv"
    os.link(own, hard)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)  # opening must not wait for a writer
    return own, link, hard, fifo


def _read(path: Path, untrusted: bool) -> bytes:
    return b"".join(bytes(block.data) for block in BlockReader(path, untrusted=untrusted))


def test_the_untrusted_reader_refuses_links_and_special_files_by_the_opened_descriptor(tmp_path):
    own, link, hard, fifo = _link_hard_fifo(tmp_path)
    for path, says in ((link, "symbolic link"), (hard, "2 hard links"), (fifo, "not a regular file"), (tmp_path, "not a regular file")):
        with pytest.raises(SubmissionError, match=says):
            _read(path, untrusted=True)
    os.unlink(hard)
    assert _read(own, untrusted=True) == OTTO_SUBMISSION.read_bytes()


def test_the_trusted_reader_reads_through_links_and_still_refuses_special_files(tmp_path):
    own, link, hard, fifo = _link_hard_fifo(tmp_path)
    for path in (link, hard, own):
        assert _read(path, untrusted=False) == OTTO_SUBMISSION.read_bytes()
    for path in (fifo, tmp_path):  # a FIFO does not hang the trusted reader either
        with pytest.raises(SubmissionError, match="not a regular file"):
            _read(path, untrusted=False)


def test_a_participant_scores_and_validates_linked_files_locally(tmp_path, capsys):
    own, link, hard, _ = _link_hard_fifo(tmp_path)
    data = tmp_path / "data"
    os.symlink(tmp_path, data)  # a symlinked data folder
    expected = scorer.score(own, OTTO_TRUTH).score
    assert expected is not None
    for path in (link, hard, data / "link.csv"):
        assert scorer.score(path, OTTO_TRUTH).score == expected
        assert not any(p.code == "S027" for p in scorer.validate(path, OTTO_TRUTH).problems)
    assert main(["score", str(link), "--truth", str(OTTO_TRUTH), "--no-progress"]) == 0
    assert main(["validate", str(data / "link.csv"), "--truth", str(OTTO_TRUTH), "--lenient", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["score", str(link), "--truth", str(OTTO_TRUTH), "--no-progress", "--untrusted"]) == 1
    assert "symbolic link" in capsys.readouterr().out


def test_score_untrusted_and_evalai_refuse_a_linked_submission_without_quoting_it(tmp_path):
    link = tmp_path / "submission.csv"
    os.symlink(OTTO_TRUTH, link)
    result = scorer.score(link, OTTO_TRUTH, strict=True, untrusted=True)
    assert result.score is None and [p.code for p in result.problems] == ["S027"]
    assert all(p.context is None for p in result.problems)
    with pytest.raises(SubmissionRejected) as raised:
        evaluate(str(OTTO_TRUTH), str(link), "test")
    assert "symbolic link" in str(raised.value) and _quotes_none_of(str(raised.value), _truth_lines(OTTO_TRUTH))
    shutil.copy(OTTO_SUBMISSION, tmp_path / "own.csv")
    os.link(tmp_path / "own.csv", tmp_path / "hard.csv")
    with pytest.raises(SubmissionRejected, match="hard links"):
        evaluate(str(OTTO_TRUTH), str(tmp_path / "hard.csv"), "test")


def test_codabench_reads_the_upload_untrusted_even_past_its_listing(tmp_path, monkeypatch):
    """A link made after find_submission looked (or missed by it) is still refused when opened."""
    input_dir, output = _codabench(tmp_path, OTTO_TRUTH)
    link = input_dir / "res" / "submission.csv"
    os.symlink(input_dir / "ref" / OTTO_TRUTH.name, link)
    monkeypatch.setattr("scorer.adapters.codabench.find_submission", lambda res: link)
    outcome = grade(input_dir, output)
    assert outcome.exit_code == 1 and "symbolic link" in outcome.message
    assert _quotes_none_of(outcome.message, _truth_lines(OTTO_TRUTH)) and not (output / "scores.json").exists()


def test_grade_refuses_a_linked_submission(tmp_path, capsys):
    good = tmp_path / "good.csv"
    shutil.copy(OTTO_SUBMISSION, good)
    link = tmp_path / "link.csv"
    os.symlink(OTTO_TRUTH, link)
    code = main(["grade", str(good), str(link), "--truth", str(OTTO_TRUTH), "--workers", "1"])
    out = capsys.readouterr().out
    assert code == 1 and "symbolic link" in out
    assert _quotes_none_of(out, _truth_lines(OTTO_TRUTH))


def test_dataset_parts_follow_the_same_rule_parquet_included(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from scorer.dask.dataset import score_dataset
    from scorer.dask.parts import parquet_to_csv

    rows = [line.split(",", 1) for line in OTTO_SUBMISSION.read_text().splitlines()[1:]]
    half = len(rows) // 2
    store, parts = tmp_path / "store", tmp_path / "parts"
    store.mkdir(), parts.mkdir()
    (store / "a.csv").write_text("session_type,labels\n" + "".join(f"{a},{b}\n" for a, b in rows[:half]))
    pq.write_table(pa.table({"session_type": [a for a, _ in rows[half:]], "labels": [b for _, b in rows[half:]]}), store / "b.parquet")
    for name in ("a.csv", "b.parquet"):
        os.symlink(store / name, parts / name)
    expected = scorer.score(OTTO_SUBMISSION, OTTO_TRUTH).score
    assert score_dataset(parts, OTTO_TRUTH).score == expected  # trusted (local): links are read
    refused = score_dataset(parts, OTTO_TRUTH, untrusted=True)
    assert refused.score is None
    messages = sorted(p.message for p in refused.problems if p.code == "S027")
    assert len(messages) == 2 and messages[0].startswith("a.csv: ") and messages[1].startswith("b.parquet: ")
    assert all("symbolic link" in message for message in messages)
    argv = ["score", str(parts), "--truth", str(OTTO_TRUTH), "--no-progress"]
    assert main(argv) == 0 and main(argv + ["--untrusted"]) == 1
    fifo = tmp_path / "fifo.parquet"
    os.mkfifo(fifo)  # pyarrow is handed the checked descriptor: a FIFO part does not hang, in either mode
    for untrusted in (False, True):
        with pytest.raises(SubmissionError, match="not a regular file"):
            parquet_to_csv(fifo, tmp_path / "out.csv", untrusted=untrusted)


# -- time: the deadline inside decompression, gzip members ----------------------------------------
class _CountingDeadline(Deadline):
    def __init__(self):
        super().__init__()
        self.checks = 0

    def check(self, bytes_read: int) -> None:
        self.checks += 1
        super().check(bytes_read)


def test_the_deadline_is_checked_while_inflating_gzip_members(tmp_path):
    path = tmp_path / "members.csv.gz"
    path.write_bytes(gzip.compress(HEADER, mtime=0) + gzip.compress(b"", mtime=0) * 5000)
    deadline = _CountingDeadline()
    blocks = list(BlockReader(path, deadline=deadline))
    assert len(blocks) == 1 and deadline.checks > 5000
    with pytest.raises(LimitExceeded) as stop:
        list(BlockReader(path, deadline=Deadline(0.0)))
    assert stop.value.number == 28


def test_gzip_members_are_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(submission, "MAX_GZIP_MEMBERS", 100)
    path = tmp_path / "members.csv.gz"
    path.write_bytes(gzip.compress(HEADER, mtime=0) + gzip.compress(b"", mtime=0) * 100)
    result = scorer.validate(path)
    assert [(p.code, p.line) for p in result.problems] == [("S027", None)]
    assert "more than 100 members" in result.problems[0].message


def test_scoring_stops_at_the_time_limit_inside_one_long_gzip_block(tmp_path):
    config = tmp_path / "otto.toml"
    config.write_text((FIXTURES / "bad" / "limits_time.toml").read_text().replace("1e-9", "0.2"))
    path = tmp_path / "members.csv.gz"
    path.write_bytes(gzip.compress(HEADER, mtime=0) + gzip.compress(b"", mtime=0) * 600_000)
    started = time.monotonic()
    result = scorer.validate(path, config=config)  # one block: the members hold 20 bytes
    assert [p.code for p in result.problems] == ["S028"]
    assert time.monotonic() - started < 2.0


# -- blank lines -----------------------------------------------------------------------------------
def test_a_run_of_blank_lines_is_counted_whole_and_numbered_like_single_ones(tmp_path):
    rows = OTTO_SUBMISSION.read_bytes().splitlines(keepends=True)
    data = b"".join(rows[:3]) + b"\n" * 100 + b"".join(rows[3:5]) + b"\n" + b"\r\n" + b"".join(rows[5:])
    path = tmp_path / "blank.csv"
    path.write_bytes(data)
    results = [scorer.score(path, OTTO_TRUTH, max_per_code=30, block_bytes=size, threads=threads)
               for size, threads in ((1 << 20, 2), (7, 1), (64, 2))]
    for result in results:
        assert result.report.counts["S015"] == 102
        assert [p.line for p in result.problems if p.code == "S015"] == list(range(4, 34))
        assert result.score == results[0].score
    with_crlf = [p for p in results[0].problems if p.code == "S019"]
    assert with_crlf and with_crlf[0].line == 107


def test_a_flood_of_blank_lines_streams_at_memory_speed(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_bytes(HEADER + b"\n" * (64 << 20))
    scorer.validate(OTTO_SUBMISSION)  # kernels loaded before the clock starts
    started = time.monotonic()
    result = scorer.validate(path)
    assert result.report.counts["S015"] == 64 << 20
    assert time.monotonic() - started < 5.0  # about 13 s when each blank line went through the careful reading


def test_blank_lines_in_a_string_shape_are_counted_whole(tmp_path):
    data = (HM / "submission.csv").read_bytes().splitlines(keepends=True)
    path = tmp_path / "blank.csv"
    path.write_bytes(b"".join(data[:2]) + b"\n" * 50 + b"".join(data[2:]))
    result = scorer.score(path, HM / "truth.csv", "hm", max_per_code=10)
    assert result.report.counts["S015"] == 50
    assert [p.line for p in result.problems if p.code == "S015"] == list(range(3, 13))
    assert result.score == scorer.score(HM / "submission.csv", HM / "truth.csv", "hm").score


# -- exit 3 that were upload problems ---------------------------------------------------------------
def test_a_line_with_no_end_in_the_block_is_a_located_s022(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_bytes(HEADER + b"1_clicks,1\n1_carts,1\n1_orders,1\n2_clicks," + b"1 " * 3000)
    bad = FIXTURES / "bad"
    for block_bytes in (1024, 64, 7):  # reading stops when no line end is found within the limit and a block
        result = scorer.validate(path, config=bad / "limits_line.toml", block_bytes=block_bytes)
        assert [(p.code, p.line, p.column) for p in result.problems] == [("S022", 5, 33)]
    assert "line of more than" in result.problems[0].message and "reading stopped" in result.problems[0].message
    within = scorer.validate(path, config=bad / "limits_line.toml", block_bytes=1 << 16).problems  # the end is in the block
    assert [(p.code, p.line) for p in within] == [("S022", 5)] and "reading stopped" not in within[0].message
    argv = ["score", str(bad / "S022_no_line_end.csv.gz"), "--truth", str(OTTO_TRUTH), "--strict", "--no-progress"]
    assert main(argv + ["--config", str(bad / "limits_line.toml")]) == 1  # a line of 9 MB: longer than a block
    out = capsys.readouterr()
    assert "line 2" in out.out + out.err and "internal error" not in out.err


def test_a_zip_whose_directory_offset_is_wrong_is_unreadable_not_a_crash(tmp_path, capsys):
    path = tmp_path / "submission.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(OTTO_SUBMISSION, "submission.csv")
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x05\x06") + 16
    data[at : at + 4] = (int.from_bytes(data[at : at + 4], "little") + 1000).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    assert main(["score", str(path), "--truth", str(OTTO_TRUTH), "--strict", "--no-progress"]) == 1
    err = capsys.readouterr()
    assert "S027" in err.out + err.err and "internal error" not in err.err


def test_a_zip_of_very_many_entries_is_refused_before_its_directory_is_read(tmp_path, monkeypatch):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for n in range(30):
            archive.writestr(f"folder{n}/", b"")
        archive.writestr("submission.csv", OTTO_SUBMISSION.read_bytes())
    assert scorer.validate(path).valid  # folders are not files: one file, fine
    monkeypatch.setattr(submission, "MAX_ZIP_ENTRIES", 20)
    monkeypatch.setattr(zipfile.ZipFile, "__init__", None)  # refused from the end record alone
    result = scorer.validate(path)
    assert [p.code for p in result.problems] == ["S025"] and "31 entries" in result.problems[0].message
