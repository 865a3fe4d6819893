"""Benchmark `scorer explain` (every convention) against a plain `scorer score` of the same files, in the same run.

    python bench/bench_explain.py [--sessions 1671803] [--data bench/data] [--runs 3]

Generates the data with make_otto.py when it is missing (full OTTO size by default: 5 million rows, 820 MB),
runs each command once to warm the truth cache, then times `--runs` end-to-end runs of each (subprocesses, wall and
CPU time, user + system), each on an empty numba cache, as a first run after the install is (the kernels compiled
with the package serve; without them, numba compiles in every run), and prints the medians and their ratios. The
goals: explain at most 3x score's wall time, and at most 2x its CPU from the first run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of the command, run on an empty numba cache."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-explain-numba-") as numba_cache:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "NUMBA_CACHE_DIR": numba_cache})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - started, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


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
    timed(score)  # the compiled truth, cached (not counted)
    times: dict[str, list[tuple[float, float]]] = {"score": [], "explain": []}
    for _ in range(args.runs):  # interleaved, so a busy spell of the machine falls on both
        times["score"].append(timed(score))
        times["explain"].append(timed(explain))
    rows = sum(1 for _ in open(submission, "rb")) - 1
    size = submission.stat().st_size / 1e6
    print(f"{rows:,} rows, {size:,.0f} MB, {args.runs} runs each (medians; truth cache warm, numba's cache empty in every run; "
          f"load {os.getloadavg()[0]:.2f} at the end)")
    walls = {name: statistics.median(wall for wall, _ in runs) for name, runs in times.items()}
    cpus = {name: statistics.median(cpu for _, cpu in runs) for name, runs in times.items()}
    for name, runs in times.items():
        print(f"  {name:<8} {walls[name]:7.2f} s wall {cpus[name]:7.2f} CPU-s   (runs: {', '.join(f'{w:.2f}/{c:.2f}' for w, c in runs)})")
    print(f"  explain / score: {walls['explain'] / walls['score']:.2f}x wall (goal: <= 3x), {cpus['explain'] / cpus['score']:.2f}x CPU "
          "(goal: <= 2x from the first run)")


if __name__ == "__main__":
    main()
