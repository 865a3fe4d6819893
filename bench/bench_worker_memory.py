"""Memory of one Dask worker grading a submission: idle, then its peak over `scorer grade` runs (for docs/scale-out.md).

    python bench/make_otto.py                       # OTTO size, once: bench/data/test_labels.jsonl, submission.csv
    python bench/bench_worker_memory.py [--truth bench/data/test_labels.jsonl] [--submission bench/data/submission.csv] [--runs 2]

One `dask worker --nworkers 1 --nthreads 1` (bench/hand_cluster.py); the truth compiled to a .truth.npz
first. The worker's resident memory is read in the worker process (current RSS from /proc, peak from getrusage).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hand_cluster import HandCluster  # noqa: E402


def memory() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB."""
    import resource

    with open("/proc/self/status") as status:
        current = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return current / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--truth", type=Path, default=HERE / "data" / "test_labels.jsonl")
    parser.add_argument("--submission", type=Path, default=HERE / "data" / "submission.csv")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args(argv)
    from distributed import Client

    compiled = args.truth.with_suffix(".truth.npz")
    if not compiled.exists():
        subprocess.run([sys.executable, "-m", "scorer", "compile-truth", str(args.truth), "-o", str(compiled)], check=True)
    print(f"submission {args.submission.stat().st_size / 1e6:.0f} MB, compiled truth {compiled.stat().st_size / 1e6:.0f} MB")
    with HandCluster(HERE / "data" / "worker-memory-logs", workers=1) as cluster, Client(cluster.address) as client:
        idle = next(iter(client.run(memory).values()))
        print(f"idle worker: RSS {idle[0]:.0f} MB")
        for run in range(args.runs):
            started = time.monotonic()
            subprocess.run([sys.executable, "-m", "scorer", "grade", str(args.submission), "--truth", str(compiled),
                            "--scheduler", cluster.address, "--no-progress"], check=False, capture_output=True)
            current, peak = next(iter(client.run(memory).values()))
            print(f"after grade run {run + 1} ({time.monotonic() - started:.1f} s, warm-up included): "
                  f"RSS {current:.0f} MB, peak {peak:.0f} MB")


if __name__ == "__main__":
    main()
