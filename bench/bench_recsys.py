"""Benchmark the table reader at the sizes of issue 47: trivago 2019's test set (about 250,000 clickouts) and the MPD
challenge set (10,000 playlists × 500 tracks), each scored by `scorer score` against its truth in the published form.

    python bench/bench_recsys.py [--trivago 250000] [--playlists 10000] [--baseline-rows 20000]

The files are made (once per size, into bench/data) by bench/make_recsys.py. For each:
- `scorer score` runs end to end as a fresh process, three times: the first with an empty cache folder (the published
  truth parsed and compiled into the cache), the others warm; wall time and the child's own peak RSS (GNU time). The
  receipt names the kernels' build: ahead-of-time modules mean no compile on a first run;
- flat in the file's size: the first quarter of the submission scored against the same truth peaks as the whole does;
- the straightforward way (the published definition in plain Python: the CSV split line by line, a dict of truth sets)
  on the first N rows, scaled to the file's rows.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_impressions import head, scorer_run  # noqa: E402
from make_recsys import mpd, trivago  # noqa: E402


def trivago_baseline(submission: Path, truth: Path, rows: int) -> tuple[float, int]:
    """trivago's MRR the plain way on the first `rows` rows: (seconds, rows read)."""
    started = time.perf_counter()
    clicked = {}
    with open(truth) as handle:
        next(handle)
        for line in handle:
            fields = line.split(",")
            if fields[4] == "clickout item":
                clicked[tuple(fields[:4])] = fields[5]
    total = read = 0
    with open(submission) as handle:
        next(handle)
        for line in handle:
            if read == rows:
                break
            *key, items = line.rstrip("\n").split(",")
            places = [rank for rank, item in enumerate(items.split(" "), 1) if item == clicked.get(tuple(key))]
            total += 1.0 / places[0] if len(places) == 1 else 0.0
            read += 1
    return time.perf_counter() - started, read


def mpd_baseline(submission: Path, truth: Path, rows: int) -> tuple[float, int]:
    """metrics.py's three figures the plain way on the first `rows` playlists: (seconds, rows read)."""
    started = time.perf_counter()
    targets = {str(p["pid"]): {t["track_uri"] for t in p["tracks"]} for p in json.loads(truth.read_text())["playlists"]}
    read = 0
    with open(submission) as handle:
        next(handle)
        for line in handle:
            if read == rows:
                break
            pid, *tracks = [field.strip() for field in line.split(",")]
            relevant, listed = targets[pid], tracks[:500]
            len(set(listed[: len(relevant)]) & relevant)
            sum(1 / math.log2(i + 2) for i, t in enumerate(dict.fromkeys(listed)) if t in relevant)
            next((i // 10 for i, t in enumerate(listed) if t in relevant), 51)
            read += 1
    return time.perf_counter() - started, read


def bench(name: str, competition: str, submission: Path, truth: Path, baseline, baseline_rows: int) -> None:
    rows = sum(1 for _ in open(submission, "rb")) - 1
    print(f"{name}: {rows:,} rows, submission {submission.stat().st_size / 1e6:,.0f} MB, truth {truth.stat().st_size / 1e6:,.0f} MB")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        cache = folder / "cache"
        runs = [scorer_run(submission, truth, competition, cache) for _ in range(3)]
        result = runs[-1][2]
        seconds, read = baseline(submission, truth, baseline_rows)
        estimate = seconds * rows / max(read, 1)
        for label, (wall, peak, _) in zip(("cold cache (truth parsed)", "warm", "warm"), runs):
            print(f"  scorer score, {label}: {wall:.2f} s wall, peak RSS {peak:,.0f} MiB; {estimate / wall:,.1f}x the plain way")
        print(f"  score {result['score']:.6f} ({result['scored_metric']}); kernels: {result['receipt']['scorer']['kernels']}")
        print(f"  the plain way: {seconds:.2f} s for {read:,} rows, × {rows:,} / {read:,} = {estimate:.1f} s")
        quarter = head(submission, rows // 4 + 1, folder / submission.name)
        wall, peak, _ = scorer_run(quarter, truth, competition, cache)
        print(f"  flat in the file's size: its first quarter peaks at {peak:,.0f} MiB (the whole file: {runs[-1][1]:,.0f} MiB), {wall:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trivago", type=int, default=250_000, help="clickouts (default 250,000: the test set's)")
    parser.add_argument("--playlists", type=int, default=10_000, help="playlists (default 10,000: the challenge set's)")
    parser.add_argument("--baseline-rows", type=int, default=20_000, help="rows the plain way scores (default 20,000)")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    bench("trivago 2019", "trivago19", *trivago(args.trivago, args.data), trivago_baseline, args.baseline_rows)
    bench("MPD challenge", "spotify-mpd", *mpd(args.playlists, args.data), mpd_baseline, args.baseline_rows)


if __name__ == "__main__":
    main()
