"""Benchmark `scorer score` at full OTTO size against a straightforward dict-based scorer.

    python bench/bench_score.py [--data bench/data] [--baseline-fraction 1.0] [--runs 3]

Generates the data with make_otto.py if it is missing, then in this one run measures:
  - the first run with an empty numba cache (compile time included),
  - warm runs (truth cache and numba cache warm), end to end as a subprocess: wall time and peak RSS,
  - the same after `scorer warmup` has built the ahead-of-time kernel module (scorer.kernels.aot),
  - the same figures to the last bit for block sizes 1, 8, 64 MiB and 1 or 2 threads,
  - a plain-Python scorer (json, str.split, dicts and sets) on the same files,
and prints the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
TYPES = ("clicks", "carts", "orders")
WEIGHTS = (0.10, 0.30, 0.60)


def timed_child(command: list[str], env=None) -> tuple[float, float, str]:
    """Like run_child, but with the child's own rusage (os.wait4), so peak RSS is that process's."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(command)}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def dict_scorer(submission: Path, truth_path: Path, fraction: float) -> tuple[float, int]:
    """The straightforward way: truth into dicts of sets, the CSV split line by line. Returns (score, rows)."""
    truth = {t: {} for t in TYPES}
    with open(truth_path) as handle:
        for line in handle:
            record = json.loads(line)
            for t, labels in record["labels"].items():
                truth[t][record["session"]] = set(labels if isinstance(labels, list) else [labels])
    limit = None
    if fraction < 1:
        limit = int(sum(1 for _ in open(submission, "rb")) * fraction)
    predictions = {t: {} for t in TYPES}
    rows = 0
    with open(submission) as handle:
        next(handle)
        for line in handle:
            if limit is not None and rows >= limit:
                break
            row_id, labels = line.rstrip("\n").split(",")
            session, t = row_id.split("_")
            predictions[t][int(session)] = [int(item) for item in labels.split()][:20]
            rows += 1
    score = 0.0
    for t, weight in zip(TYPES, WEIGHTS):
        hits = total = 0
        for session, target in truth[t].items():
            hits += len(set(predictions[t].get(session, [])) & target)
            total += min(20, len(target))
        score += weight * hits / total
    return score, rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-fraction", type=float, default=1.0, help="share of the submission rows the dict scorer reads")
    args = parser.parse_args(argv)
    submission, truth = args.data / "submission.csv", args.data / "test_labels.jsonl"
    if not submission.exists() or not truth.exists():
        subprocess.run([sys.executable, str(HERE / "make_otto.py"), "--out", str(args.data)], check=True)
    size_mb = submission.stat().st_size / 1e6
    rows_total = sum(1 for _ in open(submission, "rb")) - 1
    print(f"data: {submission} ({size_mb:.0f} MB, {rows_total:,} rows), truth {truth}")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")

    command = [sys.executable, "-m", "scorer.cli", "score", str(submission), "--truth", str(truth), "--format", "json", "--no-progress"]
    with tempfile.TemporaryDirectory() as numba_cache, tempfile.TemporaryDirectory() as scorer_cache:
        # SCORER_AOT=cache: numba's JIT, then the module warmup builds (not one compiled with an editable install)
        env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache, SCORER_CACHE_DIR=scorer_cache, SCORER_AOT="cache")
        fill = f"from scorer.truth.load import load_truth; load_truth({str(truth)!r}, ('clicks', 'carts', 'orders'))"
        truth_seconds, _, _ = timed_child([sys.executable, "-c", fill], env)
        print(f"truth cache filled (JSONL read once, not part of any figure below): {truth_seconds:.1f} s")
        cold, cold_rss, _ = timed_child(command, env)  # compiles every kernel
        print(f"cold (empty numba cache, compile included): {cold:.2f} s, peak RSS {cold_rss:.0f} MB")
        jit = [timed_child(command, env) for _ in range(args.runs)]
        started = time.perf_counter()
        built = subprocess.run([sys.executable, "-m", "scorer.cli", "warmup", "--competition", "otto"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        print(f"scorer warmup --competition otto: {time.perf_counter() - started:.1f} s; {built}")
        compiled = [timed_child(command, env) for _ in range(args.runs)]
    for label, warm in (("warm, numba's JIT cache", jit), ("warm, after scorer warmup (ahead-of-time module)", compiled)):
        best = min(warm, key=lambda run: run[0])
        print(f"{label}: best {best[0]:.2f} s of {[round(run[0], 2) for run in warm]}, peak RSS {max(run[1] for run in warm):.0f} MB")
    result = json.loads(best[2])
    print(f"  score {result['score']:.12f}; throughput {size_mb / best[0]:.0f} MB/s")

    import scorer

    figures = set()
    for block in (1 << 20, 8 << 20, 64 << 20):
        for threads in (1, 2):
            res = scorer.score(submission, truth, block_bytes=block, threads=threads)
            figures.add(json.dumps([res.score, res.metrics]))
    print(f"same figures to the last bit for block sizes 1/8/64 MiB x 1/2 threads: {'yes' if len(figures) == 1 else 'NO'}")

    started = time.perf_counter()
    baseline_score, baseline_rows = dict_scorer(submission, truth, args.baseline_fraction)
    baseline = time.perf_counter() - started
    print(f"dict-based Python scorer: {baseline:.1f} s for {baseline_rows:,} rows ({baseline_rows / baseline:,.0f} rows/s)"
          + (f"; score {baseline_score:.12f} (scorer: {result['score']:.12f})" if baseline_rows == rows_total else ""))
    for label, warm in (("numba's JIT cache", jit), ("ahead-of-time module", compiled)):
        ratio = (baseline / baseline_rows) / (min(run[0] for run in warm) / rows_total)
        print(f"ratio (time per row, dict scorer / scorer warm end to end, {label}): {ratio:.1f}x")


if __name__ == "__main__":
    main()
