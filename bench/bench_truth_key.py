"""What hardening the truth costs at full size: the cache's content key and the checks of compiled arrays,
against a warm `scorer score` measured in the same run.

    python bench/bench_truth_key.py [--data bench/data] [--runs 5]

Measures (medians of --runs, files in the page cache):
  - the content key (xxh3-128 of the mapped bytes) of test_labels.jsonl (113 MB at OTTO size),
  - scorer.truth.checks on OTTO's compiled truth (1.67 M sessions) and on an H&M-size string truth
    (1,371,980 ids of 64 hex characters, 105,542 article codes), as a compiled file given as truth (the full
    check) and as an entry of the private cache (the checks that keep the kernels safe, and a spot check),
  - loading a compiled file given as truth (OTTO's .truth.npz, the H&M-size .strings.npz), mapped, parsed and
    checked: the first load (the full check, which leaves a memo in the private cache) against a later load of
    the same bytes (the content key of the mapping, the memo, the safety checks),
  - a warm `scorer score` of submission.csv end to end (a subprocess; truth and numba caches warm),
and prints key + checks as a share of the warm score (target: at most 5 %).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

import numpy as np

HERE = Path(__file__).resolve().parent
TYPES = ("clicks", "carts", "orders")


def median_seconds(function, runs: int) -> float:
    """Median wall time of `runs` calls."""
    return statistics.median(_timed(function, time.perf_counter) for _ in range(runs))


def median_cpu(function, runs: int) -> float:
    """Median CPU time of this process (less sensitive than wall time to other processes' load)."""
    return statistics.median(_timed(function, time.process_time) for _ in range(runs))


def _timed(function, clock) -> float:
    started = clock()
    function()
    return clock() - started


def hm_string_truth(n_ids: int = 1_371_980, n_articles: int = 105_542, seed: int = 0):
    """A StringTruth shaped like H&M's: 5 % of the customers with 1-10 articles."""
    from scorer.truth.ids import offsets
    from scorer.truth.strings import StringTable, StringTruth

    rng = np.random.default_rng(seed)
    ids = [f"{value:064x}" for value in rng.integers(0, 2**62, n_ids)]
    articles = [f"0{value:09d}" for value in rng.choice(10**9, n_articles, replace=False)]
    sizes = np.where(rng.random(n_ids) < 0.05, rng.integers(1, 11, n_ids), 0)
    indptr = offsets(sizes, "hm")
    rows = [np.sort(rng.choice(n_articles, size, replace=False)) for size in sizes[sizes > 0]]
    items = np.concatenate(rows).astype(np.int64)
    return StringTruth(("all",), np.arange(n_ids, dtype=np.int64), indptr, items, "hm", ids=StringTable.of(ids),
                       item_names=StringTable.of(articles))


def given_file_loads(path: Path, load, runs: int) -> None:
    """Median CPU of loading a compiled file given as truth: checked in full (no memo) and with its memo (in a
    fresh private cache folder); the content key of its mapping alone."""
    from scorer.truth.cache import bytes_key
    from scorer.truth.npz import map_file

    full = median_cpu(lambda: load(path, False), runs)
    load(path, True)  # checked in full once: the memo is written
    memo = median_cpu(lambda: load(path, True), runs)
    key = median_cpu(lambda: bytes_key(map_file(path)), runs)
    print(f"  {path.name} given as truth ({path.stat().st_size / 1e6:.0f} MB): full check {full * 1e3:.1f} ms CPU, "
          f"same bytes again (memo) {memo * 1e3:.1f} ms CPU (of which the content key {key * 1e3:.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from scorer.truth.cache import cache_path, content_key
    from scorer.truth.checks import check_string_truth, check_truth
    from scorer.truth.compiled import read_compiled
    from scorer.truth.load import load_truth

    labels, submission = args.data / "test_labels.jsonl", args.data / "submission.csv"
    truth = load_truth(labels, TYPES)  # builds the cache entry once
    entry = cache_path(labels, list(TYPES))
    content_key(labels)  # the file into the page cache
    key = median_seconds(lambda: content_key(labels), args.runs)
    compiled = read_compiled(entry, TYPES)
    checks = median_seconds(lambda: check_truth(compiled, entry, compiled.lookup), args.runs)
    print(f"content key of {labels.name} ({labels.stat().st_size / 1e6:.0f} MB): {key * 1e3:.1f} ms wall "
          f"({labels.stat().st_size / key / 1e9:.1f} GB/s), {median_cpu(lambda: content_key(labels), args.runs) * 1e3:.1f} ms CPU")
    print(f"checks of the compiled truth ({truth.n_sessions:,} sessions, {len(truth.items):,} items): {checks * 1e3:.1f} ms wall, "
          f"{median_cpu(lambda: check_truth(compiled, entry, compiled.lookup), args.runs) * 1e3:.1f} ms CPU")
    hm = hm_string_truth()
    string_checks = median_seconds(lambda: check_string_truth(hm, "hm"), args.runs)
    print(f"checks of an H&M-size string truth ({hm.ids.size:,} ids, {hm.item_names.size:,} items) given as a compiled file: "
          f"{string_checks * 1e3:.1f} ms wall, {median_cpu(lambda: check_string_truth(hm, 'hm'), args.runs) * 1e3:.1f} ms CPU")
    entry_checks = median_seconds(lambda: check_string_truth(hm, "hm", full=False), args.runs)
    print(f"  the same as an entry of the private cache (safety checks and a spot check): {entry_checks * 1e3:.1f} ms wall, "
          f"{median_cpu(lambda: check_string_truth(hm, 'hm', full=False), args.runs) * 1e3:.1f} ms CPU")
    from scorer.truth.strings import read_compiled_strings

    print("a compiled truth given as the truth file, loaded again (page cache warm):")
    with tempfile.TemporaryDirectory(prefix="bench-truth-key-") as name, patch.dict(os.environ, SCORER_CACHE_DIR=f"{name}/cache"):
        folder = Path(name)  # the memos go to a fresh private cache
        shutil.copyfile(entry, folder / "otto.truth.npz")
        given_file_loads(folder / "otto.truth.npz", lambda path, memo: read_compiled(path, TYPES, use_memo=memo), args.runs)
        hm.save(folder / "hm.strings.npz")
        given_file_loads(folder / "hm.strings.npz", lambda path, memo: read_compiled_strings(path, "list", use_memo=memo), args.runs)
    command = [sys.executable, "-m", "scorer.cli", "score", str(submission), "--truth", str(labels), "--no-progress"]
    subprocess.run(command, check=True, capture_output=True)  # warm-up
    score = median_seconds(lambda: subprocess.run(command, check=True, capture_output=True), max(1, args.runs // 2))
    print(f"warm `scorer score` of {submission.name}: {score:.2f} s")
    print(f"key + checks = {(key + checks) / score:.1%} of a warm score (key alone {key / score:.1%}; target <= 5%)")


if __name__ == "__main__":
    main()
