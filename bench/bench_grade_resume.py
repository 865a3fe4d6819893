"""`scorer grade` across a scheduler crash: kill the scheduler mid-run, start it again, go on with --resume.

    python bench/bench_grade_resume.py [--submissions 32] [--sessions 50000] [--workers 2] [--kill-after 0.33]

A cluster started by hand as a platform runs one (bench/hand_cluster.py: `dask scheduler` and
`dask worker --nworkers 2 --nthreads 1`, subprocesses on loopback). The data are bench_dask.py's
OTTO-shaped submissions (made once, kept in bench/data/dask/), plus two invalid ones (rows missing;
a broken line). The truth is compiled to a .truth.npz first, as docs/scale-out.md advises.

0. For reference, the same grading without a crash (then the cluster is started again, fresh).
1. `scorer grade ... --scheduler ADDR -o results.jsonl` (a subprocess); once --kill-after of the
   submissions have a record, the scheduler gets SIGKILL (the workers exit with it).
2. The grade must exit 2 within seconds, say to rerun with --resume, and print no traceback.
3. The scheduler and the workers are started again at the same address; the same command with --resume.
4. A third --resume, with nothing left to grade: how long deciding that takes (hashing every file).
Checked: every submission ends with exactly one final record in results.jsonl, and its score, metrics,
counts and problem counts equal `scorer score FILE --truth TRUTH --strict --format json` run on that file alone.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_dask  # noqa: E402
from hand_cluster import HandCluster  # noqa: E402

COMPARED = ("valid", "score", "metrics", "counts", "problem_counts")


def make_data(out: Path, n_files: int, n_sessions: int) -> tuple[Path, list[Path]]:
    """bench_dask's submissions, the truth compiled, and two invalid submissions made from the first one."""
    labels, files = bench_dask.make_data(out, n_files - 2, n_sessions)
    truth = out / f"labels_{n_sessions}.truth.npz"
    if not truth.exists():
        run_scorer(["compile-truth", str(labels), "-o", str(truth)])
    text = files[0].read_text()
    lines = text.splitlines(keepends=True)
    missing, broken = out / f"sub_{n_sessions}_missing.csv", out / f"sub_{n_sessions}_broken.csv"
    missing.write_text("".join(lines[: len(lines) // 2]))
    broken.write_text("".join(lines[:100]) + "12_clicks,1 x 2\n" + "".join(lines[100:]))
    return truth, files + [missing, broken]


def run_scorer(argv: list[str]) -> tuple[int, str]:
    """`scorer ARGV` in this process: (exit code, stdout)."""
    from scorer.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def grade(files: list[Path], truth: Path, cluster: HandCluster, results: Path, resume: bool, log: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "scorer", "grade", *map(str, files), "--truth", str(truth), "--scheduler", cluster.address,
            "-o", str(results), "--wait-workers", "60"] + (["--resume"] if resume else [])
    with open(log, "wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_dask.add_data_options(parser, submissions=32, sessions=50_000)
    parser.add_argument("--kill-after", type=float, default=0.33, help="share of the submissions with a record when the scheduler is killed")
    args = parser.parse_args(argv)

    truth, files = make_data(args.out, args.submissions, args.sessions)
    work = args.out / "resume-run"
    work.mkdir(exist_ok=True)
    results = work / "results.jsonl"
    results.unlink(missing_ok=True)
    print(f"{len(files)} submissions ({len(files) - 2} valid, 2 invalid) of {args.sessions:,} sessions; "
          f"{args.workers} workers; machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (shared)")
    faults = []
    with HandCluster(work / "logs", workers=args.workers) as cluster:
        clean_results = work / "clean.jsonl"
        clean_results.unlink(missing_ok=True)
        started = time.monotonic()
        code_0 = grade(files, truth, cluster, clean_results, False, work / "grade-0.log").wait(timeout=900)
        clean = time.monotonic() - started
        print(f"run 0 (no crash, for reference): exit {code_0} in {clean:.1f} s, {len(records(clean_results))} records")
        cluster.restart()  # fresh workers, as after the crash below
        crash_started = started = time.monotonic()
        first = grade(files, truth, cluster, results, False, work / "grade-1.log")
        while first.poll() is None and (not results.exists() or results.read_bytes().count(b"\n") < args.kill_after * len(files)):
            time.sleep(0.02)
        before_kill = len(records(results))
        cluster.kill_scheduler()
        killed = time.monotonic()
        code_1 = first.wait(timeout=120)
        exit_seconds = time.monotonic() - killed
        log_1 = (work / "grade-1.log").read_text()
        kinds = Counter(record.get("status") for record in records(results))
        started_before = sum(1 for record in records(results) if record.get("status") == "retryable" and record.get("attempts"))
        print(f"run 1: scheduler killed after {killed - started:.1f} s with {before_kill} records written; grade exited {code_1} "
              f"{exit_seconds:.1f} s later; records: {dict(kinds)} ({started_before} retryable ones had been sent to a worker: "
              "counted on the client)")
        print("       last lines of its stderr:")
        for text in [line for line in log_1.splitlines() if line.startswith("scorer:")][-2:]:
            print(f"         {text}")
        if code_1 != 2 or "--resume" not in log_1:
            faults.append(f"run 1 exited {code_1} or did not say --resume")
        if "Traceback" in log_1 or "distributed." in log_1:
            faults.append("run 1 printed distributed's logs or a traceback")

        waited = time.monotonic()
        while cluster.workers_alive() and time.monotonic() - waited < 15:
            time.sleep(0.1)
        workers_gone = f"{not cluster.workers_alive()} (looked for {time.monotonic() - waited:.1f} s)"
        restarted = time.monotonic()
        cluster.restart()
        print(f"workers exited with the scheduler: {workers_gone}; scheduler and workers started again in {time.monotonic() - restarted:.1f} s")
        lines_before = len(records(results))
        started = time.monotonic()
        second = grade(files, truth, cluster, results, True, work / "grade-2.log")
        code_2 = second.wait(timeout=600)
        log_2 = (work / "grade-2.log").read_text()
        resumed = [line for line in log_2.splitlines() if line.startswith("scorer: resuming")]
        print(f"run 2 (--resume): exit {code_2} in {time.monotonic() - started:.1f} s, {len(records(results)) - lines_before} records added; "
              f"{resumed[0][8:] if resumed else 'no resume line'}")
        print(f"crash to finish (run 1, restart, run 2): {time.monotonic() - crash_started:.1f} s = "
              f"{(time.monotonic() - crash_started) / clean:.2f}x the run without a crash")
        if code_2 != 1:  # the two invalid submissions
            faults.append(f"run 2 exited {code_2}, not 1")

        lines_before = len(records(results))
        started = time.monotonic()
        third = grade(files, truth, cluster, results, True, work / "grade-3.log")
        code_3 = third.wait(timeout=600)
        print(f"run 3 (--resume, nothing left): exit {code_3} in {time.monotonic() - started:.1f} s (a Python start, reading the "
              f"results, hashing {sum(f.stat().st_size for f in files) / 1e6:.0f} MB of submissions), "
              f"{len(records(results)) - lines_before} records added")

    final = [record for record in records(results) if record.get("status") in ("scored", "invalid")]
    per_file = Counter(record["path"] for record in final)
    wrong_count = [str(path) for path in files if per_file[str(path.resolve())] != 1]
    mismatches = []
    for record in final:
        code, out = run_scorer(["score", record["path"], "--truth", str(truth), "--strict", "--format", "json"])
        alone = json.loads(out)
        if {key: record[key] for key in COMPARED} != {key: alone[key] for key in COMPARED}:
            mismatches.append(record["file"])
    print(f"final records per submission: {dict(Counter(per_file[str(path.resolve())] for path in files))} "
          f"(count: number of submissions); not exactly one: {len(wrong_count)}")
    print(f"figures equal to `scorer score FILE --strict` alone: {len(final) - len(mismatches)} of {len(final)}")
    faults += [f"not one final record: {name}" for name in wrong_count] + [f"differs from scorer score: {name}" for name in mismatches]
    print("OK" if not faults else "FAULTS:\n  " + "\n  ".join(faults))
    return 0 if not faults else 1


if __name__ == "__main__":
    sys.exit(main())
