"""Submission sources: plain, gzip and zip give the same figures; block boundaries never matter."""

import gzip
import zipfile

import pytest

import scorer
from conftest import full_rows, submission_text
from scorer.engine.reader import BlockReader

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
