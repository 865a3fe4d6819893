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


@pytest.fixture(autouse=True, scope="session")
def _kernels_called_with_their_signatures():
    """Every kernel the tests' code calls through scorer.kernels.door is called with the argument types of its
    signature (the ahead-of-time module's, from scorer.engine.kernel_examples): a compiled function does not check
    them, so another type from a caller would read its memory wrongly. A call that differs fails here, named."""
    from scorer.kernels import door

    plain = door.kernel
    door.kernel = lambda name: _checked(name, plain(name))
    yield
    door.kernel = plain


_signatures: dict = {}


def _checked(name: str, function):
    def call(*args):
        from numba import typeof

        from scorer.engine.aot_compile import signatures

        stage = door_stage(name)
        if stage not in _signatures:
            _signatures[stage] = None  # the examples call kernels too, unchecked while they are made
            _signatures[stage] = signatures(stage)
        if _signatures[stage] is None:
            return function(*args)
        wrong = [f"argument {i}: {typeof(arg)} where {expected} is compiled" for i, (arg, expected) in enumerate(zip(args, _signatures[stage][name]))
                 if not fits(typeof(arg), expected)]
        assert len(args) == len(_signatures[stage][name]) and not wrong, f"{name} called with {wrong or len(args)} arguments"
        return function(*args)

    call.__wrapped__ = function
    return call


def door_stage(name: str) -> str:
    from scorer.kernels.door import STAGE_OF

    return STAGE_OF[name]


def fits(given, expected) -> bool:
    """Can a value of numba type `given` be passed where the compiled function takes `expected`? Arrays: the same dtype
    and dimensions, a layout the code reads (any for 'A'), and read-only only where the code never writes; tuples: item
    by item; numbers: of the same kind (a compiled function converts a number's value)."""
    from numba import types

    if isinstance(expected, types.Array):
        return (isinstance(given, types.Array) and given.dtype == expected.dtype and given.ndim == expected.ndim
                and expected.layout in ("A", given.layout) and (given.mutable or not expected.mutable))
    if isinstance(expected, types.BaseTuple):
        return isinstance(given, types.BaseTuple) and len(given) == len(expected) and all(map(fits, given, expected))
    for kind in (types.Boolean, types.Integer, types.Float):
        if isinstance(expected, kind):
            return isinstance(given, kind) or (kind is types.Integer and isinstance(given, types.Boolean))
    return given == expected


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
