"""Submission sources: plain, gzip and zip give the same figures; block boundaries never matter."""

import gzip
import zipfile
from pathlib import Path

import pytest

import scorer
from conftest import full_rows, submission_text
from scorer.engine.reader import BlockReader

FIXTURES = Path(__file__).parent.parent / "fixtures"
TRUTH = {s: {"clicks": s % 7, "carts": [s % 5, 9], "orders": [s % 3]} for s in range(50)}
ROWS = full_rows(TRUTH, {(s, t): [s % 7, s % 5, s % 3, 1, 2] for s in TRUTH for t in ("clicks", "carts", "orders")})


@pytest.mark.parametrize("kind", ["gz", "zip", "gz-multimember"])
def test_compressed_sources_score_like_plain(files, tmp_path, kind):
    text = submission_text(ROWS).encode()
    plain, truth = files(TRUTH, ROWS)
    packed = tmp_path / f"sub.{kind}"
    if kind == "gz":
        packed.write_bytes(gzip.compress(text))
    elif kind == "gz-multimember":
        middle = text.index(b"\n", len(text) // 2) + 1
        packed.write_bytes(gzip.compress(text[:middle]) + gzip.compress(text[middle:]))
    else:
        with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("submission.csv", text)
    expected = scorer.score(plain, truth)
    for block in (5, 1 << 20):
        got = scorer.score(packed, truth, block_bytes=block)
        assert got.score == expected.score and got.metrics == expected.metrics and got.valid


def test_blocks_hold_whole_lines_and_cover_the_file(tmp_path):
    path = tmp_path / "s.csv"
    path.write_bytes(b"a\nbb\n\nccc\nlast-without-newline")
    for size in (1, 2, 3, 7, 100):
        blocks = [bytes(b.data) for b in BlockReader(path, block_bytes=size)]
        assert b"".join(blocks) == path.read_bytes()
        assert all(block.endswith(b"\n") for block in blocks[:-1])


def test_truncated_gzip_is_a_problem_not_a_crash(files, tmp_path):
    _, truth = files(TRUTH, [])
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(gzip.compress(submission_text(ROWS).encode())[:-30])
    result = scorer.score(path, truth)
    assert result.score is None and not result.valid
    assert any("truncated" in p.message or "failed" in p.message for p in result.problems)


# -- mapped blocks: a plain file's bytes up to its last MAPPED_TAIL are windows of a mapping, not copies ------------
LINES = b"".join([b"session_type,labels\n", b"1_clicks,1 2\n", b"\n", b"2_carts," + b"7 " * 3000 + b"7\n", b"3_orders,3\r\n",
                  b"4_clicks,\n"] * 40) + b"last-without-newline"


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
@pytest.mark.parametrize("tail", [8, 100, 5000])
def test_mapped_blocks_hold_whole_lines_and_cover_the_file(tmp_path, monkeypatch, tail):
    import mmap

    from scorer.engine import reader

    monkeypatch.setattr(reader, "MAPPED_TAIL", tail)
    path = tmp_path / "s.csv"
    path.write_bytes(LINES)
    for size in (1, 7, 100, 5000, 1 << 20):
        blocks = list(BlockReader(path, block_bytes=size))
        data = [bytes(block.data) for block in blocks]
        assert b"".join(data) == LINES
        assert all(piece.endswith(b"\n") for piece in data[:-1])
        mapped = [block for block in blocks if isinstance(block.buffer, mmap.mmap)]
        assert mapped and all(block.end + reader.SLACK <= len(block.buffer) for block in mapped)
        assert sum(len(piece) for piece, block in zip(data, blocks) if block in mapped) >= len(LINES) - tail - 6010  # all but the tail


def test_a_plain_files_tail_is_read_into_buffers_of_its_size_not_a_blocks(tmp_path, monkeypatch):
    """The bytes after the mapped blocks (about MAPPED_TAIL) go into buffers of what is left of the file: bytearray
    writes every byte of a new buffer, and a block-sized one was 8 MiB of resident memory at the pass's end."""
    from scorer.engine import reader

    monkeypatch.setattr(reader, "MAPPED_TAIL", 100)
    path = tmp_path / "s.csv"
    path.write_bytes(LINES)
    blocks = list(BlockReader(path, block_bytes=1 << 22))
    read = [block for block in blocks if isinstance(block.buffer, bytearray)]
    assert b"".join(bytes(block.data) for block in blocks) == LINES
    assert read and all(len(block.buffer) <= 6100 + reader.HEAD_BYTES + reader.SLACK for block in read)  # the tail: a line or two


@pytest.mark.parametrize("fixture", sorted(p.name for p in (FIXTURES / "bad").glob("S0*.csv")) + ["otto_submission.csv"])
def test_mapped_and_read_blocks_give_the_same_result(monkeypatch, fixture):
    """Every bad fixture (and the good one) gives the same figures and problems, mapped (all but 8 bytes) or read."""
    from scorer.engine import reader

    path = FIXTURES / "bad" / fixture if fixture.startswith("S0") else FIXTURES / fixture
    config = {"config": FIXTURES / "bad" / "limits_line.toml"} if "line" in fixture else {}
    results = []
    for tail in (8, 1 << 40):
        monkeypatch.setattr(reader, "MAPPED_TAIL", tail)
        for block_bytes, threads in ((7, 1), (64, 2), (1 << 20, 2)):
            result = scorer.validate(path, FIXTURES / "otto_truth.jsonl", strict=False, block_bytes=block_bytes, threads=threads, **config)
            results.append((result.score, result.metrics, result.counts, [(p.code, p.line, p.column) for p in result.problems]))
    assert all(one == results[0] for one in results)


def test_explain_reads_mapped_blocks_as_read_ones(tmp_path, monkeypatch):
    """explain's pass over mapped blocks: each line read once, in order (the last of a repeated row stays)."""
    import numpy as np

    from scorer.engine import reader
    from scorer.engine.explain_pass import read_truth_rows

    competition = scorer.load_competition("otto")
    truth = scorer.load_truth(FIXTURES / "otto_truth.jsonl", use_cache=False)
    header, *lines = (FIXTURES / "otto_submission.csv").read_bytes().decode().splitlines()
    reversed_items = [line.split(",")[0] + "," + " ".join(line.split(",")[1].split()[::-1]) for line in lines]
    path = tmp_path / "repeated.csv"  # every row 40 times, its items reversed but the last time: the last reading must stay
    path.write_text("\n".join([header] + reversed_items * 39 + lines) + "\n")
    rows = []
    for tail in (8, 1 << 40):
        monkeypatch.setattr(reader, "MAPPED_TAIL", tail)
        for block_bytes in (7, 1 << 20):
            got = read_truth_rows(path, competition, truth, block_bytes=block_bytes)
            rows.append(np.stack([got.hits, got.repeats, got.n_items]))
    assert all(np.array_equal(one, rows[0]) for one in rows) and rows[0].any()
