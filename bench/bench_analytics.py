"""Benchmark of the leaderboard analytics at full OTTO size (1,671,803 sessions, 5,015,409 rows).

    python bench/bench_analytics.py [--data bench/data] [--resamples 1000] [--repeat 2]

Data: bench/data/test_labels.jsonl and submission.csv from `python bench/make_otto.py` (made here
when missing), and submission_b.csv, a second submission against the same truth (same generator,
other seed). Times the real commands (wall clock, best of --repeat):

  plain `scorer score A`, `scorer score A --bootstrap N`  (target: within 2x)
  one `scorer score A`, `scorer compare A B --bootstrap N`  (target: within 2.5x)

and, in process, the resampling alone against a straightforward numpy implementation measured in
the same run (sessions drawn with rng.integers and the columns summed per resample; signs drawn per
session per permutation), timed on a few resamples and scaled to N.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def ensure_data(data: Path) -> tuple[Path, Path, Path]:
    truth, a, b = data / "test_labels.jsonl", data / "submission.csv", data / "submission_b.csv"
    sys.path.insert(0, str(HERE))
    import make_otto

    if not (truth.is_file() and a.is_file()):
        print("making the OTTO-size data (bench/make_otto.py) ...", flush=True)
        make_otto.main(["--out", str(data)])
    if not b.is_file():
        print("making a second submission against the same truth ...", flush=True)
        rng = np.random.default_rng(0)  # make_otto's seed 0: the same truth
        sessions = np.arange(make_otto.FIRST_SESSION, make_otto.FIRST_SESSION + 1_671_803, dtype=np.int64)
        labels = make_otto.make_truth(rng, sessions)
        make_otto.write_submission(b, np.random.default_rng(1), sessions, labels)
    return truth, a, b


def timed(argv: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
        best = min(best, seconds)
    return best


def naive_bootstrap(num: np.ndarray, den: np.ndarray, n: int, seed: int) -> float:
    """Seconds for n resamples the obvious way: draw n_sessions indices, sum the rows."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    for _ in range(n):
        index = rng.integers(0, len(num), len(num))
        num[index].sum(axis=0), den[index].sum(axis=0)
    return time.perf_counter() - started


def naive_flips(delta: np.ndarray, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    for _ in range(n):
        signs = rng.integers(0, 2, len(delta)) * 2 - 1
        (signs[:, None] * delta).sum(axis=0)
    return time.perf_counter() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each command; the best counts (default 2)")
    parser.add_argument("--naive", type=int, default=5, help="resamples timed for the straightforward implementation (default 5)")
    args = parser.parse_args(argv)
    truth, a, b = ensure_data(args.data)
    scorer_cmd = [sys.executable, "-m", "scorer.cli"]
    plain = scorer_cmd + ["score", str(a), "--truth", str(truth), "--no-progress"]
    subprocess.run(plain, stdout=subprocess.DEVNULL, check=True)  # warm the truth cache and the numba caches
    subprocess.run(scorer_cmd + ["compare", str(a), str(a), "--truth", str(truth), "--bootstrap", "2", "--no-progress"],
                   stdout=subprocess.DEVNULL, check=True)
    n = args.resamples
    t_score = timed(plain, args.repeat)
    t_boot = timed(plain + ["--bootstrap", str(n), "--seed", "1"], args.repeat)
    t_compare = timed(scorer_cmd + ["compare", str(a), str(b), "--truth", str(truth), "--bootstrap", str(n), "--seed", "1",
                                    "--no-progress"], args.repeat)

    # in process: the resampling alone, fast and straightforward
    import scorer
    from scorer.analytics.bootstrap import SessionTable, bootstrap
    from scorer.analytics.compare import compare

    result_a = scorer.score(a, truth)
    result_b = scorer.score(b, truth)
    table = SessionTable.from_result(result_a)
    bootstrap(table, 2, seed=0)  # compile outside the timing
    started = time.perf_counter()
    boot = bootstrap(table, n, seed=1)
    t_boot_fast = time.perf_counter() - started
    started = time.perf_counter()
    paired = compare(result_a, result_b, n=n, seed=1)
    t_compare_fast = time.perf_counter() - started
    num, den = table.parts(table.values, table.sizes)
    t_boot_naive = naive_bootstrap(num, den, args.naive, 0) * n / args.naive
    table_b = SessionTable.from_result(result_b)
    scored = table.scored_columns
    delta = num[:, scored] - table_b.parts(table_b.values, table_b.sizes)[0][:, scored]
    t_compare_naive = (naive_bootstrap(delta, den[:, scored], args.naive, 0) + naive_flips(delta, args.naive, 0)) * n / args.naive

    s = boot["score"]
    print(f"OTTO size: {table.sizes.shape[0]:,} sessions, {n:,} resamples; {boot['groups']:,} distinct session rows")
    print(f"score {s['value']:.6f}  95% interval [{s['low']:.6f}, {s['high']:.6f}]   "
          f"compare A - B {paired['score']['difference']:+.6f} [{paired['score']['low']:+.6f}, {paired['score']['high']:+.6f}] "
          f"p {paired['score']['p_value']:.4f}")
    print()
    print(f"{'command (wall clock, best of ' + str(args.repeat) + ')':<48}{'seconds':>10}{'ratio':>10}{'target':>10}")
    print(f"{'scorer score A':<48}{t_score:>10.2f}{1.0:>10.2f}")
    print(f"{f'scorer score A --bootstrap {n}':<48}{t_boot:>10.2f}{t_boot / t_score:>10.2f}{'<= 2.0':>10}")
    print(f"{f'scorer compare A B --bootstrap {n}':<48}{t_compare:>10.2f}{t_compare / t_score:>10.2f}{'<= 2.5':>10}")
    print()
    print(f"{'resampling alone (in process)':<48}{'seconds':>10}{'straightforward':>17}{'speed-up':>10}")
    print(f"{f'bootstrap, {n} resamples, all metrics':<48}{t_boot_fast:>10.2f}{t_boot_naive:>17.1f}{t_boot_naive / t_boot_fast:>10.0f}x")
    print(f"{f'compare (paired bootstrap + {n} permutations)':<48}{t_compare_fast:>10.2f}{t_compare_naive:>17.1f}"
          f"{t_compare_naive / t_compare_fast:>10.0f}x")
    print(f"(straightforward: {args.naive} resamples timed, scaled to {n})")


if __name__ == "__main__":
    main()
