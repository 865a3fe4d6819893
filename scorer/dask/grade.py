"""Grade many submissions on a Dask cluster: one task per file, records as they finish, re-runs reported."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from scorer.dask.attempts import Tracker
from scorer.dask.cluster import worker_count
from scorer.dask.futures import failure
from scorer.dask.tasks import grade_one, warm
from scorer.errors import one_line
from scorer.spec.competition import Competition

POLL_SECONDS = 0.05  # how often the client looks for finished tasks
WORKER_CHECK_SECONDS = 2.0  # how often it asks the scheduler whether any worker is left
SCHEDULER_LOST = "the connection to the Dask scheduler was lost before the task finished"


class Grading:
    """Iterate to get one record per submission, in the order they finish; then read `stopped` and `lost_workers`.

    The truth travels as a path: each worker loads it once (scorer.dask.truthcache). A task
    whose worker dies is rescheduled by Dask; one that raises is retried `retries` times.
    Every record gets "index" (position in `submissions`), "status" (scored, invalid, failed, or
    retryable: see scorer.dask.results_file), "attempts" (times the scheduler started it; None if the
    scheduler cannot count) and "workers" (where each attempt ran).

    A task that never ran to an end is retryable, with a "reason": cancelled on the cluster, or cut off
    when the client lost its scheduler or when no worker was left for `no_worker_seconds` (None: wait
    for ever). The last two end the run at once, with a retryable record for every file not finished,
    and say why in `stopped` (`scheduler_lost` tells the first).
    `task` is the function run per file (grade_one; tests wrap it). With `warm`, each worker first
    loads the truth and the kernels in a task of its own, so no submission's time includes them.
    Every submission is read as an untrusted upload (links refused, see scorer.api.score).
    """

    def __init__(self, client, submissions: Iterable[str | Path], truth: str | Path, competition: Competition, *,
                 strict: bool = True, max_per_code: int = 20, threads: int = 1, retries: int = 2, task=grade_one, warm: bool = True,
                 no_worker_seconds: float | None = None):
        self.client = client
        self.names = [str(path) for path in submissions]
        self.arguments = (os.path.abspath(truth), competition, strict, max_per_code, threads, True)  # True: untrusted uploads
        self.retries = retries
        self.task = task
        self.warm = warm
        self.no_worker_seconds = no_worker_seconds
        self.warm_seconds = 0.0
        self.lost_workers: list[str] = []
        self.counting = False
        self.stopped = ""
        self.scheduler_lost = False

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
            completed = as_completed([future for _, future in pending.values()], with_results=True, raise_errors=False)
            watch = _Watch(self.client, self.no_worker_seconds)
            while pending and not self.stopped:
                batch = completed.next_batch(block=False)
                for future, outcome in batch:
                    index, _ = pending.pop(future.key)
                    yield self._record(index, future, outcome, tracker.workers(future.key))
                if not batch:
                    self.stopped = self.stopped or watch.why_stop()
                    time.sleep(POLL_SECONDS)
            self.scheduler_lost = self.scheduler_lost or self.stopped == SCHEDULER_LOST
            for key, (index, future) in list(pending.items()):
                del pending[key]
                yield self._retryable(index, self.stopped, tracker.workers(key))
        finally:
            if pending:
                self.client.cancel([future for _, future in pending.values()])
            self.lost_workers = list(tracker.lost_workers)
            tracker.close()

    def _record(self, index: int, future, outcome, workers: list[str] | None) -> dict:
        error = failure(future)  # as_completed(raise_errors=False) hands a failure's outcome as a tuple or the CancelledError
        if future.cancelled():
            lost = getattr(error, "reason", "") == "scheduler-connection-lost"
            if lost:
                self.scheduler_lost = True
                self.stopped = SCHEDULER_LOST
            reason = SCHEDULER_LOST if lost else f"the task was cancelled on the cluster: {one_line(error) if error else 'no reason given'}"
            record = self._retryable(index, reason, workers)
        elif error is not None:
            record = {"file": self.names[index], "path": _absolute(self.names[index]), "valid": False, "score": None,
                      "status": "failed", "error": f"the task failed on every attempt: {one_line(error)}"}
        else:
            record = dict(outcome, file=self.names[index])
        self._counted(record, index, workers)
        future.release()
        return record

    def _retryable(self, index: int, reason: str, workers: list[str] | None) -> dict:
        record = {"file": self.names[index], "path": _absolute(self.names[index]), "valid": False, "score": None,
                  "status": "retryable", "reason": reason}
        return self._counted(record, index, workers)

    def _counted(self, record: dict, index: int, workers: list[str] | None) -> dict:
        record.update(index=index, attempts=len(workers or []) if self.counting else None, workers=workers if self.counting else None)
        return record


class _Watch:
    """Why the run cannot go on while it waits for results: its scheduler is gone, or no worker has been there for a while."""

    def __init__(self, client, no_worker_seconds: float | None):
        self.client = client
        self.no_worker_seconds = no_worker_seconds
        self.checked = self.last_worker = time.monotonic()

    def why_stop(self) -> str:
        if self.client.status not in ("running", "newly-created"):  # "connecting" after a lost connection, then "closed"
            return SCHEDULER_LOST
        now = time.monotonic()
        if self.no_worker_seconds is None or now - self.checked < WORKER_CHECK_SECONDS:
            return ""
        self.checked = now
        if worker_count(self.client):
            self.last_worker = now
        elif now - self.last_worker >= self.no_worker_seconds:
            return f"no Dask worker was connected to the scheduler for {self.no_worker_seconds:g} s"
        return ""


def _absolute(path: str) -> str:
    """The path as given when absolute (messages then name it as the user wrote it), else joined to the cwd."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def warm_workers(client, truth_path: str, competition: Competition) -> float:
    """One warm-up task pinned to each worker now connected; wall seconds. Failures are left to the real tasks."""
    started = time.monotonic()
    workers = list(client.scheduler_info()["workers"])
    futures = [client.submit(warm, truth_path, competition, workers=[address], allow_other_workers=False, pure=False)
               for address in workers]
    try:
        client.gather(futures, errors="skip")
    except Exception:  # a worker that cannot load the truth: each submission's record will say why
        pass
    return time.monotonic() - started
