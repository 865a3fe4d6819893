"""Benchmark `scorer explain` (every convention) against a plain `scorer score` of the same files, in the same run.

    python bench/bench_explain.py [--sessions 1671803] [--data bench/data] [--runs 3]

Generates the data with make_otto.py when it is missing (full OTTO size by default: 5 million rows, 820 MB),
runs each command once to warm the numba and truth caches, then times `--runs` end-to-end runs of each
(subprocesses, wall time) and prints the medians and their ratio. The goal: explain ≤ 3× score.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_671_803)
    parser.add_argument("--data", type=Path, default=None, help="folder of the generated files (default: bench/data, or bench/data/sessions-N for N sessions)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    data = args.data or (HERE / "data" if args.sessions == 1_671_803 else HERE / "data" / f"sessions-{args.sessions}")
    submission, truth = data / "submission.csv", data / "test_labels.jsonl"
    if not submission.exists() or not truth.exists():
        subprocess.run([sys.executable, str(HERE / "make_otto.py"), "--sessions", str(args.sessions), "--out", str(data)], check=True)
    score = [sys.executable, "-m", "scorer", "score", str(submission), "--truth", str(truth), "--no-progress"]
    explain = [sys.executable, "-m", "scorer", "explain", str(submission), "--truth", str(truth)]
    for command in (score, explain):  # warm: numba's cache and the compiled truth
        wall(command)
    times: dict[str, list[float]] = {"score": [], "explain": []}
    for _ in range(args.runs):  # interleaved, so a busy spell of the machine falls on both
        times["score"].append(wall(score))
        times["explain"].append(wall(explain))
    rows = sum(1 for _ in open(submission, "rb")) - 1
    size = submission.stat().st_size / 1e6
    print(f"{rows:,} rows, {size:,.0f} MB, {args.runs} runs each (median wall time, warm caches)")
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"  {name:<8} {medians[name]:7.2f} s   (runs: {', '.join(f'{v:.2f}' for v in values)})")
    print(f"  explain / score: {medians['explain'] / medians['score']:.2f}x (goal: <= 3x)")


if __name__ == "__main__":
    main()
