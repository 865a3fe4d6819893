"""Bench `scorer.candidates` against polars (rank per session, join with the truth, group_by), in the same run.

    python bench/bench_candidates.py --sessions 150000 --per-session 200      # 30M rows
    python bench/bench_candidates.py --sessions 1670000 --per-session 200     # OTTO size: 334M rows (needs ~10 GB)

Generates its own data: sessions in order, `per-session` distinct candidates each (item ids below 1.86M), a float32
score (unsorted within a session unless --sorted), and a truth (clicks: one item; carts and orders: 0-4 items, 60 in
3% of sessions, more than the competition's k = 20) of which about half is among the candidates. Times scorer.candidates
on the polars frame, on the Arrow table and on a Parquet
file (row groups of 1M rows), and the polars baseline (recall@K for each K), checks the recall figures agree, and
prints wall and CPU seconds, the ratios, and the peak memory the scorer adds (RSS sampled every 2 ms, Linux).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TYPES = ("clicks", "carts", "orders")


def make(n_sessions: int, per_session: int, sorted_scores: bool, seed: int = 0):
    import polars as pl

    rng = np.random.default_rng(seed)
    n = n_sessions * per_session
    session = np.repeat(np.arange(n_sessions, dtype=np.int64), per_session)
    # distinct items within a session: a random start and a random odd stride (mod a prime above the catalogue)
    prime = 1_860_007
    start = rng.integers(0, prime, n_sessions)
    stride = rng.integers(1, 5000, n_sessions) * 2 + 1
    step = np.tile(np.arange(per_session, dtype=np.int64), n_sessions)
    aid = (np.repeat(start, per_session) + step * np.repeat(stride, per_session)) % prime
    score = rng.random(n, dtype=np.float32)
    if sorted_scores:
        score = -np.sort(-score.reshape(n_sessions, per_session), axis=1).ravel()
    del step
    candidates = pl.DataFrame({"session": session, "aid": aid, "score": score})
    del session, aid, score
    parts = []
    for t, name in enumerate(TYPES):
        sizes = np.ones(n_sessions, np.int64) if t == 0 else rng.integers(0, 5, n_sessions) * (rng.random(n_sessions) < 0.5)
        if t > 0:  # a few sessions with more truth than the competition's k = 20, where the ceiling caps the hits
            sizes[rng.random(n_sessions) < 0.03] = 60
        owner = np.repeat(np.arange(n_sessions), sizes)
        among = rng.random(len(owner)) < 0.5
        position = rng.integers(0, per_session, len(owner))
        item = np.where(among, (start[owner] + position * stride[owner]) % prime, rng.integers(prime, 2 * prime, len(owner)))
        parts.append(pl.DataFrame({"session": owner.astype(np.int64), "type": [name] * len(owner), "aid": item.astype(np.int64)}))
    truth = pl.concat(parts).unique(maintain_order=True)
    return candidates, truth


def polars_recall(candidates, truth, ks):
    """The straightforward way: rank within each session, join with the truth, count hits per type under each K."""
    import polars as pl

    ranked = candidates.with_columns(pl.col("score").rank("ordinal", descending=True).over("session").alias("rank"))
    hits = ranked.join(truth, on=["session", "aid"], how="inner")
    sizes = truth.group_by("type").len()
    out = {}
    for k in ks:
        counts = hits.filter(pl.col("rank") <= k).group_by("type").len()
        joined = dict(zip(counts["type"], counts["len"]))
        out[k] = {row["type"]: joined.get(row["type"], 0) / row["len"] for row in sizes.iter_rows(named=True)}
    return out


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize() / 2**20


class PeakRss:
    """The highest RSS while the block runs, sampled every 2 ms on a thread (Linux), minus the RSS before it."""

    def __enter__(self):
        import threading

        self.before = self.peak = rss_mb()
        self.done = threading.Event()

        def sample():
            while not self.done.wait(0.002):
                self.peak = max(self.peak, rss_mb())

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self.peak = max(self.peak, rss_mb())

    @property
    def added(self) -> float:
        return self.peak - self.before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=150_000)
    parser.add_argument("--per-session", type=int, default=200)
    parser.add_argument("--sorted", action="store_true", help="scores sorted (highest first) within each session")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-parquet", action="store_true")
    parser.add_argument("--no-polars", action="store_true", help="skip the polars baseline (it needs several times the table's memory)")
    args = parser.parse_args()
    import pyarrow.parquet as pq

    import scorer

    ks = (20, 50, 100, 200)
    candidates, truth_frame = make(args.sessions, args.per_session, args.sorted)
    n_rows = candidates.height
    column_mb = candidates.estimated_size() / 2**20
    print(f"{n_rows:,} candidate rows ({args.sessions:,} sessions x {args.per_session}), columns {column_mb:,.0f} MB; "
          f"scores {'sorted' if args.sorted else 'unsorted'} within sessions")
    truth = scorer.load_truth(truth_frame.to_pandas(), competition="otto")
    table = candidates.to_arrow()
    started = time.perf_counter()
    scorer.candidates(candidates.head(10_000), truth, k=ks)  # the first call loads the kernels (numba compiles them where none is built)
    print(f"first call (10,000 rows, the kernels loaded): {time.perf_counter() - started:.2f} s; numba imported: {'numba' in sys.modules}")

    def best(run):
        """(wall seconds, CPU seconds of the process, value) of the fastest of `repeat` runs (the machine may be shared:
        CPU seconds, which count every thread's work, are what other loads disturb least)."""
        times = []
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            value = run()
            times.append((time.perf_counter() - wall, time.process_time() - cpu))
        return min(times)[0], min(t[1] for t in times), value

    with PeakRss() as memory:
        t_frame, cpu_frame, result = best(lambda: scorer.candidates(candidates, truth, k=ks))
    t_arrow, cpu_arrow, _ = best(lambda: scorer.candidates(table, truth, k=ks))
    print(f"scorer.candidates, polars frame: {t_frame:6.2f} s wall, {cpu_frame:6.2f} s CPU   (peak RSS added {memory.added:,.0f} MB = "
          f"{memory.added / column_mb:.2f}x the columns)")
    print(f"scorer.candidates, Arrow table:  {t_arrow:6.2f} s wall, {cpu_arrow:6.2f} s CPU")
    if not args.no_polars:
        t_reference, cpu_reference, reference = best(lambda: polars_recall(candidates, truth_frame, ks))
        for k in ks:
            for name in TYPES:
                mine, theirs = result.at_k[k][name]["recall"], reference[k][name]
                assert abs(mine - theirs) < 1e-12, (k, name, mine, theirs)
        print(f"polars rank + join + group_by:   {t_reference:6.2f} s wall, {cpu_reference:6.2f} s CPU   ratio "
              f"{t_reference / t_frame:.1f}x wall, {cpu_reference / cpu_frame:.1f}x CPU (recall@K agrees)")
    if not args.no_parquet:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "candidates.parquet"
            pq.write_table(table, path, row_group_size=1 << 20, compression="snappy")
            with PeakRss() as memory:
                t_parquet, cpu_parquet, from_file = best(lambda: scorer.candidates(path, truth, k=ks))
            assert from_file.at_k == result.at_k
            print(f"scorer.candidates, Parquet file: {t_parquet:6.2f} s wall, {cpu_parquet:6.2f} s CPU   ({path.stat().st_size / 2**20:,.0f} MB, "
                  f"streamed by row group; peak RSS added {memory.added:,.0f} MB)")
    print(f"ceiling@{ks[-1]} weighted {result.at_k[ks[-1]]['weighted']['ceiling']:.4f}, recall@{ks[-1]} weighted "
          f"{result.at_k[ks[-1]]['weighted']['recall']:.4f}")


if __name__ == "__main__":
    main()
