"""scorer score SUBMISSION --truth TRUTH: the weighted score, per-type metrics, counts and problems."""

from __future__ import annotations

import os

from scorer.commands import add_competition, add_report_options, engine_options
from scorer.commands.grade import add_cluster_options

HELP = "score a submission against ground truth"


def add_arguments(parser) -> None:
    parser.add_argument("submission", help="submission CSV (plain, .gz or .zip), or a directory of CSV/Parquet part files")
    parser.add_argument("--truth", required=True, help="ground truth: OTTO labels .jsonl, a session,type,aid .parquet/.csv, a compiled .truth.npz; string shapes: .csv/.parquet or .strings.npz")
    add_competition(parser)
    parser.add_argument("--strict", action="store_true",
                        help="judge as a grader: missing, repeated or unknown rows are errors, and any error means no score")
    add_report_options(parser)
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local (default), or dask: score the part files of a directory on a Dask cluster")
    add_cluster_options(parser)
    from scorer.analytics import add_arguments as add_analytics

    add_analytics(parser)  # --bootstrap, --split, --seed, --level, --breakdown, --sessions, --report


def run(args) -> int:
    from scorer.api import score

    if args.engine == "dask" or os.path.isdir(args.submission):
        from scorer.dask.run import score_directory

        result = score_directory(args)
    else:
        result = score(args.submission, args.truth, args.competition, strict=args.strict, **engine_options(args))
    from scorer import analytics

    if analytics.requested(args):
        return analytics.finish(args, result)
    print(result.to_json() if args.format == "json" else result.to_text())
    return 0 if result.score is not None else 1
