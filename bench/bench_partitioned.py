"""Benchmark partitioned scoring on a hand-started Dask cluster as the data grows: client and worker memory, time,
and the score against the single-machine score of the same rows.

    python bench/bench_partitioned.py [--base 208975] [--scales 1,4,8] [--part-mb 16,96,384] [--workers 2] [--memory-limit 3GB]

Data (bench/data/partitioned/, gitignored): for each scale m, a truth of m × --base sessions and a submission of
them, made with bench/make_otto.py's generator (OTTO's shape: 3 rows a session, 20 items a row, realistic hit
rates), split into CSV part files of about each --part-mb by line ranges (not by our partition function: the run
shuffles them), so the client's memory is seen against the size of a part as well as of the data.
--base 208975 is an eighth of OTTO, so scale 8 is OTTO's size.

The cluster is started by hand as a platform would: `dask scheduler` and `dask worker --nworkers N
--memory-limit L` as subprocesses on loopback. For each scale, measured in the same run:
Both run OTTO's config with its upload limits lifted (8x OTTO is a 6.6 GB file, over its 4 GB limit).
- single: `scorer.score(submission.csv, truth)` in a fresh process: wall time, peak RSS (VmHWM), the score;
- partitioned: `scorer score PARTS_DIR --engine dask --scheduler ...` in a fresh client process: wall time, the
  client's peak RSS, each worker's peak RSS (workers restarted before each scale), the score, and whether
  it equals the single score to the last bit. The truth's partitioned dataset is made once per scale before
  the timed run (a later run reuses it: the one-off cost is reported apart).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_otto  # noqa: E402

PY = sys.executable

PEAK = """
def peak_mb():  # this process's own peak RSS (VmHWM: ru_maxrss would carry the forking parent's over exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""

SINGLE = PEAK + """
import json, sys, time
import scorer
started = time.perf_counter()
result = scorer.score(sys.argv[1], sys.argv[2], scorer.load_competition("otto", sys.argv[3]), threads=2)
print(json.dumps({"seconds": time.perf_counter() - started, "score": result.score, "rss_mb": peak_mb()}))
"""

CLIENT = PEAK + """
import contextlib, io, json, sys, time
from distributed import Client
from scorer.cli.main import main
client = Client(sys.argv[1])
client.restart()  # fresh worker processes: their peak memory is this run's
started = time.perf_counter()
out = io.StringIO()
with contextlib.redirect_stdout(out):  # the command as a user runs it, JSON with its receipt (which hashes every part)
    main(["score", sys.argv[2], "--truth", sys.argv[3], "--config", sys.argv[6], "--engine", "dask", "--scheduler", sys.argv[1],
          "--partitions", sys.argv[4], "--truth-parts", sys.argv[5], "--format", "json", "--no-progress"])
seconds = time.perf_counter() - started
result = json.loads(out.getvalue())
workers = client.run(peak_mb)
print(json.dumps({"seconds": seconds, "score": result["score"], "problems": result["problem_counts"],
                  "workers_rss_mb": sorted(workers.values()), "rss_mb": peak_mb()}))
"""

PREPARE = PEAK + """
import json, sys, time
from distributed import Client
from scorer.api import resolve_competition
from scorer.dask import truth_parts
client = Client(sys.argv[1])
client.restart()
started = time.perf_counter()
truth_parts.ensure(client, sys.argv[2], resolve_competition("otto"), int(sys.argv[3]), sys.argv[4])
print(json.dumps({"seconds": time.perf_counter() - started, "workers_rss_mb": sorted(client.run(peak_mb).values())}))
"""


def make_scale(out: Path, sessions: int, parts: int) -> tuple[Path, Path, Path]:
    """The truth and submission of `sessions` sessions in `out`, and the submission cut into `parts` part files."""
    out.mkdir(parents=True, exist_ok=True)
    truth, full, directory = out / "labels.jsonl", out / "submission.csv", out / f"parts-{parts}"
    if not (truth.exists() and full.exists()):
        rng = np.random.default_rng(0)
        ids = np.arange(make_otto.FIRST_SESSION, make_otto.FIRST_SESSION + sessions, dtype=np.int64)
        labels = make_otto.make_truth(rng, ids)
        make_otto.write_truth(truth, ids, labels)
        make_otto.write_submission(full, rng, ids, labels)
    if not directory.exists():
        directory.mkdir()
        rows_per_part = -(-3 * sessions // parts)
        with open(full, "rb") as source:  # streamed: a part's rows at a time
            header = source.readline()
            for index in range(parts):
                rows = [row for _, row in zip(range(rows_per_part), source)]  # range first: no row is read past the part
                (directory / f"part-{index:04d}.csv").write_bytes(header + b"".join(rows))
    return truth, full, directory


def run_json(code: str, *args: str) -> dict:
    done = subprocess.run([PY, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, default=208_975)
    parser.add_argument("--scales", default="1,4,8")
    parser.add_argument("--part-mb", default="16,96,384", help="the submission is split in part files of about each of these sizes")
    parser.add_argument("--partitions", type=int, default=0, help="session partitions per scale (default: one per 52,000 sessions)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="3GB")
    parser.add_argument("--out", type=Path, default=HERE / "data" / "partitioned")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    config = args.out / "otto-unlimited.toml"  # OTTO's config without its 4 GB upload limit: 8x OTTO is 6.6 GB
    text = (HERE.parent / "configs" / "otto.toml").read_text()
    config.write_text(text.replace("max_file_bytes = 4_000_000_000", "max_file_bytes = 1_000_000_000_000")
                      .replace("max_decompressed_bytes = 8_000_000_000", "max_decompressed_bytes = 1_000_000_000_000")
                      .replace("max_seconds = 600", "max_seconds = 100_000"))
    port = 8790
    address = f"tcp://127.0.0.1:{port}"
    log = open(args.out.parent / "partitioned-cluster.log", "w") if args.out.parent.exists() else subprocess.DEVNULL
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    scheduler = subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                 stdout=log, stderr=log, env=env)
    workers = subprocess.Popen(["dask", "worker", address, "--nworkers", str(args.workers), "--nthreads", "1", "--host", "127.0.0.1",
                                "--memory-limit", args.memory_limit, "--no-dashboard"], stdout=log, stderr=log, env=env)
    try:
        time.sleep(5)
        print(f"cluster: `dask scheduler` + `dask worker --nworkers {args.workers} --nthreads 1 --memory-limit {args.memory_limit}`"
              f" (started by hand, loopback); {os.cpu_count()} CPUs, shared machine")
        print(f"{'scale':>5} {'sessions':>10} {'rows':>10} {'MB':>6} | {'single s':>8} {'RSS MB':>7} | {'parts':>5} {'part MB':>7} "
              f"{'dask s':>7} {'client MB':>9} {'worker MB':>13} {'P':>3} | same score")
        for scale in (int(s) for s in args.scales.split(",")):
            sessions = scale * args.base
            truth, full, _ = make_scale(args.out / f"x{scale}", sessions, 1)
            partitions = args.partitions or -(-sessions // 52_000)
            dataset = args.out / f"x{scale}" / "truth-parts"
            prepared = run_json(PREPARE, address, str(truth), str(partitions), str(dataset))
            single = run_json(SINGLE, str(full), str(truth), str(config))
            print(f"{scale:>5} {sessions:>10,} {3 * sessions:>10,} {full.stat().st_size / 1e6:>6.0f} | {single['seconds']:>8.2f} "
                  f"{single['rss_mb']:>7.0f} | (truth partitioned once in {prepared['seconds']:.1f} s, "
                  f"workers {'/'.join(f'{w:.0f}' for w in prepared['workers_rss_mb'])} MB)")
            for part_mb in (int(mb) for mb in args.part_mb.split(",")):
                count = max(1, round(full.stat().st_size / (part_mb << 20)))
                _, _, directory = make_scale(args.out / f"x{scale}", sessions, count)
                dask_run = run_json(CLIENT, address, str(directory), str(truth), str(partitions), str(dataset), str(config))
                same = dask_run["score"] == single["score"]
                print(f"{'':>5} {'':>10} {'':>10} {'':>6} | {'':>8} {'':>7} | {count:>5} {full.stat().st_size / count / 1e6:>7.0f} "
                      f"{dask_run['seconds']:>7.2f} {dask_run['rss_mb']:>9.0f} "
                      f"{'/'.join(f'{w:.0f}' for w in dask_run['workers_rss_mb']):>13} {partitions:>3} | {same} ({dask_run['score']!r})")
                if not same:
                    print(f"  MISMATCH: single {single['score']!r}, partitioned {dask_run['score']!r}, problems {dask_run['problems']}")
    finally:
        workers.terminate()
        scheduler.terminate()
        workers.wait(30)
        scheduler.wait(30)


if __name__ == "__main__":
    main()
