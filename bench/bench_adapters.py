"""Time the grader adapters against the plain engine on OTTO-like data.

    python bench/bench_adapters.py [--sessions 300000] [--public 0.3]          # data made by bench/make_otto.py
    python bench/bench_adapters.py --data bench/data [--kaggle-only]          # OTTO size: test_labels.jsonl, submission.csv

Prints, for the same truth and submission: `scorer.score` (strict) on the file; the Kaggle metric per Usage
split on frames read by pandas once (as Kaggle hands them over: `--strings object` reads text columns as
pandas 2, Kaggle's version, does; `arrow` as pandas 3 does), with seconds per call and the peak memory over
the frames (peak resident size during the call less the size before it) and the CPU time of its threads
(on a shared machine the wall time also counts waiting); the Codabench program on a compiled
truth; and checks that the scores agree.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import make_otto  # noqa: E402
import scorer  # noqa: E402
from scorer.adapters import codabench, kaggle  # noqa: E402
from scorer.cli.main import main as cli  # noqa: E402

TARGET_SECONDS, TARGET_BYTES = 2.0, 1 << 30  # per split call, at OTTO size


def timed(label: str, function, *args, **kwargs):
    started = time.perf_counter()
    value = function(*args, **kwargs)
    print(f"{label:<46} {time.perf_counter() - started:8.2f} s")
    return value


def _load() -> str:
    """The 1, 5 and 15 minute load averages (this machine's other work inflates wall times)."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "n/a"


def _status(field: str) -> int:
    """A /proc/self/status figure in bytes (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def measured(function, *args):
    """(value, seconds, CPU seconds of every thread, peak bytes over the resident size before the call, or None
    where the peak cannot be reset)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current resident size
        before = _status("VmRSS")
    except OSError:
        before = None
    started, cpu = time.perf_counter(), time.process_time()
    value = function(*args)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return value, seconds, cpu, (_status("VmHWM") - before) if before is not None else None


def read_csv(path: Path, strings: str) -> pd.DataFrame:
    try:
        option = pd.option_context("future.infer_string", strings == "arrow")
    except pd.errors.OptionError:  # pandas before 2.1 reads object strings only
        option = contextlib.nullcontext()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pandas 3 deprecates the option
        with option:
            return pd.read_csv(path)


def kaggle_splits(solution: Path, submission: Path, public: float, strings: str, order: tuple[str, str]) -> tuple[float, float]:
    """Kaggle's calls, one per Usage split in `order`; returns (the whole solution's score, the slowest call's seconds)."""
    frame = timed(f"pandas: read the solution ({strings} strings)", read_csv, solution, strings)
    sub = timed(f"pandas: read the submission ({strings} strings)", read_csv, submission, strings)
    small = frame.iloc[:3].drop(columns="Usage")
    timed("kaggle.score warm-up (kernels loaded, 3 rows)", kaggle.score, small, sub.iloc[:3], "session_type")
    slowest, worst_peak = 0.0, 0
    # The first big call of a process pays for every page it touches that the process never had (on a VM each
    # costs a host fault, several times its zeroing), later calls reuse freed ones: run both orders.
    for usage in order:
        part = frame[frame["Usage"] == usage].drop(columns="Usage")
        value, seconds, cpu, peak = measured(kaggle.score, part, sub, "session_type")
        slowest = max(slowest, seconds)
        worst_peak = max(worst_peak, peak or 0)
        memory = f"peak +{peak / 2**20:,.0f} MiB" if peak is not None else "peak n/a"
        print(f"{'kaggle.score, ' + usage + f' ({len(part):,} rows)':<46} {seconds:8.2f} s   CPU {cpu:.2f} s   {memory}   score {value:.6f}")
    whole = timed("kaggle.score, all rows in one split", kaggle.score, frame.drop(columns="Usage"), sub, "session_type")
    verdict = "within" if slowest <= TARGET_SECONDS and worst_peak <= TARGET_BYTES else "over"
    print(f"kaggle: slowest split call {slowest:.2f} s, peak +{worst_peak / 2**20:,.0f} MiB ({verdict} the target of "
          f"{TARGET_SECONDS:g} s and {TARGET_BYTES / 2**30:g} GiB; load average {_load()}: other work inflates the times)")
    return whole, slowest


def run(truth: Path, submission: Path, public: float, folder: Path, strings: str, kaggle_only: bool,
        order: tuple[str, str] = ("Public", "Private")) -> None:
    print(f"truth {truth.name}, submission {submission.stat().st_size / 1e6:,.0f} MB, load average {_load()}")
    engine = timed("engine: scorer.score, strict", scorer.score, submission, truth, strict=True)
    solution = folder / "solution.csv"
    timed("export kaggle-solution (CLI)", cli, ["export", "kaggle-solution", str(truth), "-o", str(solution), "--public", str(public)])
    whole, slowest = kaggle_splits(solution, submission, public, strings, order)
    assert np.isclose(whole, engine.score, rtol=0, atol=1e-12), (whole, engine.score)
    if kaggle_only:
        print(f"scores agree: {engine.score:.6f}")
        return
    root = folder / "codabench"
    (root / "input" / "ref").mkdir(parents=True)
    (root / "input" / "res").mkdir(parents=True)
    timed("compile-truth (CLI)", cli, ["compile-truth", str(truth), "-o", str(root / "input" / "ref" / "t.truth.npz")])
    shutil.copyfile(submission, root / "input" / "res" / submission.name)  # an upload: links are refused
    outcome = timed("codabench.grade on the compiled truth", codabench.grade, root / "input", root / "output")
    assert outcome.scores["score"] == engine.score
    print(f"scores agree: {engine.score:.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300_000, help="sessions of the data make_otto makes (without --data)")
    parser.add_argument("--data", type=Path, help="a folder holding test_labels.jsonl and submission.csv (e.g. bench/data)")
    parser.add_argument("--public", type=float, default=0.3)
    parser.add_argument("--strings", choices=("object", "arrow"), default="object",
                        help="how pandas reads text columns: object (pandas 2, as on Kaggle) or arrow (pandas 3)")
    parser.add_argument("--kaggle-only", action="store_true", help="skip the Codabench program")
    parser.add_argument("--private-first", action="store_true",
                        help="score the Private split first (the first big call of a process pays for its fresh pages)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-adapters-") as folder:
        if args.data:
            truth, submission = args.data / "test_labels.jsonl", args.data / "submission.csv"
        else:
            make_otto.main(["--sessions", str(args.sessions), "--out", folder])
            truth, submission = next(Path(folder).glob("*labels*.jsonl")), next(Path(folder).glob("*submission*.csv"))
        run(truth, submission, args.public, Path(folder), args.strings, args.kaggle_only,
            ("Private", "Public") if args.private_first else ("Public", "Private"))
