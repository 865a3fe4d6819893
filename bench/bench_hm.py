"""Benchmark the list shape on an H&M-size synthetic case against a straightforward Python scorer.

    python bench/bench_hm.py [--customers 1371980] [--baseline-rows 100000]

Makes (once) bench/data/hm_submission.csv — 1,371,980 customers with 64-character hex ids and 12
ten-digit article ids each (a leading zero, like H&M's 0706016001) — and bench/data/hm_truth.csv, every
customer with 0 articles (95%) or 1-10 (5%) from 105,542. A child process loads the truth, scores a tiny
file first (numba's compiled-kernel cache loads once; that is not what is measured), then scores the
full file warm: its wall time and the child's peak RSS are printed. Then `scorer score` runs end to end
(a fresh process; truth cache and numba cache warm), three times. The baseline — csv lines split in
Python, a dict of truth sets, Kaggle's apk — runs here on the first N rows and is scaled to the full count.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_score import timed_child  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
K = 12

CHILD = r"""
import json, resource, sys, time
import scorer
from scorer.truth.strings import read_string_truth
from scorer.spec.competition import load_competition
sub, truth_path, tiny = sys.argv[1:4]
hm = load_competition("hm")
t0 = time.perf_counter()
truth = read_string_truth(truth_path, "list")
load = time.perf_counter() - t0
scorer.score(tiny, truth, hm)  # numba's cache and first-call costs, not measured
t0 = time.perf_counter()
result = scorer.score(sub, truth, hm, threads=2)
wall = time.perf_counter() - t0
# VmHWM: this process's own peak (ru_maxrss would carry the parent's peak across fork and exec)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024
print(json.dumps({"wall": wall, "truth_load": load, "score": result.score, "rows": result.counts["rows_read"], "peak_mb": peak}))
"""


def make(n_customers: int, seed: int = 0) -> tuple[Path, Path]:
    """Write the synthetic submission and truth (fixed-width rows built as byte arrays)."""
    DATA.mkdir(parents=True, exist_ok=True)
    sub_path, truth_path = DATA / f"hm_submission_{n_customers}.csv", DATA / f"hm_truth_{n_customers}.csv"
    if sub_path.is_file() and truth_path.is_file():
        return sub_path, truth_path
    rng = np.random.default_rng(seed)
    hexdigits = np.frombuffer(b"0123456789abcdef", np.uint8)
    ids = hexdigits[rng.integers(0, 16, (n_customers, 64))]
    articles = rng.permutation(np.unique(rng.integers(108_775_015, 959_461_001, 120_000)))[:105_542]
    article_text = np.frombuffer("".join(f"{a:010d}" for a in articles).encode(), np.uint8).reshape(-1, 10)
    # a popular first article (Zipf), then 11 others: 12 distinct articles per row
    popular = (rng.zipf(1.3, n_customers)[:, None] + 7919 * np.arange(K)) % len(articles)
    width = 64 + 1 + K * 11
    rows = np.full((n_customers, width), ord(" "), np.uint8)
    rows[:, :64] = ids
    rows[:, 64] = ord(",")
    for j in range(K):
        rows[:, 65 + 11 * j : 75 + 11 * j] = article_text[popular[:, j]]
    rows[:, -1] = ord("\n")
    with open(sub_path, "wb") as handle:
        handle.write(b"customer_id,prediction\n")
        handle.write(rows.tobytes())
    bought = rng.random(n_customers) < 0.05
    with open(truth_path, "w") as handle:
        handle.write("customer_id,prediction\n")
        id_text = ids.view("S64").ravel()
        for i in range(n_customers):
            items = ""
            if bought[i]:
                picks = np.concatenate([popular[i, : rng.integers(0, 3)], rng.integers(0, len(articles), rng.integers(1, 9))])
                items = " ".join(article_text[p].tobytes().decode() for p in picks)
            handle.write(f"{id_text[i].decode()},{items}\n")
    return sub_path, truth_path


def apk(actual: set, predicted: list, k: int) -> float:
    """Kaggle's apk (benhamner/Metrics), as participants run it."""
    predicted = predicted[:k]
    score, hits = 0.0, 0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1
            score += hits / (i + 1.0)
    return score / min(len(actual), k) if actual else 0.0


def baseline(sub_path: Path, truth_path: Path, n_rows: int) -> tuple[float, float]:
    """Seconds for the first n_rows of the submission (truth read included, whole), and their MAP."""
    started = time.perf_counter()
    truth = {}
    with open(truth_path) as handle:
        next(handle)
        for line in handle:
            customer, items = line.rstrip("\n").split(",")
            truth[customer] = set(items.split())
    scores = []
    with open(sub_path) as handle:
        next(handle)
        for i, line in enumerate(handle):
            if i == n_rows:
                break
            customer, items = line.rstrip("\n").split(",")
            if truth[customer]:
                scores.append(apk(truth[customer], items.split(), K))
    return time.perf_counter() - started, (sum(scores) / len(scores) if scores else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=1_371_980)
    parser.add_argument("--baseline-rows", type=int, default=100_000)
    args = parser.parse_args()
    sub_path, truth_path = make(args.customers)
    tiny = DATA / "hm_tiny.csv"
    with open(sub_path) as handle:
        tiny.write_text("".join(next(handle) for _ in range(3)))
    out = subprocess.run([sys.executable, "-c", CHILD, str(sub_path), str(truth_path), str(tiny)],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    engine = json.loads(out.strip().splitlines()[-1])
    command = [sys.executable, "-m", "scorer.cli", "score", str(sub_path), "--truth", str(truth_path), "--competition", "hm",
               "--format", "json", "--no-progress"]
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)  # fills the compiled truth cache
    cli = [timed_child(command) for _ in range(3)]
    seconds, _ = baseline(sub_path, truth_path, args.baseline_rows)
    scaled = seconds * args.customers / args.baseline_rows
    size = sub_path.stat().st_size / 1e6
    print(f"H&M-size list shape: {engine['rows']:,} rows, {size:,.0f} MB, MAP@12 {engine['score']:.6f}")
    print(f"  scorer (warm, 2 threads):  {engine['wall']:.2f} s   peak RSS {engine['peak_mb']:.0f} MB   (truth load {engine['truth_load']:.2f} s, not timed)")
    best = min(cli)
    print(f"  scorer score (CLI, end to end, truth and numba caches warm): best {best[0]:.2f} s of "
          f"{[round(run[0], 2) for run in cli]}   peak RSS {max(run[1] for run in cli):.0f} MB")
    print(f"  straightforward Python:    {scaled:.1f} s   (measured on {args.baseline_rows:,} rows with the whole truth read, scaled)")
    print(f"  ratio:                     {scaled / engine['wall']:.0f}x   targets: <= 1.5 s, <= 400 MB")


if __name__ == "__main__":
    main()
