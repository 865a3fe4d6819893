"""The Ladder against the paper's attack (Blum and Hardt 2015, section 5: random submissions, the ones the board likes
combined by vote), transposed to recommender lists, through `scorer ladder` itself.

    python bench/bench_ladder.py [--seeds 10] [--sessions 4000] [--queries 100] [--pool 40] [--public 0.5]

Per seed, a competition of OTTO's shape: every session has a pool of `pool` candidate items, its truth is drawn from
the pool (clicks: one item; carts and orders: 1 to 3 items for some sessions), and the public sessions are a hashed
split. Two attacking teams each submit `queries` random submissions (per session and type, 20 items drawn from the
pool), and then one combined submission:

  plain:  the random submissions whose public score (the plain board's feedback) is above the median are kept;
  ladder: the random submissions the Ladder released (its only feedback: the shown score moved) are kept;
  each combined by vote: per session and type, the 20 pool items most often in the kept lists (ties at random).

Everything is scored by `scorer ladder --teams ... --split public=F`: the random submissions first, for the feedback;
then each team's pick so far (the plain board's best, the Ladder's leader) followed by its combined submission, which
leaves both boards where the whole history would (the Ladder's state is its leader, the plain board's its best). Reported per seed, then as the mean over the seeds with its standard error:

  gain on the plain board:  the team's best public score after the combined submission minus before it;
  gain on the Ladder board: the team's shown score after the combined submission minus before it;
  and why: each combined submission's public and private score minus the mean of the random ones (the private one is
  the sessions nobody saw: no real gain).

Goal (issue 32): the gain on the Ladder board within one standard error of zero, on the plain board several.
tests/test_ladder.py runs one seed of the same attack (attack()) and checks the same things.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np

TYPES = ("clicks", "carts", "orders")
K = 20


@dataclass
class Competition:
    truth: Path
    pools: np.ndarray  # (sessions, pool) item ids of each session's candidates


def make_competition(folder: Path, sessions: int, pool: int, rng) -> Competition:
    """A truth of OTTO's JSONL shape whose items come from each session's pool of candidates."""
    pools = (np.arange(1, sessions + 1)[:, None] * 1000 + np.arange(pool)[None, :]).astype(np.int64)
    lines = []
    for s in range(sessions):
        labels: dict = {"clicks": int(pools[s, rng.integers(pool)])}
        for t, share in (("carts", 0.5), ("orders", 0.3)):
            if rng.random() < share:
                labels[t] = sorted(int(x) for x in rng.choice(pools[s], int(rng.integers(1, 4)), replace=False))
        lines.append(json.dumps({"session": s + 1, "labels": labels}))
    truth = folder / "truth.jsonl"
    truth.write_text("\n".join(lines) + "\n")
    return Competition(truth, pools)


def random_lists(competition: Competition, rng) -> np.ndarray:
    """(sessions, types, K) pool positions: K distinct candidates per session and type, at random."""
    sessions, pool = competition.pools.shape
    keys = rng.random((sessions, len(TYPES), pool))
    return np.argsort(keys, axis=2)[:, :, :K].astype(np.int32)


def vote(competition: Competition, kept: list[np.ndarray], rng) -> np.ndarray:
    """Per session and type the K candidates most often in the kept lists (ties broken at random)."""
    sessions, pool = competition.pools.shape
    counts = np.zeros((sessions, kept[0].shape[1], pool))  # kept lists: (sessions, types, K)
    for lists in kept:
        np.put_along_axis(counts, lists.astype(np.int64), np.take_along_axis(counts, lists.astype(np.int64), 2) + 1, 2)
    counts += rng.random(counts.shape) * 0.5  # a random order among equal counts
    return np.argsort(-counts, axis=2)[:, :, :K].astype(np.int32)


def write_lists(path: Path, competition: Competition, lists: np.ndarray) -> Path:
    rows = ["session_type,labels"]
    items = np.take_along_axis(competition.pools[:, None, :], lists.astype(np.int64), 2)
    for s in range(items.shape[0]):
        for t, name in enumerate(TYPES):
            rows.append(f"{s + 1}_{name}," + " ".join(map(str, items[s, t])))
    path.write_text("\n".join(rows) + "\n")
    return path


def ladder_json(teams: Path, truth: Path, public: float, seed: int) -> dict:
    """`scorer ladder --format json` in this process."""
    from scorer.cli.main import main

    out = StringIO()
    with redirect_stdout(out):
        code = main(["ladder", "--teams", str(teams), "--truth", str(truth), "--split", f"public={public}", "--seed", str(seed),
                     "--format", "json"])
    if code != 0:
        raise RuntimeError(f"scorer ladder exited {code}")
    return json.loads(out.getvalue())


def write_teams(path: Path, rows: list[tuple[Path, str]]) -> Path:
    path.write_text("file,team,time\n" + "".join(f"{file},{team},{k}\n" for k, (file, team) in enumerate(rows)))
    return path


def attack(folder: Path, seed: int, sessions: int = 4000, queries: int = 100, pool: int = 40, public: float = 0.5) -> dict:
    """One run of the attack on both boards (see the module docstring): the figures of the last submissions and the
    boards' JSON."""
    rng = np.random.default_rng(seed)
    competition = make_competition(folder, sessions, pool, rng)
    lists = {team: [random_lists(competition, rng) for _ in range(queries)] for team in ("plain", "ladder")}
    rows = [(write_lists(folder / f"{team}-{k:03d}.csv", competition, made), team)
            for team in lists for k, made in enumerate(lists[team])]
    first = ladder_json(write_teams(folder / "teams.csv", rows), competition.truth, public, seed)
    seen = {team: [h for h in first["submissions"] if h["team"] == team] for team in lists}
    public_scores = np.array([h["public_score"] for h in seen["plain"]])
    kept = {"plain": [lists["plain"][k] for k in np.flatnonzero(public_scores > np.median(public_scores))],
            "ladder": [lists["ladder"][k] for k, h in enumerate(seen["ladder"]) if h["released"]]}
    combined = [(write_lists(folder / f"{team}-combined.csv", competition, vote(competition, kept[team], rng)), team) for team in lists]
    # the second pass replays each team's pick so far (the plain board's best, the Ladder's leader) then its combined file:
    # the boards after it are those of the whole history (a Ladder's state is its leader; the plain board's, its best)
    picks = [(Path(_pick(seen[team], shown)["file"]), team) for team, shown in (("plain", "public_score"), ("ladder", "released"))]
    board = ladder_json(write_teams(folder / "teams-after.csv", picks + combined), competition.truth, public, seed)
    out: dict = {"seed": seed, "kept": {team: len(kept[team]) for team in kept}, "board": board}
    for team, shown in (("plain", "public_shown"), ("ladder", "ladder_shown")):
        randoms, last = seen[team], [h for h in board["submissions"] if h["team"] == team][-1]
        out[team] = {"gain": last[shown] - randoms[-1][shown],
                     "public": last["public_score"] - np.mean([h["public_score"] for h in randoms]),
                     "private": last["private_score"] - np.mean([h["private_score"] for h in randoms]),
                     "released": last["released"],
                     "score_se": float(np.std([h["public_score"] for h in randoms], ddof=1))}
    return out


def _pick(history: list[dict], key: str) -> dict:
    """The plain board's pick (the best public score, the earlier on a tie) or the Ladder's (its last released)."""
    if key == "released":
        return [h for h in history if h["released"]][-1]
    return max(history, key=lambda h: h["public_score"])


def mean_se(values: list[float]) -> tuple[float, float]:
    values_ = np.asarray(values, np.float64)
    return float(values_.mean()), float(values_.std(ddof=1) / np.sqrt(len(values_))) if len(values_) > 1 else float("nan")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=4000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--pool", type=int, default=40)
    parser.add_argument("--public", type=float, default=0.5)
    args = parser.parse_args(argv)
    print(f"{args.sessions:,} sessions ({args.public:g} public), pools of {args.pool}, {args.queries} random submissions per "
          f"team, seeds 0-{args.seeds - 1}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    runs = []
    started = time.perf_counter()
    for seed in range(args.seeds):
        with tempfile.TemporaryDirectory(prefix="bench-ladder-") as folder:
            run = attack(Path(folder), seed, args.sessions, args.queries, args.pool, args.public)
        runs.append(run)
        print(f"seed {seed}: plain board gain {run['plain']['gain']:+.5f} (kept {run['kept']['plain']}; combined public "
              f"{run['plain']['public']:+.5f}, private {run['plain']['private']:+.5f}); Ladder board gain {run['ladder']['gain']:+.5f} "
              f"(kept {run['kept']['ladder']}, combined released: {run['ladder']['released']}; "
              f"public {run['ladder']['public']:+.5f}, private {run['ladder']['private']:+.5f})", flush=True)
    se_one = float(np.mean([r["plain"]["score_se"] for r in runs]))
    print(f"\nover {args.seeds} seeds ({time.perf_counter() - started:.0f} s; a random submission's public score varies by "
          f"{se_one:.5f}, its standard deviation):")
    found = {}
    for team, board in (("plain", "plain public board"), ("ladder", "Ladder board")):
        gain, gain_se = found[team] = mean_se([r[team]["gain"] for r in runs])
        pub, pub_se = mean_se([r[team]["public"] for r in runs])
        private, private_se = mean_se([r[team]["private"] for r in runs])
        print(f"  {board:<18}: public gain {gain:+.5f} ± {gain_se:.5f} ({gain / gain_se if gain_se > 0 else 0:+.1f} SE); "
              f"its combined file over the random ones: public {pub:+.5f} ± {pub_se:.5f}, private {private:+.5f} ± {private_se:.5f}")
    (ladder, ladder_se), (plain, plain_se) = found["ladder"], found["plain"]
    print(f"goal (issue 32): the Ladder board's gain within one SE of zero: {'met' if abs(ladder) <= ladder_se else 'NOT met'}; "
          f"the plain board's several SE: {plain / plain_se if plain_se > 0 else float('inf'):.1f} SE")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
