"""Lines with errors (they hold their slot and score 0) give the same figures on numba's JIT kernels and on
the ahead-of-time module, whatever the block size and threads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import scorer
from scorer.engine import aot_build
from scorer.kernels import aot, door

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ERROR_LINES = [b"1_clicks,10 abc 99", b"1_carts,20 \xff", b"1_orders,30,31", b'2_clicks,"11 5', b"2_orders,0 99999999999999999999",
               b"3_clicks,1\x00", b"9_carts,1 x"]


def _figures(result) -> str:
    return json.dumps([result.score, result.metrics, result.counts, [p.to_dict() for p in result.problems],
                       result.slot_line.tolist(), result.slot_hits.tolist()])


@pytest.fixture(scope="module")
def builds():
    """numba's JIT kernels, and the ahead-of-time modules of the passes where they can be built."""
    aot_build.ensure_built()
    return ["jit"] + (["compiled"] if all(aot.load(stage) is not None for stage in ("score", "strings")) else [])


def _otto(tmp_path) -> Path:
    path = tmp_path / "otto.csv"
    path.write_bytes(b"session_type,labels\n" + b"\n".join(ERROR_LINES + [b"1_clicks,10", b"2_carts,"]) + b"\n")
    return path


def _hm(tmp_path) -> Path:
    lines = (FIXTURES / "hm" / "submission.csv").read_bytes().split(b"\n")
    for row, damage in ((1, b" \xff"), (2, b",1"), (3, b" \x00")):
        lines[row] += damage
    path = tmp_path / "hm.csv"
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize("threads, block_bytes", [(1, 16), (2, 1 << 20)])
def test_both_builds_agree_on_lines_with_errors(builds, tmp_path, threads, block_bytes):
    outcomes = []
    for build in builds:
        with door.using(build):
            otto = scorer.score(_otto(tmp_path), FIXTURES / "otto_truth.jsonl", threads=threads, block_bytes=block_bytes)
            hm = scorer.score(_hm(tmp_path), FIXTURES / "hm" / "truth.csv", "hm", threads=threads, block_bytes=block_bytes)
            outcomes.append(_figures(otto) + _figures(hm))
            assert otto.counts["rows_with_errors"] == 6 and otto.counts["rows_missing"] == 2  # 3_carts, 3_orders
            assert hm.counts["rows_with_errors"] == 3
    assert all(outcome == outcomes[0] for outcome in outcomes)
