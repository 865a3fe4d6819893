"""The streamed joint bootstrap (scorer.analytics.leaderboard.streamed_bootstrap, `scorer leaderboard --engine stream | dask`): the
kernel against the weights' matrix product, and every figure of the leaderboard against the in-memory path's (the same
bits for integer figures, float32 block error for fractional ones), in batches, in lanes, on Dask."""

from __future__ import annotations

import json

import numpy as np
import pytest

import scorer
from conftest import run_main, truth_lines
from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.leaderboard import streamed_bootstrap
from scorer.analytics.leaderboard.board import JointSums, collect, leaderboard, sides_of
from scorer.analytics.leaderboard.joint_bootstrap import BLOCK, THRESHOLDS, resample_weights
from scorer.analytics.leaderboard.streamed_bootstrap import Plan, Reduced, StreamedColumns, reduce_tables, truth_table
from scorer.analytics.split import hash_split
from scorer.errors import UsageError
from scorer.kernels import door
from scorer.spec.competition import load_competition
from test_leaderboard import make_submission, make_truth

N_SESSIONS = 9_000  # three blocks of BLOCK sessions: lanes and block order matter


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """A truth of 9,000 sessions, six submissions (two of equal strength), and an OTTO config scored by ndcg@20."""
    folder = tmp_path_factory.mktemp("streamed")
    rng = np.random.default_rng(8)
    truth = make_truth(rng, N_SESSIONS)
    truth_path = folder / "truth.jsonl"
    truth_path.write_text(truth_lines(truth))
    paths = []
    for k, strength in enumerate((0.7, 0.5, 0.48, 0.2, 0.5, 0.49)):
        path = folder / f"sub{k}.csv"
        path.write_text(make_submission(rng, truth, strength))
        paths.append(path)
    otto = (scorer.__file__.rsplit("/", 1)[0] + "/spec/configs/otto.toml")
    config = folder / "otto_ndcg.toml"
    config.write_text(open(otto).read().replace('metric = "recall@20"', 'metric = "ndcg@20"').replace('"ndcg@20"]', '"recall@20"]'))
    return truth_path, paths, config


def results_of(truth_path, paths, config=None):
    competition = load_competition(path=config) if config else "otto"
    return [(str(p), scorer.score(p, truth_path, competition, strict=True)) for p in paths]


def split_of(split: bool):
    return hash_split(np.arange(N_SESSIONS, dtype=np.int64), 0.3, seed=1) if split else None


def both(results, split, n=200, seed=3, batch=1, lanes=2, mde=True):
    """(in-memory board, streamed board) of the same results."""
    columns, names, _ = collect(iter(results), len(results))
    memory = leaderboard(columns, names, n=n, seed=seed, split=split, plan_mde=mde, threads=lanes)
    plan = Plan.make(sides_of(split, N_SESSIONS), n, seed, lanes, ("private" if split is not None else "all") if mde else None)
    streamed, names, _ = collect(iter(results), open_columns=lambda first: StreamedColumns(first, plan, batch=batch))
    return memory, leaderboard(streamed, names, split=split, plan_mde=mde)


# -- the kernel ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fractional", [False, True])
def test_block_sums_are_the_weights_times_the_columns(fractional):
    """resampled_block_sums = session_poisson_weights @ columns over any rows (a subset, odd and even sessions), zero
    sessions skipped; integer columns to the bit, fractional ones to float32's rounding of a block's sum."""
    rng = np.random.default_rng(2)
    values = (rng.random((5000, 4)) < 0.3) * rng.integers(1, 4, (5000, 4)).astype(np.float32)
    if fractional:
        values = values * rng.random((5000, 4)).astype(np.float32)
    values[rng.random(5000) < 0.5] = 0
    rows = np.flatnonzero(rng.random(5000) < 0.7).astype(np.int64)[:BLOCK]
    seeds = door.kernel("stream_seeds")(np.uint64(7), 300)
    out = np.zeros((300, 4), np.float32)
    door.kernel("resampled_block_sums")(seeds, rows, values, THRESHOLDS, out)
    expected = resample_weights(seeds, rows) @ values[rows]
    if fractional:
        np.testing.assert_allclose(out, expected, rtol=2e-5)
    else:
        assert np.array_equal(out, expected)
    assert resample_weights(seeds, rows).max() >= 7  # the draws past the first seven comparisons are exercised


def test_a_columns_sums_do_not_depend_on_the_other_columns():
    rng = np.random.default_rng(3)
    values = (rng.random((3000, 6)) * (rng.random((3000, 6)) < 0.4)).astype(np.float32)
    rows = np.arange(3000, dtype=np.int64)
    seeds = door.kernel("stream_seeds")(np.uint64(1), 50)
    together = np.zeros((50, 6), np.float32)
    door.kernel("resampled_block_sums")(seeds, rows, values, THRESHOLDS, together)
    for c in range(6):
        alone = np.zeros((50, 1), np.float32)
        door.kernel("resampled_block_sums")(seeds, rows, np.ascontiguousarray(values[:, c:c + 1]), THRESHOLDS, alone)
        assert np.array_equal(alone[:, 0], together[:, c])


# -- the same figures as in memory ------------------------------------------------------------------------------------


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("batch", [1, 4])
def test_streamed_board_is_the_in_memory_board_to_the_bit_for_hits(boards, split, batch):
    truth_path, paths, _ = boards
    memory, streamed = both(results_of(truth_path, paths), split_of(split), batch=batch)
    assert streamed == memory
    planned = sides_of(split_of(split), N_SESSIONS)["private" if split else "all"]
    assert len({s["tier"] for s in memory["submissions"]}) > 1 and memory["mde"]["variance_from"] == len(planned)


def test_streamed_board_is_the_in_memory_board_within_float32_block_error_for_ndcg(boards):
    """ndcg@20's per-session figures are fractions: each float32 block sum is added in another order (session order,
    not BLAS's), so scores agree to about 1e-7 relative and every rank, interval, tier and adjusted p-value is the same."""
    truth_path, paths, config = boards
    memory, streamed = both(results_of(truth_path, paths, config), split_of(True))
    assert memory["metric"] == "ndcg@20"
    for a, b in zip(memory["submissions"], streamed["submissions"]):
        assert a["name"] == b["name"] and a["rank"] == b["rank"] and a["tier"] == b["tier"]
        assert (a["rank_low"], a["rank_high"]) == (b["rank_low"], b["rank_high"])
        assert a["score"] == b["score"]  # the observed sums are the same float64 sums of the same float32 values
        for key in ("score_low", "score_high"):
            assert b[key] == pytest.approx(a[key], rel=1e-6)
        assert b["p_first"] == a["p_first"] and b["rank_change"] == a["rank_change"]
    for a, b in zip(memory["pairs"], streamed["pairs"]):
        assert (a["a"], a["b"], a["significant"]) == (b["a"], b["b"], b["significant"])
        assert b["p_value"] == pytest.approx(a["p_value"], rel=1e-4, abs=1e-12)
        assert b["p_adjusted"] == pytest.approx(a["p_adjusted"], rel=1e-4, abs=1e-12)


def test_lanes_fix_the_arithmetic_and_threads_do_not(boards):
    truth_path, paths, _ = boards
    results = results_of(truth_path, paths, None)
    tables = [SessionTable.from_result(r) for _, r in results]
    plan = Plan.make(sides_of(None, N_SESSIONS), 50, 4, lanes=3)
    one = reduce_tables(tables, plan, threads=1)
    three = reduce_tables(tables, plan, threads=3)
    assert np.array_equal(one.resampled["all"], three.resampled["all"])
    apart = [reduce_tables([t], plan, threads=1) for t in tables]
    assert np.array_equal(np.concatenate([r.resampled["all"] for r in apart], axis=1), one.resampled["all"])


def test_a_reduction_does_not_grow_with_the_sessions(boards):
    truth_path, paths, _ = boards
    table = SessionTable.from_result(results_of(truth_path, paths[:1])[0][1])
    for rows in (N_SESSIONS // 9, N_SESSIONS):
        small = SessionTable(table.types, table.metrics, table.weights, table.values[:rows], table.sizes[:rows])
        reduced = reduce_tables([small], Plan.make(sides_of(split_of(False), rows), 100, 0))
        assert reduced.resampled["all"].shape == (100, 3) and reduced.observed["all"].shape == (3,) and reduced.sample is None


def test_mde_from_a_sample_estimates_the_full_figure(boards, monkeypatch):
    """With more planning sessions than MDE_SAMPLE, the per-session variance comes from a hashed sample of that size,
    the same sessions for every submission: the MDE is close to the one from every session, and says its sample."""
    truth_path, paths, _ = boards
    results = results_of(truth_path, paths)
    monkeypatch.setattr(streamed_bootstrap, "MDE_SAMPLE", 3000)
    memory, streamed = both(results, None, n=20)
    assert memory["mde"]["variance_from"] == N_SESSIONS and streamed["mde"]["variance_from"] == 3000
    for a, b in zip(memory["mde"]["pairs"], streamed["mde"]["pairs"]):
        assert b["mde"] == pytest.approx(a["mde"], rel=0.1) and b["mde"] != a["mde"]
    assert {k: v for k, v in streamed.items() if k != "mde"} == {k: v for k, v in memory.items() if k != "mde"}


def test_submissions_of_another_truth_are_refused(boards):
    truth_path, paths, _ = boards
    table = SessionTable.from_result(results_of(truth_path, paths[:1])[0][1])
    plan = Plan.make(sides_of(None, N_SESSIONS), 10, 0)
    columns = StreamedColumns(table, plan)
    other = SessionTable(table.types, table.metrics, table.weights, table.values, table.sizes + 1)
    with pytest.raises(UsageError, match="same truth"):
        columns.add(other)
    with pytest.raises(UsageError, match="same truth"):
        columns.add_reduced(Reduced({}, {}, None, "another"))


def test_the_truths_table_gives_the_denominators_of_a_scored_file(boards):
    truth_path, paths, _ = boards
    result = results_of(truth_path, paths[:1])[0][1]
    base = truth_table(result.truth, load_competition("otto"))
    table = SessionTable.from_result(result)
    assert streamed_bootstrap.truth_digest(base) == streamed_bootstrap.truth_digest(table)
    scored = [(t, 0) for t in range(3)]
    assert np.array_equal(base.parts(base.values, base.sizes, scored)[1], table.parts(table.values, table.sizes, scored)[1])


def test_joint_sums_of_either_path_lay_out_the_same_columns(boards):
    truth_path, paths, _ = boards
    results = results_of(truth_path, paths[:3])
    columns, _, _ = collect(iter(results), 3)
    memory = JointSums.in_memory(columns, None, 30, 5, 2)
    plan = Plan.make(sides_of(None, N_SESSIONS), 30, 5, 2)
    streamed = JointSums.streamed(collect(iter(results), open_columns=lambda first: StreamedColumns(first, plan))[0])
    assert np.array_equal(memory.resampled["all"], streamed.resampled["all"])
    assert np.array_equal(memory.observed["all"], streamed.observed["all"])


# -- the command ---------------------------------------------------------------------------------------------------


def board_json(*argv) -> dict:
    code, out, err = run_main("leaderboard", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_command_engines_give_the_same_board(boards):
    truth_path, paths, _ = boards
    common = [*paths, "--truth", truth_path, "--bootstrap", 100, "--split", "public=0.3", "--mde"]
    assert board_json(*common, "--engine", "memory") == board_json(*common) == board_json(*common, "--engine", "stream", "--threads", 2)


def test_command_cluster_options_need_the_dask_engine(boards, capsys):
    truth_path, paths, _ = boards
    code, _, err = run_main("leaderboard", *paths, "--truth", truth_path, "--workers", 2)
    assert code == 2 and "--engine dask" in err


@pytest.mark.slow
def test_dask_engine_gives_the_streamed_board_and_lists_what_it_cannot_rank(boards, tmp_path):
    truth_path, paths, _ = boards
    bad = tmp_path / "bad.csv"
    bad.write_text("session_type,labels\n1_clicks,x\n")
    common = [*paths, bad, "--truth", truth_path, "--bootstrap", 100, "--split", "public=0.3", "--mde", "--format", "json"]
    code, out, err = run_main("leaderboard", *common, "--engine", "dask", "--workers", 2)
    local_code, local_out, _ = run_main("leaderboard", *common)
    assert code == local_code == 1, err
    board, local = json.loads(out), json.loads(local_out)
    assert board == local
    assert [u["name"] for u in board["unranked"]] == [str(bad)]


def test_the_docs_say_what_holds_between_the_engines():
    """docs/analytics.md's list of what holds between the engines names the sample of --mde and the block of the float32
    sums as the code has them, and no longer claims "the same figures" or float32's 1e-7 for the interval ends."""
    from pathlib import Path

    from scorer.analytics.leaderboard.joint_bootstrap import BLOCK

    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "analytics.md").read_text().split())
    assert f"sample of {streamed_bootstrap.MDE_SAMPLE:,} of them" in text and f"up to {streamed_bootstrap.MDE_SAMPLE:,} planning sessions" in text
    assert f"block of {BLOCK:,} sessions" in text and "variance_from" in text
    assert "The figures are the same" not in text and "relative error, about 1e-7, per block" not in text
