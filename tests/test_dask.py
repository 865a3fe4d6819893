"""Scale-out on Dask: grading many files and partitioned scoring, on a local cluster of two worker processes."""

from __future__ import annotations

import json
import os
import signal
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster

import scorer
import scorer.truth.cache
from conftest import TYPES, submission_text, truth_lines
from scorer.cli.main import main
from scorer.dask.dataset import score_dataset
from scorer.dask.grade import Grading
from scorer.dask.shuffled import score_partition
from scorer.dask.tasks import RECORD_KEYS, grade_one
from scorer.dask.truthcache import loads_here
from scorer.errors import UsageError
from scorer.spec.competition import load_competition

OTTO = load_competition("otto")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client():
    """One cluster for the module: two worker processes, one thread each, loopback only."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0") as cluster:
        with Client(cluster) as client:
            yield client


@pytest.fixture
def case(tmp_path):
    """A truth of 300 sessions and a full set of rows with random predictions."""
    rng = np.random.default_rng(7)
    truth = {s: {"clicks": int(rng.integers(40)), "carts": rng.choice(40, 2, replace=False).tolist(),
                 "orders": rng.choice(40, 3, replace=False).tolist()} for s in range(300)}
    truth_path = tmp_path / "truth.jsonl"
    truth_path.write_text(truth_lines(truth))
    rows = [(s, t, rng.integers(0, 40, int(rng.integers(0, 24))).tolist()) for s in truth for t in TYPES]
    return truth_path, rows, rng


def write(path, rows, header=True):
    path.write_text(submission_text(rows, header))
    return path


def submissions(tmp_path, rows):
    good = write(tmp_path / "good.csv", rows)
    partial = write(tmp_path / "partial.csv", rows[::2])  # missing rows: an error when strict
    broken = tmp_path / "broken.csv"
    broken.write_text(submission_text(rows[:50]).replace("3_carts", "3_kart").replace(" 7 ", " x7 ") + "12_clicks,1 2\n")
    headerless = write(tmp_path / "headerless.csv", rows, header=False)
    return [good, partial, broken, headerless, tmp_path / "does-not-exist.csv"]


def alone(path, truth_path, strict=True):
    """The record of one submission scored alone, read as grade reads it (an untrusted upload)."""
    out = scorer.score(path, truth_path, strict=strict, threads=1, untrusted=True).to_dict()
    return {key: out[key] for key in RECORD_KEYS}


def test_grade_equals_scoring_each_alone(client, case, tmp_path):
    truth_path, rows, _ = case
    files = submissions(tmp_path, rows)
    records = list(Grading(client, files, truth_path, OTTO, strict=True))
    assert sorted(r["index"] for r in records) == list(range(len(files)))
    for record in records:
        assert record["file"] == str(files[record["index"]])
        assert {key: record[key] for key in RECORD_KEYS} == alone(files[record["index"]], truth_path)
        assert record["attempts"] == 1 and len(record["workers"]) == 1 and "error" not in record
        assert record["path"] == str(files[record["index"]]) and record["status"] == ("scored" if record["valid"] else "invalid")
        assert record["content_key"] == (None if "does-not-exist" in record["file"] else scorer.truth.cache.content_key(record["path"]))
    by_name = {os.path.basename(r["file"]): r for r in records}
    assert by_name["good.csv"]["score"] is not None and by_name["partial.csv"]["score"] is None
    assert {p["code"] for p in by_name["broken.csv"]["problems"]} >= {"S005", "S008", "S010"}
    assert [p["code"] for p in by_name["does-not-exist.csv"]["problems"]] == ["S027"]


def test_grade_takes_the_other_shapes_too(client):
    hm = load_competition("hm")
    fixture = os.path.join(os.path.dirname(__file__), "..", "fixtures", "hm")
    files = [os.path.join(fixture, "submission.csv"), os.path.join(fixture, "nope.csv")]
    records = sorted(Grading(client, files, os.path.join(fixture, "truth.csv"), hm, strict=True), key=lambda r: r["index"])
    for record, path in zip(records, files):
        out = scorer.score(path, os.path.join(fixture, "truth.csv"), hm, strict=True, threads=1, untrusted=True).to_dict()
        assert {key: record[key] for key in RECORD_KEYS} == {key: out[key] for key in RECORD_KEYS}
    assert records[0]["score"] is not None


def test_truth_is_loaded_once_per_worker_not_per_task(client, case, tmp_path):
    truth_path, rows, _ = case
    files = [write(tmp_path / f"s{i}.csv", rows[i:]) for i in range(8)]
    before = dict(client.run(loads_here).values())
    list(Grading(client, files, truth_path, OTTO, strict=False))
    after = dict(client.run(loads_here).values())
    assert all(after[pid] - before.get(pid, 0) <= 1 for pid in after)


def _kill_first_attempt(marker, then=grade_one, victim="victim.csv"):
    """A task that kills its own worker process the first time it sees `victim` (marker file), then runs `then`."""

    def task(path, *args):
        if path.endswith(victim) and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return then(path, *args)

    return task


def test_a_worker_that_dies_mid_task_is_replaced_and_the_results_are_the_same(client, case, tmp_path):
    truth_path, rows, _ = case
    files = submissions(tmp_path, rows)[:3] + [write(tmp_path / "victim.csv", rows[5:])]
    grading = Grading(client, files, truth_path, OTTO, strict=True, task=_kill_first_attempt(str(tmp_path / "marker")))
    records = {r["index"]: r for r in grading}
    assert (tmp_path / "marker").exists()
    for index, path in enumerate(files):
        assert {key: records[index][key] for key in RECORD_KEYS} == alone(path, truth_path)
    victim = records[len(files) - 1]
    assert victim["attempts"] == 2 and len(victim["workers"]) == 2
    assert victim["workers"][0] in grading.lost_workers
    for record in records.values():  # a result finished on the dead worker but not yet fetched is computed again
        assert record["attempts"] == len(record["workers"]) >= 1
        assert all(worker in grading.lost_workers for worker in record["workers"][:-1])
    client.wait_for_workers(2, timeout=60)



def _raise_for(victim):
    """A task that raises a ValueError with a two-line message for `victim`, and grades every other file."""

    def task(path, *args):
        if path.endswith(victim):
            raise ValueError("the parser met something odd\nsecond line of detail")
        return grade_one(path, *args)

    return task


def test_a_task_that_raises_on_every_attempt_records_a_one_line_error(client, case, tmp_path, monkeypatch, capsys):
    truth_path, rows, _ = case
    files = [write(tmp_path / "good.csv", rows), write(tmp_path / "odd.csv", rows)]
    records = {r["index"]: r for r in Grading(client, files, truth_path, OTTO, retries=1, task=_raise_for("odd.csv"))}
    assert records[1]["error"] == "the task failed on every attempt: ValueError: the parser met something odd"
    assert records[1]["valid"] is False and records[1]["score"] is None and records[1]["attempts"] == 2
    assert records[1]["status"] == "failed"
    assert "error" not in records[0] and records[0]["score"] is not None
    monkeypatch.setitem(Grading.__init__.__kwdefaults__, "task", _raise_for("odd.csv"))  # the CLI's results.jsonl too
    out = tmp_path / "results.jsonl"
    assert main(["grade", *map(str, files), "--truth", str(truth_path), "--scheduler", client.scheduler.address,
                 "--out", str(out), "--retries", "0"]) == 1
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["error"] for r in lines if "error" in r] == ["the task failed on every attempt: ValueError: the parser met something odd"]
    assert "failed    " + str(files[1]) + ": the task failed on every attempt: ValueError: the parser met something odd" in capsys.readouterr().out

# -- partitioned scoring ------------------------------------------------------------------------

def split_text(row):
    session, type_name, items = row
    return f"{session}_{type_name}", " ".join(map(str, items))


def write_parts(directory, groups, kinds):
    """groups[i] rows go to part i, written as kinds[i]: csv, parquet (labels text) or parquet-list (list<int>)."""
    directory.mkdir()
    for index, (rows, kind) in enumerate(zip(groups, kinds)):
        if kind == "csv":
            write(directory / f"part-{index:02d}.csv", rows)
            continue
        ids = [split_text(row)[0] if not isinstance(row, str) else row.split(",", 1)[0] for row in rows]
        if kind == "parquet":
            labels = pa.array([split_text(row)[1] if not isinstance(row, str) else row.split(",", 1)[1] for row in rows], pa.string())
        else:
            labels = pa.array([list(row[2]) for row in rows], pa.list_(pa.int64()))
        pq.write_table(pa.table({"session_type": pa.array(ids, pa.string()), "labels": labels}), directory / f"part-{index:02d}.parquet",
                       row_group_size=max(1, len(rows) // 3))
    return directory


def assert_same_figures(partitioned, single):
    """Score, every metric, the counts and the problem counts, to the last bit (what a cluster run sends back)."""
    assert partitioned.score == single.score
    assert partitioned.metrics == single.metrics
    assert partitioned.counts == single.counts
    assert partitioned.report.counts == single.report.counts


def assert_same(partitioned, single):
    """The same figures and per-slot arrays (the in-process run reduces the parts into them)."""
    assert_same_figures(partitioned, single)
    assert np.array_equal(partitioned.slot_values, single.slot_values)
    assert np.array_equal(partitioned.slot_hits, single.slot_hits)
    assert np.array_equal(partitioned.slot_line > 0, single.slot_line > 0)


def partitionings(rows, rng):
    by_session = sorted(rows, key=lambda row: row[0])
    shuffled = [rows[i] for i in rng.permutation(len(rows))]  # a session's rows spread over the parts
    extra = [(999, "clicks", [1, 2]), (4, "orders", [1, 2, 3]), (7, "clicks", [])]  # unknown session, two repeats
    return {
        "csv-by-session": ([by_session[:300], by_session[300:450], by_session[450:]], ["csv", "csv", "csv"]),
        "mixed-by-session": ([by_session[:200], by_session[200:500], by_session[500:800], by_session[800:]],
                             ["csv", "parquet", "parquet-list", "csv"]),
        "spread-with-repeats-and-gaps": ([shuffled[:250] + extra[:1], shuffled[250:600], extra[1:], shuffled[600:880]],
                                         ["parquet", "csv", "parquet-list", "csv"]),
    }


@pytest.mark.parametrize("name", ["csv-by-session", "mixed-by-session", "spread-with-repeats-and-gaps"])
@pytest.mark.parametrize("strict", [False, True])
def test_partitioned_equals_the_concatenated_file_to_the_last_bit(client, case, tmp_path, name, strict):
    truth_path, rows, rng = case
    groups, kinds = partitionings(rows, rng)[name]
    directory = write_parts(tmp_path / "parts", groups, kinds)
    single = scorer.score(write(tmp_path / "all.csv", [row for group in groups for row in group]), truth_path, strict=strict)
    for partitions in (1, 3, 7):
        assert_same_figures(score_dataset(directory, truth_path, strict=strict, client=client, partitions=partitions,
                                          truth_parts=str(tmp_path / "truth-parts")), single)
    assert_same(score_dataset(directory, truth_path, strict=strict), single)  # in process, no cluster
    if name == "mixed-by-session":  # a cluster loads the truth's partitions where they are scored, from its path
        with pytest.raises(UsageError, match="truth's path"):
            score_dataset(directory, scorer.load_truth(truth_path, TYPES), strict=strict, client=client)


def _kill_worker_once(marker, victim=1):
    """A partition scorer that kills its own worker process (SIGKILL, as kill -9) the first time it meets partition
    `victim` (marker file), then scores as usual."""

    def task(frame, index, *args):
        if index == victim and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return score_partition(frame, index, *args)

    return task


def test_partitioned_scoring_survives_a_worker_killed_mid_run(client, case, tmp_path):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:300], rows[300:600], rows[600:]], ["csv", "parquet", "csv"])
    single = scorer.score(write(tmp_path / "all.csv", rows), truth_path)
    task = _kill_worker_once(str(tmp_path / "marker"))
    assert_same_figures(score_dataset(directory, truth_path, client=client, partitions=4, task=task), single)
    assert (tmp_path / "marker").exists()  # the worker did die, and the partition ran again elsewhere
    client.wait_for_workers(2, timeout=60)


def test_partitioned_scoring_shows_the_partitions_done(client, case, tmp_path, capsys):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:300], rows[300:600], rows[600:]], ["csv", "parquet", "csv"])
    score_dataset(directory, truth_path, client=client, partitions=3, progress=True)
    shown = capsys.readouterr().err
    assert "3 of 3 partitions" in shown and "ETA" in shown
    score_dataset(directory, truth_path, client=client, partitions=3)
    assert capsys.readouterr().err == ""


def test_partitioned_problems_name_the_part_and_its_line(client, case, tmp_path):
    truth_path, rows, _ = case
    bad = rows[300:310] + ["300_clicks,4 x 5"]
    directory = write_parts(tmp_path / "parts", [rows[:300], bad, rows[310:] + [rows[2]]], ["csv", "parquet", "csv"])
    (directory / "part-02.csv").write_text((directory / "part-02.csv").read_text() + submission_text([rows[301]], header=False))
    result = score_dataset(directory, truth_path, strict=True, client=client)
    assert result.score is None
    item = [p for p in result.problems if p.code == "S008"]
    assert item and item[0].line == 12 and item[0].message.startswith("part-01.parquet: ")
    repeat = [p for p in result.problems if p.code == "S010"]
    assert len(repeat) == 2 and repeat[0].severity == "error"
    assert {"part-02.csv: row '0_orders' repeats part-00.csv line 4 (each row may appear once)",
            "part-02.csv: row '100_carts' repeats part-01.parquet line 3 (each row may appear once)"} == {p.message for p in repeat}


def test_an_unreadable_parquet_part_means_no_score_and_names_the_part(case, tmp_path):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:400], rows[400:]], ["csv", "csv"])
    (directory / "part-02.parquet").write_bytes(b"not parquet at all")
    (directory / "_SUCCESS").write_text("")
    result = score_dataset(directory, truth_path)
    assert result.score is None
    assert [p.message.split(":")[0] for p in result.problems if p.code == "S027"] == ["part-02.parquet"]


def test_a_partition_that_raises_on_every_attempt_is_one_line_and_no_score(client, case, tmp_path):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:300], rows[300:]], ["csv", "csv"])

    def task(frame, index, *args):
        if index == 1:
            raise ValueError("the parser met something odd\nsecond line of detail")
        return score_partition(frame, index, *args)

    result = score_dataset(directory, truth_path, client=client, retries=0, partitions=2, task=task)
    assert result.score is None
    assert [p.message for p in result.problems if p.code == "S027"] == [
        "the partitioned scoring could not finish on any attempt: ValueError: the parser met something odd"]


# -- the command line ------------------------------------------------------------------------------

def test_cli_grade_against_a_running_scheduler(client, case, tmp_path, capsys):
    truth_path, rows, _ = case
    files = submissions(tmp_path, rows)
    out = tmp_path / "results.jsonl"
    code = main(["grade", *map(str, files), "--truth", str(truth_path), "--scheduler", client.scheduler.address, "--out", str(out)])
    assert code == 1  # some files are invalid
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["file"] for r in lines) == sorted(map(str, files))
    for record in lines:
        assert {key: record[key] for key in RECORD_KEYS} == json.loads(json.dumps(alone(record["file"], truth_path)))
    captured = capsys.readouterr()
    graded_on = len({worker for record in lines for worker in record["workers"]})  # those that ran a task: 1 or 2
    assert f"{lines[0]['file']}" in captured.out and f"graded 5 submissions on {graded_on} worker" in captured.err
    assert f"scorer: dashboard: {client.dashboard_link}" in captured.err  # the fixture's scheduler serves one
    assert "leaderboard: 1 of 5 submissions scored" in captured.out and "not scored: 4" in captured.out
    assert main(["grade", str(files[0]), "--truth", str(truth_path), "--scheduler", client.scheduler.address]) == 0


def test_cli_score_directory_on_dask_equals_the_concatenated_file(client, case, tmp_path, capsys):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:500], rows[500:]], ["parquet", "csv"])
    write(tmp_path / "all.csv", rows)
    assert main(["score", str(tmp_path / "all.csv"), "--truth", str(truth_path), "--format", "json"]) == 0
    single = json.loads(capsys.readouterr().out)
    assert main(["score", str(directory), "--truth", str(truth_path), "--engine", "dask", "--scheduler",
                 client.scheduler.address, "--format", "json"]) == 0
    partitioned = json.loads(capsys.readouterr().out)
    assert (partitioned["score"], partitioned["metrics"], partitioned["counts"]) == (single["score"], single["metrics"], single["counts"])


def test_cli_usage_errors_exit_2_with_a_message(case, tmp_path, capsys):
    truth_path, rows, _ = case
    (tmp_path / "empty").mkdir()
    assert main(["score", str(tmp_path / "empty"), "--truth", str(truth_path), "--engine", "dask"]) == 2
    assert "no part files" in capsys.readouterr().err
    assert main(["grade", "x.csv", "--truth", str(tmp_path / "nope.jsonl"), "--workers", "1"]) == 2
    assert "truth file not found" in capsys.readouterr().err
    assert main(["grade", "x.csv", "--truth", str(truth_path), "--scheduler", "tcp://a", "--workers", "2"]) == 2
    capsys.readouterr()
    assert main(["score", str(tmp_path / "empty"), "--truth", str(truth_path), "--competition", "ratings", "--engine", "dask"]) == 2
    assert "rmse" in capsys.readouterr().err  # said before a cluster starts: its total is no ratio of row sums


def test_a_scheduler_that_is_not_there_is_a_usage_error():
    from scorer.dask.cluster import client_for
    from scorer.errors import UsageError

    with pytest.raises(UsageError, match="cannot connect to the Dask scheduler at tcp://127.0.0.1:9"):
        with client_for("tcp://127.0.0.1:9", connect_timeout=1):
            pass


def test_without_dask_the_commands_say_how_to_install_it(case, tmp_path, monkeypatch, capsys):
    truth_path, rows, _ = case
    write_parts(tmp_path / "parts", [rows], ["csv"])
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    assert main(["grade", "x.csv", "--truth", str(truth_path)]) == 2
    assert "pip install 'recsys-scorer[dask]'" in capsys.readouterr().err
    assert main(["score", str(tmp_path / "parts"), "--truth", str(truth_path), "--engine", "dask"]) == 2
    assert "pip install 'recsys-scorer[dask]'" in capsys.readouterr().err
    assert main(["score", str(tmp_path / "parts"), "--truth", str(truth_path)]) == 0  # the local engine needs no Dask


def test_the_command_line_does_not_import_dask_until_asked():
    import subprocess

    code = "import sys; from scorer.cli.main import build_parser; build_parser(); print('distributed' in sys.modules or 'dask' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
