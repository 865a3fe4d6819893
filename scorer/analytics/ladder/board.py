"""The public board as the parameter-free Ladder (scorer.analytics.ladder.rule) would have shown it, beside the plain public
board and the private one, from every team's submissions in the order they were made.

  ladder:  each team's shown score R: the public score of its last released submission (its leader)
  public:  each team's best public score (the plain board: every submission's public score shown, the best kept; on
           equal scores the earlier submission)
  private: each team's best private score over its valid submissions (what it reached on the sessions nobody saw)
and for the ladder's and the public board's pick, that submission's private score: what the shown score was worth.
Ranks: 1 + the number of teams with a strictly higher score (equal scores share the better rank); a team with no valid
submission is on no board. The history holds every submission: its team, time, public and private score, and what
the Ladder did (released, S_t - S_leader, s/√n, the score shown after it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.ladder.rule import Decision, Offer, TeamLadder, session_scores
from scorer.analytics.leaderboard.standings import min_ranks
from scorer.analytics.split import PRIVATE, PUBLIC, Split
from scorer.analytics.teams_file import Entry
from scorer.engine.result import finite_or_none
from scorer.wording import counted, fixed, inline

RULE = ("parameter-free Ladder (Blum & Hardt 2015): a team's shown score changes only when a submission's public score "
        "beats its leader's by more than s/sqrt(n), s the standard deviation of their paired per-session differences "
        "over the n public sessions")


@dataclass(frozen=True)
class Figures:
    """A submission on each side of the split: public score, per-session public scores (float64), private score, and
    the public figure of each type (None for a type without public truth)."""

    public: float
    sessions: np.ndarray
    private: float | None
    by_type: dict[str, float | None]


class SplitFigures:
    """Turns submissions' SessionTables into their Figures on one split; the truth's denominators are summed once."""

    def __init__(self, truth: SessionTable, split: Split):
        self.weights, self.types = truth.weights, truth.types
        self.scored = [(t, 0) for t in range(len(truth.types))]
        self.public, self.private = np.flatnonzero(split.usage == PUBLIC), np.flatnonzero(split.usage == PRIVATE)
        _, den = truth.parts(truth.values, truth.sizes, self.scored)
        self.den_public, self.den_private = den[self.public].sum(axis=0), den[self.private].sum(axis=0)
        self.den_mean = self.den_public / max(len(self.public), 1)

    def score(self, num_sums: np.ndarray, den_sums: np.ndarray) -> float:
        """Σ_t w_t Σ num / Σ den, a type without truth adding 0 (as Result.score)."""
        ratios = np.where(den_sums > 0, num_sums / np.where(den_sums > 0, den_sums, 1.0), 0.0)
        return float((ratios * self.weights).sum())

    def of(self, table: SessionTable) -> Figures:
        num, _ = table.parts(table.values, table.sizes, self.scored)
        public = num[self.public]
        sums = public.sum(axis=0)
        private = self.score(num[self.private].sum(axis=0), self.den_private) if len(self.private) else None
        by_type = {t: finite_or_none(sums[k] / self.den_public[k]) if self.den_public[k] > 0 else None for k, t in enumerate(self.types)}
        return Figures(self.score(sums, self.den_public), session_scores(public, self.den_mean, self.weights), private, by_type)


def replay(teams: dict[str, list[Entry]], figures_of: Callable[[Entry], Figures | str]) -> list[dict]:
    """A history row per submission, in each team's order, the teams in turn. figures_of gives a submission's Figures, or
    why it has none (it is then on no board). One team's leader is held at a time."""
    history: list[dict] = []
    for team, entries in teams.items():
        ladder = TeamLadder()
        best: float | None = None
        for entry in entries:
            found = figures_of(entry)
            if isinstance(found, str):
                history.append(history_row(entry, team, None, None, found, ladder.shown, best))
                continue
            decision = ladder.offer(Offer(entry.file, found.public, found.sessions))
            best = found.public if best is None else max(best, found.public)
            history.append(history_row(entry, team, found, decision, None, decision.shown, best))
    return history


def history_row(entry: Entry, team: str, found: Figures | None, decision: Decision | None, reason: str | None,
                shown: float | None, best: float | None) -> dict:
    """One submission in the history: scored (its figures and the Ladder's decision) or invalid (the reason)."""
    return {"file": entry.file, "team": team, "time": entry.time, "status": "invalid" if found is None else "scored",
            "reason": reason, "public_score": None if found is None else finite_or_none(found.public),
            "private_score": None if found is None else finite_or_none(found.private),
            "released": bool(decision and decision.released),
            "difference": None if decision is None else finite_or_none(decision.difference),
            "threshold": None if decision is None else finite_or_none(decision.threshold),
            "ladder_shown": finite_or_none(shown), "public_shown": finite_or_none(best)}


def summarise(history: list[dict]) -> list[dict]:
    """A summary per team from its history rows (in its order): the Ladder's pick (its last released submission), the
    public board's (the best public score, the earlier on a tie), its best private score, with each board's rank."""
    teams: dict[str, dict] = {}
    for row in history:
        team = teams.setdefault(row["team"], {"team": row["team"], "submissions": 0, "valid": 0, "released": 0,
                                              "ladder": None, "public": None, "private": None})
        team["submissions"] += 1
        if row["status"] != "scored":
            continue
        team["valid"] += 1
        pick = {"score": row["public_score"], "submission": row["file"], "private_score": row["private_score"]}
        if row["released"]:
            team["released"] += 1
            team["ladder"] = dict(pick)
        if row["public_score"] is not None and (team["public"] is None or row["public_score"] > team["public"]["score"]):
            team["public"] = dict(pick)
        if row["private_score"] is not None and (team["private"] is None or row["private_score"] > team["private"]["score"]):
            team["private"] = {"score": row["private_score"]}
    out = list(teams.values())
    _rank(out)
    return out


def _rank(teams: list[dict]) -> None:
    """Each board's rank on every team that is on it (1 + the number strictly above)."""
    for board in ("ladder", "public", "private"):
        placed = [t for t in teams if t[board] is not None and t[board]["score"] is not None]
        if placed:
            ranks = min_ranks(np.array([t[board]["score"] for t in placed], np.float64))[0]
            for team, rank in zip(placed, ranks):
                team[board]["rank"] = int(rank)


def ladder_board(history: list[dict], metric: str, types, weights, split: dict) -> dict:
    """The JSON of `scorer ladder`: the teams by their ladder rank (then name), every submission, the split
    ({"source", "public", "private"}) and the rule."""
    order = sorted(summarise(history), key=lambda t: (t["ladder"] is None, (t["ladder"] or {}).get("rank", 0), t["team"]))
    return {"metric": metric, "types": list(types), "weights": [float(w) for w in weights], "split": split, "rule": RULE,
            "teams": order, "submissions": history}


def split_summary(split: Split) -> dict:
    counts = split.counts()
    return {"source": split.source, "public": counts["public"], "private": counts["private"]}


PLAIN_RULE = ("the Ladder (a public board that changes a team's shown score only when a new submission beats the one it "
              "shows by more than the noise between the two on the public sessions)")


def _above(gap: float) -> str:
    return f"{fixed(abs(gap), 4)} {'above' if gap >= 0 else 'below'}"


def lead(board: dict) -> str:
    """What the report shows, in plain words: how far each board's shown scores were from what the same submissions
    scored on the private sessions, which board was nearer, and how many teams each put at their private rank."""
    teams = board["teams"]
    valid = [h for h in board["submissions"] if h["status"] == "scored"]
    words = [f"The public board of {counted(len(teams), 'team')} ({counted(len(board['submissions']), 'submission')}) replayed two "
             f"ways, against what the same submissions scored on the {board['split']['private']:,} private sessions nobody saw: "
             f"{PLAIN_RULE}, and the plain public board (each team's best public score)."]
    gaps, placed = {}, {}
    for key in ("ladder", "public"):
        picks = [t for t in teams if t[key] is not None and t[key]["score"] is not None and t[key]["private_score"] is not None]
        if picks:
            gaps[key] = sum(t[key]["score"] - t[key]["private_score"] for t in picks) / len(picks)
            placed[key] = sum(1 for t in picks if t["private"] is not None and t[key].get("rank") == t["private"].get("rank"))
    if len(gaps) == 2:
        nearer = min(gaps, key=lambda key: (abs(gaps[key]), key != "ladder"))
        words.append(f"On average the Ladder showed scores {_above(gaps['ladder'])} their private worth, the plain board "
                     f"{_above(gaps['public'])}: "
                     + ("both are as near." if abs(gaps["ladder"]) == abs(gaps["public"]) else
                        f"the {'Ladder' if nearer == 'ladder' else 'plain board'} is nearer to what the submissions were worth."))
        words.append(f"The Ladder put {placed['ladder']} of {len(teams)} teams at their private rank, the plain board "
                     f"{placed['public']}.")
    released = sum(t["released"] for t in teams)
    words.append(f"The Ladder changed a shown score for {counted(released, 'submission')} of the {len(valid):,} valid ones.")
    return " ".join(words)


def render_text(board: dict, opening: bool = True) -> str:
    """The lead in plain words (unless not opening: a page says it above), then the three boards side by side, a team a
    line, by the Ladder's rank; then what the columns mean."""
    split = board["split"]
    valid = sum(1 for h in board["submissions"] if h["status"] == "scored")
    lines = [lead(board), ""] if opening else []
    lines += [f"{counted(len(board['teams']), 'team')}, {counted(len(board['submissions']), 'submission')} ({valid:,} valid) "
              f"scored by {board['metric']}; {split['source']}: {split['public']:,} public, {split['private']:,} private sessions",
              f"rule: {board['rule']}", ""]
    header = (f"{'ladder':>6} {'shown':>9} {'private':>9} | {'public':>6} {'best':>9} {'private':>9} | {'private':>7} {'best':>9} "
              f"| {'subs':>5} {'released':>8}  team")
    lines += [header, "-" * len(header)]
    for t in board["teams"]:
        ladder, public, private = t["ladder"] or {}, t["public"] or {}, t["private"] or {}
        lines.append(f"{ladder.get('rank', '-'):>6} {fixed(ladder.get('score')):>9} {fixed(ladder.get('private_score')):>9} | "
                     f"{public.get('rank', '-'):>6} {fixed(public.get('score')):>9} {fixed(public.get('private_score')):>9} | "
                     f"{private.get('rank', '-'):>7} {fixed(private.get('score')):>9} | {t['submissions']:>5} {t['released']:>8}  "
                     f"{inline(t['team'])}")
    invalid = [h for h in board["submissions"] if h["status"] != "scored"]
    if invalid:
        lines += ["", f"not scored ({counted(len(invalid), 'submission')}, on no board):"]
        lines += [f"  {inline(h['file'])} ({inline(h['team'])}): {inline(h['reason'])}" for h in invalid]
    lines += ["", "key: ladder   the rank and score the Ladder shows (its leader's public score), and that submission's private score",
              "     public   the plain public board: the team's best public score, and that submission's private score",
              "     private  the team's best private score over its valid submissions",
              "     released how many of the team's submissions changed its Ladder score"]
    return "\n".join(lines)
