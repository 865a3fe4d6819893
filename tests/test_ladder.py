"""The parameter-free Ladder (scorer.analytics.ladder.rule, `scorer ladder`, the EvalAI worker's live Ladder): the rule against
a slow reference, ties and equal files as its docstring says, an honest sequence released step by step, the paper's
attack (bench/bench_ladder.py's, one seed) climbing the plain public board and not the Ladder, and the files a user hands
it (teams file, state file) read as untrusted input."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import scorer
from conftest import TYPES, run_main, submission_text, truth_lines
from scorer.adapters import evalai
from scorer.adapters.ladder_state import StateError, open_state, read_state
from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.ladder.board import SplitFigures
from scorer.analytics.ladder.rule import Offer, TeamLadder, paired_margin, session_scores
from scorer.analytics.leaderboard.streamed_bootstrap import truth_table
from scorer.analytics.split import PUBLIC, hash_split
from scorer.analytics.teams_file import MAX_BYTES, read_teams
from scorer.errors import UsageError
from scorer.spec.competition import load_competition

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_ladder.py"
_spec = importlib.util.spec_from_file_location("bench_ladder", BENCH)
bench_ladder = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench_ladder  # its dataclasses look their module up there
_spec.loader.exec_module(bench_ladder)


# -- the rule --------------------------------------------------------------------------------------------------------


def reference_released(score: float, x: list[float], leader_score: float | None, leader_x: list[float] | None) -> bool:
    """The paper's parameter-free Ladder for a score (higher is better), written out: the first is released; a later one
    when its score exceeds the leader's by the sample standard deviation of the paired differences over √n."""
    if leader_x is None:
        return True
    d = [a - b for a, b in zip(x, leader_x)]
    return score - leader_score > statistics.stdev(d) / math.sqrt(len(d))


def offer(name: str, x: np.ndarray) -> Offer:
    x = np.asarray(x, np.float32)
    return Offer(name, float(np.mean(x.astype(np.float64))), x)


def test_releases_match_the_reference_on_random_sequences():
    rng = np.random.default_rng(1)
    for trial in range(40):
        ladder, leader = TeamLadder(), None
        for k in range(12):
            made = offer(f"s{k}", rng.normal(0.5 + 0.02 * rng.random(), 0.3, 50))
            want = reference_released(made.score, made.sessions.astype(float).tolist(), leader and leader.score,
                                      None if leader is None else leader.sessions.astype(float).tolist())
            decision = ladder.offer(made)
            assert decision.released == want
            leader = made if want else leader
            assert ladder.leader is leader and decision.shown == leader.score


def test_margin_is_the_standard_error_of_the_paired_differences():
    rng = np.random.default_rng(2)
    x, y = rng.random(30).astype(np.float32), rng.random(30).astype(np.float32)
    d = (x.astype(float) - y.astype(float)).tolist()
    assert paired_margin(x, y) == pytest.approx(statistics.stdev(d) / math.sqrt(30), rel=1e-12)
    with pytest.raises(ValueError, match="2 public sessions"):
        paired_margin(x[:1], y[:1])


def test_ties_and_equal_files_behave_as_the_docstring_says():
    base = np.array([1.0, 0.0, 0.5, 0.25, 0.0, 1.0], np.float32)
    ladder = TeamLadder()
    assert ladder.offer(offer("first", base)).released  # the first is shown
    same = ladder.offer(offer("same bytes", base.copy()))
    assert not same.released and same.difference == 0.0 and same.threshold == 0.0 and ladder.leader.name == "first"
    moved = ladder.offer(offer("equal score, other sessions", base[::-1].copy()))
    assert not moved.released and moved.difference == 0.0 and moved.threshold > 0
    worse = ladder.offer(offer("worse", base - np.float32(0.01)))
    assert not worse.released and worse.difference < 0
    better = ladder.offer(offer("better everywhere by c", base + np.float32(0.125)))  # c exact in float32: s = 0
    assert better.released and better.threshold == 0.0 and better.difference == pytest.approx(0.125)
    assert ladder.leader.name == "better everywhere by c" and ladder.shown == better.shown


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_one_hit_probe_is_an_exact_tie_and_never_released(data):
    """A file that gains one hit in one public session over its team's leader: d is c in that session and 0 elsewhere,
    so S_t - S_leader = c/n = s/√n exactly, and the strict rule never releases it, whatever the truth (float32 figures
    released it in about a third of such truths)."""
    sessions = data.draw(st.integers(4, 40), label="sessions")
    truth, leader_rows = {}, {}
    for s in range(1, sessions + 1):
        labels = {"clicks": data.draw(st.integers(1, 50))}
        for t in ("carts", "orders"):
            items = data.draw(st.lists(st.integers(1, 50), max_size=4, unique=True))
            if items:
                labels[t] = sorted(items)
        truth[s] = labels
        for t in TYPES:
            wanted = labels.get(t, [])
            wanted = [wanted] if isinstance(wanted, int) else wanted
            leader_rows[s, t] = [i for i in wanted if data.draw(st.booleans())] + list(range(100, 100 + data.draw(st.integers(0, 5))))
    split = hash_split(np.arange(1, sessions + 1, dtype=np.int64), 0.5, data.draw(st.integers(0, 3), label="seed"))
    public = [s for s, u in zip(range(1, sessions + 1), split.usage) if u == PUBLIC]
    missed = [(s, t, i) for s in public for t in TYPES
              for i in ([truth[s][t]] if t == "clicks" else truth[s].get(t, [])) if i not in leader_rows[s, t]]
    assume(len(public) >= 2 and missed)
    s, t, item = data.draw(st.sampled_from(missed), label="probe")
    probe_rows = {**leader_rows, (s, t): [item, *leader_rows[s, t]][:20]}
    with tempfile.TemporaryDirectory() as folder:
        truth_path = Path(folder) / "truth.jsonl"
        truth_path.write_text(truth_lines(truth))
        loaded = scorer.load_truth(truth_path)
        figures = SplitFigures(truth_table(loaded, load_competition("otto")), split)
        found = []
        for name, rows in (("leader", leader_rows), ("probe", probe_rows)):
            path = Path(folder) / f"{name}.csv"
            path.write_text(submission_text([(s, t, items) for (s, t), items in rows.items()]))
            found.append(figures.of(SessionTable.from_result(scorer.score(path, loaded, strict=True))))
    ladder = TeamLadder(Offer("leader", found[0].public, found[0].sessions))
    decision = ladder.offer(Offer("probe", found[1].public, found[1].sessions))
    assert decision.difference > 0 and decision.difference == pytest.approx(decision.threshold, rel=1e-12)
    assert not decision.released and ladder.leader.name == "leader"


def test_the_public_score_is_the_mean_of_the_per_session_scores(tmp_path):
    """score = Σ_t w_t Σ num / Σ den = (1/n) Σ_s x_s over the public sessions, so S_A - S_B is the mean paired difference."""
    truth_path, paths = honest_files(tmp_path, (0.3, 0.6))
    truth = scorer.load_truth(truth_path)
    split = hash_split(truth.sessions, 0.4, 3)
    figures = SplitFigures(truth_table(truth, load_competition("otto")), split)
    found = [figures.of(SessionTable.from_result(scorer.score(p, truth, strict=True))) for p in paths]
    for f in found:
        assert float(np.mean(f.sessions.astype(np.float64))) == pytest.approx(f.public, rel=1e-6)
    code, out, _ = run_main("score", paths[1], "--truth", truth_path, "--split", "public=0.4", "--seed", 3, "--format", "json")
    assert code == 0 and json.loads(out)["analytics"]["split"]["figures"]["public"]["score"] == pytest.approx(found[1].public, rel=1e-12)
    d = found[1].sessions.astype(np.float64) - found[0].sessions.astype(np.float64)
    assert d.mean() == pytest.approx(found[1].public - found[0].public, rel=1e-5)
    assert session_scores(np.zeros((3, 3)), np.array([1.0, 0.0, 2.0]), np.ones(3)).dtype == np.float64


# -- honest teams, ties and equal files through the command ------------------------------------------------------------


def honest_files(folder: Path, strengths, sessions: int = 1500, seed: int = 0) -> tuple[Path, list[Path]]:
    """A truth and one file per strength, nested: a truth item predicted at strength p is predicted at every higher one
    (one uniform per item), so each file has at least the hits of the one before in every session."""
    rng = np.random.default_rng(seed)
    truth, draws = {}, {}
    for s in range(1, sessions + 1):
        labels = {"clicks": int(rng.integers(1, 10_000))}
        if rng.random() < 0.5:
            labels["carts"] = sorted(set(rng.integers(1, 10_000, int(rng.integers(1, 4))).tolist()))
        if rng.random() < 0.3:
            labels["orders"] = sorted(set(rng.integers(1, 10_000, int(rng.integers(1, 4))).tolist()))
        truth[s] = labels
        for t in TYPES:
            wanted = labels.get(t, [])
            draws[s, t] = [(i, rng.random()) for i in ([wanted] if isinstance(wanted, int) else wanted)]
    truth_path = folder / "truth.jsonl"
    truth_path.write_text(truth_lines(truth))
    paths = []
    for k, strength in enumerate(strengths):
        rows = [(s, t, [i for i, u in draws[s, t] if u < strength] + list(range(20_000, 20_020))) for s in truth for t in TYPES]
        path = folder / f"step{k}.csv"
        path.write_text(submission_text([(s, t, items[:20]) for s, t, items in rows]))
        paths.append(path)
    return truth_path, paths


def ladder_board(teams: Path, truth: Path, *extra) -> dict:
    code, out, err = run_main("ladder", "--teams", teams, "--truth", truth, "--split", "public=0.4", "--seed", 3, "--format", "json", *extra)
    assert code in (0, 1), err
    return json.loads(out)


def teams_csv(path: Path, rows) -> Path:
    path.write_text("file,team,time\n" + "".join(f"{file},{team},{time}\n" for file, team, time in rows))
    return path


def test_an_honest_sequence_of_real_improvements_is_released_step_by_step(tmp_path):
    truth_path, paths = honest_files(tmp_path, (0.2, 0.4, 0.6, 0.8))
    board = ladder_board(teams_csv(tmp_path / "teams.csv", [(p, "honest", f"2024-03-0{k + 1}T10:00:00Z") for k, p in enumerate(paths)]),
                         truth_path)
    history = board["submissions"]
    assert [h["released"] for h in history] == [True, True, True, True]
    assert [h["ladder_shown"] for h in history] == [h["public_score"] for h in history] == sorted(h["public_score"] for h in history)
    assert all(h["difference"] > h["threshold"] > 0 for h in history[1:])
    team = board["teams"][0]
    assert team["ladder"]["submission"] == team["public"]["submission"] == str(paths[-1]) and team["released"] == 4


def test_equal_files_and_an_equal_score_do_not_move_the_board(tmp_path):
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.7))
    twin = tmp_path / "twin.csv"
    twin.write_bytes(a.read_bytes())
    reordered = tmp_path / "reordered.csv"  # other bytes, the same hits in every session (recall ignores the order)
    lines = a.read_text().splitlines()
    reordered.write_text("\n".join([lines[0]] + [f"{row.split(',')[0]},{' '.join(row.split(',')[1].split()[::-1])}" for row in lines[1:]]) + "\n")
    rows = [(a, "red", 1), (twin, "red", 2), (reordered, "red", 3), (b, "blue", 1), (tmp_path / "copy-b.csv", "green", 1)]
    (tmp_path / "copy-b.csv").write_bytes(b.read_bytes())
    board = ladder_board(teams_csv(tmp_path / "teams.csv", rows), truth_path)
    red = [h for h in board["submissions"] if h["team"] == "red"]
    assert [h["released"] for h in red] == [True, False, False]
    assert red[1]["difference"] == red[2]["difference"] == 0.0 and red[1]["threshold"] == red[2]["threshold"] == 0.0
    assert red[0]["public_score"] == red[1]["public_score"] == red[2]["public_score"] == red[2]["ladder_shown"]
    ranks = {t["team"]: t["ladder"]["rank"] for t in board["teams"]}
    assert ranks == {"blue": 1, "green": 1, "red": 3}  # equal shown scores share the better rank
    assert [t["team"] for t in board["teams"]] == ["blue", "green", "red"]


def test_an_invalid_submission_is_listed_and_on_no_board(tmp_path, capsys):
    truth_path, (a,) = honest_files(tmp_path, (0.5,))
    bad = tmp_path / "bad.csv"
    bad.write_text("session_type,labels\n1_clicks,x\n")
    code, out, _ = run_main("ladder", "--teams", teams_csv(tmp_path / "t.csv", [(bad, "red", 1), (a, "red", 2), (bad.with_name("none.csv"), "blue", 1)]),
                            "--truth", truth_path, "--split", "public=0.4")
    assert code == 1 and "2 teams, 3 submissions (1 valid)" in out and "not scored (2 submissions, on no board):" in out
    assert f"  {bad.with_name('none.csv')} (blue): " in out
    code, out, _ = run_main("ladder", "--teams", tmp_path / "t.csv", "--truth", truth_path, "--split", "public=0.4", "--format", "json")
    board = json.loads(out)
    assert [h["status"] for h in board["submissions"]] == ["invalid", "scored", "invalid"]
    assert board["teams"][1]["team"] == "blue" and board["teams"][1]["ladder"] is None


# -- the paper's attack ------------------------------------------------------------------------------------------------


@pytest.mark.slow  # about 400 files scored: 35-70 s
def test_the_attack_climbs_the_plain_board_and_not_the_ladder(tmp_path):
    """Random lists, the above-median ones combined by vote: the plain board's best public score jumps by several of a
    random file's standard deviations, though the combined file is no better than chance on the private sessions; the
    Ladder, whose feedback kept only the few it released, does not move."""
    queries = 200
    run = bench_ladder.attack(tmp_path, seed=0, sessions=2000, queries=queries)
    se = run["plain"]["score_se"]
    assert run["kept"]["plain"] == queries // 2 and run["kept"]["ladder"] < 10
    assert run["plain"]["gain"] > 2 * se and run["plain"]["public"] > 5 * se
    assert abs(run["plain"]["private"]) < 2.5 * se  # no real gain: the sessions nobody saw
    assert run["ladder"]["gain"] == 0.0 and not run["ladder"]["released"]
    plain = next(t for t in run["board"]["teams"] if t["team"] == "plain")
    assert plain["public"]["submission"].endswith("plain-combined.csv")
    assert plain["public"]["score"] - plain["public"]["private_score"] > 4 * se  # the private score shows why


def test_the_attack_in_memory_climbs_the_plain_board_and_not_the_ladder():
    """The same attack on one type's hits, without files (fast): per seed, the plain board's kept lists voted together
    beat the best random list on the public sessions and not on the private ones; the Ladder never moves."""
    n, queries, seeds = 2000, 60, 4
    public = np.arange(n) < n // 2
    gains, public_gains, private_gains = [], [], []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        competition = bench_ladder.Competition(Path("unused"), np.zeros((n, 40), np.int64))
        truth = rng.integers(40, size=n)

        def hits(lists):
            return (lists[:, 0, :] == truth[:, None]).any(axis=1).astype(np.float32)

        randoms = [np.argsort(rng.random((n, 1, 40)), axis=2)[:, :, :bench_ladder.K] for _ in range(queries)]  # one type
        made = [hits(lists) for lists in randoms]
        scores = np.array([x[public].mean(dtype=np.float64) for x in made])
        ladder, kept = TeamLadder(), []
        for k, x in enumerate(made):
            if ladder.offer(offer(f"r{k}", x[public])).released:
                kept.append(randoms[k])
        voted = {"plain": bench_ladder.vote(competition, [randoms[k] for k in np.flatnonzero(scores > np.median(scores))], rng),
                 "ladder": bench_ladder.vote(competition, kept, rng)}
        plain = hits(voted["plain"])
        shown = ladder.shown
        assert not ladder.offer(offer("combined", hits(voted["ladder"])[public])).released and ladder.shown == shown
        gains.append(max(plain[public].mean(dtype=np.float64) - scores.max(), 0.0))
        public_gains.append(plain[public].mean(dtype=np.float64) - scores.mean())
        private_gains.append(plain[~public].mean(dtype=np.float64) - np.mean([x[~public].mean(dtype=np.float64) for x in made]))
    se = float(np.std(scores, ddof=1))  # a random list's public score: its standard deviation
    gain, gain_se = np.mean(gains), np.std(gains, ddof=1) / math.sqrt(seeds)
    assert gain > 2 * gain_se and gain > se / 2
    assert abs(np.mean(private_gains)) < 3 * se / math.sqrt(seeds)  # chance on the sessions nobody saw
    assert np.mean(public_gains) - np.mean(private_gains) > 3 * se / math.sqrt(seeds)  # the overfit: public only


# -- the teams file, untrusted -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, message", [
    ("t.csv", "file,team\na.csv,red\n", "header naming the columns file,team,time once each"),
    ("t.csv", "file,team,time,team\na.csv,red,1,blue\n", "header naming the columns file,team,time once each"),
    ("t.csv", "file,team,time\na.csv,red,yesterday\n", "line 2 has the time 'yesterday'"),
    ("t.csv", "file,team,time\na.csv,red,1\na.csv,blue,2\n", "line 3 names the file 'a.csv' again"),
    ("t.csv", "file,team,time\na.csv,,1\n", "team name that is not 1 to 256 printable characters"),
    ("t.csv", "file,team,time\na.csv,red,-5\n", "seconds since 1970 go from 0"),
    ("t.csv", "file,team,time\na.csv,red,nan\n", "seconds since 1970 go from 0"),
    ("t.csv", "file,team,time\na.csv,red\n", "line 2 has 2 fields"),
    ("t.csv", "file,team,time\n", "names no submission"),
    ("t.json", '{"submissions": [{"file": "a.csv", "team": "red"}]}', "submissions[0].time' is missing"),
    ("t.json", '{"submissions": [{"file": "a.csv", "team": "red", "time": true}]}', "submissions[0].time"),
    ("t.json", '{"submissions": [{"file": "a.csv", "team": "red", "time": 1, "x": 2}]}', "is unknown"),
    ("t.json", "[" * 100_000, "nests arrays and objects more than 64 deep"),
    ("t.json", "\xff", "is not UTF-8"),
    ("t.txt", "file,team,time\n", "must end in .csv or .json"),
])
def test_a_bad_teams_file_is_refused_with_one_sentence(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        read_teams(path)


def test_a_teams_file_must_be_a_bounded_regular_file(tmp_path):
    fifo = tmp_path / "t.csv"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="is a FIFO"):
        read_teams(fifo)
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(MAX_BYTES + 1)
    with pytest.raises(UsageError, match="over"):
        read_teams(big)


def test_times_order_a_teams_submissions_and_ties_keep_the_file_order(tmp_path):
    from scorer.analytics.teams_file import by_team

    path = teams_csv(tmp_path / "t.csv", [("c.csv", "red", "2024-03-01T12:00:00+01:00"), ("a.csv", "red", 1709290800),
                                          ("b.csv", "red", "2024-03-01T11:00:00"), ("d.csv", "blue", 0)])
    assert [e.file for e in by_team(read_teams(path))["red"]] == ["c.csv", "a.csv", "b.csv"]  # all at 11:00 UTC


def test_command_usage_errors_exit_2(tmp_path):
    truth_path, (a,) = honest_files(tmp_path, (0.5,))
    teams = teams_csv(tmp_path / "t.csv", [(a, "red", 1)])
    for argv, message in ((["--teams", teams, "--truth", truth_path], "needs --split"),
                          (["--state", tmp_path / "s", "--teams", teams], "give it alone"),
                          (["--teams", teams, "--truth", truth_path, "--split", "usage"], "no Usage column"),
                          (["--teams", teams, "--truth", truth_path, "--split", "public=0.4", "--report", tmp_path / "x.txt"], "must end in"),
                          (["--teams", teams, "--truth", truth_path, "--split", "public=0.4", "--results", write_records(tmp_path, [])],
                           "holds no record")):
        code, _, err = run_main("ladder", *argv)
        assert code == 2 and message in err and "Traceback" not in err, err


def write_records(folder: Path, records: list[dict]) -> Path:
    path = folder / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_grade_records_say_which_files_are_invalid(tmp_path):
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.7))
    records = write_records(tmp_path, [{"file": str(a), "path": str(a), "status": "scored", "score": scorer.score(a, truth_path).score},
                                       {"file": "up/b.csv", "path": str(b), "status": "invalid", "score": None, "error": "S010: repeated"}])
    board = ladder_board(teams_csv(tmp_path / "t.csv", [(a, "red", 1), (b, "red", 2)]), truth_path, "--results", records)
    assert [h["status"] for h in board["submissions"]] == ["scored", "invalid"]
    assert board["submissions"][1]["reason"] == "S010: repeated"


def test_report_page(tmp_path):
    pytest.importorskip("matplotlib")
    truth_path, paths = honest_files(tmp_path, (0.3, 0.6))
    page = tmp_path / "ladder.html"
    code, out, _ = run_main("ladder", "--teams", teams_csv(tmp_path / "t.csv", [(p, f"t{k}", 1) for k, p in enumerate(paths)]),
                            "--truth", truth_path, "--split", "public=0.4", "--report", page)
    assert code == 0 and "report written" in out
    text = page.read_text()
    assert "data:image/png;base64," in text and "parameter-free Ladder" in text


# -- live, in the EvalAI worker, and its state file ------------------------------------------------------------------------


def usage_truth(folder: Path, truth_path: Path, fraction: float = 0.4) -> Path:
    """The truth with a "usage" key on every line (Public for a hashed share of the sessions, Private for the rest)."""
    lines = [json.loads(line) for line in truth_path.read_text().splitlines()]
    split = hash_split(np.array([line["session"] for line in lines], np.int64), fraction, 3)
    out = folder / "truth_usage.jsonl"
    out.write_text("".join(json.dumps({**line, "usage": "Public" if u == PUBLIC else "Private"}) + "\n" for line, u in zip(lines, split.usage)))
    return out


def test_evalai_applies_the_ladder_live_as_the_offline_replay_does(tmp_path):
    truth_path, paths = honest_files(tmp_path, (0.5, 0.45, 0.5, 0.8))
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    shown = []
    for k, path in enumerate(paths):
        out = evalai.evaluate(str(truth_path), str(path), "test", split="test_split", ladder_state=str(state),
                              submission_metadata={"participant_team_name": "red", "submitted_at": f"2024-03-0{k + 1}T10:00:00Z"})
        shown.append(out["result"][0]["test_split"])
    offline = ladder_board(teams_csv(tmp_path / "t.csv", [(p, "red", k) for k, p in enumerate(paths)]), truth_path)
    history = offline["submissions"]
    assert [h["released"] for h in history] == [True, False, False, True]
    assert [s["score"] for s in shown] == [h["ladder_shown"] for h in history]
    assert shown[1] == shown[2] == shown[0] and shown[3]["score"] > shown[0]["score"]  # the leader's figures, not the file's own
    code, out, err = run_main("ladder", "--state", state, "--format", "json")
    assert code == 0, err
    live = json.loads(out)
    assert [(h["released"], h["public_score"], h["private_score"]) for h in live["submissions"]] == \
        [(h["released"], h["public_score"], h["private_score"]) for h in history]
    assert live["teams"][0]["ladder"] == {**offline["teams"][0]["ladder"], "submission": paths[3].name}


def test_a_state_cut_short_is_repaired_and_a_damaged_one_refused(tmp_path, capsys):
    truth_path, paths = honest_files(tmp_path, (0.5, 0.8))
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    meta = {"participant_team_name": "red"}
    evalai.evaluate(str(truth_path), str(paths[0]), "test", ladder_state=str(state), submission_metadata=meta)
    whole = state.read_bytes()
    state.write_bytes(whole[:-100])  # the first record's vector cut short: that submission was never answered
    header, history = read_state(str(state))
    assert history == []
    evalai.evaluate(str(truth_path), str(paths[1]), "test", ladder_state=str(state), submission_metadata=meta)
    assert [h["file"] for h in read_state(str(state))[1]] == [paths[1].name]
    damaged = bytearray(state.read_bytes())
    at = damaged.index(b'"released": true')
    damaged[at:at + 16] = b'"released": 7777'
    state.write_bytes(bytes(damaged))
    code, _, err = run_main("ladder", "--state", state)
    assert code == 2 and "record 1: field 'released' is 7777, expected true or false" in err
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(paths[1]), "test", ladder_state=str(state), submission_metadata=meta)
    assert "the Ladder could not be applied" in capsys.readouterr().err


def state_records(data: bytes) -> tuple[bytes, list[tuple[dict, bytes]]]:
    """(the header line, [(each record, its vector bytes with their newline)]) of a state file's bytes, walked as written."""
    header, at = data[:data.index(b"\n")], data.index(b"\n") + 1
    records = []
    while at < len(data):
        end = data.index(b"\n", at)
        record = json.loads(data[at:end])
        at = end + 1 + (record["vector"] + 1 if record["vector"] else 0)
        records.append((record, data[end + 1:at]))
    return header, records


def state_bytes(header: bytes, records) -> bytes:
    return header + b"\n" + b"".join(json.dumps(record).encode() + b"\n" + vector for record, vector in records)


@pytest.mark.parametrize("edit", ["vector size", "released and vector"])
def test_a_record_edited_in_the_middle_is_refused_and_nothing_removed(tmp_path, capsys, edit):
    """Only a torn last record may be repaired: a record whose vector size was edited (or one made to look released, its
    vector running into the record after it) is a StateError naming it, live and offline, and the file keeps every byte."""
    truth_path, paths = honest_files(tmp_path, (0.5, 0.8, 0.8), sessions=1500)
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    for k, path in enumerate(paths):
        evalai.evaluate(str(truth_path), str(path), "test", ladder_state=str(state), team="red", submitted_at=f"2024-03-0{k + 1}")
    header, records = state_records(state.read_bytes())
    assert [r["released"] for r, _ in records] == [True, True, False]
    vector = 8 * json.loads(header)["split"]["public"]
    if edit == "vector size":  # record 1: its vector declared larger than the rest of the file
        records[0] = ({**records[0][0], "vector": vector * 1000}, records[0][1])
        named = f"record 1 holds a vector of {vector * 1000} bytes"
    else:  # a record (not released) made to look released: its vector would run into the record after it
        records.insert(2, ({**records[2][0], "released": True, "vector": vector}, b""))
        named = "record 3's vector runs into a later record"
    damaged = state_bytes(header, records)
    state.write_bytes(damaged)
    code, out, err = run_main("ladder", "--state", state)
    assert code == 2 and named in err and out == "", err
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(paths[0]), "test", ladder_state=str(state), team="red")
    assert named in capsys.readouterr().err
    assert state.read_bytes() == damaged


def test_a_state_of_version_1_is_served_with_its_float32_scores(tmp_path):
    """scorer 0.2.0 kept float32 scores (4 bytes a public session, version 1): such a file is read and written on as it
    is, and its decisions are those of a new file (version 2, float64) on these honest files."""
    truth_path, paths = honest_files(tmp_path, (0.5, 0.45, 0.8), sessions=400)
    truth_path = usage_truth(tmp_path, truth_path)
    new, old = tmp_path / "new.state", tmp_path / "old.state"
    for k, path in enumerate(paths):
        evalai.evaluate(str(truth_path), str(path), "test", ladder_state=str(new), team="red", submitted_at=f"2024-03-0{k + 1}")
        if k == 0:
            header = json.loads(new.read_bytes().split(b"\n", 1)[0])
            assert header["version"] == 2
            open_state(str(old), {**header, "version": 1}).close()
        evalai.evaluate(str(truth_path), str(path), "test", ladder_state=str(old), team="red", submitted_at=f"2024-03-0{k + 1}")
    for state, width in ((new, 8), (old, 4)):
        header, records = state_records(state.read_bytes())
        assert [r["vector"] for r, _ in records] == [width * json.loads(header)["split"]["public"], 0, width * json.loads(header)["split"]["public"]]
    assert [h["released"] for h in read_state(str(old))[1]] == [h["released"] for h in read_state(str(new))[1]] == [True, False, True]


def test_a_state_of_another_truth_or_split_is_refused(tmp_path):
    truth_path, (a,) = honest_files(tmp_path, (0.5,))
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    evalai.evaluate(str(truth_path), str(a), "test", ladder_state=str(state), team="red")
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(a), "test", ladder_state=str(state), team="red", ladder_split="public=0.5")
    header = json.loads(state.read_bytes().split(b"\n", 1)[0])
    with pytest.raises(StateError, match="another truth"):
        open_state(str(state), {**header, "truth": "other"}).close()
    fifo = tmp_path / "fifo.state"
    os.mkfifo(fifo)
    with pytest.raises(StateError, match="FIFO"):
        open_state(str(fifo), header)


def test_the_live_ladder_needs_a_team(tmp_path, capsys):
    truth_path, (a,) = honest_files(tmp_path, (0.5,))
    truth_path = usage_truth(tmp_path, truth_path)
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(a), "test", ladder_state=str(tmp_path / "s.state"))
    assert "no team for the Ladder" in capsys.readouterr().err
    assert "result" in evalai.evaluate(str(truth_path), str(a), "test")  # without a state file: the plain figures


@pytest.mark.parametrize("teams_text, message", [
    (None, "teams file"),  # no such file
    ('{"submissions": [{"file": "a.csv", "team": 5, "time": 1}]}', "submissions[0].team"),
    ('{"submissions": [{"file": "a.csv", "team": "red", "time": NaN}]}', "teams file"),
    ('{"submissions": [{"file": "a.csv", "team": "red", "time": "2024-13-45"}]}', "not an ISO 8601"),
    ('{"submissions": {"file": "a.csv"}}', "submissions"),
    ("file,team,time\n\"a.csv,red,1\n", "teams file"),
])
def test_a_hostile_teams_file_through_the_command_is_a_sentence_and_exit_2(tmp_path, teams_text, message):
    truth_path, _ = honest_files(tmp_path, (0.5,), sessions=50)
    teams = tmp_path / ("teams.csv" if teams_text and teams_text.startswith("file") else "teams.json")
    if teams_text is not None:
        teams.write_text(teams_text)
    code, out, err = run_main("ladder", "--teams", teams, "--truth", truth_path, "--split", "public=0.4")
    assert code == 2 and message in err and "Traceback" not in err and out == "", err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("damage", ["garbage", "no header", "header only half", "foreign header", "vector short", "a folder"])
def test_a_damaged_state_file_is_a_sentence_and_exit_2(tmp_path, damage):
    truth_path, paths = honest_files(tmp_path, (0.5, 0.8), sessions=200)
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    for k, path in enumerate(paths):
        evalai.evaluate(str(truth_path), str(path), "test", ladder_state=str(state), team="red", submitted_at=f"2024-03-0{k + 1}")
    whole = state.read_bytes()
    header, rest = whole.split(b"\n", 1)
    if damage == "garbage":
        state.write_bytes(whole + b"\x00\xff not json\n")
    elif damage == "no header":
        state.write_bytes(rest)
    elif damage == "header only half":
        state.write_bytes(header[: len(header) // 2] + b"\n" + rest)
    elif damage == "foreign header":
        state.write_bytes(json.dumps({**json.loads(header), "format": "other"}).encode() + b"\n" + rest)
    elif damage == "vector short":
        at = whole.index(b'"vector": ') + len(b'"vector": ')
        end = whole.index(b"}", at)
        state.write_bytes(whole[:at] + str(int(whole[at:end]) - 4).encode() + whole[end:])
    else:
        state.unlink()
        state.mkdir()
    code, out, err = run_main("ladder", "--state", state)
    assert code == 2 and "Ladder state" in err and "Traceback" not in err and out == "", err
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(paths[0]), "test", ladder_state=str(state), team="red")


def test_a_leader_vector_that_is_not_finite_is_refused_live(tmp_path, capsys):
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.8), sessions=200)
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    evalai.evaluate(str(truth_path), str(a), "test", ladder_state=str(state), team="red")
    whole = bytearray(state.read_bytes())
    whole[-9:-1] = np.array([np.nan], "<f8").tobytes()  # the last public session's score of the leader
    state.write_bytes(bytes(whole))
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(b), "test", ladder_state=str(state), team="red")
    assert "damaged score vector" in capsys.readouterr().err


def test_a_submission_evaluated_again_shows_the_same_figures(tmp_path):
    """EvalAI may run a submission again (a worker lost after the state was written): the second run finds the file equal
    to the leader it became (d = 0, not released) and returns the same figures."""
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.8), sessions=300)
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    runs = [evalai.evaluate(str(truth_path), str(path), "test", ladder_state=str(state), team="red")["submission_result"]
            for path in (a, b, b)]
    assert runs[2] == runs[1] != runs[0]
    assert [h["released"] for h in read_state(str(state))[1]] == [True, True, False]


# -- names others chose, and one file under two spellings ------------------------------------------------------------------


FORGED = "red\x1b[2J\nblue      1.000000  forged"  # an ESC sequence and a newline: a board line of its own


def test_a_team_name_from_evalai_follows_the_teams_files_rule(tmp_path, capsys):
    """EvalAI's metadata carries the name the participant chose: a control byte or a newline in it is refused as the teams
    file refuses it (the evaluation fails on the host's side, nothing is recorded), and a state record holding one
    (written by hand, or by an older scorer) is a damaged state, never printed raw."""
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.8), sessions=300)
    truth_path = usage_truth(tmp_path, truth_path)
    state = tmp_path / "ladder.state"
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(truth_path), str(a), "test", ladder_state=str(state), submission_metadata={"participant_team_name": FORGED})
    err = capsys.readouterr().err
    assert "is not 1 to 256 printable characters" in err and "\x1b" not in err and err.count("\n") == 1
    assert not state.exists()
    teams = tmp_path / "t.json"
    teams.write_text(json.dumps({"submissions": [{"file": str(a), "team": FORGED, "time": 1}]}))
    code, _, err = run_main("ladder", "--teams", teams, "--truth", truth_path, "--split", "public=0.4")
    assert code == 2 and "is not 1 to 256 printable characters" in err
    evalai.evaluate(str(truth_path), str(a), "test", ladder_state=str(state), team="red")
    header, records = state_records(state.read_bytes())
    records[0] = ({**records[0][0], "team": FORGED}, records[0][1])
    state.write_bytes(state_bytes(header, records))
    code, out, err = run_main("ladder", "--state", state)
    assert code == 2 and "record 1 has a team name that is not" in err and out == "" and "\x1b" not in err


def test_names_on_the_boards_are_shown_on_their_own_line_escaped(tmp_path):
    """A file name with an ESC byte and a newline (an upload's name) is one escaped line of every board's text."""
    truth_path, (a,) = honest_files(tmp_path, (0.5,), sessions=200)
    odd = tmp_path / "odd\x1b[31m\nname.csv"
    teams = tmp_path / "t.json"
    teams.write_text(json.dumps({"submissions": [{"file": str(a), "team": "red", "time": 1},
                                                 {"file": str(odd), "team": "red", "time": 2}]}))
    code, out, _ = run_main("ladder", "--teams", teams, "--truth", truth_path, "--split", "public=0.4")  # odd: not there
    assert code == 1 and "\x1b" not in out and "odd\\x1b[31m\\nname.csv" in out
    odd.write_bytes(a.read_bytes())
    code, out, _ = run_main("leaderboard", odd, a, "--truth", truth_path, "--bootstrap", 0)
    assert code == 0 and "\x1b" not in out and "odd\\x1b[31m\\nname.csv" in out


def test_a_file_named_twice_under_two_spellings_is_refused(tmp_path):
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.8), sessions=200)
    other = f"{a.parent}/./{a.name}"
    teams = teams_csv(tmp_path / "t.csv", [(a, "red", 1), (b, "red", 2), (other, "blue", 3)])
    code, out, err = run_main("ladder", "--teams", teams, "--truth", truth_path, "--split", "public=0.4")
    assert code == 2 and f"line 4 names the file {str(other)!r} again (as {str(a)!r}), first at line 2" in err and out == ""
    link = tmp_path / "link.csv"
    os.link(a, link)
    teams = teams_csv(tmp_path / "t.csv", [(a, "red", 1), (link, "blue", 2)])
    assert run_main("ladder", "--teams", teams, "--truth", truth_path, "--split", "public=0.4")[0] == 2


def test_a_teams_file_and_grade_records_match_a_file_under_any_spelling(tmp_path):
    truth_path, (a, b) = honest_files(tmp_path, (0.5, 0.7))
    records = write_records(tmp_path, [{"file": str(a), "path": str(a), "status": "scored", "score": scorer.score(a, truth_path).score},
                                       {"file": "up/b.csv", "path": str(b), "status": "invalid", "score": None, "error": "S010: repeated"}])
    spelled = [(f"{a.parent}/./{a.name}", "red", 1), (f"{b.parent}/../{b.parent.name}/{b.name}", "red", 2)]
    board = ladder_board(teams_csv(tmp_path / "t.csv", spelled), truth_path, "--results", records)
    assert [h["status"] for h in board["submissions"]] == ["scored", "invalid"]
