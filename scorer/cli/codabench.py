"""scorer codabench INPUT_DIR OUTPUT_DIR: the scoring program of a Codabench or CodaLab competition."""

from __future__ import annotations

import sys

from scorer.cli.common import add_competition, whole_number
from scorer.spec import MAX_SECONDS

USAGE = "scorer codabench INPUT_DIR OUTPUT_DIR [options]"
EXAMPLES = ("scorer codabench /app/input /app/output", "scorer codabench /app/input /app/output --competition otto --max-seconds 600")
HELP = "score as a Codabench/CodaLab scoring program: INPUT_DIR/ref (truth) and INPUT_DIR/res (submission) to OUTPUT_DIR/scores.json"


def add_arguments(parser) -> None:
    parser.add_argument("input_dir", metavar="INPUT_DIR", help="the platform's input folder, holding ref/ and res/")
    parser.add_argument("output_dir", metavar="OUTPUT_DIR", help="where scores.json and scores.txt are written")
    add_competition(parser)
    parser.add_argument("--max-seconds", type=whole_number(1, MAX_SECONDS, "a number of seconds"), metavar="N",
                        help="time limit in seconds, replacing the config's (keep it below the platform's execution time limit)")


def run(args) -> int:
    from scorer.adapters.codabench import grade
    from scorer.engine.result import render_problems

    outcome = grade(args.input_dir, args.output_dir, args.competition, args.config, args.max_seconds)
    if outcome.result is not None and outcome.result.report.kept:
        print(render_problems(outcome.result.report))  # the full list, for the participant's log
    print(outcome.message, file=sys.stderr if outcome.exit_code else sys.stdout)
    return outcome.exit_code
