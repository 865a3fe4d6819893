"""The commands' jobs from Python (scorer.compare, leaderboard, explain, similar, ladder): each object's to_dict() is the
command's --format json output to the last bit and its to_text() the command's text, for the same inputs and seed, from
files and from frames; their tables, displays and refusals."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import scorer
from conftest import TYPES, run_main
from scorer import api

N_SESSIONS = 120


def still_clock(monkeypatch) -> None:
    """A clock that does not move: a Result's "seconds" is the one figure that measures the run, not the input."""
    monkeypatch.setattr(api.time, "monotonic", lambda: 0.0)


def make_case(folder):
    """A truth of N_SESSIONS sessions and three submissions of different skill: (folder, truth, [paths])."""
    rng = np.random.default_rng(7)
    truth = {}
    for session in range(1, N_SESSIONS + 1):
        labels = {"clicks": int(rng.integers(1, 40))}
        if rng.random() < 0.6:
            labels["carts"] = sorted(set(rng.integers(1, 40, rng.integers(1, 4)).tolist()))
        if rng.random() < 0.5:
            labels["orders"] = sorted(set(rng.integers(1, 40, rng.integers(1, 6)).tolist()))
        truth[session] = labels
    truth_path = folder / "truth.jsonl"
    truth_path.write_text("".join(json.dumps({"session": s, "labels": v}) + "\n" for s, v in truth.items()))
    paths = []
    for name, keep in (("strong.csv", 0.8), ("middle.csv", 0.5), ("weak.csv", 0.2)):
        lines = ["session_type,labels"]
        for session, labels in truth.items():
            for type_name in TYPES:
                items = labels.get(type_name, [])
                items = [items] if isinstance(items, int) else items
                kept = [item for item in items if rng.random() < keep] + rng.integers(40, 80, 3).tolist()
                lines.append(f"{session}_{type_name},{' '.join(map(str, kept))}")
        path = folder / name
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return folder, str(truth_path), paths


def frame(path: str) -> pl.DataFrame:
    return pl.read_csv(path, schema_overrides={"labels": pl.String})


def command(*argv) -> tuple[int, str]:
    code, out, err = run_main(*argv)
    assert "Traceback" not in err
    return code, out


def same_as_command(obj, *argv, text: bool = True) -> None:
    """obj.to_dict() is the command's JSON to the last bit, and its text the command's text."""
    code, out = command(*argv, "--format", "json")
    assert obj.to_json() + "\n" == out
    assert obj.to_dict() == json.loads(out)
    if text:
        _, out = command(*argv)
        assert obj.to_text() + "\n" == out


@pytest.fixture(autouse=True)
def _still(monkeypatch):
    still_clock(monkeypatch)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return make_case(tmp_path_factory.mktemp("jobs"))


def test_compare_is_the_command(case):
    _, truth, (a, b, _) = case
    options = ["--bootstrap", "300", "--seed", "3", "--split", "public=0.5", "--no-progress"]
    comparison = scorer.compare(a, b, truth, bootstrap=300, seed=3, split="public=0.5")
    same_as_command(comparison, "compare", a, b, "--truth", truth, *options)
    table = comparison.to_pandas()
    assert list(table["sessions"].unique()) == ["public", "private", "all"] and table.shape == (12, 11)
    assert comparison.exit_code == 0


def test_compare_of_frames_is_the_command_of_their_files(case):
    _, truth, (a, b, _) = case
    comparison = scorer.compare(frame(a), pl.scan_csv(b, schema_overrides={"labels": pl.String}), truth, bootstrap=200, seed=1)
    _, out = command("compare", a, b, "--truth", truth, "--bootstrap", "200", "--seed", "1", "--no-progress", "--format", "json")
    expected = json.loads(out)
    got = json.loads(comparison.to_json())
    for side, path in (("a", a), ("b", b)):
        assert got[side].pop("submission").startswith("<polars ") and expected[side].pop("submission") == path
        assert got["comparison"]["all"].pop(side).startswith("<polars ") and expected["comparison"]["all"].pop(side) == path
        for problem in got[side]["problems"] + expected[side]["problems"]:
            for key in ("line", "row", "column", "field"):
                problem.pop(key, None)
    assert got == expected


def test_compare_per_session_pairs_the_rows_and_counts_the_wins(case):
    _, truth, (a, b, _) = case
    comparison = scorer.compare(a, b, truth, bootstrap=50, per_session=True)
    paired = comparison.sessions.to_pandas()
    assert list(paired.columns) == ["session", "type", "line_a", "line_b", "hits_a", "hits_b", "denominator", "difference",
                                    "contribution", "outcome"]
    figures = comparison.figures["all"]
    for type_name, row in figures["types"].items():
        rows = paired[paired["type"] == type_name]
        counts = rows["outcome"].value_counts()
        assert (counts.get("win", 0), counts.get("tie", 0), counts.get("loss", 0)) == (row["wins"], row["ties"], row["losses"])
        assert rows["difference"].sum() / rows["denominator"].sum() == pytest.approx(row["difference"], abs=1e-15)
    assert paired["contribution"].sum() == pytest.approx(figures["score"]["difference"], abs=1e-12)
    by_session = paired.groupby("session")["contribution"].sum()
    assert ((by_session > 0).sum(), (by_session < 0).sum()) == (figures["score"]["wins"], figures["score"]["losses"])
    with pytest.raises(scorer.UsageError, match="per_session=True"):
        scorer.compare(a, b, truth, bootstrap=10).sessions


def test_compare_without_a_score_says_why_as_the_command(case, tmp_path):
    _, truth, (a, _, _) = case
    missing = str(tmp_path / "missing.csv")
    comparison = scorer.compare(a, missing, truth, bootstrap=10)
    code, out = command("compare", a, missing, "--truth", truth, "--bootstrap", "10", "--no-progress")
    assert (comparison.ok, comparison.exit_code, code) == (False, 1, 1) and comparison.to_text() + "\n" == out
    assert "no score" in comparison._repr_html_()


def test_compare_displays_escaped_html(case, tmp_path):
    _, truth, paths = case
    odd = tmp_path / "<img src=x onerror=alert(1)>.csv"
    odd.write_text(open(paths[0]).read())
    html = scorer.compare(str(odd), paths[1], truth, bootstrap=20)._repr_html_()
    assert html.startswith("<div>") and "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    broken = tmp_path / "broken.csv"
    broken.write_text(open(paths[1]).read().replace("1_clicks,", "1_clicks,x ", 1))
    html = scorer.compare(paths[0], str(broken), truth, bootstrap=20)._repr_html_()
    assert "S008 error" in html and "line 2:10" in html and "[" in html  # B's problem with its line, and the interval
    with pytest.raises(scorer.UsageError, match="bootstrap must be a whole number"):
        scorer.compare(paths[0], paths[1], truth, bootstrap=-1)


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


def test_explain_of_an_id_type_frame_is_its_file_s():
    submission, truth = "fixtures/explain/submission.csv", "fixtures/explain/truth.jsonl"
    expected = scorer.explain(submission, truth).to_dict()
    for held in (frame(submission), pl.scan_csv(submission, schema_overrides={"labels": pl.String})):
        got = scorer.explain(held, truth).to_dict()
        assert got.pop("submission").startswith("<polars ") and expected.pop("submission", submission) == submission
        assert got == expected
    split = frame(submission).with_columns(pl.col("session_type").str.split("_").list.to_struct(fields=["session", "type"])).unnest(
        "session_type").with_columns(pl.col("session").cast(pl.Int64))  # session, type, labels
    got = scorer.explain(split, truth).to_dict()
    got.pop("submission")
    assert got == expected
    with pytest.raises(scorer.UsageError, match="give the file, or the frame in that form"):
        scorer.explain(pl.DataFrame({"session": [1], "type": ["clicks"], "aid": [5]}), truth)


def test_similar_is_the_command(case, tmp_path):
    _, _, paths = case
    teams = tmp_path / "teams.csv"
    teams.write_text("file,team\n" + "".join(f"{p},team {i % 2}\n" for i, p in enumerate(paths)))
    found = scorer.similar(paths, teams=str(teams), sample=64, top=5)
    same_as_command(found, "similar", *paths, "--teams", str(teams), "--sample", "64", "--top", "5")
    by_dict = scorer.similar(paths, teams={p: f"team {i % 2}" for i, p in enumerate(paths)}, sample=64, top=5)
    assert by_dict.to_dict() == found.to_dict()
    frames = scorer.similar({p: frame(p) for p in paths}, teams=str(teams), sample=64, top=5)  # named by their files
    assert frames.to_dict() == found.to_dict()
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
    (lambda t, p: scorer.leaderboard([frame(p[0])], t, engine="dask"), "give the submissions and the truth as paths, not frames"),
    (lambda t, p: scorer.ladder(None, truth=t, split="public=0.5"), "needs --teams"),
])
def test_bad_options_are_usage_errors(case, call, words):
    _, truth, paths = case
    with pytest.raises(scorer.UsageError, match=words):
        call(truth, paths)


@pytest.mark.parametrize("call", [
    lambda truth: scorer.compare("a.csv", "b.csv", truth, split="public=2"),
    lambda truth: scorer.leaderboard(["a.csv", "b.csv"], truth, split="public=2"),
    lambda truth: scorer.ladder("teams.csv", truth=truth, split="public=2"),
])
def test_a_bad_split_is_refused_before_the_truth_is_read(call, tmp_path):
    with pytest.raises(scorer.UsageError, match="--split 'public=2': expected public=FRACTION"):
        call(str(tmp_path / "missing.jsonl"))  # no truth file: reading it first would fail otherwise


def test_the_dask_engine_refuses_a_frame_before_the_truth_is_read(case, tmp_path):
    _, _, paths = case
    with pytest.raises(scorer.UsageError, match="give the submissions and the truth as paths, not frames"):
        scorer.leaderboard([frame(paths[0])], str(tmp_path / "missing.jsonl"), engine="dask")


def test_the_leaderboard_refuses_a_split_without_truth_before_reading_the_records(tmp_path):
    with pytest.raises(scorer.UsageError, match="--split and --mde need --truth"):
        scorer.leaderboard(results=str(tmp_path / "missing.jsonl"), split="public=0.5")


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
