"""Long fuzz of the validator: hypothesis (many examples) and atheris (coverage-guided), with numba bounds checks on.

    python bench/fuzz.py hypothesis --examples 20000
    python bench/fuzz.py atheris --seconds 300        # needs `pip install atheris`

Inputs are those of tests/test_fuzz.py (random bytes, mutated valid submissions, gzip, broken
gzip); atheris mutates bytes itself, guided by the coverage of scorer's Python code. The kernels
run with NUMBA_BOUNDSCHECK=1 (compiled into their own cache under bench/data/), so an
out-of-bounds index raises instead of reading garbage. Prints the examples run and the
failures found (atheris: libFuzzer's "Done N runs" and its crash report); exits non-zero on a failure.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("NUMBA_BOUNDSCHECK", "1")
os.environ.setdefault("SCORER_AOT", "0")  # the ahead-of-time module has no bounds checks: fuzz the JIT kernels
os.environ.setdefault("NUMBA_CACHE_DIR", str(HERE / "data" / "numba-boundscheck"))  # never mixed with the normal cache
sys.path.insert(0, str(HERE.parent / "tests"))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

FOLDER = Path(tempfile.mkdtemp(prefix="scorer-fuzz-"))
COUNT = {"examples": 0}


def one(data: bytes, cli: bool = True) -> None:
    """Every check of tests/test_fuzz.py on one input; raises on a failure."""
    import scorer
    import test_fuzz
    from scorer.cli.main import main

    COUNT["examples"] += 1
    path = FOLDER / "submission.csv"
    path.write_bytes(data)
    for truth in (None, test_fuzz.TRUTH):
        test_fuzz._check(scorer.validate(path, truth, block_bytes=1 << 16))
    lenient = scorer.score(path, test_fuzz.TRUTH, block_bytes=1 << 16)
    test_fuzz._check(lenient)
    for block_bytes, threads in ((7, 1), (64, 2)):
        other = scorer.score(path, test_fuzz.TRUTH, block_bytes=block_bytes, threads=threads)
        assert other.report.fatal == lenient.report.fatal
        if not lenient.report.fatal:
            assert test_fuzz._fingerprint(other) == test_fuzz._fingerprint(lenient), "depends on the block size"
    if cli:
        for argv in (["validate", str(path)], ["score", str(path), "--truth", str(test_fuzz.TRUTH), "--strict", "--format", "json"]):
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = main(argv + ["--no-progress"])
            assert code in (0, 1), f"exit {code}: {err.getvalue()}"


def run_hypothesis(examples: int) -> int:
    from hypothesis import HealthCheck, given, settings

    import test_fuzz

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(data=test_fuzz.inputs())
    def fuzz(data):
        one(data, cli=COUNT["examples"] % 10 == 0)

    try:
        fuzz()
    except Exception:  # noqa: BLE001 - report it, whatever it is
        traceback.print_exc()
        return 1
    return 0


def run_atheris(seconds: int) -> int:
    try:
        import atheris
    except ImportError:
        print("atheris is not installed (pip install atheris)", file=sys.stderr)
        return 2
    kernels = ["scorer.kernels"] + [f"scorer.kernels.{path.stem}" for path in (HERE.parent / "scorer" / "kernels").glob("*.py")]
    with atheris.instrument_imports(include=["scorer"], exclude=kernels):  # numba compiles the kernels' own bytecode
        import scorer.api  # noqa: F401  (scorer's own __init__ imports its modules lazily: name them here)
        import scorer.cli.main  # noqa: F401
        import scorer.cli.score  # noqa: F401
        import scorer.cli.validate  # noqa: F401
        import scorer.engine.file_pass  # noqa: F401
        import scorer.engine.problems  # noqa: F401
        import scorer.engine.reader  # noqa: F401
        import scorer.engine.result  # noqa: F401
    import test_fuzz

    corpus = FOLDER / "corpus"
    corpus.mkdir()
    bad = [path.read_bytes() for path in sorted((HERE.parent / "fixtures" / "bad").iterdir())
           if path.suffix in (".csv", ".gz", ".zip") and path.stat().st_size <= 4096]  # the fixtures and attack files
    for n, seed in enumerate([test_fuzz.VALID, test_fuzz.VALID.replace(b"\n", b"\r\n"), b"\xef\xbb\xbf" + test_fuzz.VALID, b"", *bad]):
        (corpus / f"seed{n}").write_bytes(seed)

    def target(data: bytes) -> None:
        one(data, cli=COUNT["examples"] % 10 == 0)

    atheris.Setup([sys.argv[0], f"-max_total_time={seconds}", "-max_len=4096", "-print_final_stats=1", str(corpus)], target)
    atheris.Fuzz()  # exits the process: at the time limit with 0, at a failure with the crash report
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=("hypothesis", "atheris"))
    parser.add_argument("--examples", type=int, default=20000, help="hypothesis examples (default 20000)")
    parser.add_argument("--seconds", type=int, default=300, help="atheris run time (default 300)")
    args = parser.parse_args()
    print(f"numba bounds checks: {os.environ['NUMBA_BOUNDSCHECK']}, cache: {os.environ['NUMBA_CACHE_DIR']}", flush=True)
    started = time.monotonic()
    if args.engine == "hypothesis":
        failures = run_hypothesis(args.examples)
    else:  # libFuzzer prints its own tally ("Done N runs in S second(s)") and ends the process
        failures = run_atheris(args.seconds)
    print(f"{args.engine}: {COUNT['examples']:,} inputs checked in {time.monotonic() - started:.0f} s, "
          f"failures found: {failures}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
