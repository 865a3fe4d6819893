"""scorer.ladder: a competition's submissions replayed through the parameter-free Ladder (`scorer ladder` prints its
boards): the public board it shows, beside the plain public board and the private one."""

from __future__ import annotations

import sys

from scorer.errors import UsageError
from scorer.jobs.board import Board

TEAM_COLUMNS = ("team", "ladder_rank", "ladder_score", "ladder_private_score", "public_rank", "public_score",
                "public_private_score", "private_rank", "private_score", "submissions", "released")


class Ladder(Board):
    """The boards of `scorer ladder`: to_dict() its JSON (the teams by the Ladder's rank, every submission, the split, the
    rule), to_text() its text; to_arrow() one row per team, its three boards side by side: the rank and score the Ladder
    shows and that submission's private score, the plain public board's, the private board's."""

    columns = TEAM_COLUMNS

    def to_text(self) -> str:
        from scorer.analytics.ladder.board import render_text

        return render_text(self.data)

    @property
    def exit_code(self) -> int:
        """The command's: 1 when a submission could not be scored, else 0."""
        return 0 if all(row["status"] == "scored" for row in self.data["submissions"]) else 1

    def rows(self) -> list[dict]:
        rows = []
        for t in self.data["teams"]:
            ladder, public, private = t["ladder"] or {}, t["public"] or {}, t["private"] or {}
            rows.append({"team": t["team"], "ladder_rank": ladder.get("rank"), "ladder_score": ladder.get("score"),
                         "ladder_private_score": ladder.get("private_score"), "public_rank": public.get("rank"),
                         "public_score": public.get("score"), "public_private_score": public.get("private_score"),
                         "private_rank": private.get("rank"), "private_score": private.get("score"),
                         "submissions": t["submissions"], "released": t["released"]})
        return rows

    def _repr_html_(self) -> str:
        from scorer.engine import display
        from scorer.wording import counted

        data = self.data
        split = data["split"]
        detail = (f"{counted(len(data['submissions']), 'submission')} scored by {data['metric']}; {split['source']}: "
                  f"{split['public']:,} public, {split['private']:,} private sessions")
        invalid = [[h["file"], h["team"], h["reason"]] for h in data["submissions"] if h["status"] != "scored"]
        return display.block(display.heading(f"the Ladder over {counted(len(data['teams']), 'team')}", detail),
                             display.table(self.columns, [[row[c] for c in self.columns] for row in self.rows()]),
                             display.table(["not scored", "team", "reason"], invalid) if invalid else "",
                             display.paragraph(f"rule: {data['rule']}"))


def ladder(teams=None, results: str | None = None, truth=None, *, competition="otto", config=None, split: str | None = None,
           seed: int = 0, state: str | None = None, lenient: bool = False, threads: int = 2) -> Ladder:
    """Replay a competition's submissions through the parameter-free Ladder: the options are those of `scorer ladder`.

    teams: the teams file (which team made each submission file, and when); results: `scorer grade -o`'s records (an
    invalid record is not scored again); truth and split (public=F or usage): the public sessions the Ladder tests on.
    Or state alone: the Ladder state an EvalAI remote worker kept, replayed as it was decided.
    """
    if state:
        if teams or truth or results or split:
            raise UsageError("--state replays the EvalAI worker's decisions: give it alone (no --teams, --truth, --results or --split)")
        return Ladder(from_state(state))
    missing = [option for option, value in (("--teams", teams), ("--truth", truth), ("--split", split)) if not value]
    if missing:
        raise UsageError(f"scorer ladder needs {', '.join(missing)} (or --state FILE)")
    return Ladder(replayed(teams, results, truth, competition, config, split, seed, lenient, threads))


def replayed(teams, results, truth, competition, config, split, seed, lenient, threads) -> dict:
    """Every team's submissions scored one at a time, in the order they were made, through the Ladder."""
    from scorer.analytics.bootstrap import SessionTable
    from scorer.analytics.ladder.board import SplitFigures, ladder_board, replay, split_summary
    from scorer.analytics.leaderboard.board import unranked_reason
    from scorer.analytics.leaderboard.streamed_bootstrap import truth_table
    from scorer.analytics.teams_file import by_team, read_teams
    from scorer.api import resolve_competition, resolve_truth, score
    from scorer.jobs.leaderboard_engines import warn_changed
    from scorer.jobs.options import split_of, split_wanted, whole
    from scorer.jobs.records import read_records

    whole("seed", seed, 0, 2**63 - 1)
    wanted = split_wanted(split)
    entries = read_teams(teams)
    records = _matched(entries, read_records(results), results) if results else {}
    competition = resolve_competition(competition, config)
    truth_read = resolve_truth(truth, competition)
    resolved = split_of(wanted, truth_read, truth, seed)
    if resolved.counts()["public"] < 2:
        raise UsageError(f"--split {split} leaves {resolved.counts()['public']} public sessions: the Ladder's paired test needs 2 or more")
    figures = SplitFigures(truth_table(truth_read, competition), resolved)

    def figures_of(entry):
        record = records.get(entry.file)
        if record is not None and record.get("score") is None:
            return record.get("error") or "invalid in the grade records"
        result = score(entry.file, truth_read, competition, strict=not lenient, threads=threads, untrusted=True)
        warn_changed(entry.file, result.score, record, results)
        reason = unranked_reason(result)
        return reason if reason is not None else figures.of(SessionTable.from_result(result))

    history = replay(by_team(entries), figures_of)
    return ladder_board(history, str(competition.metric), competition.types, competition.weights, split_summary(resolved))


def _matched(entries, records: list[dict], results: str) -> dict:
    """The grade record of each file the teams file names (by the record's "file", else its "path", each under any
    spelling: scorer.file_identity); UsageError for a file the records do not hold."""
    from scorer.file_identity import identity

    by_file = {identity(r["file"]): r for r in records} | {identity(r["path"]): r for r in records if isinstance(r.get("path"), str)}
    missing = [e.file for e in entries if identity(e.file) not in by_file]
    if missing:
        raise UsageError(f"the teams file names {missing[0]!r}, which --results {results} holds no record of"
                         + (f" ({len(missing) - 1:,} more)" if len(missing) > 1 else ""))
    return {e.file: by_file[identity(e.file)] for e in entries}


def from_state(path: str) -> dict:
    """The boards of the decisions an EvalAI worker recorded in its Ladder state (read only; a torn last record left out)."""
    from scorer.adapters.ladder_state import StateError, read_state
    from scorer.analytics.ladder.board import ladder_board

    try:
        header, history = read_state(path)
    except StateError as error:
        raise UsageError(str(error)) from None
    if not history:
        print(f"scorer: the Ladder state {path} holds no submission yet", file=sys.stderr)
    return ladder_board(history, header["metric"], header["types"], header["weights"], header["split"])
