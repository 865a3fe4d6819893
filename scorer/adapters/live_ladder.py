"""The parameter-free Ladder applied live by a grader that sees a competition's submissions one after another (the EvalAI
remote worker): each scored submission is offered to its team's Ladder (scorer.analytics.ladder.rule), whose state between
submissions is a file (scorer.adapters.ladder_state), and the figures returned for the leaderboard are the team's shown
ones: the leader's public score and public figure per type, never the new submission's own (that would undo the Ladder).

Settings (keywords of evalai.evaluate, else the environment): ladder_state / $SCORER_LADDER_STATE (the file; no Ladder
without it), ladder_split / $SCORER_LADDER_SPLIT ("usage": the truth's Usage column, default; or "public=F", hashed),
ladder_seed / $SCORER_LADDER_SEED (the hashed split's seed, default 0); the team from team= or EvalAI's
submission_metadata (participant_team_name, else participant_team), the time from submitted_at= or submission_metadata's
submitted_at (ISO 8601), else now.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from scorer.adapters.ladder_state import FORMAT, VERSION, LadderState, StateError, open_state
from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.ladder.board import SplitFigures, history_row, split_summary
from scorer.analytics.ladder.rule import Offer, TeamLadder
from scorer.analytics.leaderboard.streamed_bootstrap import truth_table
from scorer.analytics.split import parse_split, resolve_split
from scorer.analytics.teams_file import TEAM_RULE, Entry, team_problem


class LadderSettingError(ValueError):
    """The host's Ladder settings are wrong (a split the truth cannot give, no team): the host's business."""


@dataclass(frozen=True)
class Settings:
    state: str
    split: str
    seed: int

    @classmethod
    def of(cls, kwargs: dict) -> Settings | None:
        state = kwargs.get("ladder_state") or os.environ.get("SCORER_LADDER_STATE")
        if not state:
            return None
        seed = kwargs.get("ladder_seed", os.environ.get("SCORER_LADDER_SEED", "0"))
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise LadderSettingError(f"the Ladder's seed {seed!r} is not a whole number") from None
        return cls(str(state), str(kwargs.get("ladder_split") or os.environ.get("SCORER_LADDER_SPLIT") or "usage"), seed)


def team_and_time(kwargs: dict) -> tuple[str, float]:
    """The submitting team's name and the submission's time (seconds since 1970) from the keywords EvalAI passes."""
    metadata = kwargs.get("submission_metadata") or {}
    metadata = metadata if isinstance(metadata, dict) else {}
    team = kwargs.get("team") or metadata.get("participant_team_name") or metadata.get("participant_team")
    if team is None or not str(team).strip():
        raise LadderSettingError("no team for the Ladder: pass team= or EvalAI's submission_metadata")
    if team_problem(str(team).strip()):  # the participant chose it: the teams file's rule, as it reaches every board
        raise LadderSettingError(f"the team name {str(team)[:80]!r} is not {TEAM_RULE}: "
                                 "rename the team on EvalAI, or pass team=")
    moment = kwargs.get("submitted_at") or metadata.get("submitted_at")
    try:
        when = datetime.fromisoformat(str(moment).replace("Z", "+00:00")) if moment else None
    except ValueError:
        raise LadderSettingError(f"the submission time {str(moment)[:40]!r} is not ISO 8601") from None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return str(team).strip(), when.timestamp() if when else time.time()


def header_of(truth_path: str, truth, competition, split) -> dict:
    from scorer.truth.cache import content_key

    return {"format": FORMAT, "version": VERSION, "metric": str(competition.metric), "types": list(competition.types),
            "weights": [float(w) for w in competition.weights], "split": split_summary(split),
            "truth": content_key(truth_path) or "empty"}


def shown_values(result, settings: Settings, truth_path: str, competition, submission: str, kwargs: dict) -> dict[str, float]:
    """Offer a scored Result to its team's Ladder, record it in the state file, and return the figures the leaderboard
    shows the team: {"score": its shown score, type: the leader's public figure}."""
    truth = result.truth
    fraction = None if settings.split == "usage" else parse_split(settings.split)
    if fraction is None and getattr(truth, "usage", None) is None:
        raise LadderSettingError("the Ladder's split is the truth's Usage column, and this truth has none: set ladder_split=public=F")
    split = resolve_split(truth, fraction, settings.seed)
    public = split.counts()["public"]
    if public < 2:  # a paired test needs two sessions; the state's header would be refused at its next read
        raise LadderSettingError(f"the Ladder's public part holds {public} session(s) of this truth; it needs 2 or more: give "
                                 "ladder_split a larger public share, or a truth of more sessions")
    team, when = team_and_time(kwargs)
    figures = SplitFigures(truth_table(truth, competition), split).of(SessionTable.from_result(result))
    state = open_state(settings.state, header_of(truth_path, truth, competition, split))
    try:
        decision, leader = _offer(state, team, submission, figures)
        before = state.teams[team].best if team in state.teams else None
        best = figures.public if before is None else max(before, figures.public)
        row = history_row(Entry(submission, team, when, 0), team, figures, decision, None, decision.shown, best)
        state.append({**row, "figures": figures.by_type}, figures.sessions if decision.released else None)
    finally:
        state.close()
    shown = figures.by_type if decision.released else leader["figures"]
    return {"score": float(decision.shown), **{t: float(v) if v is not None else 0.0 for t, v in shown.items()}}


def _offer(state: LadderState, team: str, submission: str, figures):
    """(the Ladder's decision, the leader's record before it) for one submission of `team`."""
    known = state.teams.get(team)
    leader = known.leader if known is not None else None
    if leader is not None and not isinstance(leader.get("figures"), dict):
        raise StateError(f"the Ladder state {state.path}: the leader of team {team!r} has no figures")
    ladder = TeamLadder(None if leader is None else Offer(leader["file"], leader["public_score"], state.leader_sessions(team)))
    return ladder.offer(Offer(submission, figures.public, figures.sessions)), leader
