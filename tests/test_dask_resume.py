"""`scorer grade` loses nothing: the client killed with kill -9, the scheduler killed, the workers gone, none at all.

The grading client runs as a subprocess (as an operator runs it) whose tasks sleep a little first, so
kills land mid-run; the clusters are the test_dask fixture's, or started by hand (bench/hand_cluster.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scorer.dask.tasks import RECORD_KEYS
from test_dask import alone, case, client, write  # noqa: F401 (fixtures)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from hand_cluster import HandCluster, _stop  # noqa: E402

pytestmark = pytest.mark.slow

# `scorer grade` whose tasks first sleep SECONDS (argv[1]): cloudpickle sends `slow` by value, so any worker can run it
SLOW_GRADE = """
import sys, time
from scorer.cli.main import main
from scorer.dask.grade import Grading
from scorer.dask.tasks import grade_one

def slow(path, *args, seconds=float(sys.argv[1])):
    time.sleep(seconds)
    return grade_one(path, *args)

Grading.__init__.__kwdefaults__["task"] = slow
sys.exit(main(sys.argv[2:]))
"""


def slow_grade(files, truth_path, scheduler, out, seconds, *options, stderr=subprocess.PIPE) -> subprocess.Popen:
    argv = [sys.executable, "-c", SLOW_GRADE, str(seconds), "grade", *map(str, files), "--truth", str(truth_path),
            "--scheduler", scheduler, "-o", str(out), "--no-progress", *options]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)


def lines_in(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def wait_for_lines(path: Path, n: int, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while lines_in(path) < n and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def final_records(path: Path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in records if r["status"] in ("scored", "invalid")]


def assert_each_file_once_and_as_alone(out: Path, files, truth_path) -> None:
    final = final_records(out)
    assert Counter(r["path"] for r in final) == Counter(str(path) for path in files)
    for record in final:
        assert {key: record[key] for key in RECORD_KEYS} == json.loads(json.dumps(alone(record["path"], truth_path)))


@pytest.fixture
def uploads(case, tmp_path):
    """24 submissions: 22 that score (different rows predicted), one with rows missing, one with a bad item."""
    truth_path, rows, rng = case
    files = [write(tmp_path / f"s{i:02d}.csv", [(s, t, list(rng.permutation(items))) for s, t, items in rows]) for i in range(22)]
    files.append(write(tmp_path / "missing.csv", rows[::3]))
    broken = tmp_path / "broken.csv"
    broken.write_text(files[0].read_text().replace("\n5_carts,", "\n5_carts,x"))
    return truth_path, files + [broken]


def test_the_client_killed_at_random_moments_then_resume_gives_each_file_one_final_record(client, uploads, tmp_path):
    truth_path, files = uploads
    out = tmp_path / "results.jsonl"
    rng = np.random.default_rng(int(time.time()))
    kills = []  # lines in the file when killed
    for round in range(4):
        before = out.read_bytes() if out.exists() else b""
        grade = slow_grade(files, truth_path, client.scheduler.address, out, 0.15, "--resume", stderr=subprocess.DEVNULL)
        wait_for_lines(out, lines_in(out) + int(rng.integers(round == 0, len(files) // 3)), grade)  # the first: mid-run
        time.sleep(rng.uniform(0, 0.3))
        grade.send_signal(signal.SIGKILL)
        grade.wait()
        kills.append(lines_in(out))
        after = out.read_bytes() if out.exists() else b""
        assert after.startswith(before[: before.rfind(b"\n") + 1])  # records once written are never changed
    grade = slow_grade(files, truth_path, client.scheduler.address, out, 0.0, "--resume")
    _, err = grade.communicate(timeout=300)
    assert grade.returncode == 1, err.decode()  # two invalid files
    assert "Traceback" not in err.decode()
    assert_each_file_once_and_as_alone(out, files, truth_path)
    assert len(out.read_text().splitlines()) == len(files), f"lines at each kill: {kills}"  # nothing graded twice
    assert 0 < kills[0] < len(files)


def test_a_lost_scheduler_leaves_retryable_records_exit_2_and_resume_finishes(uploads, tmp_path):
    truth_path, files = uploads
    out = tmp_path / "results.jsonl"
    with HandCluster(tmp_path / "logs") as cluster:
        grade = slow_grade(files, truth_path, cluster.address, out, 0.5)
        wait_for_lines(out, 3, grade)
        cluster.kill_scheduler()
        _, err = grade.communicate(timeout=120)
        message = err.decode()
        assert grade.returncode == 2, message
        assert "the run stopped early: the connection to the Dask scheduler was lost" in message
        assert "rerun the same command with --resume" in message
        assert "Traceback" not in message and "distributed." not in message
        assert "scorer: dashboard: http://127.0.0.1:" in message  # the link the scheduler advertises
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert Counter(r["path"] for r in records) == Counter(str(path) for path in files)  # one record each
        retryable = [r for r in records if r["status"] == "retryable"]
        assert retryable and all(r["score"] is None and "scheduler was lost" in r["reason"] for r in retryable)
        assert any(r["attempts"] >= 1 and r["workers"] for r in retryable)  # counted here, though the scheduler is gone
        cluster.restart()
        grade = slow_grade(files, truth_path, cluster.address, out, 0.0, "--resume")
        _, err = grade.communicate(timeout=300)
        assert grade.returncode == 1, err.decode()
    assert f"{len(files) - len(retryable)} of {len(files)} submissions already have a final record" in err.decode()
    assert_each_file_once_and_as_alone(out, files, truth_path)


def test_a_run_left_without_workers_stops_after_the_wait_with_retryable_records(uploads, tmp_path):
    truth_path, files = uploads
    out = tmp_path / "results.jsonl"
    with HandCluster(tmp_path / "logs") as cluster:
        grade = slow_grade(files, truth_path, cluster.address, out, 0.5, "--wait-workers", "2")
        wait_for_lines(out, 1, grade)
        _stop(cluster.worker, signal.SIGKILL)
        _, err = grade.communicate(timeout=120)
    assert grade.returncode == 2
    assert "no Dask worker was connected to the scheduler for 2 s" in err.decode()
    statuses = Counter(json.loads(line)["status"] for line in out.read_text().splitlines())
    assert statuses["retryable"] >= 1 and sum(statuses.values()) == len(files)


def test_grade_says_it_waits_for_workers_and_gives_up_after_the_wait(case, tmp_path):
    truth_path, rows, _ = case
    cluster = HandCluster(tmp_path / "logs")
    cluster.start_scheduler()
    try:
        started = time.monotonic()
        grade = slow_grade([write(tmp_path / "a.csv", rows)], truth_path, cluster.address, tmp_path / "out.jsonl", 0,
                           "--wait-workers", "2")
        _, err = grade.communicate(timeout=120)
    finally:
        cluster.close()
    assert grade.returncode == 2
    assert f"waiting up to 2 s for a Dask worker to join the scheduler at {cluster.address}" in err.decode()
    assert f"no Dask worker joined the scheduler at {cluster.address} within 2 s" in err.decode()
    assert time.monotonic() - started < 60
