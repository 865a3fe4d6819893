"""Where `scorer leaderboard` (scorer.leaderboard) scores its submissions and keeps what the joint bootstrap needs (--engine):

- stream (default): scored one at a time here and reduced in batches to their resampled sums
  (scorer.analytics.leaderboard.streamed_bootstrap): memory grows with submissions x resamples, not with sessions;
- memory: scored one at a time here, every submission's per-session numerators kept (scorer.analytics.leaderboard.joint_bootstrap):
  4 bytes x sessions x types x (submissions + 1), one bootstrap pass over them;
- dask: one task per file on a Dask cluster scores and reduces it where it runs (scorer.dask.leaderboard).

Each takes the submissions as (name, path or frame) pairs, the grade records by name, the truth, the competition, the
split and the job's options (scorer.jobs.leaderboard.Options), and returns (columns, names of the ranked, unranked
[{"name", "reason"}], cut_short: whether a task never finished).
"""

from __future__ import annotations

import sys

WAIT_WORKERS = 60.0  # seconds to wait for a first Dask worker, and to go on without any


def warn_changed(path: str, score: float | None, record: dict | None, results_name: str) -> None:
    """A warning when a file scores otherwise than its grade record said (the file or the truth changed since)."""
    if record is not None and score is not None and record.get("score") is not None and abs(score - record["score"]) > 1e-9:
        print(f"scorer: warning: {path} scores {score:.6f} now, {record['score']:.6f} in {results_name} "
              "(the file or the truth changed since grading?)", file=sys.stderr)


def scored(entries: list[tuple], recorded: dict, truth, competition, options):
    """(name, Result or reason) per input, one scored at a time (only its numerators outlive the next)."""
    from scorer.api import score

    for name, source in entries:
        record = recorded.get(name)
        if record is not None and record.get("score") is None:
            yield name, record.get("error") or "invalid in the grade records"
            continue
        result = score(source, truth, competition, strict=not options.lenient, threads=options.threads, untrusted=True)
        warn_changed(name, result.score, record, options.results)
        yield name, result
        del result


def plan_of(truth, split, options):
    from scorer.analytics.leaderboard.board import sides_of
    from scorer.analytics.leaderboard.streamed_bootstrap import Plan

    mde_side = None if options.mde is None else "private" if split is not None else "all"
    return Plan.make(sides_of(split, int(truth.sizes.shape[0])), options.bootstrap, options.seed, options.threads, mde_side)


def in_memory(entries, recorded, truth, competition, split, options):
    from scorer.analytics.leaderboard.board import collect

    return (*collect(scored(entries, recorded, truth, competition, options), len(entries)), False)


def streamed(entries, recorded, truth, competition, split, options):
    from scorer.analytics.leaderboard.board import collect
    from scorer.analytics.leaderboard.streamed_bootstrap import StreamedColumns, batch_size, truth_table

    plan = plan_of(truth, split, options)
    base = truth_table(truth, competition)
    batch = min(len(entries), batch_size(base.sizes.shape[0], len(base.types)))
    return (*collect(scored(entries, recorded, truth, competition, options),
                     open_columns=lambda _: StreamedColumns(base, plan, batch=batch, threads=options.threads)), False)


def on_cluster(entries, recorded, truth, competition, split, options):
    """The files scored and reduced on a Dask cluster (paths: the job refuses frames); the denominators reduced here once
    the tasks are out."""
    from scorer.analytics.leaderboard.streamed_bootstrap import StreamedColumns, truth_table
    from scorer.dask import require
    from scorer.dask.cluster import client_for, wait_for_workers
    from scorer.dask.leaderboard import Resampling, reductions
    from scorer.errors import UsageError

    require()
    paths = [name for name, _ in entries]
    todo = [path for path in paths if (recorded.get(path) or {"score": 0}).get("score") is not None]
    resampling = Resampling(options.split, options.seed, options.bootstrap, options.threads, options.mde is not None)
    records: dict[str, dict] = {}
    stopped = ""
    if todo:
        with client_for(options.scheduler, options.workers) as client:
            if not wait_for_workers(client, WAIT_WORKERS, lambda message: print(f"scorer: {message}", file=sys.stderr)):
                raise UsageError(f"no Dask worker joined the scheduler at {client.scheduler.address} within {WAIT_WORKERS:g} s")
            grading = reductions(client, todo, options.truth, competition, resampling, strict=not options.lenient,
                                 no_worker_seconds=WAIT_WORKERS)
            records = {todo[record["index"]]: record for record in grading}
            stopped = grading.stopped
    columns = StreamedColumns(truth_table(truth, competition), plan_of(truth, split, options), threads=options.threads)
    names: list[str] = []
    unranked: list[dict] = []
    for path in paths:
        record = records.get(path) or recorded.get(path) or {}
        if record.get("status") == "scored":
            warn_changed(path, record["score"], recorded.get(path), options.results)
            columns.add_reduced(record["reduced"])
            names.append(path)
        else:
            unranked.append({"name": path, "reason": record.get("reason") or record.get("error") or "invalid in the grade records"})
    cut_short = bool(stopped) or any(records[path].get("status") == "retryable" for path in records)
    return (columns if names else None), names, unranked, cut_short


ENGINES = {"stream": streamed, "memory": in_memory, "dask": on_cluster}
