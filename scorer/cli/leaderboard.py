"""scorer leaderboard: rank many submissions with rank intervals, p_first, tiers and the public -> private shake-up."""

from __future__ import annotations

import sys

from scorer.cli.common import (
    add_cluster_options,
    add_competition,
    add_format,
    add_threads,
    output_path,
    positive_int,
    print_board,
    whole_number,
)

USAGE = "scorer leaderboard (SUBMISSION... | --results FILE) [--truth TRUTH] [--engine stream|memory|dask] [options]"
EXAMPLES = ("scorer leaderboard final/*.csv --truth test_labels.jsonl --bootstrap 1000 --report leaderboard.html",
            "scorer leaderboard --results results.jsonl --truth test_labels.jsonl --split public=0.3 --method bh --format json",
            "scorer leaderboard --results results.jsonl --truth test.truth.npz --engine dask --scheduler tcp://10.0.0.5:8786",
            "scorer leaderboard baseline.csv --truth test_labels.jsonl --mde 500000",
            "scorer leaderboard team_*.csv --truth challenge_truth.json --competition spotify-mpd --borda")
HELP = "rank many submissions on one joint session bootstrap: rank intervals, p(first), tiers of tied submissions"


def add_arguments(parser) -> None:
    from scorer.cli.analytics_options import add_bootstrap, add_resampling_options

    parser.add_argument("submissions", nargs="*", metavar="SUBMISSION", help="submission files (CSV, plain, .gz or .zip)")
    parser.add_argument("--results", metavar="FILE", help="the JSON lines of `scorer grade -o` (its files are scored again "
                        "with --truth; without it, the table alone)")
    parser.add_argument("--truth", help="ground truth (as for `scorer score`); needed for submission files and for intervals")
    add_competition(parser)
    add_bootstrap(parser, 1000, "N joint paired resamples of the sessions, the same for every submission (default 1000)")
    add_resampling_options(parser)
    parser.add_argument("--top", type=positive_int, default=3, metavar="K", help="report the probability of a top-K rank (default 3)")
    parser.add_argument("--method", choices=("holm", "bh"), default="holm",
                        help="multiple-comparison control of the tiers: holm (family-wise error, default) or bh "
                             "(Benjamini-Hochberg, false discovery rate), over every pair of submissions at α = 1 - level")
    parser.add_argument("--split", metavar="public=F|usage", help="rank on public and private sessions too: the expected "
                        "public -> private rank change (public=F hashes the sessions, seeded by --seed; usage: the truth's Usage column)")
    parser.add_argument("--mde", nargs="?", type=whole_number(1, 10**12, "a number of sessions"), const=0, metavar="N",
                        help="the smallest score difference N sessions detect at 80%% power (default N: the private sessions, "
                             "else all), from the per-session variance")
    parser.add_argument("--report", metavar="FILE", help="write the rank-interval plot: FILE.html (with the table) or FILE.png")
    parser.add_argument("--lenient", action="store_true", help="missing, repeated and unknown rows are warnings (default: strict)")
    parser.add_argument("--engine", choices=("stream", "memory", "dask"), default="stream",
                        help="stream (default): each file reduced to its resamples as it is scored here, memory flat in the "
                             "sessions; memory: every file's per-session columns kept (4 bytes x sessions x types each), one "
                             "bootstrap pass; dask: one task per file scores and reduces it on a Dask cluster. The same board "
                             "(fractional metrics' interval ends within a few 1e-6 relative; --mde beyond 16,384 "
                             "planning sessions from a sample of them)")
    parser.add_argument("--borda", nargs="?", const="", metavar="METRICS",
                        help="rank by a Borda count over several metrics instead (comma-separated; default: the competition's "
                             "metrics), as the MPD challenge ranked its teams: P points for a first place, 1 for the last, per metric")
    add_cluster_options(parser, "with --engine dask: ")
    add_format(parser)
    add_threads(parser, what="threads of each pass and of the bootstrap (and the lanes of its sums: the same --threads, the same bits)")


def run(args) -> int:
    from scorer.analytics.leaderboard.plot import write_leaderboard_report
    from scorer.cli.outputs import refuse_overwriting
    from scorer.jobs.leaderboard import leaderboard
    from scorer.wording import inline

    if args.borda is not None:
        return _borda(args)
    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)
        refuse_overwriting(args, [("--report", args.report)])
    board = leaderboard(args.submissions, args.truth, results=args.results, competition=args.competition, config=args.config,
                        bootstrap=args.bootstrap, seed=args.seed, level=args.level, top=args.top, method=args.method,
                        split=args.split, mde=args.mde, lenient=args.lenient, engine=args.engine, scheduler=args.scheduler,
                        workers=args.workers, threads=args.threads)
    if not board.ranked:
        for u in board.unranked:
            print(f"{inline(u['name'])}: {inline(u['reason'])}", file=sys.stderr)
        print("scorer: no submission could be ranked", file=sys.stderr)
        return 1
    print_board(args, board, write_leaderboard_report)
    if board.cut_short:
        print("scorer: the Dask run was cut short (a task never finished): rerun the same command", file=sys.stderr)
    return board.exit_code


def _borda(args) -> int:
    """--borda: the submission files scored and ranked by a Borda count (no resamples: the options of the bootstrap are
    not taken)."""
    from scorer.errors import UsageError
    from scorer.jobs.leaderboard import BORDA_ALONE, leaderboard

    if args.report:
        raise UsageError(BORDA_ALONE)
    board = leaderboard(args.submissions, args.truth, results=args.results, competition=args.competition, config=args.config,
                        split=args.split, mde=args.mde, lenient=args.lenient, engine=args.engine, scheduler=args.scheduler,
                        workers=args.workers, threads=args.threads, borda=args.borda)
    print(board.to_json() if args.format == "json" else board.to_text())
    return board.exit_code
