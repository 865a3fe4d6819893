"""Shared helpers: write small truth and submission files, and score them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for `import reference`

TYPES = ("clicks", "carts", "orders")
HEADER = "session_type,labels"


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Keep the compiled-truth cache of the tests away from the user's."""
    os.environ["SCORER_CACHE_DIR"] = str(tmp_path_factory.mktemp("scorer-cache"))


@pytest.fixture(autouse=True)
def _blas_probe_undone():
    """The CLI's main() stubs scipy.linalg.cython_blas out of sys.modules (scorer.cli.main._skip_blas_probe: a process of
    its own needs no BLAS); in the one test process that stub would make scipy, and so scikit-learn, ranx and implicit,
    unimportable for every later test (their comparisons then skipped as "not installed"). Undone after each test."""
    yield
    undo_blas_probe_stub()


def undo_blas_probe_stub() -> None:
    """Make scipy importable again after an in-process main() (see _blas_probe_undone)."""
    if "scipy.linalg.cython_blas" in sys.modules and sys.modules["scipy.linalg.cython_blas"] is None:
        del sys.modules["scipy.linalg.cython_blas"]


def truth_lines(truth: dict[int, dict[str, list[int] | int]]) -> str:
    return "".join(json.dumps({"session": s, "labels": labels}) + "\n" for s, labels in truth.items())


def submission_text(rows: list[tuple[int, str, list[int]]] | list[str], header: bool = True) -> str:
    lines = [HEADER] if header else []
    for row in rows:
        lines.append(row if isinstance(row, str) else f"{row[0]}_{row[1]},{' '.join(map(str, row[2]))}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def files(tmp_path):
    """files(truth_dict, rows) -> (submission_path, truth_path)."""
    counter = iter(range(10**6))

    def make(truth, rows, header=True, raw: bytes | None = None, suffix=".csv"):
        n = next(counter)
        truth_path = tmp_path / f"truth{n}.jsonl"
        truth_path.write_text(truth_lines(truth))
        submission_path = tmp_path / f"sub{n}{suffix}"
        submission_path.write_bytes(raw if raw is not None else submission_text(rows, header).encode())
        return submission_path, truth_path

    return make


def full_rows(truth, predictions=None):
    """A row for every session and type of the truth, with the given (or empty) predictions."""
    predictions = predictions or {}
    return [(s, t, predictions.get((s, t), [])) for s in truth for t in TYPES]


def run_main(*argv) -> tuple[int, str, str]:
    """`scorer ARGV` in this process: (exit code, stdout, stderr)."""
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    from scorer.cli.main import main

    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(map(str, argv)))
    return code, out.getvalue(), err.getvalue()


def run_cli(*argv) -> tuple[int, str, str]:
    """`scorer ARGV --no-progress` in this process (the commands that draw a progress bar)."""
    return run_main(*argv, "--no-progress")
