"""scorer ladder: the public board as the parameter-free Ladder would have shown it, beside the plain public board and the
private one, from a competition's submissions (a teams file, and `scorer grade`'s records) or the Ladder state of the
EvalAI remote worker (which applied it live)."""

from __future__ import annotations

import sys

from scorer.cli.common import add_competition, add_format, add_seed, add_threads, output_path, print_board

USAGE = "scorer ladder --teams FILE --truth TRUTH --split public=F|usage [--results FILE] [options]  |  scorer ladder --state FILE"
EXAMPLES = ("scorer ladder --teams teams.csv --results results.jsonl --truth test_labels.jsonl --split usage",
            "scorer ladder --teams teams.json --truth test_labels.jsonl --split public=0.3 --seed 7 --report ladder.html",
            "scorer ladder --state /srv/evalai/ladder.state --format json")
HELP = ("replay the submissions of a competition through the parameter-free Ladder: the public board it shows, the plain "
        "public board and the private board")


def add_arguments(parser) -> None:
    parser.add_argument("--teams", metavar="FILE", help="which team made each submission file, and when: CSV (file,team,time) or "
                        "JSON ({\"submissions\": [{\"file\", \"team\", \"time\"}]}); time: ISO 8601 or seconds since 1970")
    parser.add_argument("--results", metavar="FILE", help="the JSON lines of `scorer grade -o`: a file the teams file names is "
                        "matched to its record (by the file as given to grade, or its absolute path); an invalid record is "
                        "not scored again")
    parser.add_argument("--truth", help="ground truth (as for `scorer score`)")
    add_competition(parser)
    parser.add_argument("--split", metavar="public=F|usage", help="the public sessions the Ladder tests on, the rest private: "
                        "public=F hashes the sessions (seeded by --seed); usage: the truth's Usage column")
    add_seed(parser, what="seed of --split public=F")
    parser.add_argument("--state", metavar="FILE", help="instead: the Ladder state the EvalAI remote worker kept "
                        "(SCORER_LADDER_STATE): its records replayed as they were decided, nothing scored")
    parser.add_argument("--lenient", action="store_true", help="missing, repeated and unknown rows are warnings (default: strict)")
    parser.add_argument("--report", metavar="FILE", help="write the public-against-private plot: FILE.html (with the boards) or FILE.png")
    add_format(parser)
    add_threads(parser, what="threads of each file's pass")


def run(args) -> int:
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError

    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)
        refuse_overwriting(args, [("--report", args.report)])
    if args.state:
        if args.teams or args.truth or args.results or args.split:
            raise UsageError("--state replays the EvalAI worker's decisions: give it alone (no --teams, --truth, --results or --split)")
        board = from_state(args.state)
    else:
        missing = [option for option, value in (("--teams", args.teams), ("--truth", args.truth), ("--split", args.split)) if not value]
        if missing:
            raise UsageError(f"scorer ladder needs {', '.join(missing)} (or --state FILE)")
        board = replayed(args)
    from scorer.analytics.ladder_board import render_text
    from scorer.analytics.ladder_plot import write_ladder_report

    print_board(args, board, render_text, write_ladder_report)
    return 0 if all(row["status"] == "scored" for row in board["submissions"]) else 1


def replayed(args) -> dict:
    """Every team's submissions scored one at a time, in the order they were made, through the Ladder."""
    from scorer.analytics.bootstrap import SessionTable
    from scorer.analytics.ladder_board import SplitFigures, ladder_board, replay, split_summary
    from scorer.analytics.leaderboard import unranked_reason
    from scorer.analytics.streamed_bootstrap import truth_table
    from scorer.analytics.teams_file import by_team, read_teams
    from scorer.api import resolve_competition, resolve_truth, score
    from scorer.cli.analytics_options import split_option
    from scorer.cli.leaderboard import read_records
    from scorer.cli.leaderboard_engines import warn_changed
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError

    entries = read_teams(args.teams)
    refuse_overwriting(args, [("--report", args.report)], [("a submission the teams file names", e.file) for e in entries])
    records = _matched(entries, read_records(args.results), args.results) if args.results else {}
    competition = resolve_competition(args.competition, args.config)
    truth = resolve_truth(args.truth, competition)
    split = split_option(args.split, truth, args.truth, args.seed)
    if split.counts()["public"] < 2:
        raise UsageError(f"--split {args.split} leaves {split.counts()['public']} public sessions: the Ladder's paired test needs 2 or more")
    figures = SplitFigures(truth_table(truth, competition), split)

    def figures_of(entry):
        record = records.get(entry.file)
        if record is not None and record.get("score") is None:
            return record.get("error") or "invalid in the grade records"
        result = score(entry.file, truth, competition, strict=not args.lenient, threads=args.threads, untrusted=True)
        warn_changed(entry.file, result.score, record, args.results)
        reason = unranked_reason(result)
        return reason if reason is not None else figures.of(SessionTable.from_result(result))

    history = replay(by_team(entries), figures_of)
    return ladder_board(history, str(competition.metric), competition.types, competition.weights, split_summary(split))


def _matched(entries, records: list[dict], results: str) -> dict:
    """The grade record of each file the teams file names (by the record's "file", else its "path", each under any
    spelling: scorer.file_identity); UsageError for a file the records do not hold."""
    from scorer.errors import UsageError
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
    from scorer.analytics.ladder_board import ladder_board
    from scorer.errors import UsageError

    try:
        header, history = read_state(path)
    except StateError as error:
        raise UsageError(str(error)) from None
    if not history:
        print(f"scorer: the Ladder state {path} holds no submission yet", file=sys.stderr)
    return ladder_board(history, header["metric"], header["types"], header["weights"], header["split"])
