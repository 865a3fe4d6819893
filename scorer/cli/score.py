"""scorer score SUBMISSION --truth TRUTH: the weighted score, per-type metrics, counts and problems."""

from __future__ import annotations

import os
import sys

from scorer.cli.common import (
    add_cluster_options,
    add_competition,
    add_report_options,
    add_side_inputs,
    engine_options,
    output_path,
    side_inputs,
    warning_examples,
    whole_number,
)

USAGE = "scorer score SUBMISSION --truth TRUTH [options]"
EXAMPLES = ("scorer score submission.csv --truth test_labels.jsonl",
            "scorer score submission.csv.gz --truth test_labels.truth.npz --strict --format json",
            "scorer score submission.csv --truth test_labels.jsonl --bootstrap 1000 --split public=0.3 --report report.html")
HELP = "score a submission against ground truth"


def add_arguments(parser) -> None:
    parser.add_argument("submission", metavar="SUBMISSION", help="submission CSV (plain, .gz or .zip), or a directory of CSV/Parquet part files")
    parser.add_argument("--truth", required=True, help="ground truth: OTTO labels .jsonl, a session,type,aid .parquet/.csv, a compiled .truth.npz; string shapes: .csv/.parquet or .strings.npz")
    add_competition(parser)
    add_side_inputs(parser)
    parser.add_argument("--strict", action="store_true",
                        help="judge as a grader: missing, repeated or unknown rows are errors, and any error means no score")
    add_report_options(parser)
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local (default), or dask: score the part files of a directory on a Dask cluster")
    add_cluster_options(parser)
    parser.add_argument("--partitions", type=whole_number(1, 100_000, "a number of partitions"), metavar="N", help="with --engine dask: session partitions "
                        "(default: one per 32 MB of truth file, at least two per worker)")
    parser.add_argument("--truth-parts", metavar="DIR", help="with --engine dask: where the partitioned truth is kept, a folder "
                        "every worker sees (default: $SCORER_CACHE_DIR/partitioned)")
    from scorer.cli.analytics_options import add_arguments as add_analytics

    add_analytics(parser)  # --bootstrap, --split, --seed, --level, --breakdown, --sessions, --report
    from scorer.cli.item_options import add_arguments as add_items

    add_items(parser)  # --items, --train, --metrics


def run(args) -> int:
    from scorer.api import resolve_competition, score
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import TruthError

    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)  # before the work, not after
        refuse_overwriting(args, [("--report", args.report)])
    if args.truth_parts:
        output_path(args.truth_parts, "--truth-parts", folder=True)
    try:
        if args.engine == "dask" or os.path.isdir(args.submission):
            from scorer.dask.run import score_directory

            result = score_directory(args)
            competition = resolve_competition(args.competition, args.config)
        else:
            from scorer.cli.item_options import from_args

            competition, items = from_args(args, args.competition)
            result = score(args.submission, args.truth, competition, strict=args.strict, items=items, **engine_options(args),
                           **side_inputs(args))
    except TruthError as error:
        if _looks_like_a_submission(args.truth, args):
            raise TruthError(f"{error} — arguments swapped? {args.truth} looks like a submission "
                             f"(usage: {USAGE})") from None
        raise
    from scorer.cli import analytics_options as analytics

    if analytics.requested(args):
        return max(analytics.finish(args, result, competition), exit_code(result))
    print(analytics.with_receipt(args, result, competition) if args.format == "json" else result.to_text(warning_examples(args)))
    if result.score is not None and result.report.has_errors():
        print("scorer: the submission has errors (see its problems); lines with an error score 0 (exit code 1)", file=sys.stderr)
    return exit_code(result)


def exit_code(result) -> int:
    """1 when there is no score or any problem is an error (lenient mode shows the score all the same), else 0."""
    return 1 if result.score is None or result.report.has_errors() else 0


def _looks_like_a_submission(path: str, args) -> bool:
    """Does the file's first line hold the competition's submission header?"""
    from scorer.api import resolve_competition
    from scorer.file_formats import not_a_regular_file

    if not_a_regular_file(path) is not None:  # a FIFO would block the open
        return False
    try:
        with open(path, "rb") as handle:
            first = handle.read(4096).split(b"\n", 1)[0]
        header = resolve_competition(args.competition, args.config).header
    except Exception:  # only a hint: a file or config that cannot be read says nothing here
        return False
    fields = [part.strip().strip('"') for part in first.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace").split(",")]
    return fields == list(header)
