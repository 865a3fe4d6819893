"""The commands' jobs from Python (scorer.compare, leaderboard, explain, similar, ladder): each object's to_dict() is the
command's --format json output to the last bit and its to_text() the command's text, for the same inputs and seed, from
files and from frames; their tables, displays and refusals."""

from __future__ import annotations

import json

import polars as pl
import pytest

import scorer
from jobs_case import frame, make_case, same_as_command, still_clock


@pytest.fixture(autouse=True)
def _still(monkeypatch):
    still_clock(monkeypatch)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return make_case(tmp_path_factory.mktemp("jobs"))


def test_leaderboard_is_the_command(case):
    _, truth, paths = case
    board = scorer.leaderboard(paths, truth, bootstrap=200, seed=5, split="public=0.5", mde=True, top=2)
    same_as_command(board, "leaderboard", *paths, "--truth", truth, "--bootstrap", "200", "--seed", "5", "--split", "public=0.5",
                    "--mde", "--top", "2")
    frame_ = board.to_polars()
    assert frame_["name"].to_list() == [s["name"] for s in board.to_dict()["submissions"]] and frame_["rank"].to_list() == [1, 2, 3]
    assert {"clicks", "carts", "orders", "p_first", "public_rank"} <= set(frame_.columns)


@pytest.mark.parametrize("engine", ["stream", "memory"])
def test_a_leaderboard_of_named_frames_is_the_command_of_their_files(case, engine):
    _, truth, paths = case
    frames = {path: frame(path) for path in paths}  # named by their files: the same board
    board = scorer.leaderboard(frames, truth, bootstrap=100, seed=2, engine=engine)
    same_as_command(board, "leaderboard", *paths, "--truth", truth, "--bootstrap", "100", "--seed", "2", "--engine", engine)


def test_a_leaderboard_names_unnamed_frames_by_place(case):
    _, truth, paths = case
    board = scorer.leaderboard([frame(paths[2]), paths[0]], truth, bootstrap=0)
    assert sorted(s["name"] for s in board.to_dict()["submissions"]) == [paths[0], "frame 1 (polars DataFrame)"]


def test_leaderboard_from_records_and_without_a_ranked_file(case, tmp_path):
    _, truth, paths = case
    records = tmp_path / "results.jsonl"
    records.write_text("".join(json.dumps({"file": p, "score": s, "status": "scored", "metrics": {"clicks": {"recall@20": s}}}) + "\n"
                               for p, s in zip(paths, (0.3, 0.5, 0.1))))
    same_as_command(scorer.leaderboard(results=str(records)), "leaderboard", "--results", str(records))
    nothing = scorer.leaderboard([str(tmp_path / "missing.csv")], truth, bootstrap=10)
    assert not nothing.ranked and nothing.exit_code == 1 and "no submission could be ranked" in nothing.to_text()


def test_explain_is_the_command():
    submission, truth = "fixtures/explain/submission.csv", "fixtures/explain/truth.jsonl"
    explanation = scorer.explain(submission, truth, against="ranx,trec_eval", show=2, all=True)
    same_as_command(explanation, "explain", submission, "--truth", truth, "--against", "ranx,trec_eval", "--show", "2", "--all")
    assert {"convention", "metric", "type", "ours", "theirs", "gap"} <= set(explanation.to_pandas().columns)


def test_explain_of_the_impression_shape_takes_a_frame():
    submission, truth = "fixtures/mind/prediction.txt", "fixtures/mind/truth.txt"
    explanation = scorer.explain(submission, truth, competition="mind")
    same_as_command(explanation, "explain", submission, "--truth", truth, "--competition", "mind")
    lines = [line.split(" ", 1) for line in open(submission).read().splitlines()]
    ranks = pl.DataFrame({"impression_id": [int(i) for i, _ in lines], "ranks": [json.loads(r) for _, r in lines]})
    from_frame = scorer.explain(ranks, truth, competition="mind").to_dict()
    expected = explanation.to_dict()
    assert from_frame.pop("submission").startswith("<polars DataFrame") and expected.pop("submission") == submission
    assert from_frame["conventions"] == expected["conventions"] and from_frame["metrics"] == expected["metrics"]


def test_explain_of_an_id_type_frame_asks_for_its_file():
    with pytest.raises(scorer.UsageError, match="give its path, not a frame"):
        scorer.explain(frame("fixtures/explain/submission.csv"), "fixtures/explain/truth.jsonl")


def test_similar_is_the_command(case, tmp_path):
    _, _, paths = case
    teams = tmp_path / "teams.csv"
    teams.write_text("file,team\n" + "".join(f"{p},team {i % 2}\n" for i, p in enumerate(paths)))
    found = scorer.similar(paths, teams=str(teams), sample=64, top=5)
    same_as_command(found, "similar", *paths, "--teams", str(teams), "--sample", "64", "--top", "5")
    by_dict = scorer.similar(paths, teams={p: f"team {i % 2}" for i, p in enumerate(paths)}, sample=64, top=5)
    assert by_dict.to_dict() == found.to_dict()
    table = found.to_pandas()
    assert len(table) == len(found.to_dict()["flagged"]) + len(found.to_dict()["most_similar_others"]) > 0
    assert {"a", "b", "jaccard", "z", "flagged"} <= set(table.columns)


def test_ladder_is_the_command(case, tmp_path):
    _, truth, paths = case
    teams = tmp_path / "teams.csv"
    teams.write_text("file,team,time\n" + "".join(f"{p},team {i % 2},{1000 + i}\n" for i, p in enumerate(paths)))
    board = scorer.ladder(str(teams), truth=truth, split="public=0.5", seed=4)
    same_as_command(board, "ladder", "--teams", str(teams), "--truth", truth, "--split", "public=0.5", "--seed", "4")
    assert board.to_pandas()["team"].tolist() == [t["team"] for t in board.to_dict()["teams"]] and board.exit_code == 0


@pytest.mark.parametrize("call, words", [
    (lambda t, p: scorer.leaderboard({"a": {"not": "a frame"}}, t), "the submission 'a' is of type dict"),
    (lambda t, p: scorer.leaderboard("a.csv", t), "as a list of paths or frames"),
    (lambda t, p: scorer.leaderboard(p, t, bootstrap=-1), "bootstrap must be a whole number"),
    (lambda t, p: scorer.leaderboard(p, t, level=95), "level must be a number between 0 and 1"),
    (lambda t, p: scorer.leaderboard(p, t, method="bonferroni"), "method must be one of 'holm', 'bh'"),
    (lambda t, p: scorer.similar(p[:1]), "at least two"),
    (lambda t, p: scorer.similar([frame(p[0]), frame(p[1])]), "give paths, not frames"),
    (lambda t, p: scorer.ladder(None, truth=t, split="public=0.5"), "needs --teams"),
])
def test_bad_options_are_usage_errors(case, call, words):
    _, truth, paths = case
    with pytest.raises(scorer.UsageError, match=words):
        call(truth, paths)


def test_every_object_displays_escaped_html(case, tmp_path):
    _, truth, paths = case
    odd = tmp_path / "<img src=x onerror=alert(1)>.csv"
    odd.write_text(open(paths[0]).read())
    named = [str(odd), paths[1]]
    objects = [scorer.leaderboard(named, truth, bootstrap=20),
               scorer.similar(named, sample=32), scorer.explain(str(odd), truth)]
    for obj in objects:
        html = obj._repr_html_()
        assert html.startswith("<div>") and "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html, type(obj).__name__
