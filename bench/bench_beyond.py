"""Benchmark the beyond-accuracy metrics at OTTO size: a warm score with and without them, in one run.

    python bench/bench_beyond.py [--data bench/data] [--runs 3]

Writes a 1.86M-item table (synthetic Zipf popularity, 50 categories) next to the data, scores
bench/data/submission.csv warm (truth cache and kernels loaded, in this process) with the
OTTO config, then with novelty@20, diversity@20, serendipity@20 added (and then with every
beyond-accuracy metric), and prints the added seconds and the ratio, on the ahead-of-time kernels
(built first, as `scorer warmup` does). Reading the item table is timed apart (once per run of
`scorer score --items`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
N_ITEMS = 1_855_603  # OTTO's item ids are 0 .. 1,855,602
THREE = ("novelty@20", "diversity@20", "serendipity@20")
EVERY = (*THREE, "arp@20", "aplt@20", "gini@20", "auc@20", "gauc@20")


def write_items(path: Path, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    popularity = rng.zipf(1.5, N_ITEMS).clip(max=10**7) - 1
    pq.write_table(pa.table({"aid": np.arange(N_ITEMS, dtype=np.int64), "popularity": popularity.astype(np.int64),
                             "category": rng.integers(0, 50, N_ITEMS)}), path)


def best_of(runs: int, work) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from scorer.api import score
    from scorer.spec.competition import load_competition
    from scorer.spec.metrics import parse_metric
    from scorer.truth.items import read_items
    from scorer.truth.load import load_truth

    submission, labels = args.data / "submission.csv", args.data / "test_labels.jsonl"
    if not submission.exists():
        sys.exit(f"no {submission}: run bench/make_otto.py first")
    table = args.data / "items_1.86M.parquet"
    if not table.exists():
        write_items(table)
    read_seconds, items = best_of(1, lambda: read_items(table))
    otto = load_competition("otto")
    truth = load_truth(labels, otto.types)
    from scorer.engine import aot_build
    from scorer.kernels import door

    status = aot_build.ensure_built()["score"]  # as after `scorer warmup`: the ahead-of-time kernels serve when they can be built
    kernels = door.served("score") + ("" if status.startswith(("ready", "built")) else f" ({status})")
    with_three = dataclasses.replace(otto, diagnostics=(*otto.diagnostics, *map(parse_metric, THREE)))
    with_every = dataclasses.replace(otto, diagnostics=(*otto.diagnostics, *map(parse_metric, EVERY)))
    score(submission, truth, otto)  # warm-up: page cache, kernels
    score(submission, truth, with_every, items=items)
    base, plain = best_of(args.runs, lambda: score(submission, truth, otto))
    three, result = best_of(args.runs, lambda: score(submission, truth, with_three, items=items))
    every, full = best_of(args.runs, lambda: score(submission, truth, with_every, items=items))
    assert plain.score == result.score == full.score
    print(f"kernels: {kernels}; item table: {len(items.popularity):,} ids, read in {read_seconds:.2f} s")
    print(f"warm score, OTTO config:                 {base:.2f} s (best of {args.runs})")
    print(f"  + novelty, diversity, serendipity @20: {three:.2f} s  (+{three - base:.2f} s, x{three / base:.2f})")
    print(f"  + every beyond-accuracy metric @20:    {every:.2f} s  (+{every - base:.2f} s, x{every / base:.2f})")
    for name in EVERY:
        print(f"    {name:<16}" + "  ".join(f"{t} {full.metrics[t][name]:.6f}" for t in otto.types))
    return 0


if __name__ == "__main__":
    sys.exit(main())
