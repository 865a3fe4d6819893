"""A task cancelled on the cluster (by an operator, or the scheduler) gets a one-line failure, never a crash."""

from __future__ import annotations

import time

import pytest

from scorer.cli.main import main
from scorer.dask.dataset import score_dataset
from scorer.dask.grade import Grading
from scorer.dask.shuffled import score_partition
from scorer.dask.tasks import grade_one
from scorer.spec.competition import load_competition
from test_dask import case, client, write, write_parts  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


def _cancel_itself(victim, then):
    """A task that, for `victim` (a path's end, or a partition number), cancels its own key for every client (as
    `client.cancel(force=True)` does); else runs `then`."""

    def task(first, *args):
        if first == victim or (isinstance(first, str) and first.endswith(victim)):
            from distributed import get_client, get_worker
            from distributed.client import Future

            here = get_client()
            here.cancel([Future(get_worker().get_current_task(), here)], force=True, reason="an operator cancelled it")
            time.sleep(1)  # the cancellation reaches the scheduler before this attempt could finish
        return then(first, *args)

    return task


def _cancel_itself_partition(victim):
    def task(frame, index, *args):
        return _cancel_itself(victim, lambda _, *rest: score_partition(frame, *rest))(index, index, *args)

    return task


def test_a_cancelled_partition_is_one_line_and_no_score(client, case, tmp_path):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:300], rows[300:]], ["csv", "csv"])
    result = score_dataset(directory, truth_path, client=client, retries=0, partitions=2, task=_cancel_itself_partition(1))
    assert result.score is None
    [message] = [p.message for p in result.problems if p.code == "S027"]
    assert message.startswith("the partitioned scoring could not finish on any attempt: FutureCancelledError: ")
    assert message.endswith("cancelled for reason: an operator cancelled it.") and "\n" not in message


def test_a_cancelled_submission_is_retryable_not_a_failure(client, case, tmp_path, monkeypatch, capsys):
    truth_path, rows, _ = case
    files = [write(tmp_path / "good.csv", rows), write(tmp_path / "gone.csv", rows)]
    grading = Grading(client, files, truth_path, load_competition("otto"), retries=0, warm=False, task=_cancel_itself("gone.csv", grade_one))
    records = {r["index"]: r for r in grading}
    assert records[1]["status"] == "retryable" and "error" not in records[1]
    assert records[1]["reason"].startswith("the task was cancelled on the cluster: FutureCancelledError: ")
    assert records[1]["reason"].endswith("cancelled for reason: an operator cancelled it.")
    assert records[1]["valid"] is False and records[1]["score"] is None
    assert records[0]["status"] == "scored" and records[0]["score"] is not None
    assert not grading.stopped and not grading.scheduler_lost  # one cancelled task does not end the run
    monkeypatch.setitem(Grading.__init__.__kwdefaults__, "task", _cancel_itself("gone.csv", grade_one))
    assert main(["grade", *map(str, files), "--truth", str(truth_path), "--scheduler", client.scheduler.address, "--retries", "0"]) == 2
    err = capsys.readouterr().err
    assert "1 submission was cancelled on the cluster and not graded: rerun the same command with --resume" in err
