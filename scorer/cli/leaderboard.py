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
            "scorer leaderboard baseline.csv --truth test_labels.jsonl --mde 500000")
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
    add_cluster_options(parser, "with --engine dask: ")
    add_format(parser)
    add_threads(parser, what="threads of each pass and of the bootstrap (and the lanes of its sums: the same --threads, the same bits)")


def read_records(path: str) -> list[dict]:
    """The records of `scorer grade -o`, one per file: its last final record (scored or invalid, scorer.dask.results_file;
    a resumed run may repeat a file), else its last record (failed or retryable: listed unranked); a last line cut
    short by a killed run is left out, as grade repairs it. The file is read as untrusted input (scorer.handed_back:
    a regular file, one bounded line at a time); a record whose fields are not a grade record's, or whose score is not
    a finite number, is listed unranked with the reason."""
    from scorer.dask.results_file import FINAL, MAX_RECORD_BYTES, finite_score, record_problem, status
    from scorer.errors import UsageError
    from scorer.file_identity import identity
    from scorer.handed_back import json_lines, opened
    from scorer.schema import shown

    records: dict[tuple, dict] = {}
    final: dict[tuple, dict] = {}
    with opened(path, "--results file") as (fd, _):
        for line, record, error in json_lines(fd, MAX_RECORD_BYTES, f"--results {path}"):
            where = f"--results {path} line {line.number}"
            if error is not None:
                if not line.ended:  # no newline after it: a write cut short
                    continue
                raise UsageError(f"{where} {error}")
            if not isinstance(record, dict) or not isinstance(record.get("file"), str):
                raise UsageError(f"{where}: a grade record needs a \"file\" name")
            key = identity(record["path"] if isinstance(record.get("path"), str) else record["file"])  # its file, however spelled
            why = record_problem(record) or (None if finite_score(record) or record.get("score") is None
                                             else f"its score is {shown(record['score'])}, not a finite number")
            if why:
                record = {"file": record["file"], "score": None, "status": "failed", "error": f"line {line.number} is no grade record: {why}"}
            records[key] = record
            if status(record) in FINAL:
                final[key] = record
    return [final.get(name, record) for name, record in records.items()]


def run(args) -> int:
    from scorer.analytics.leaderboard import from_records, leaderboard, render_text
    from scorer.api import resolve_competition, resolve_truth
    from scorer.cli.analytics_options import split_option
    from scorer.cli.leaderboard_engines import ENGINES
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError
    from scorer.file_identity import distinct
    from scorer.wording import inline

    if bool(args.submissions) == bool(args.results):
        raise UsageError("give submission files or --results FILE (the JSON lines of `scorer grade -o`), not both")
    if (args.scheduler or args.workers) and args.engine != "dask":
        raise UsageError("--scheduler and --workers run the leaderboard on Dask: add --engine dask")
    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)
        refuse_overwriting(args, [("--report", args.report)])
    records = read_records(args.results) if args.results else []
    cut_short = False
    if args.truth is None:
        if args.submissions:
            raise UsageError("--truth is needed to score submission files")
        if args.split or args.mde is not None:
            raise UsageError("--split and --mde need --truth (the per-session figures)")
        board = from_records(records)
    else:
        competition = resolve_competition(args.competition, args.config)
        truth = resolve_truth(args.truth, competition)
        if truth.n_sessions == 0:
            raise UsageError(f"the truth {args.truth} has no sessions: nothing to rank")
        split = split_option(args.split, truth, args.truth, args.seed)
        paths = distinct(args.submissions or [r["file"] for r in records])  # a file given twice, however spelled, is ranked once
        recorded = {r["file"]: r for r in records}
        columns, names, unranked, cut_short = ENGINES[args.engine](paths, recorded, truth, competition, split, args)
        if columns is None:
            for u in unranked:
                print(f"{inline(u['name'])}: {inline(u['reason'])}", file=sys.stderr)
            print("scorer: no submission could be ranked", file=sys.stderr)
            return 1
        board = leaderboard(columns, names, unranked, n=args.bootstrap, seed=args.seed, level=args.level, top=args.top,
                            method=args.method, split=split, mde_sessions=args.mde or None, plan_mde=args.mde is not None,
                            threads=args.threads)
        del columns
    from scorer.analytics.leaderboard_plot import write_leaderboard_report

    print_board(args, board, render_text, write_leaderboard_report)
    if args.truth is not None and cut_short:
        print("scorer: the Dask run was cut short (a task never finished): rerun the same command", file=sys.stderr)
        return 2
    return 0 if not board["unranked"] else 1
