"""Benchmark `scorer grade` on Dask: N OTTO-shaped submissions graded by 2 local workers vs a plain loop.

    python bench/bench_dask.py [--submissions 40] [--sessions 100000] [--workers 2]

Data (made once, kept in bench/data/dask/, gitignored): one truth of --sessions sessions and N
submissions with different seeds, made with bench/make_otto.py's generator (OTTO's shape:
3 rows a session, 20 items a row, realistic hit rates). The truth is compiled before timing.

Measured in the same run, all strict as a grader:
- loop: `scorer.score(path, truth)` for each file in one process (the engine's default 2 threads);
- dask: `Grading` on a LocalCluster of --workers processes with one engine thread each, cluster
  start-up and the warm-up (each worker loads numba's cached kernels and the truth once) timed apart.
Cluster overhead per submission = (dask wall × workers − Σ in-task seconds) / N: worker time spent on
anything but scoring (scheduling, shipping records, kernel/truth loading, idle at the tail). A run
of 200 no-op tasks gives the bare scheduling cost per task.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_otto  # noqa: E402


def make_data(out: Path, n_files: int, n_sessions: int) -> tuple[Path, list[Path]]:
    out.mkdir(parents=True, exist_ok=True)
    truth_path = out / f"labels_{n_sessions}.jsonl"
    sessions = np.arange(make_otto.FIRST_SESSION, make_otto.FIRST_SESSION + n_sessions, dtype=np.int64)
    truth = make_otto.make_truth(np.random.default_rng(0), sessions)
    if not truth_path.exists():
        make_otto.write_truth(truth_path, sessions, truth)
    files = []
    for seed in range(n_files):
        path = out / f"sub_{n_sessions}_{seed:03d}.csv"
        if not path.exists():
            make_otto.write_submission(path, np.random.default_rng(1000 + seed), sessions, truth)
        files.append(path)
    return truth_path, files


def noop(x):
    return x


def add_data_options(parser: argparse.ArgumentParser, submissions: int, sessions: int) -> None:
    """--submissions, --sessions, --workers and --out: the data and the cluster (shared with bench_grade_resume.py)."""
    parser.add_argument("--submissions", type=int, default=submissions)
    parser.add_argument("--sessions", type=int, default=sessions)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "data" / "dask")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(parser, submissions=40, sessions=100_000)
    parser.add_argument("--task-threads", type=int, default=1, help="engine threads inside each grading task (default 1)")
    args = parser.parse_args(argv)

    import scorer
    from scorer.dask.cluster import client_for
    from scorer.dask.grade import Grading
    from scorer.spec.competition import load_competition

    started = time.perf_counter()
    truth_path, files = make_data(args.out, args.submissions, args.sessions)
    size = sum(path.stat().st_size for path in files)
    print(f"data: {len(files)} submissions of {args.sessions:,} sessions ({args.sessions * 3:,} rows, "
          f"{size / len(files) / 1e6:.0f} MB each), ready in {time.perf_counter() - started:.1f} s")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before timing (other work on it slows both sides)")
    competition = load_competition("otto")
    truth = scorer.load_truth(truth_path, competition.types)  # compiles the cache the workers read

    scorer.score(files[0], truth, strict=True)  # numba's kernel cache loaded before timing the loop
    started = time.perf_counter()
    loop_scores = [scorer.score(path, truth, strict=True).score for path in files]
    loop = time.perf_counter() - started

    started = time.perf_counter()
    with client_for(workers=args.workers) as client:
        startup = time.perf_counter() - started
        started = time.perf_counter()
        grading = Grading(client, files, truth_path, competition, strict=True, threads=args.task_threads)
        records = list(grading)
        wall = time.perf_counter() - started - grading.warm_seconds
        started = time.perf_counter()
        client.gather(client.map(noop, range(200)))
        per_noop = (time.perf_counter() - started) / 200
    in_task = sum(record["seconds"] for record in records)
    dask_scores = [record["score"] for record in sorted(records, key=lambda r: r["index"])]
    assert dask_scores == loop_scores, "the cluster and the loop disagree"
    n, w = len(files), args.workers
    print(f"plain loop (1 process, 2 engine threads): {loop:6.1f} s  {60 * n / loop:6.1f} submissions/min  {loop / n:.3f} s each")
    print(f"dask ({w} workers x {args.task_threads} engine thread(s))   : {wall:6.1f} s  {60 * n / wall:6.1f} submissions/min  {wall / n:.3f} s each"
          f"  (+ {startup:.1f} s cluster start-up and {grading.warm_seconds:.1f} s worker warm-up, once)")
    print(f"throughput ratio dask / loop: {loop / wall:.2f}x")
    print(f"cluster overhead per submission: {(wall * w - in_task) / n:.3f} worker-s "
          f"(in-task scoring {in_task / n:.3f} s each); bare scheduling {1000 * per_noop:.1f} ms per no-op task")
    print(f"load average {os.getloadavg()[0]:.1f} after timing")
    print(f"re-run tasks: {sum(1 for r in records if (r['attempts'] or 1) > 1)}; all {n} scores equal the loop's")


if __name__ == "__main__":
    main()
