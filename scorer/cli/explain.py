"""scorer explain SUBMISSION --truth TRUTH: the file under every published convention beside ours, and the rows behind each gap."""

from __future__ import annotations

from scorer.cli.common import add_competition

USAGE = "scorer explain SUBMISSION --truth TRUTH [--competition NAME] [--against NAMES] [--format text|json]"
EXAMPLES = ("scorer explain submission.csv --truth test_labels.jsonl",
            "scorer explain submission.csv --truth test_labels.jsonl --against otto-official,ranx --format json")
HELP = "score a submission under other evaluators' conventions (OTTO's evaluate.py, apk, trec_eval, ranx, ...) and show what makes each gap"


# Named here, not imported: building the parser must not import the kernels (numba's cache check runs on their import,
# outside main's error handling). tests/test_explain.py holds this list to scorer.analytics.conventions.CONVENTIONS.
CONVENTION_NAMES = ("otto-official", "kaggle-apk", "trec_eval", "recommenders-map", "recommenders-map_at_k", "ranx", "implicit")
DOCS = "docs/metrics.md#conventions-of-other-evaluators"


def add_arguments(parser) -> None:
    from scorer.cli.common import MAX_PER_CODE, positive_int, whole_number

    parser.add_argument("submission", metavar="SUBMISSION", help="submission CSV (plain, .gz or .zip)")
    parser.add_argument("--truth", required=True, help="ground truth: OTTO labels .jsonl, a session,type,aid .parquet/.csv, a compiled .truth.npz")
    add_competition(parser)
    parser.add_argument("--against", metavar="NAMES", help="comma-separated conventions (default: all that apply): "
                        + ", ".join(CONVENTION_NAMES) + f"; rules in {DOCS}")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--show", type=whole_number(1, MAX_PER_CODE, "a number of rows"), default=5, metavar="N",
                        help="rows listed per rule (default: 5)")
    parser.add_argument("--threads", type=positive_int, default=2, metavar="N", help="parsing threads (default: 2)")
    parser.add_argument("--untrusted", action="store_true", help="refuse a submission reached through a link (as a grader reads an upload)")


def run(args) -> int:
    from scorer.analytics.explain import explain

    explanation = explain(args.submission, args.truth, args.competition, config=args.config, against=args.against,
                          threads=args.threads, untrusted=args.untrusted, shown=args.show)
    print(explanation.to_json() if args.format == "json" else explanation.to_text())
    result = explanation.result
    return 1 if result.outcome is None or not result.valid else 0
