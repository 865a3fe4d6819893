"""scorer grade SUBMISSION... --truth TRUTH: score many submissions on a Dask cluster, one result line each."""

from __future__ import annotations

import json
import sys
import time

from scorer.cli.common import add_competition, add_output, positive_int

USAGE = "scorer grade SUBMISSION... --truth TRUTH [-o FILE] [options]"
EXAMPLES = ("scorer grade uploads/*.csv --truth test_labels.jsonl -o results.jsonl",
            "scorer grade a.csv b.csv --truth test_labels.truth.npz --scheduler tcp://10.0.0.5:8786")
HELP = "grade many submissions on a Dask cluster (local worker processes, or a running scheduler)"


def add_cluster_options(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a running Dask scheduler (`dask scheduler`, `dask worker ADDRESS`)")
    group.add_argument("--workers", type=positive_int, metavar="N", help="start a local cluster of N worker processes (default: one per CPU)")


def add_arguments(parser) -> None:
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="submission files (CSV, plain, .gz or .zip)")
    parser.add_argument("--truth", required=True, help="ground truth (compiled once here, then loaded once per worker)")
    add_competition(parser)
    add_cluster_options(parser)
    add_output(parser, "FILE", "write one JSON line per submission to FILE, as each finishes", required=False, old_names=("--out",))
    parser.add_argument("--lenient", action="store_true", help="missing, repeated and unknown rows are warnings (default: strict, as a grader)")
    parser.add_argument("--max-per-code", type=positive_int, default=20, metavar="N", help="problems kept per code (default: 20)")
    parser.add_argument("--threads", type=positive_int, default=1, metavar="N", help="engine threads per task (default: 1)")
    parser.add_argument("--retries", type=int, default=2, metavar="N", help="re-runs of a task that raises (default: 2); "
                        "a task whose worker dies is rescheduled by Dask in any case")


def _line(record: dict) -> str:
    runs = record.get("attempts") or 1
    again = f"  (ran {runs} times: {' then '.join(record.get('workers') or [])})" if runs > 1 else ""
    if record.get("error"):
        return f"failed    {record['file']}: {record['error']}{again}"
    if record.get("score") is not None:
        return f"{record['score']:.6f}  {record['file']}{again}"
    errors = [p for p in record.get("problems", []) if p["severity"] == "error"]
    where = f" line {errors[0]['line']}" if errors and errors[0]["line"] else ""
    first = f": {errors[0]['code']}{where}: {errors[0]['message']}" if errors else ""
    return f"invalid   {record['file']}{first}{again}"


def run(args) -> int:
    from scorer.api import resolve_competition, resolve_truth
    from scorer.dask import require
    from scorer.dask.cluster import client_for, worker_count
    from scorer.dask.grade import Grading
    from scorer.errors import UsageError

    require()
    competition = resolve_competition(args.competition, args.config)
    resolve_truth(args.truth, competition)  # a bad truth stops here; it also fills the compiled cache
    if args.retries < 0:
        raise UsageError(f"--retries must be 0 or more, got {args.retries}")
    out = None
    if args.output:
        try:
            out = open(args.output, "w")
        except OSError as error:
            raise UsageError(f"cannot write --output {args.output}: {error.strerror}") from None
    tally = {"scored": 0, "invalid": 0, "failed": 0}
    rerun = []
    try:
        with client_for(args.scheduler, args.workers) as client:
            started = time.monotonic()
            grading = Grading(client, args.submissions, args.truth, competition, strict=not args.lenient,
                              max_per_code=args.max_per_code, threads=args.threads, retries=args.retries)
            for record in grading:
                tally["failed" if record.get("error") else "scored" if record.get("score") is not None else "invalid"] += 1
                if (record.get("attempts") or 1) > 1:
                    rerun.append(record)
                print(_line(record), flush=True)
                if out is not None:
                    out.write(json.dumps(record) + "\n")
                    out.flush()
            seconds = time.monotonic() - started
            workers = worker_count(client)
    finally:
        if out is not None:
            out.close()
    n = len(args.submissions)
    print(f"graded {n} submissions on {workers} workers in {seconds:.1f} s ({60 * n / max(seconds, 1e-9):.1f} per minute): "
          f"{tally['scored']} scored, {tally['invalid']} invalid, {tally['failed']} failed", file=sys.stderr)
    if not grading.counting:
        print("re-runs not counted: the scheduler could not load scorer's plugin (install scorer where the scheduler runs)", file=sys.stderr)
    elif rerun or grading.lost_workers:
        lost = f"{len(grading.lost_workers)} worker(s) lost during the run; " if grading.lost_workers else ""
        print(f"{lost}{len(rerun)} task(s) re-run: " + ", ".join(f"{r['file']} ({r['attempts']} runs)" for r in rerun), file=sys.stderr)
    else:
        print("no task was re-run", file=sys.stderr)
    return 0 if tally["scored"] == n else 1
