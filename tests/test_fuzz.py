"""Fuzzing (short; bench/fuzz.py runs it long): whatever the bytes, a Result or exit code 0/1, never an exception.

Random bytes and mutations of a valid submission (flipped, inserted and deleted bytes, CRLF,
quotes, huge numbers, non-UTF-8, NULs, BOMs, gzip) go through scorer.validate, scorer.score and
the CLI. The figures and problems must also not depend on the block size.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorer
from scorer.cli.main import main
from scorer.engine.problems import CATALOGUE, SEVERITY_RANK

FIXTURES = Path(__file__).parent.parent / "fixtures"
TRUTH = FIXTURES / "otto_truth.jsonl"
VALID = (FIXTURES / "otto_submission.csv").read_bytes()
CODES = {kind.code for kind in CATALOGUE.values()}
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

PIECES = [b"\r\n", b"\r", b"\n", b"\n\n", b'"', b'""', b",", b",,", b" ", b"  ", b"\t", b"\x00", b"\xef\xbb\xbf", b"\xff",
          b"\xc3", b"\xe2\x82", b"\xc3\xa9", b"-", b"_", b"__", b"_clicks", b"_views", b"99999999999999999999",
          b"18446744073709551616", b"9223372036854775807", b"0", b"1_orders,", b"session_type,labels\n", b";", b"|", b"\\",
          b"\n" * 40]  # a run of blank lines longer than the problems kept per code


@st.composite
def mutated(draw) -> bytes:
    """The valid fixture with a few random edits."""
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["flip", "insert", "piece", "delete", "crlf", "repeat", "truncate"]))
        if edit == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif edit == "piece":
            data[at:at] = draw(st.sampled_from(PIECES))
        elif edit == "delete":
            del data[at : at + draw(st.integers(1, 12))]
        elif edit == "crlf":
            data = bytearray(bytes(data).replace(b"\n", b"\r\n"))
        elif edit == "repeat":
            data += bytes(data[at:])
        elif edit == "truncate":
            del data[at:]
    return bytes(data)


def inputs():
    plain = st.one_of(st.binary(max_size=400), mutated(), st.lists(st.sampled_from(PIECES), max_size=30).map(b"".join))
    gzipped = plain.map(lambda data: gzip.compress(data, mtime=0))
    broken_gzip = st.tuples(gzipped, st.integers(0, 200)).map(lambda pair: pair[0][: pair[1]])
    members = st.lists(plain, min_size=2, max_size=6).map(lambda parts: b"".join(gzip.compress(part, mtime=0) for part in parts))
    return st.one_of(plain, plain, plain, gzipped, broken_gzip, members)


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _write(folder: Path, data: bytes) -> Path:
    path = folder / "submission.csv"
    path.write_bytes(data)
    return path


def _check(result) -> None:
    """A well-formed Result: known codes and severities, 1-based places, renderings that work."""
    for problem in result.problems:
        assert problem.code in CODES and problem.severity in SEVERITY_RANK
        assert problem.line is None or problem.line >= 1
        assert problem.column is None or problem.column >= 1
    assert result.score is None or math.isfinite(result.score)
    result.to_text()
    result.to_json()


def _fingerprint(result):
    problems = [(p.code, p.severity, p.line, p.column, p.message) for p in result.problems]
    return result.score, problems, result.report.counts, result.counts


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
@SETTINGS
@given(data=inputs())
def test_api_gives_a_result_whatever_the_bytes(folder, data):
    path = _write(folder, data)
    for truth in (None, TRUTH):
        _check(scorer.validate(path, truth))
    lenient = scorer.score(path, TRUTH)
    _check(lenient)
    # the same figures and problems whatever the block size and thread count (unless reading
    # stopped at a broken stream: then how much was read first depends on the block size)
    for block_bytes, threads in ((7, 1), (64, 2)):
        other = scorer.score(path, TRUTH, block_bytes=block_bytes, threads=threads)
        assert other.report.fatal == lenient.report.fatal
        if not lenient.report.fatal:
            assert _fingerprint(other) == _fingerprint(lenient)


@SETTINGS
@given(data=inputs(), command=st.sampled_from(["validate", "validate-truth", "score", "score-strict"]), json=st.booleans())
def test_cli_exits_0_or_1_whatever_the_bytes(folder, data, command, json):
    path = _write(folder, data)
    argv = [command.split("-")[0], str(path), "--no-progress"]
    if command != "validate":
        argv += ["--truth", str(TRUTH)]
    if command == "score-strict":
        argv.append("--strict")
    if json:
        argv += ["--format", "json"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code in (0, 1), err.getvalue()
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue()
