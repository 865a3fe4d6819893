"""Issue 25, memory and time limits: files written whole, temporaries of killed writers swept, one deadline a
submission, Parquet parts read under the limits, problems kept in bounded memory."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import full_rows, run_cli, submission_text, truth_lines
from scorer import private_files
from scorer.adapters import codabench
from scorer.errors import UsageError
from scorer.truth.load import load_truth

TRUTH = {1: {"clicks": 5, "carts": [6, 7], "orders": [8]}, 2: {"clicks": 9}}


run = run_cli


# -- Codabench's scores are written whole or not at all ---------------------------------------------------------
def test_a_failed_scores_write_leaves_no_empty_scores_json(tmp_path, monkeypatch):
    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(codabench.os, "fsync", full_disk)
    with pytest.raises(UsageError, match="No space left"):
        codabench.write_scores(tmp_path / "output", {"score": 0.5, "clicks": 0.25})
    assert list((tmp_path / "output").iterdir()) == []  # no scores.json, empty or not, and no temporary file


def test_scores_json_replaces_an_older_one_whole(tmp_path):
    output = tmp_path / "output"
    output.mkdir()
    (output / "scores.json").write_text("old")
    codabench.write_scores(output, {"score": 0.5})
    assert json.loads((output / "scores.json").read_text()) == {"score": 0.5}
    assert sorted(path.name for path in output.iterdir()) == ["scores.json", "scores.txt"]


# -- temporaries of killed cache writers ------------------------------------------------------------------------
def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _aged(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_temporaries_of_dead_writers_are_swept_at_the_next_write(tmp_path):
    folder_path = tmp_path / "cache"
    dead, alive = _dead_pid(), os.getpid()
    names = {
        "dead_old": f".a.truth.npz.{dead}.0123abcd.tmp",  # swept: its writer is gone
        "dead_new": f".b.truth.npz.{dead}.0123abcd.tmp",  # kept: may be another machine's writer, give it a minute
        "alive_old": f".c.truth.npz.{alive}.0123abcd.tmp",  # kept: its writer still runs
        "abandoned": f".d.truth.npz.{alive}.0123abcd.tmp",  # swept: a day old, whoever has that pid now
        "other": "notes.tmp",  # kept: not write()'s naming
    }
    with private_files.opened_folder(folder_path, create=True) as folder:
        for key, name in names.items():
            (folder_path / name).write_bytes(b"half a file")
        _aged(folder_path / names["dead_old"], 120)
        _aged(folder_path / names["alive_old"], 120)
        _aged(folder_path / names["abandoned"], 2 * 86_400)
        private_files.write(folder, "entry", b"whole")
    left = {path.name for path in folder_path.iterdir()}
    assert left == {"entry", names["dead_new"], names["alive_old"], names["other"]}


def test_a_cache_write_killed_midway_is_swept_by_the_next_load(tmp_path, monkeypatch):
    """kill -9 during a truth-cache write: the next load that writes the cache removes the temporary file."""
    cache = tmp_path / "cache"
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from scorer import private_files\n"
        "from scorer.truth.load import load_truth\n"
        "def slow(folder, name, data):\n"
        "    fd = private_files.os.open(f'.{name}.{private_files.os.getpid()}.0badf00d.tmp', private_files.os.O_WRONLY | private_files.os.O_CREAT, 0o600, dir_fd=folder)\n"
        "    private_files.os.write(fd, b'half')\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "private_files.write = slow\n"
        f"load_truth({str(truth)!r}, ('clicks', 'carts', 'orders'))\n")],
        env={**os.environ, "SCORER_CACHE_DIR": str(cache)}, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "writing"
    finally:
        child.kill()
        child.wait()
    stale = [path for path in cache.iterdir() if path.name.endswith(".tmp")]
    assert len(stale) == 1
    _aged(stale[0], 120)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    load_truth(truth, ("clicks", "carts", "orders"))
    assert not [path for path in cache.iterdir() if path.name.endswith(".tmp")]
    assert any(path.name.endswith(".truth.npz") for path in cache.iterdir())


# -- --max-per-code 0: the counts, no examples --------------------------------------------------------------------
@pytest.fixture
def repeated_items(tmp_path):
    rows = full_rows(TRUTH, {(1, "clicks"): [5, 5], (1, "carts"): [6, 6, 7], (2, "clicks"): [9, 9]})
    path = tmp_path / "sub.csv"
    path.write_text(submission_text(rows))
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    return path, truth


def test_max_per_code_zero_shows_the_counts_and_no_example(repeated_items):
    submission, truth = repeated_items
    code, out, _ = run("score", submission, "--truth", truth, "--max-per-code", 0)
    assert code == 0 and "score  " in out
    assert "S014 warning: duplicate items in a row — 3 in all" in out
    assert "line " not in out and "    | " not in out
    code, out, _ = run("score", submission, "--truth", truth, "--max-per-code", 0, "--format", "json")
    result = json.loads(out)
    assert result["problems"] == [] and result["problem_counts"][0]["count"] == 3 and result["problem_counts"][0]["shown"] == 0


def test_max_per_code_zero_still_judges_errors(repeated_items, tmp_path):
    submission, truth = repeated_items
    bad = tmp_path / "bad.csv"
    bad.write_text(submission.read_text().replace("1_carts", "1_cart"))
    code, out, _ = run("validate", bad, "--truth", truth, "--max-per-code", 0)
    assert code == 1 and out.startswith("INVALID") and "S005 error: unknown type — 1 in all" in out
    code, out, _ = run("score", bad, "--truth", truth, "--max-per-code", 0, "--strict")
    assert code == 1 and "score  none" in out
    assert run("validate", bad, "--max-per-code", -1)[0] == 2


# -- Parquet parts: the limits hold while converting; one deadline a submission --------------------------------
def _competition(**limits):
    import dataclasses

    from scorer.spec.competition import load_competition

    otto = load_competition("otto")
    return dataclasses.replace(otto, limits=dataclasses.replace(otto.limits, **limits))


def _parquet(path, ids, labels, row_group_size=None):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"session_type": pa.array(ids, pa.string()), "labels": labels}), path, row_group_size=row_group_size)
    return path


def test_a_huge_value_is_refused_from_the_row_groups_sizes_before_it_is_read(tmp_path, monkeypatch):
    from scorer.dask import parts
    from scorer.engine.reader import LimitExceeded
    from scorer.spec.competition import Limits

    part = _parquet(tmp_path / "part.parquet", ["1_clicks", "x" * 3_000_000, "2_clicks"], ["5", "6", "9"])
    monkeypatch.setattr(parts, "_check_lengths", lambda *a: pytest.fail("the batch was read"))
    with pytest.raises(LimitExceeded) as stop:
        parts.parquet_to_csv(part, tmp_path / "out.csv", limits=Limits(max_line_bytes=65_536))
    assert stop.value.number == 22 and stop.value.line == 2 and "row group 1" in stop.value.words["ending"]
    assert not (tmp_path / "out.csv").exists()  # nothing converted


def test_a_long_value_among_many_short_ones_is_refused_before_its_text_is_built(tmp_path):
    from scorer.dask import parts
    from scorer.engine.reader import LimitExceeded
    from scorer.spec.competition import Limits

    ids = [f"{i}_clicks" for i in range(5000)]
    labels = ["1"] * 5000
    labels[4321] = "7 " * 60_000  # 120,000 bytes: over the line limit, not over the row group's average
    part = _parquet(tmp_path / "part.parquet", ids, labels)
    with pytest.raises(LimitExceeded) as stop:
        parts.parquet_to_csv(part, tmp_path / "out.csv", limits=Limits(max_line_bytes=65_536))
    assert stop.value.number == 22 and stop.value.line == 4321 + 2 and "'labels'" in stop.value.words["ending"]


def test_converting_stops_at_the_deadline_and_the_text_limit(tmp_path):
    from scorer.dask import parts
    from scorer.engine.reader import Deadline, LimitExceeded
    from scorer.spec.competition import Limits

    part = _parquet(tmp_path / "part.parquet", [f"{i}_clicks" for i in range(200_000)], ["5 6 7"] * 200_000)
    with pytest.raises(LimitExceeded) as stop:
        parts.parquet_to_csv(part, tmp_path / "out.csv", deadline=Deadline(1.0, time.monotonic() - 5))  # already over
    assert stop.value.number == 28 and (tmp_path / "out.csv").read_text() == "session_type,labels\n"
    with pytest.raises(LimitExceeded) as stop:
        parts.parquet_to_csv(part, tmp_path / "out.csv", limits=Limits(max_decompressed_bytes=1_000_000))
    assert stop.value.number == 24 and (tmp_path / "out.csv").stat().st_size < 1_000_000 + 100
    with pytest.raises(LimitExceeded) as stop:
        parts.parquet_to_csv(part, tmp_path / "out.csv", limits=Limits(max_file_bytes=100))
    assert stop.value.number == 23


def test_one_deadline_for_every_part_of_a_submission(tmp_path, monkeypatch):
    from scorer.dask import dataset

    directory = tmp_path / "parts"
    directory.mkdir()
    rows = full_rows(TRUTH, {})
    (directory / "part-0.csv").write_text(submission_text(rows[:3]))
    _parquet(directory / "part-1.parquet", [f"{s}_{t}" for s, t, _ in rows[3:]], [""] * len(rows[3:]))
    (directory / "part-2.csv").write_text(submission_text(rows[3:]))
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    seen = []

    def recording(*args):
        seen.append(args[-1])
        return score_part(*args)

    from scorer.dask.partitioned import score_part

    monkeypatch.setattr(dataset, "score_part", recording)
    result = dataset.score_dataset(directory, truth, _competition())
    assert result.score is not None and len(seen) == 3 and seen[0] is not None and all(d is seen[0] for d in seen)
    seen.clear()
    result = dataset.score_dataset(directory, truth, _competition(max_seconds=1e-9))
    assert result.score is None and result.report.counts["S028"] == 1 and len(seen) == 1  # stopped at the first part


def test_a_parquet_part_over_the_time_limit_is_named_with_its_code(tmp_path):
    directory = tmp_path / "parts"
    directory.mkdir()
    _parquet(directory / "part-0.parquet", ["1_clicks"] * 10, ["5"] * 10)
    (directory / "part-1.parquet").write_bytes(_parquet(tmp_path / "big.parquet", ["x" * 200_000, "1_clicks"], ["1", "2"], 1).read_bytes())
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    code, out, _ = run("score", directory, "--truth", truth, "--strict")
    assert code == 1 and "S022 error" in out and "part-1.parquet: line of" in out and "line 2" in out


# -- repeated rows without truth: found in bounded memory ------------------------------------------------------
def _keys(sessions, kinds, n_types=3, chunk=1000):
    import numpy as np

    from scorer.engine.row_keys import RowKeys

    keys = RowKeys(n_types)
    for at in range(0, len(sessions), chunk):
        piece = slice(at, at + chunk)
        keys.add(np.asarray(sessions[piece], np.int64), np.asarray(kinds[piece], np.int64), np.arange(at, at + len(sessions[piece])) + 2, 0)
    return keys


def _slow_repeats(sessions, kinds, shown):
    seen, found = {}, []
    for row, key in enumerate(zip(sessions, kinds)):
        if key in seen:
            found.append((int(key[0]), int(key[1]), row + 2, seen[key]))
        seen[key] = row + 2
    return len(found), found[:shown]


@pytest.mark.parametrize("negative", [False, True])
def test_repeats_are_those_of_a_plain_loop_across_chunks(monkeypatch, negative):
    import numpy as np

    from scorer.engine import row_keys

    monkeypatch.setattr(row_keys, "REPEAT_CHUNK", 7)
    rng = np.random.default_rng(5)
    sessions = rng.integers(-3 if negative else 0, 40, 3000).tolist()
    kinds = rng.integers(0, 3, 3000).tolist()
    for shown in (0, 1, 25, 10_000):
        assert _keys(sessions, kinds).repeats(shown) == _slow_repeats(sessions, kinds, shown)


def test_finding_repeats_takes_under_32_bytes_a_row():
    """validate --max-per-code 10000 on 768 MB of short rows reached 4.45 GB: the keys were unpacked into three
    arrays and sorted whole; now the keys, their order and the sort's buffer."""
    import tracemalloc

    import numpy as np

    n = 2_000_000
    rng = np.random.default_rng(1)
    keys = _keys(rng.integers(0, n // 2, n), rng.integers(0, 3, n), chunk=100_000)
    tracemalloc.start()
    try:
        total, shown = keys.repeats(10_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total > n // 4 and len(shown) == 10_000
    assert peak < 32 * n, f"{peak / n:.1f} bytes a row"  # sorting the three arrays whole took 50


# -- the long shape (Airbnb): predictions kept compactly, ids scored where their rows lie together ----------------
COUNTRIES = ["NDF", "US", "FR", "IT", "GB", "ES", "CA", "DE"]


def _long_files(folder, n_ids: int, scored_ids: int, scatter: bool = False, extra: str = ""):
    """Truth of n_ids ids; a submission with 5 rows for each of the first scored_ids (an id's rows together, or
    with scatter its rows dealt round-robin over the file)."""
    import numpy as np

    rng = np.random.default_rng(3)
    ids = [f"u{i:07d}" for i in range(n_ids)]
    truth = folder / "truth.csv"
    truth.write_text("id,country\n" + "".join(f"{u},{COUNTRIES[i % 8]}\n" for i, u in enumerate(ids)))
    picks = [rng.permutation(8)[:5] for _ in range(scored_ids)]
    rows = [(rank, i) for i in range(scored_ids) for rank in range(5)]
    if scatter:
        rows.sort()
    lines = [f"{ids[i]},{COUNTRIES[picks[i][rank]]}\n" for rank, i in rows]
    submission = folder / "sub.csv"
    submission.write_text("id,country\n" + extra + "".join(lines))
    return submission, truth


def test_scattered_rows_of_an_id_score_as_grouped_ones(tmp_path):
    from scorer.api import score

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    grouped = _long_files(tmp_path / "a", 3000, 2500)
    scattered = _long_files(tmp_path / "b", 3000, 2500, scatter=True, extra="\n")  # a blank line: lines not consecutive
    first, second = (score(sub, truth, "airbnb") for sub, truth in (grouped, scattered))
    assert first.metrics == second.metrics and first.score is not None
    import numpy as np

    assert np.array_equal(first.slot_hits, second.slot_hits)
    assert np.all(second.slot_line[second.slot_line > 0] >= 3)  # the blank line 2 moved every row one line down


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_the_long_shape_keeps_about_12_bytes_a_prediction(tmp_path):
    """An Airbnb-shaped file of 199 MB reached 864 MB: every prediction was kept as three int64, then concatenated and
    sorted by id. Now 12 bytes (16 with gaps) kept, and ids whose rows lie together are scored with no copy."""
    import tracemalloc

    from scorer.api import score
    from scorer.truth.strings import read_string_truth

    peaks = []
    for n_lines in (500_000, 1_000_000):
        folder = tmp_path / str(n_lines)
        folder.mkdir()
        submission, truth_path = _long_files(folder, 200_000, n_lines // 5)
        truth = read_string_truth(truth_path, "long", "all")
        score(submission, truth, "airbnb", threads=1, block_bytes=1 << 20)  # compiled and warm
        tracemalloc.start()
        try:
            score(submission, truth, "airbnb", threads=1, block_bytes=1 << 20)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    per_line = (peaks[1] - peaks[0]) / 500_000
    assert per_line < 24, f"{per_line:.1f} bytes a prediction"  # the old way: about 60


# -- frames with text labels (what pl.read_csv gives): read a piece at a time --------------------------------------
def _text_table(n: int):
    import pyarrow as pa

    ids = pa.array([f"{12_899_779 + i // 3}_{('clicks', 'carts', 'orders')[i % 3]}" for i in range(n)])
    labels = pa.array([" ".join(str(1_000_000 + (i * 7 + j) % 999_983) for j in range(8)) for i in range(n)])
    return pa.table({"session_type": ids, "labels": labels})


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_a_text_frame_is_read_a_piece_at_a_time(tmp_path, monkeypatch):
    """The text was joined whole and copied into one buffer (OTTO size: +3.3 GB); now a piece of rows at a time, so
    the memory grows with the rows' own arrays only, not with the text."""
    import gc
    import tracemalloc

    from scorer.api import validate
    from scorer.engine import frame_pass

    monkeypatch.setattr(frame_pass, "TEXT_ROWS", 1 << 13)  # many pieces at both sizes: the same number in flight
    validate(_text_table(50_000))  # compiled and warm, several pieces on both threads
    peaks, sizes = [], []
    for n in (200_000, 400_000):
        table = _text_table(n)
        sizes.append(sum(column.nbytes for column in table.columns))
        runs = []
        for _ in range(2):  # the lower of two: a one-time allocation elsewhere in the process does not count
            gc.collect()
            tracemalloc.start()
            try:
                assert validate(table, max_per_code=5).valid
                runs.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
        peaks.append(min(runs))
    assert peaks[1] - peaks[0] < (sizes[1] - sizes[0]) / 2, (peaks, sizes)  # the whole copy grew as the text


def test_a_text_frame_scores_as_its_file(tmp_path):
    from scorer.api import score

    table = _text_table(200_000)
    ids, labels = (table.column(name).to_pylist() for name in ("session_type", "labels"))
    path = tmp_path / "sub.csv"
    path.write_text("session_type,labels\n" + "".join(f"{a},{b}\n" for a, b in zip(ids, labels)))
    truth = tmp_path / "truth.jsonl"
    truth.write_text("".join(json.dumps({"session": 12_899_779 + s, "labels": {"clicks": 1_000_007 + 21 * s, "orders": [1_000_000 + 21 * s]}})
                             + "\n" for s in range(0, 70_000, 3)))
    from_file, from_frame = score(path, truth), score(table, truth, threads=2)
    assert from_frame.score == from_file.score > 0 and from_frame.counts == from_file.counts


# -- line numbers: slot_line is int32 -----------------------------------------------------------------------------
@pytest.mark.parametrize("max_lines, refused", [(6, True), (7, False)])
def test_a_file_of_more_lines_than_slot_line_holds_is_refused_not_misnumbered(files, monkeypatch, max_lines, refused):
    from scorer.api import score
    from scorer.engine import file_pass
    from scorer.engine.problems import Code

    monkeypatch.setattr(file_pass, "MAX_LINES", max_lines)  # the header and 6 rows: 7 lines
    submission, truth = files(TRUTH, full_rows(TRUTH))
    result = score(submission, truth)
    assert (result.score is None) == refused
    assert (Code.FILE_TOO_LARGE.code in result.report.counts) == refused
    if refused:
        assert f"more than {max_lines:,} lines" in json.dumps(result.report.kept[Code.FILE_TOO_LARGE.code], default=str)
    else:
        assert int(result.slot_line.max()) == 7
