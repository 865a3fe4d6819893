"""Benchmark scoring a data frame in place against writing it to CSV first, at full OTTO size.

    python bench/bench_frame.py [--data bench/data] [--runs 3]

Reads bench/data/submission.csv (made by make_otto.py) into a polars frame with a list[i64] labels column,
then in this one run measures:
  - scorer.score(polars frame), saying which kernels served (the ahead-of-time module or the JIT): the first call
    (numba compile or cache load included), warm calls (wall and CPU time), and the peak extra memory of one more
    warm call, timed apart (RSS sampled every millisecond, and tracemalloc's peak);
  - polars write_csv of the frame with its labels joined by spaces, then scorer.score(file);
  - pandas to_csv of the same joined frame, then scorer.score(file);
checks that all three give the same score to the last bit, and prints the ratios. Then scorer.score of the frame as
pl.read_csv gives it (labels as space-separated text, read by the file's kernel a piece at a time): warm time and
peak extra memory, against the list[i64] frame. With --text-only, only the frame measures (no CSV written).

    python bench/bench_frame.py --lazy [--data bench/data]

A polars LazyFrame (pl.scan_csv) streamed a batch at a time against the same file scored from its path and against
pl.read_csv's frame (collected whole), each in a fresh process (peak RSS over the process's after the truth is loaded,
by getrusage), on the whole file and on its first half: the LazyFrame's peak, like the file's, does not grow with the
file; the collected frame's does. The three scores must agree to the last bit.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


def peak_extra(call):
    """(result, seconds, CPU seconds of the process, peak RSS over the start in bytes, tracemalloc peak in bytes) of call()."""
    gc.collect()
    base, peak, done = rss(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.001)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tracemalloc.start()
    started, cpu = time.perf_counter(), time.process_time()
    result = call()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    done.set()
    sampler.join()
    return result, seconds, cpu, max(peak[0], rss()) - base, traced


def served() -> str:
    """Which build of the pass's kernels scored: the ahead-of-time module (its file) or numba's JIT."""
    from scorer.kernels import door

    return door.served("score")


# One measure in a fresh process: the truth loaded, then its peak RSS taken as the base, then the submission scored from
# a path ("file"), a LazyFrame ("lazy") or pl.read_csv's frame ("collected"); prints JSON.
CHILD = """
import json, sys, time
import polars as pl
import scorer
def high_water():  # this process's peak RSS in bytes (VmHWM: its own since exec; ru_maxrss starts at the parent's)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
truth = scorer.load_truth(sys.argv[1], competition="otto")
kind, path = sys.argv[2], sys.argv[3]
base = high_water()
started = time.perf_counter()
text = {"labels": pl.String}
source = {"file": lambda: path, "lazy": lambda: pl.scan_csv(path, schema_overrides=text),
          "collected": lambda: pl.read_csv(path, schema_overrides=text)}[kind]()
score = scorer.score(source, truth).score
seconds = time.perf_counter() - started
print(json.dumps({"score": score, "seconds": seconds, "extra": high_water() - base}))
"""


def measured(truth: Path, kind: str, path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(truth), kind, str(path)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def lazy_memory(data: Path) -> None:
    """The LazyFrame, the file and the collected frame, on the whole file and on its first half (see the docstring)."""
    truth = data / "test_labels.jsonl"
    with tempfile.TemporaryDirectory() as scratch:
        half = Path(scratch) / "half.csv"
        with open(data / "submission.csv", "rb") as whole:
            count = sum(1 for _ in whole)
        with open(data / "submission.csv", "rb") as whole, open(half, "wb") as out:  # streamed: the parent stays small
            out.writelines(line for _, line in zip(range(count // 2), whole))
        for name, path in (("whole file", data / "submission.csv"), ("first half", half)):
            found = {kind: measured(truth, kind, path) for kind in ("file", "lazy", "collected")}
            scores = {kind: figures["score"] for kind, figures in found.items()}
            assert len(set(scores.values())) == 1, scores
            print(f"{name} ({path.stat().st_size / 2**20:,.0f} MiB), score {scores['file']!r} from all three:")
            for kind, figures in found.items():
                print(f"  {kind:<10} {figures['seconds']:6.2f} s, peak RSS over the truth's {figures['extra'] / 2**20:7.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--text-only", action="store_true", help="measure the list and the text frame, write no CSV")
    parser.add_argument("--lazy", action="store_true", help="a LazyFrame streamed, against the file and the collected frame")
    args = parser.parse_args()
    if not (args.data / "submission.csv").is_file():
        subprocess.run([sys.executable, str(HERE / "make_otto.py"), "--out", str(args.data)], check=True)
    if args.lazy:
        lazy_memory(args.data)
        return
    import polars as pl

    import scorer

    truth = scorer.load_truth(args.data / "test_labels.jsonl", competition="otto")
    started = time.perf_counter()
    joined = pl.read_csv(args.data / "submission.csv", schema={"session_type": pl.String, "labels": pl.String})
    frame = joined.with_columns(pl.col("labels").str.split(" ").cast(pl.List(pl.Int64)))
    print(f"setup: read the CSV and made the list[i64] frame in {time.perf_counter() - started:.1f} s: {frame.height:,} rows, "
          f"{frame.estimated_size() / 2**20:,.0f} MiB")

    first = time.perf_counter()
    from_frame = scorer.score(frame, truth)
    first = time.perf_counter() - first
    print(f"kernels: {served()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    warm = []
    for _ in range(args.runs):  # timed bare: the memory probes (a sampling thread, tracemalloc) slow a call down
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        result = scorer.score(frame, truth)
        warm.append((time.perf_counter() - started, time.process_time() - cpu))
        assert result.score == from_frame.score
    frame_s = min(w[0] for w in warm)
    result, _, _, extra_rss, traced = peak_extra(lambda: scorer.score(frame, truth))
    assert result.score == from_frame.score
    print(f"scorer.score(polars frame): first call {first:.2f} s; warm {', '.join(f'{w[0]:.3f}' for w in warm)} s "
          f"(best {frame_s:.3f} s, CPU {min(w[1] for w in warm):.3f} s over 2 threads); peak extra memory of another warm call "
          f"(timed apart): RSS {extra_rss / 2**20:.0f} MB, tracemalloc {traced / 2**20:.0f} MB")

    text_runs = []
    for _ in range(args.runs):
        gc.collect()
        started = time.perf_counter()
        assert scorer.score(joined, truth).score == from_frame.score
        text_runs.append(time.perf_counter() - started)
    _, _, _, text_rss, text_traced = peak_extra(lambda: scorer.score(joined, truth))
    print(f"scorer.score(polars frame, labels as text as pl.read_csv gives): warm {', '.join(f'{t:.3f}' for t in text_runs)} s "
          f"(best {min(text_runs):.3f} s, {min(text_runs) / frame_s:.1f}x the list[i64] frame); peak extra memory: RSS "
          f"{text_rss / 2**20:.0f} MB, tracemalloc {text_traced / 2**20:.0f} MB")
    if args.text_only:
        return

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "submission.csv"
        started = time.perf_counter()
        labels_joined = frame.with_columns(pl.col("labels").cast(pl.List(pl.String)).list.join(" "))
        join_s = time.perf_counter() - started
        started = time.perf_counter()
        labels_joined.write_csv(path)
        polars_write = time.perf_counter() - started
        started = time.perf_counter()
        from_polars_csv = scorer.score(path, truth)
        score_file = time.perf_counter() - started
        path.unlink()
        del labels_joined

        table = joined.to_pandas()
        started = time.perf_counter()
        table.to_csv(path, index=False)
        pandas_write = time.perf_counter() - started
        del table
        started = time.perf_counter()
        from_pandas_csv = scorer.score(path, truth)
        score_pandas_file = time.perf_counter() - started

    assert from_frame.score == from_polars_csv.score == from_pandas_csv.score, (from_frame.score, from_polars_csv.score, from_pandas_csv.score)
    polars_total = polars_write + score_file
    pandas_total = pandas_write + score_pandas_file
    print(f"polars: list.join {join_s:.2f} s (not counted), write_csv {polars_write:.2f} s + scorer.score(file) {score_file:.2f} s "
          f"= {polars_total:.2f} s")
    print(f"pandas: to_csv {pandas_write:.2f} s + scorer.score(file) {score_pandas_file:.2f} s = {pandas_total:.2f} s")
    print(f"score {from_frame.score!r}, the same to the last bit from the frame and from both CSV files")
    print(f"ratio: scoring the frame in place is {polars_total / frame_s:.1f}x faster than polars write_csv + score, "
          f"{pandas_total / frame_s:.1f}x faster than pandas to_csv + score")


if __name__ == "__main__":
    main()
