"""scorer grade SUBMISSION... --truth TRUTH: score many submissions on a Dask cluster, one result line each, a leaderboard at the end."""

from __future__ import annotations

import os
import sys
import time

from scorer.cli.common import (
    add_cluster_options,
    add_competition,
    add_max_per_code,
    add_output,
    add_progress,
    add_threads,
    output_path,
    whole_number,
)
from scorer.cli.grade_report import RERUN, leaderboard, line, ran, workers_that_graded
from scorer.wording import counted

USAGE = "scorer grade SUBMISSION... --truth TRUTH [-o FILE [--resume]] [options]"
EXAMPLES = ("scorer grade uploads/*.csv --truth test_labels.jsonl -o results.jsonl",
            "scorer grade uploads/*.csv --truth test_labels.truth.npz --scheduler tcp://10.0.0.5:8786 -o results.jsonl --resume")
HELP = "grade many submissions on a Dask cluster (local worker processes, or a running scheduler)"


def add_arguments(parser) -> None:
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="submission files (CSV, plain, .gz or .zip)")
    parser.add_argument("--truth", required=True, help="ground truth (compiled once here, then loaded once per worker)")
    add_competition(parser)
    add_cluster_options(parser)
    add_output(parser, "FILE", "append one JSON line per submission to FILE, as each finishes", required=False, old_names=("--out",))
    parser.add_argument("--resume", action="store_true", help="skip every submission FILE already holds a final record of "
                        "(same path, same bytes): the way to go on after a run that was cut short")
    parser.add_argument("--wait-workers", type=whole_number(1, 86_400, "a number of seconds"), default=60, metavar="SECONDS",
                        help="wait this long for a first worker, and give up on a run left without any (default: 60)")
    parser.add_argument("--lenient", action="store_true", help="missing, repeated and unknown rows are warnings (default: strict, as a grader)")
    add_max_per_code(parser, " in each record")
    add_threads(parser, 1, "engine threads per task")
    parser.add_argument("--retries", type=whole_number(0, 100, "a number of re-runs"), default=2, metavar="N", help="re-runs of a task that raises (default: 2); "
                        "a task whose worker dies is rescheduled by Dask in any case")
    add_progress(parser)


def say(message: str) -> None:
    print(f"scorer: {message}", file=sys.stderr, flush=True)


def run(args) -> int:
    from scorer.api import resolve_competition, resolve_truth
    from scorer.cli.outputs import refuse_overwriting
    from scorer.dask import require
    from scorer.errors import UsageError

    require()
    if args.resume and not args.output:
        raise UsageError("--resume reads the records of -o FILE: give the results file of the run to go on with")
    if args.output:
        refuse_overwriting(args, [("-o", output_path(args.output, "-o"))])
    results = _open_results(args.output) if args.output else None  # before the start-up's work
    try:
        competition = resolve_competition(args.competition, args.config)
        resolve_truth(args.truth, competition)  # a bad truth stops here; it also fills the compiled cache
        done = _already_graded(results, args.submissions, args.resume)
        return _grade(args, competition, results, done)
    finally:
        if results is not None:
            results.close()


def _open_results(path: str):
    from scorer.dask.results_file import Busy, NotRegular, open_results
    from scorer.errors import UsageError

    try:
        results = open_results(path)
    except Busy:
        raise UsageError(f"another scorer grade is writing to {path}: wait for it, or write to another file") from None
    except NotRegular as kind:
        raise UsageError(f"cannot write -o {path}: it is {kind}, not a regular file") from None
    except OSError as error:
        raise UsageError(f"cannot write -o {path}: {error.strerror or error}") from None
    if results.repaired:
        say(f"{path}: {results.repaired}")
    if results.unreadable_lines:
        shown = ", ".join(map(str, results.unreadable_lines[:5]))
        say(f"{path}: {len(results.unreadable_lines)} line(s) are not grade records and are left alone (line {shown}); "
            f"the first: {results.first_unreadable}")
    return results


def _already_graded(results, submissions: list[str], resume: bool) -> dict[int, dict]:
    """Position on the command line -> the final record `results` holds of that file as it is now (with --resume): the
    newest of its path under any spelling (a link, `x/./a.csv`: scorer.file_identity) and its content key."""
    from scorer.dask.tasks import submission_key
    from scorer.file_identity import identity

    if results is None:
        return {}
    final = {(identity(path), key): record for (path, key), record in results.final().items()}
    files = {file for file, _ in final}
    done = {}
    for index, name in enumerate(submissions):
        file = identity(name)
        if file in files and (record := final.get((file, submission_key(os.path.abspath(name))))) is not None:
            done[index] = dict(record, file=name, index=index)
    if done and resume:
        say(f"resuming {results.path}: {len(done)} of {len(submissions)} submissions already have a final record (skipped)")
    elif done:
        say(f"{results.path} already holds final records of {len(done)} of these submissions; appending new ones "
            "(--resume would skip them)")
    return done if resume else {}


def _grade(args, competition, results, done: dict[int, dict]) -> int:
    from scorer.dask.results_file import status

    todo = [index for index in range(len(args.submissions)) if index not in done]
    records = list(done.values())
    grading, seconds, workers = _on_cluster(args, competition, results, todo, records) if todo else (None, 0.0, 0)
    print(leaderboard(records, competition), flush=True)
    if results is not None and sum(1 for r in records if status(r) == "scored") > 1:
        say(f"rank intervals and tiers of statistically tied submissions: scorer leaderboard --results {results.path} --truth {args.truth}")
    tally = {kind: sum(1 for r in records if status(r) == kind) for kind in ("scored", "invalid", "failed", "retryable")}
    summary = ran(len(todo) - tally["retryable"], workers, seconds, len(done)) if todo else "nothing left to grade"
    say(f"{summary}; all {len(records)}: " + ", ".join(f"{n} {kind}" for kind, n in tally.items() if n or kind != "retryable"))
    if grading is not None:
        _say_reruns(grading, [r for r in records if (r.get("attempts") or 1) > 1])
    if grading is not None and grading.stopped:
        again = f" (recorded as retryable): {RERUN}" if results is not None else ": run it again, with -o FILE so that --resume can go on"
        were = "was" if tally["retryable"] == 1 else "were"
        say(f"the run stopped early: {grading.stopped}; {counted(tally['retryable'], 'submission')} {were} not graded{again}")
        return 2
    if tally["retryable"]:
        were = "was" if tally["retryable"] == 1 else "were"
        say(f"{counted(tally['retryable'], 'submission')} {were} cancelled on the cluster and not graded: {RERUN}")
        return 2
    return 0 if tally["scored"] == len(records) else 1


def _on_cluster(args, competition, results, todo: list[int], records: list[dict]):
    """Grade the submissions at positions `todo`, adding their records to `records` (and `results`) as they finish."""
    from scorer.dask.cluster import client_for, dashboard_link, wait_for_workers, worker_count
    from scorer.dask.grade import Grading
    from scorer.errors import UsageError

    with client_for(args.scheduler, args.workers) as client:
        link = dashboard_link(client)
        if link:
            say(f"dashboard: {link}")
        if not wait_for_workers(client, args.wait_workers, say):
            raise UsageError(f"no Dask worker joined the scheduler at {client.scheduler.address} within {args.wait_workers} s: "
                             f"start workers (dask worker {client.scheduler.address}), then run again")
        started = time.monotonic()
        grading = Grading(client, [args.submissions[index] for index in todo], args.truth, competition, strict=not args.lenient,
                          max_per_code=args.max_per_code, threads=args.threads, retries=args.retries,
                          no_worker_seconds=args.wait_workers)
        new: list[dict] = []
        with _Bar(len(todo), enabled=not args.no_progress and sys.stderr.isatty()) as bar:
            for record in grading:
                new.append(record)
                record["index"] = todo[record["index"]]
                records.append(record)
                bar.write(line(record))
                if results is not None:
                    results.append(record)
                bar.update()
        seconds = time.monotonic() - started
        workers = workers_that_graded(new)  # grading starts when the first worker joins: the others may come later
        return grading, seconds, worker_count(client) if workers is None else workers


def _say_reruns(grading, rerun: list[dict]) -> None:
    if not grading.counting:
        say("re-runs not counted: the scheduler could not load scorer's plugin (install scorer where the scheduler runs)")
    elif rerun or grading.lost_workers:
        lost = f"{counted(len(grading.lost_workers), 'worker')} lost during the run; " if grading.lost_workers else ""
        say(f"{lost}{counted(len(rerun), 'task')} re-run: " + ", ".join(f"{r['file']} ({r['attempts']} runs)" for r in rerun))
    else:
        say("no task was re-run")


class _Bar:
    """A tqdm bar on stderr (n of N, rate, ETA) that lets the per-file lines through to stdout; or just the lines."""

    FORMAT = "grading {n_fmt} of {total_fmt} |{bar}| {rate_fmt}, ETA {remaining}"

    def __init__(self, total: int, enabled: bool, file=None):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=" files", file=file or sys.stderr, bar_format=self.FORMAT, dynamic_ncols=True)

    def write(self, text: str) -> None:
        if self.bar is None:
            print(text, flush=True)
        else:
            self.bar.write(text, file=sys.stdout)
            sys.stdout.flush()

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()
