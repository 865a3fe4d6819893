"""Grade many submissions on a Dask cluster: one task per file, records as they finish, re-runs reported."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from scorer.dask.attempts import Tracker
from scorer.dask.futures import failure
from scorer.dask.tasks import grade_one, warm
from scorer.errors import one_line
from scorer.spec.competition import Competition


class Grading:
    """Iterate to get one record per submission, in the order they finish; then read `lost_workers`.

    The truth travels as a path: each worker loads it once (scorer.dask.truthcache). A task
    whose worker dies is rescheduled by Dask; one that raises is retried `retries` times.
    Every record gets "index" (position in `submissions`), "attempts" (times the scheduler
    started it; None if the scheduler cannot count) and "workers" (where each attempt ran).
    `task` is the function run per file (grade_one; tests wrap it). With `warm`, each worker first
    loads the truth and the kernels in a task of its own, so no submission's time includes them.
    Every submission is read as an untrusted upload (links refused, see scorer.api.score).
    """

    def __init__(self, client, submissions: Iterable[str | Path], truth: str | Path, competition: Competition, *,
                 strict: bool = True, max_per_code: int = 20, threads: int = 1, retries: int = 2, task=grade_one, warm: bool = True):
        self.client = client
        self.names = [str(path) for path in submissions]
        self.arguments = (os.path.abspath(truth), competition, strict, max_per_code, threads, True)  # True: untrusted uploads
        self.retries = retries
        self.task = task
        self.warm = warm
        self.warm_seconds = 0.0
        self.lost_workers: list[str] = []
        self.counting = False

    def __iter__(self) -> Iterator[dict]:
        from distributed import as_completed

        if self.warm:
            self.warm_seconds = warm_workers(self.client, *self.arguments[:2])
        tracker = Tracker(self.client, "grade")
        self.counting = tracker.available
        pending = {}
        try:
            for index, name in enumerate(self.names):
                future = self.client.submit(self.task, _absolute(name), *self.arguments, key=tracker.key(index),
                                            retries=self.retries, pure=False)
                pending[future.key] = (index, future)
            for batch in as_completed([f for _, f in pending.values()], with_results=True, raise_errors=False).batches():
                runs = tracker.read([future.key for future, _ in batch])["runs"]
                for future, outcome in batch:
                    index, _ = pending.pop(future.key)
                    yield self._record(index, future, outcome, runs.get(future.key))
            self.lost_workers = tracker.read([])["lost_workers"]
        finally:
            if pending:
                self.client.cancel([future for _, future in pending.values()])
            tracker.close()

    def _record(self, index: int, future, outcome, workers: list[str] | None) -> dict:
        error = failure(future)  # as_completed(raise_errors=False) hands a failure's outcome as a tuple or the CancelledError
        if error is not None:
            record = {"file": self.names[index], "valid": False, "score": None,
                      "error": f"the task failed on every attempt: {one_line(error)}"}
        else:
            record = dict(outcome, file=self.names[index])
        record.update(index=index, attempts=len(workers or []) if self.counting else None, workers=workers if self.counting else None)
        future.release()
        return record


def _absolute(path: str) -> str:
    """The path as given when absolute (messages then name it as the user wrote it), else joined to the cwd."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def warm_workers(client, truth_path: str, competition: Competition) -> float:
    """One warm-up task pinned to each worker now connected; wall seconds. Failures are left to the real tasks."""
    import time

    started = time.monotonic()
    workers = list(client.scheduler_info()["workers"])
    futures = [client.submit(warm, truth_path, competition, workers=[address], allow_other_workers=False, pure=False)
               for address in workers]
    try:
        client.gather(futures, errors="skip")
    except Exception:  # a worker that cannot load the truth: each submission's record will say why
        pass
    return time.monotonic() - started
