"""Benchmark of `scorer leaderboard`'s analytics: S submissions at OTTO size on one joint bootstrap of R resamples.

    python bench/bench_leaderboard.py [--data bench/data] [--submissions 100] [--resamples 1000] [--sessions N]

Data: bench/data/test_labels.jsonl and submission.csv from `python bench/make_otto.py` (made here when missing).
The submission is scored once (the time of one warm score is printed: the command scores each file so, one after
the other); the other S - 1 submissions are made by perturbing its per-session hits (each loses a hit in a share of
the sessions and gains one in others, up to the truth's size: varied scores, some close, some far), and stream into the
leaderboard's float32 columns one at a time, as the command's scored files do. Timed in process:

  the joint bootstrap and every figure (ranks, intervals, p_first, tiers), without and with --split public=0.3 --mde;
  peak RSS of the process (the scoring included)  (target: <= 3 min and <= 4 GB for 100 submissions x 1,000 resamples)

and, as the straightforward implementation measured in the same run, the obvious loop: per resample a Poisson(1)
weight per session from numpy (shared by all submissions), then per submission the weighted sums of its per-session
numerators (np.einsum per submission), timed on a few resamples and scaled to R.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def ensure_data(data: Path) -> tuple[Path, Path]:
    truth, submission = data / "test_labels.jsonl", data / "submission.csv"
    if not (truth.is_file() and submission.is_file()):
        sys.path.insert(0, str(HERE))
        import make_otto

        print("making the OTTO-size data (bench/make_otto.py) ...", flush=True)
        make_otto.main(["--out", str(data)])
    return truth, submission


def perturbed(table, k: int, rng):
    """A SessionTable like `table` whose scored metric's hits are perturbed: a hit lost in a share of the sessions, one gained in others."""
    from scorer.analytics.bootstrap import SessionTable

    values = table.values.copy()
    step = len(table.metrics)
    drop, gain = rng.uniform(0.0, 0.3), rng.uniform(0.0, 0.2)
    for t in range(len(table.types)):
        column = t * step
        hits = values[:, column]
        room = np.minimum(table.sizes[:, t], table.metrics[0].k) - hits
        n = len(hits)
        hits = hits - ((hits > 0) & (rng.random(n, np.float32) < drop)) + ((room > 0) & (rng.random(n, np.float32) < gain / 4))
        values[:, column] = hits
    return SessionTable(table.types, table.metrics, table.weights, values, table.sizes)


def naive_seconds(matrix: np.ndarray, n_types: int, resamples: int, seed: int, measured: int = 10) -> float:
    """Seconds for `resamples` resamples of the obvious loop over every submission, timed on 2 resamples of the first
    `measured` submissions (each held as its own contiguous float64 array) and scaled to all of them."""
    rng = np.random.default_rng(seed)
    submissions = matrix.shape[1] // n_types - 1
    den = np.ascontiguousarray(matrix[:, :n_types].T, np.float64)
    nums = [np.ascontiguousarray(matrix[:, n_types * (s + 1):n_types * (s + 2)].T, np.float64) for s in range(min(measured, submissions))]
    few = 2
    draws = work = 0.0
    for _ in range(few):
        started = time.perf_counter()
        weights = rng.poisson(1.0, matrix.shape[0]).astype(np.float64)
        totals = np.einsum("i,ti->t", weights, den)  # numpy's own loop: OpenBLAS's threads stall on a crowded machine
        draws += time.perf_counter() - started
        started = time.perf_counter()
        for num in nums:
            np.einsum("i,ti->t", weights, num) / totals
        work += time.perf_counter() - started
    return (draws + work * submissions / len(nums)) / few * resamples


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=None, help="use only the first N sessions of the truth (a smaller run)")
    parser.add_argument("--report", type=Path, default=None, help="also write the last board's plot to this .png or .html")
    args = parser.parse_args(argv)

    import scorer
    from scorer.analytics.bootstrap import SessionTable
    from scorer.analytics.joint_bootstrap import SessionColumns
    from scorer.analytics.leaderboard import leaderboard
    from scorer.analytics.leaderboard_split import hash_split

    truth_path, submission = ensure_data(args.data)
    truth = scorer.load_truth(truth_path)
    scorer.score(submission, truth)  # warm: kernels loaded
    started, cpu = time.perf_counter(), time.process_time()
    result = scorer.score(submission, truth)
    one_score, score_cpu = time.perf_counter() - started, time.process_time() - cpu
    table = SessionTable.from_result(result)
    if args.sessions:
        table = SessionTable(table.types, table.metrics, table.weights, table.values[:args.sessions], table.sizes[:args.sessions])
    del result
    n_sessions = table.sizes.shape[0]
    print(f"data: {submission} ({submission.stat().st_size / 1e6:.0f} MB), {n_sessions:,} sessions; machine: 2 cores (shared)")
    print(f"one warm score of the submission: {one_score:.2f} s wall, {score_cpu:.2f} s CPU (the command scores each file so)")

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    columns = SessionColumns(table, args.submissions)
    columns.add(table)
    for k in range(1, args.submissions):
        columns.add(perturbed(table, k, rng))
    fill = time.perf_counter() - started
    names = [f"team{k:03d}" for k in range(args.submissions)]
    matrix_mb = columns.matrix.nbytes / 1e6
    print(f"{args.submissions} submissions streamed into the float32 columns ({matrix_mb:,.0f} MB) in {fill:.1f} s "
          "(perturbing included)")

    started, cpu = time.perf_counter(), time.process_time()
    board = leaderboard(columns, names, n=args.resamples, seed=0, threads=args.threads)
    plain, plain_cpu = time.perf_counter() - started, time.process_time() - cpu
    tiers = max(s["tier"] for s in board["submissions"])
    print(f"leaderboard, {args.resamples:,} joint resamples: {plain:.1f} s wall, {plain_cpu:.1f} s CPU; {tiers} tiers, "
          f"top p_first {board['submissions'][0]['p_first']:.3f}")

    split = hash_split(np.arange(n_sessions, dtype=np.int64), 0.3, seed=0)
    started, cpu = time.perf_counter(), time.process_time()
    board = leaderboard(columns, names, n=args.resamples, seed=0, threads=args.threads, split=split, plan_mde=True)
    with_split, split_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"leaderboard with --split public=0.3 --mde: {with_split:.1f} s wall, {split_cpu:.1f} s CPU; mean rank change "
          f"{board['split']['mean_rank_change']:.2f}, median pair MDE {board['mde']['median_pair_mde']:.6f}")
    print(f"peak RSS of the process: {peak_mb():,.0f} MB")
    if args.report:
        from scorer.analytics.leaderboard_plot import write_leaderboard_report

        started = time.perf_counter()
        write_leaderboard_report(args.report, board)
        print(f"report {args.report} written in {time.perf_counter() - started:.1f} s")
    total = args.submissions * one_score + fill + with_split
    print(f"estimated whole command (scoring {args.submissions} files one after the other + columns + --split --mde): {total:.0f} s")

    print(f"load average now: {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
    naive = naive_seconds(columns.used(), columns.n_types, args.resamples, 0)
    print(f"straightforward loop (numpy Poisson weights per resample, np.einsum per submission), scaled to "
          f"{args.resamples:,} resamples: {naive:.0f} s; ratio {naive / plain:.1f}x")


if __name__ == "__main__":
    main()
