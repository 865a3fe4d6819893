"""Which tasks ran more than once: the scheduler says each start as it happens, the client keeps the count.

A SchedulerPlugin sees every time one of our tasks enters "processing", with the worker it was
given to, and every worker the scheduler loses; it sends each as an event on the run's topic
and keeps nothing. The client (Tracker) adds them up as they arrive, so the counts outlive a
scheduler that dies mid-run. That catches each re-run, whatever its cause: the worker died
mid-task (the scheduler reschedules it), the task raised and was retried (`retries=`), or a
finished result was lost with its worker and computed again. Needs scorer importable on the scheduler.
"""

from __future__ import annotations

import uuid

from distributed.diagnostics.plugin import SchedulerPlugin


class Attempts(SchedulerPlugin):
    """Sends {"key", "worker"} on `topic` when a task with our prefix starts, {"lost": worker} when a worker goes."""

    def __init__(self, prefix: str, topic: str):
        self.prefix = prefix
        self.topic = topic
        self.scheduler = None

    async def start(self, scheduler) -> None:
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, stimulus_id=None, **kwargs) -> None:
        if finish != "processing" or not isinstance(key, str) or not key.startswith(self.prefix) or self.scheduler is None:
            return
        task = self.scheduler.tasks.get(key)
        worker = task.processing_on.address if task is not None and task.processing_on is not None else ""
        self.scheduler.log_event(self.topic, {"key": key, "worker": worker})

    def remove_worker(self, scheduler, worker, *, stimulus_id=None, **kwargs) -> None:
        scheduler.log_event(self.topic, {"lost": worker})


class Tracker:
    """One run's count, kept here: `runs` (task key -> the workers it was started on, in order) and `lost_workers`.

    Unavailable (the scheduler cannot load the plugin) -> `available` is False and nothing is counted.
    """

    def __init__(self, client, what: str = "grade"):
        self.client = client
        self.prefix = f"scorer-{what}-{uuid.uuid4().hex[:10]}-"
        self.name = self.prefix + "attempts"
        self.runs: dict[str, list[str]] = {}
        self.lost_workers: list[str] = []
        client.subscribe_topic(self.name, self._event)  # before the plugin and the tasks: no start is missed
        try:
            client.register_plugin(Attempts(self.prefix, self.name), name=self.name)
            self.available = True
        except Exception:  # e.g. a scheduler without scorer installed: grading still works
            self.available = False

    def _event(self, event) -> None:
        """Runs on the client's event loop, in the order the scheduler sent the events (before the task's result)."""
        _, message = event
        if "lost" in message:
            self.lost_workers.append(message["lost"])
        else:
            self.runs.setdefault(message["key"], []).append(message["worker"])

    def key(self, index: int) -> str:
        return f"{self.prefix}{index}"

    def workers(self, key: str) -> list[str] | None:
        """Where the task was started, in order; None when nothing is counted."""
        return list(self.runs.get(key, [])) if self.available else None

    def close(self) -> None:
        if self.client.status != "running":
            return  # the scheduler is gone (and the plugin with it): asking would wait for a reconnection
        for stop in (lambda: self.client.unsubscribe_topic(self.name), lambda: self.client.unregister_scheduler_plugin(self.name)):
            try:
                stop()
            except Exception:  # the scheduler may be gone; the counts stay here
                pass
