"""Partitioned scoring on a cluster (scorer.dask.shuffled): every shape, the truth split once, nothing of data size on
the client, and the figures of the concatenated parts to the last bit."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest

import scorer
from scorer.cli.main import main
from scorer.dask import truth_parts
from scorer.dask.dataset import score_dataset
from scorer.dask.shuffled import score_partition
from scorer.dask.statistics import merge
from scorer.spec.competition import load_competition
from test_dask import assert_same_figures, case, client, write, write_parts  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow
STRING_SHAPES = ["hm", "santander", "expedia", "outbrain", "instacart", "airbnb"]


def split_lines(source, directory, n_parts, seed):
    """The file's rows shuffled over n_parts CSV parts (each with the header); returns the concatenation's path."""
    header, *rows = source.read_text().splitlines()
    random.Random(seed).shuffle(rows)
    directory.mkdir()
    chunks = [rows[i::n_parts] for i in range(n_parts)]
    for index, chunk in enumerate(chunks):
        (directory / f"part-{index}.csv").write_text("\n".join([header, *chunk]) + "\n")
    whole = directory.parent / "all.csv"  # beside the parts' folder
    whole.write_text("\n".join([header, *[row for chunk in chunks for row in chunk]]) + "\n")
    return whole


@pytest.mark.parametrize("name", STRING_SHAPES)
@pytest.mark.parametrize("strict", [False, True])
def test_string_shapes_partition_too(client, tmp_path, name, strict):
    fixture = f"fixtures/{name}"
    whole = split_lines(Path(f"{fixture}/submission.csv"), tmp_path / "parts", 3, seed=len(name))
    single = scorer.score(whole, f"{fixture}/truth.csv", name, strict=strict)
    for partitions in (1, 4):
        result = score_dataset(tmp_path / "parts", f"{fixture}/truth.csv", name, client=client, strict=strict, partitions=partitions,
                               truth_parts=str(tmp_path / f"truth-{partitions}"))
        assert_same_figures(result, single)


def test_a_total_that_is_no_ratio_of_row_sums_is_refused(client, tmp_path, capsys):
    split_lines(Path("fixtures/ratings/submission.csv"), tmp_path / "parts", 2, 0)
    code = main(["score", str(tmp_path / "parts"), "--truth", "fixtures/ratings/truth.csv", "--competition", "ratings", "--engine", "dask",
                 "--scheduler", client.scheduler.address])
    assert code == 2 and "rmse" in capsys.readouterr().err


def test_the_client_never_loads_the_truth_and_the_split_truth_is_reused(client, case, tmp_path, monkeypatch):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:400], rows[400:]], ["csv", "parquet"])
    single = scorer.score(write(tmp_path / "all.csv", rows), truth_path)

    def refuse(*args, **kwargs):
        raise AssertionError("the client loaded the truth")

    monkeypatch.setattr("scorer.api.resolve_truth", refuse)
    monkeypatch.setattr("scorer.api.load_truth", refuse)
    folder = tmp_path / "truth-parts"
    assert_same_figures(score_dataset(directory, truth_path, client=client, partitions=5, truth_parts=str(folder)), single)
    [dataset] = list(folder.iterdir())
    made = {path.name: path.stat().st_mtime_ns for path in dataset.iterdir()}
    assert len([name for name in made if name.endswith(".truth.npz")]) == 5
    assert_same_figures(score_dataset(directory, truth_path, client=client, partitions=5, truth_parts=str(folder)), single)
    assert {path.name: path.stat().st_mtime_ns for path in dataset.iterdir()} == made  # found by its content key, not made again


def test_the_partitions_hold_every_session_once(case):
    truth_path, _, _ = case
    truth = scorer.load_truth(truth_path, ("clicks", "carts", "orders"))
    pieces = truth_parts.split_truth(truth, 7)
    assert sorted(np.concatenate([piece.sessions for piece in pieces]).tolist()) == truth.sessions.tolist()
    for piece in pieces:
        for session in piece.sessions[:20].tolist():
            for kind in truth.types:
                assert piece.labels(session, kind) == truth.labels(session, kind)


def test_merging_statistics_in_any_tree_gives_the_same_result(case, tmp_path):
    """Statistics of partitions merged left to right, right to left and as a balanced tree: the same Result."""
    import pandas as pd
    import pyarrow as pa

    from scorer.dask.shuffled import ORDER, SESSION, _with_partitions
    from scorer.dask.statistics import to_result

    truth_path, rows, _ = case
    otto = load_competition("otto")
    folder = truth_parts.build(str(truth_path), otto, 6, str(tmp_path / "parts"))
    text = write(tmp_path / "all.csv", rows + [(999, "clicks", [1]), rows[5]]).read_text().splitlines()[1:]
    ids, labels = zip(*(line.split(",", 1) for line in text))
    table = _with_partitions(pa.table({"session_type": pa.array(ids, pa.large_string()), "labels": pa.array(labels, pa.large_string())}),
                             0, otto, 6)
    frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    stats = [score_partition(frame[frame["_partition"] == p][["session_type", "labels", ORDER, SESSION]], p, folder, otto, ["all.csv"],
                             False, 20) for p in range(6)]
    left = stats[0]
    for more in stats[1:]:
        left = merge(left, more, 20)
    right = stats[-1]
    for more in reversed(stats[:-1]):
        right = merge(more, right, 20)
    tree = merge(merge(merge(stats[0], stats[1], 20), stats[2], 20), merge(stats[3], merge(stats[4], stats[5], 20), 20), 20)
    single = scorer.score(tmp_path / "all.csv", truth_path)
    for merged in (left, right, tree):
        result = to_result(merged, otto, False, 20, "all.csv", 0.0)
        assert_same_figures(result, single)
        assert [p.message for p in result.problems] == [p.message for p in to_result(left, otto, False, 20, "all.csv", 0.0).problems]
    assert os.path.isdir(folder)


def test_problems_after_a_skipped_line_name_their_own_line(client, case, tmp_path):
    truth_path, rows, _ = case
    directory = write_parts(tmp_path / "parts", [rows[:400], rows[400:]], ["csv", "csv"])
    part = directory / "part-01.csv"
    header, first, *rest = part.read_text().splitlines()
    part.write_text("\n".join([header, first, "2_clicks,7,8", "5_carts,1 x 3", *rest]) + "\n")
    result = score_dataset(directory, truth_path, client=client, partitions=3)
    assert result.score is None or result.problems
    fields = [p for p in result.problems if p.code == "S003"]
    items = [p for p in result.problems if p.code == "S008"]
    assert [(p.line, p.message.split(":")[0]) for p in fields] == [(3, "part-01.csv")]
    assert [(p.line, p.message.split(":")[0]) for p in items] == [(4, "part-01.csv")]
