"""Benchmark of `scorer leaderboard`'s analytics: S submissions at OTTO size on one joint bootstrap of R resamples.

    python bench/bench_leaderboard.py [--data bench/data] [--submissions 100] [--resamples 1000] [--sessions N]
                                      [--engine memory | stream] [--files] [--compare 100,300] [--reduce 5000]

Data: bench/data/test_labels.jsonl and submission.csv from `python bench/make_otto.py` (made here when missing; with
--sessions N, a truth and submission of N sessions in bench/data/N/).
The submission is scored once (the time of one warm score is printed: the command scores each file so); the other
S - 1 submissions are made by perturbing its per-session hits (each loses a hit in a share of the sessions and gains
one in others, up to the truth's size: varied scores, some close, some far), and stream into the leaderboard one at a
time, as the command's scored files do:

  --engine memory (the default): into the float32 columns of every submission (scorer.analytics.leaderboard.joint_bootstrap), then
    the joint bootstrap and every figure (ranks, intervals, p_first, tiers), without and with --split public=0.3 --mde;
    and, as the straightforward implementation measured in the same run, the obvious loop: per resample a Poisson(1)
    weight per session from numpy (shared by all submissions), then per submission the weighted sums of its
    per-session numerators (np.einsum per submission), timed on a few resamples and scaled to R;
  --engine stream: each submission reduced as it comes to its resampled sums (scorer.analytics.leaderboard.streamed_bootstrap, in
    the command's batches), then the same figures with --split public=0.3 --mde; the time of one submission's reduction
    alone (what a Dask task adds to its score), and a digest of the board's JSON (equal digests: equal figures);
  --files (with --engine stream): each submission a real file, make_otto's generator with its own seed and hit rate,
    written, scored (strict, as an upload), reduced and deleted, as the command does with S files;
  --compare 100,300: this bench in a child process per count and engine (stream, and memory for the first count):
    peak RSS of each, the ratio, and whether the boards' digests of the first count agree;
  --reduce S: the figures' own cost at S submissions (standings of S scores x R resamples: ranks, intervals,
    pairwise p-values and Holm over S(S - 1)/2 pairs), on synthetic resampled scores.

Peak RSS is the process's (the scoring included). Targets: memory engine <= 3 min and <= 4 GB for 100 x 1,000;
stream: peak at 300 submissions within 1.2x that at 100.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


FULL = 1_671_803  # OTTO's test sessions


def ensure_data(data: Path, sessions: int | None = None) -> tuple[Path, Path]:
    """The truth and submission of make_otto.py: full size in `data`, else `sessions` sessions in data/sessions-N."""
    folder = data if not sessions or sessions == FULL else data / f"sessions-{sessions}"
    truth, submission = folder / "test_labels.jsonl", folder / "submission.csv"
    if not (truth.is_file() and submission.is_file()):
        print(f"making the data (bench/make_otto.py --sessions {sessions or FULL}) ...", flush=True)
        make_otto().main(["--out", str(folder), "--sessions", str(sessions or FULL)])
    return truth, submission


def make_otto():
    sys.path.insert(0, str(HERE))
    import make_otto

    return make_otto


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
    parser.add_argument("--sessions", type=int, default=None, help="a truth of N sessions (made by make_otto.py) instead of OTTO's")
    parser.add_argument("--engine", choices=("memory", "stream"), default="memory")
    parser.add_argument("--files", action="store_true", help="with --engine stream: every submission a real file, written, scored, reduced, deleted")
    parser.add_argument("--compare", type=lambda text: [int(x) for x in text.split(",")], default=None, metavar="S1,S2",
                        help="run the stream engine at each count in a child process (and memory at the first): peak RSS")
    parser.add_argument("--reduce", type=int, default=None, metavar="S", help="time the standings of S submissions alone")
    parser.add_argument("--report", type=Path, default=None, help="also write the last board's plot to this .png or .html")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(args)
    if args.reduce:
        return reduce_cost(args.reduce, args.resamples)
    truth_path, submission = ensure_data(args.data, args.sessions)
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.engine == "stream":
        return streamed(args, truth_path, submission)
    in_memory(args, truth_path, submission)


def scored_base(truth_path: Path, submission: Path):
    """(truth, the base submission's SessionTable, seconds of one warm score)."""
    import scorer
    from scorer.analytics.bootstrap import SessionTable

    truth = scorer.load_truth(truth_path)
    scorer.score(submission, truth)  # warm: kernels loaded
    started, cpu = time.perf_counter(), time.process_time()
    result = scorer.score(submission, truth)
    one_score, score_cpu = time.perf_counter() - started, time.process_time() - cpu
    table = SessionTable.from_result(result)
    print(f"data: {submission} ({submission.stat().st_size / 1e6:.0f} MB), {table.sizes.shape[0]:,} sessions; machine: 2 cores (shared)")
    print(f"one warm score of the submission: {one_score:.2f} s wall, {score_cpu:.2f} s CPU (the command scores each file so)")
    return truth, table


def in_memory(args, truth_path: Path, submission: Path) -> None:
    from scorer.analytics.leaderboard.board import leaderboard
    from scorer.analytics.leaderboard.joint_bootstrap import SessionColumns
    from scorer.analytics.split import hash_split

    _, table = scored_base(truth_path, submission)
    n_sessions = table.sizes.shape[0]
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
    print(f"board digest (without the MDE, which the stream engine estimates from a sample): {digest(board)}")
    print(f"peak RSS of the process: {peak_mb():,.0f} MB")
    write_report(args, board)
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    naive = naive_seconds(columns.used(), columns.n_types, args.resamples, 0)
    print(f"straightforward loop (numpy Poisson weights per resample, np.einsum per submission), scaled to "
          f"{args.resamples:,} resamples: {naive:.0f} s; ratio {naive / plain:.1f}x")


def streamed(args, truth_path: Path, submission: Path) -> None:
    """The stream engine, as `scorer leaderboard --split public=0.3 --mde` runs it, on perturbed tables or real files."""
    from scorer.analytics.leaderboard.board import leaderboard, sides_of
    from scorer.analytics.leaderboard.streamed_bootstrap import Plan, StreamedColumns, batch_size, reduce_tables, truth_table
    from scorer.analytics.split import hash_split
    from scorer.spec.competition import load_competition

    truth, table = scored_base(truth_path, submission)
    n_sessions = table.sizes.shape[0]
    split = hash_split(np.arange(n_sessions, dtype=np.int64), 0.3, seed=0)
    plan = Plan.make(sides_of(split, n_sessions), args.resamples, 0, args.threads, "private")
    cpu = time.process_time()
    reduce_tables([table], plan, threads=1)
    one = time.process_time() - cpu
    print(f"one submission's reduction alone, one thread ({args.resamples:,} resamples, public and private): {one:.2f} s CPU")
    base = truth_table(truth, load_competition("otto"))
    batch = min(args.submissions, batch_size(n_sessions, len(table.types)))
    started, cpu = time.perf_counter(), time.process_time()
    columns = StreamedColumns(base, plan, batch=batch, threads=args.threads)
    source = files(args, truth, table) if args.files else tables(args, table)
    scoring = 0.0
    for made, seconds in source:
        scoring += seconds
        columns.add(made)
    fill, fill_cpu = time.perf_counter() - started, time.process_time() - cpu
    what = "real files written, scored and" if args.files else "perturbed tables"
    print(f"{args.submissions} submissions ({what} reduced in batches of {batch}): {fill:.1f} s wall, {fill_cpu:.1f} s CPU"
          + (f", of which {scoring:.1f} s writing and scoring the files" if args.files else ""))
    names = [f"team{k:03d}" for k in range(args.submissions)]
    started, cpu = time.perf_counter(), time.process_time()
    board = leaderboard(columns, names, split=split, plan_mde=True)
    figures, figures_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"the figures with --split public=0.3 --mde: {figures:.1f} s wall, {figures_cpu:.1f} s CPU; "
          f"{max(s['tier'] for s in board['submissions'])} tiers, median pair MDE {board['mde']['median_pair_mde']:.6f} "
          f"(variance from {board['mde']['variance_from']:,} sessions)")
    print(f"board digest (without the MDE, which the stream engine estimates from a sample): {digest(board)}")
    print(f"peak RSS of the process: {peak_mb():,.0f} MB")
    write_report(args, board)
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def tables(args, table):
    """The base table, then S - 1 perturbed ones (the memory engine's own sequence), with no scoring time."""
    rng = np.random.default_rng(0)
    yield table, 0.0
    for k in range(1, args.submissions):
        yield perturbed(table, k, rng), 0.0


def files(args, truth, table):
    """S real files of make_otto's generator (seed k, hit rate from 0.2 to 0.6), each written, scored as an upload and
    deleted before the next: (its SessionTable, seconds spent writing and scoring it)."""
    import tempfile

    import scorer
    from scorer.analytics.bootstrap import SessionTable

    generator = make_otto()
    sessions = np.asarray(truth.sessions, np.int64)
    labels = generator.make_truth(np.random.default_rng(0), sessions)  # make_otto's truth: the same first draws
    with tempfile.TemporaryDirectory(prefix="bench-leaderboard-", dir=args.data) as folder:
        path = Path(folder) / "submission.csv"
        for k in range(args.submissions):
            started = time.perf_counter()
            generator.write_submission(path, np.random.default_rng(1000 + k), sessions, labels, hit_rate=0.2 + 0.4 * k / max(1, args.submissions - 1))
            result = scorer.score(path, truth, strict=True, untrusted=True)
            made = SessionTable.from_result(result)
            del result
            path.unlink()
            yield made, time.perf_counter() - started


def compare(args) -> None:
    """This bench per count in a child process: the stream engine at each count, the memory engine at the first."""
    import re
    import subprocess

    rest = ["--data", str(args.data), "--resamples", str(args.resamples), "--threads", str(args.threads),
            *(["--sessions", str(args.sessions)] if args.sessions else []), *(["--files"] if args.files else [])]
    found = {}
    runs = [("stream", count) for count in args.compare] + ([] if args.files else [("memory", args.compare[0])])
    for engine, count in runs:
        command = [sys.executable, __file__, *rest, "--engine", engine, "--submissions", str(count)]
        print(f"$ {' '.join(command[1:])}", flush=True)
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        print(out, flush=True)
        found[engine, count] = (float(re.search(r"peak RSS of the process: ([0-9,]+) MB", out).group(1).replace(",", "")),
                                re.search(r"board digest[^:]*: ([0-9a-f]+)", out).group(1))
    first, last = args.compare[0], args.compare[-1]
    ratio = found["stream", last][0] / found["stream", first][0]
    print(f"stream engine: peak RSS {found['stream', first][0]:,.0f} MB at {first} submissions, {found['stream', last][0]:,.0f} MB "
          f"at {last}: {ratio:.2f}x (goal: within 1.2x)")
    if ("memory", first) in found:
        same = found["memory", first][1] == found["stream", first][1]
        print(f"memory engine at {first}: peak RSS {found['memory', first][0]:,.0f} MB; the same figures as the stream engine: "
              f"{'yes' if same else 'NO'} (board digests {found['memory', first][1]} and {found['stream', first][1]})")


def reduce_cost(count: int, resamples: int) -> None:
    """The figures' cost at `count` submissions: standings (ranks, intervals, p_first, every pair's p-value, Holm, tiers)
    of synthetic resampled scores, timed, with the process's peak RSS."""
    from scorer.analytics.leaderboard.standings import standings

    rng = np.random.default_rng(0)
    strength = np.sort(rng.normal(0.17, 0.01, count))[::-1]
    samples = strength + rng.normal(0.0, 0.0005, (resamples, count)) + rng.normal(0.0, 0.0005, (resamples, 1))
    started, cpu = time.perf_counter(), time.process_time()
    found = standings(strength, samples, 0.95, 3, "holm")
    print(f"standings of {count:,} submissions x {resamples:,} resamples ({count * (count - 1) // 2:,} pairs): "
          f"{time.perf_counter() - started:.1f} s wall, {time.process_time() - cpu:.1f} s CPU, {found['tier'].max()} tiers; "
          f"peak RSS {peak_mb():,.0f} MB")


def digest(board: dict) -> str:
    import hashlib
    import json

    return hashlib.blake2b(json.dumps({k: v for k, v in board.items() if k != "mde"}, sort_keys=True).encode(), digest_size=8).hexdigest()


def write_report(args, board: dict) -> None:
    if args.report:
        from scorer.analytics.leaderboard.plot import write_leaderboard_report

        started = time.perf_counter()
        write_leaderboard_report(args.report, board)
        print(f"report {args.report} written in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
