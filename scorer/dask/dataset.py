"""Score a partitioned submission (a directory of part files) on a Dask cluster, or part by part in process."""

from __future__ import annotations

import time
from pathlib import Path

from scorer.dask.partitioned import Partial, reduce, score_part
from scorer.dask.parts import list_parts
from scorer.engine.problems import Code, Report
from scorer.engine.reader import Deadline
from scorer.errors import UsageError, one_line
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth


def score_dataset(directory: str | Path, truth: str | Path | Truth, competition: str | Competition = "otto", *,
                  config: str | Path | None = None, strict: bool = False, max_per_code: int = 20,
                  client=None, threads: int | None = None, retries: int = 2, reruns: list | None = None,
                  task=score_part, untrusted: bool = False):
    """Score the parts under `directory` as one submission; the Result equals scoring their concatenation.

    With a Dask `client`, each part is a task on the cluster (the truth goes as a path, loaded once
    per worker, or, for a Truth object, scattered once to every worker); without, the parts are
    scored one after the other here. A part whose task fails on every attempt is reported as
    unreadable (no score), naming the part. A list given as `reruns` receives (part, workers) for
    each part the scheduler started more than once (see scorer.dask.attempts). `task` is the function
    run per part on the cluster (score_part; tests wrap it). `untrusted` reads every part as score() does
    an upload: a part that is a link or has several hard links is refused (S027, naming the part).
    """
    from scorer.api import resolve_competition, resolve_truth

    started = time.monotonic()
    competition = resolve_competition(competition, config)
    check_shape(competition)
    loaded = resolve_truth(truth, competition)  # a bad truth fails here, before any task
    root = Path(directory)
    parts = list_parts(root)
    names = [part.relative_to(root).as_posix() for part in parts]
    options = (competition, strict, max_per_code)
    if client is None:  # one time limit for the whole submission, as for one file
        deadline = Deadline(competition.limits.max_seconds)  # from now: the truth is loaded, as for one file
        partials = []
        for part, name in zip(parts, names):
            partials.append(score_part(str(part), name, loaded, *options, threads or 2, untrusted, deadline))
            if partials[-1].report.counts.get(Code.TIME_LIMIT.code):
                break  # the time is up: the parts not read are not scored (and their rows are missing)
    else:
        partials = _on_cluster(client, task, parts, names, truth, loaded, options, threads or 1, retries, reruns, untrusted)
    return reduce(partials, competition, loaded, strict, max_per_code, str(directory), time.monotonic() - started)


def check_shape(competition: Competition) -> None:
    """Partitioned scoring merges rows by (id, type) slot: only shape 'id_type' (OTTO) has them."""
    if competition.shape != "id_type":
        raise UsageError(f"partitioned scoring takes competitions whose rows are one id and type (shape 'id_type', as OTTO); "
                         f"{competition.name!r} has shape {competition.shape!r}: score its parts concatenated")


def _on_cluster(client, task, parts, names, truth, loaded: Truth, options, threads: int, retries: int, reruns,
                untrusted: bool) -> list[Partial]:
    from scorer.dask.attempts import Tracker
    from scorer.dask.futures import failure, settle

    shipped = client.scatter(loaded, broadcast=True) if isinstance(truth, Truth) else str(Path(truth).resolve())
    tracker = Tracker(client, "part")
    try:
        futures = [client.submit(task, str(part.absolute()), name, shipped, *options, threads, untrusted,  # a link stays a link
                                 key=tracker.key(index), retries=retries, pure=False)
                   for index, (part, name) in enumerate(zip(parts, names))]
        settle(futures)
        runs = tracker.read([future.key for future in futures])["runs"]
        if reruns is not None:
            reruns.extend((name, runs[f.key]) for f, name in zip(futures, names) if len(runs.get(f.key, [])) > 1)
        partials = []
        for future, name in zip(futures, names):
            error = failure(future)
            if error is None:
                partials.append(future.result())
            else:
                report = Report(strict=options[1], max_per_code=options[2], fatal=True)
                report.add(Code.UNREADABLE, f"{name}: the part could not be scored on any attempt: {one_line(error)}")
                partials.append(Partial(name, report))
            future.release()
        return partials
    finally:
        tracker.close()
