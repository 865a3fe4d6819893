"""scorer validate SUBMISSION [--truth TRUTH]: every problem, located and named, judged as the grader judges."""

from __future__ import annotations

import json

from scorer.cli.common import add_competition, add_report_options, add_side_inputs, engine_options, side_inputs
from scorer.wording import counted

USAGE = "scorer validate SUBMISSION [--truth TRUTH] [options]"
EXAMPLES = ("scorer validate submission.csv", "scorer validate submission.csv --truth test_labels.jsonl --format json",
            "scorer validate submission.csv --competition spotify-mpd --seeds challenge_set.json")
HELP = "check a submission's format (and, with --truth, its rows) and list every problem"


def add_arguments(parser) -> None:
    parser.add_argument("submission", metavar="SUBMISSION", help="submission CSV (plain, .gz or .zip)")
    parser.add_argument("--truth", help="ground truth, to check for missing and unknown sessions too")
    add_competition(parser)
    add_side_inputs(parser)
    parser.add_argument("--lenient", action="store_true", help="missing, repeated and unknown rows are warnings, not errors")
    add_report_options(parser)


def run(args) -> int:
    from scorer.api import validate
    from scorer.engine.result import render_problems

    result = validate(args.submission, args.truth, args.competition, strict=not args.lenient, **engine_options(args), **side_inputs(args))
    if args.format == "json":
        out = result.to_dict()
        print(json.dumps({key: out[key] for key in ("submission", "competition", "mode", "valid", "counts", "problem_counts", "problems")}, indent=2))
    elif result.unread is not None:
        print(f"INVALID: {args.submission}: {result.unread}")
    else:
        summary = result.report.summary()
        tally = ", ".join(counted(sum(r["count"] for r in summary if r["severity"] == s), s) for s in ("error", "warning", "note"))
        print(f"{'valid' if result.valid else 'INVALID'}: {args.submission} ({tally})")
        problems = render_problems(result.report)
        if problems:
            print(problems)
    return 0 if result.valid else 1
