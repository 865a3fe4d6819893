"""The ahead-of-time compiled kernels (scorer.aot): built by warmup, the same figures as numba's JIT, a
fallback when no build is possible, and a pass that never imports numba."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import scorer
from scorer import aot
from scorer.kernels import hot

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def compiled():
    """The module built once for these tests (in the session's cache folder), or None where it cannot be."""
    status = aot.ensure_built()
    assert status.startswith(("built", "ready", "not built")), status
    return aot.load()


def test_a_build_or_a_reason(compiled):
    path = aot.module_path()
    failed = path.with_name(path.name + ".failed")
    if compiled is None:  # no C compiler here: the reason is kept, and the JIT kernels serve
        assert failed.is_file() and failed.read_text().strip(), aot.ensure_built()
        assert hot.kernels().parse_block is hot.jit_kernels().parse_block
    else:
        assert path.is_file() and not failed.exists() and aot.tip() is None
        assert {"parse_block", "parse_strings_block", "merge_rows", "figure_sums"} <= set(dir(compiled))


def _figures(result):
    return json.dumps([result.score, result.metrics, result.counts, [p.to_dict() for p in result.problems]])


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_and_jit_kernels_give_the_same_results(compiled, tmp_path, threads):
    rng = np.random.default_rng(threads)
    truth = tmp_path / "t.jsonl"
    truth.write_text("".join(json.dumps({"session": s, "labels": {"clicks": int(rng.integers(0, 50)),
                                                                   "orders": rng.integers(0, 50, 3).tolist()}}) + "\n"
                             for s in range(300)))
    lines = ["session_type,labels"] + [f"{s}_{t},{' '.join(map(str, rng.integers(0, 50, 25)))}" for s in range(320)
                                       for t in ("clicks", "carts", "orders")]
    lines[7] = "7_clicks,1  2 x"  # the careful path too
    submission = tmp_path / "s.csv"
    submission.write_text("\n".join(lines) + "\n")
    kernel_sets = [hot.jit_kernels()] + ([compiled] if compiled is not None else [])
    outcomes = []
    for kernels in kernel_sets:
        with hot.using(kernels):
            outcomes.append(_figures(scorer.score(submission, truth, block_bytes=4096, threads=threads)))
            outcomes.append(_figures(scorer.score(FIXTURES / "otto_submission.csv", FIXTURES / "otto_truth.jsonl", threads=threads)))
            for name in ("hm", "instacart", "airbnb", "ratings"):  # the string shapes: list, list with a token, long, value
                outcomes.append(_figures(scorer.score(FIXTURES / name / "submission.csv", FIXTURES / name / "truth.csv", name,
                                                      threads=threads)))
    half = len(outcomes) // len(kernel_sets)
    assert outcomes[:half] == outcomes[half:] or compiled is None


def test_a_failed_build_leaves_its_reason_and_the_jit_kernels_serve(tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))

    def broken(path):
        raise RuntimeError("no C compiler")

    monkeypatch.setattr(aot, "build", broken)
    assert aot.ensure_built() == "not built (the JIT kernels serve): RuntimeError: no C compiler"
    failed = aot.module_path().with_name(aot.module_path().name + ".failed")
    assert failed.read_text().strip() == "RuntimeError: no C compiler"
    assert aot.load() is None
    assert aot.tip() is None  # no nagging about a build that cannot be made here
    failed.unlink()
    assert "scorer warmup" in aot.tip()  # nothing built and nothing tried: the participant hears of warmup
    monkeypatch.setenv("SCORER_AOT", "0")
    assert aot.load() is None and aot.ensure_built() == "turned off (SCORER_AOT=0)" and aot.tip() is None


def test_the_cli_scores_without_numba_on_the_compiled_kernels(compiled):
    code = ("import sys, io, contextlib\nfrom scorer.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['score', {str(FIXTURES / 'otto_submission.csv')!r}, '--truth', {str(FIXTURES / 'otto_truth.jsonl')!r}])\n"
            "print('numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True)
    assert done.stdout.strip() == ("True" if compiled is None else "False")
