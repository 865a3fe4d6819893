"""scorer ladder: the public board as the parameter-free Ladder would have shown it, beside the plain public board and the
private one, from a competition's submissions (a teams file, and `scorer grade`'s records) or the Ladder state of the
EvalAI remote worker (which applied it live)."""

from __future__ import annotations

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
    from scorer.analytics.ladder.plot import write_ladder_report
    from scorer.cli.outputs import refuse_overwriting
    from scorer.jobs.ladder import ladder

    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)
        named = []
        if args.teams and not args.state:  # nor any submission the teams file names
            from scorer.analytics.teams_file import read_teams

            named = [("a submission the teams file names", entry.file) for entry in read_teams(args.teams)]
        refuse_overwriting(args, [("--report", args.report)], named)
    board = ladder(args.teams, args.results, args.truth, competition=args.competition, config=args.config, split=args.split,
                   seed=args.seed, state=args.state, lenient=args.lenient, threads=args.threads)
    print_board(args, board, write_ladder_report)
    return board.exit_code
