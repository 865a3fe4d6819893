"""scorer explain SUBMISSION --truth TRUTH: the file under every published convention beside ours, and the rows behind each gap."""

from __future__ import annotations

from scorer.cli.common import add_competition

USAGE = "scorer explain SUBMISSION --truth TRUTH [--competition NAME] [--against NAMES] [--format text|json]"
EXAMPLES = ("scorer explain submission.csv --truth test_labels.jsonl",
            "scorer explain submission.csv --truth test_labels.jsonl --against otto-official,ranx --format json")
HELP = ("score a submission under other evaluators' conventions (OTTO's evaluate.py, apk, trec_eval, ranx, ...; for MIND and "
        "EB-NeRD gauc, first-click MRR, tie order, fill; for the string shapes each rule at the edges turned) and show what makes each gap")


# Named here, not imported: building the parser must not import the kernels (numba's cache check runs on their import,
# outside main's error handling). tests/test_explain.py holds this list to scorer.analytics.explain.conventions.CONVENTIONS.
CONVENTION_NAMES = ("otto-official", "otto-official-2022", "kaggle-apk", "trec_eval", "recommenders-map", "recommenders-map_at_k", "ranx", "implicit")
# the impression shape's (scorer.analytics.explain.impressions.TURNS, held to it by tests/test_impressions.py)
IMPRESSION_CONVENTIONS = ("gauc", "first-click-mrr", "ties-later-first", "missing-zero", "masked-zero")


def add_arguments(parser) -> None:
    from scorer.cli.common import add_format, add_threads, add_untrusted, example_count

    parser.add_argument("submission", metavar="SUBMISSION", help="submission CSV (plain, .gz or .zip)")
    parser.add_argument("--truth", required=True, help="ground truth: OTTO labels .jsonl, a session,type,aid .parquet/.csv, a compiled .truth.npz")
    add_competition(parser)
    parser.add_argument("--against", metavar="NAMES", help="comma-separated conventions (default: all that apply, but "
                        "otto-official-2022, the evaluate.py before December 2022): " + ", ".join(CONVENTION_NAMES) + "; the output ends with the rules they apply. "
                        "The string shapes (list, long, value) turn their config's rules at the edges instead, as rule=value "
                        "(missing=skip, repeated_key=all, repeated_item=collapse, truth=multiset, ...; default: each other value)")
    add_format(parser)
    parser.add_argument("--show", type=example_count, default=5, metavar="N", help="rows listed per rule (0: only the counts; default: 5)")
    parser.add_argument("--all", action="store_true", help="also list the rules that touch rows without moving a figure "
                        "(the text lists only those that move one; JSON holds every rule)")
    add_threads(parser)
    add_untrusted(parser)


def run(args) -> int:
    from scorer.jobs.explain import explain

    explanation = explain(args.submission, args.truth, competition=args.competition, config=args.config, against=args.against,
                          show=args.show, all=args.all, threads=args.threads, untrusted=args.untrusted)
    print(explanation.to_json() if args.format == "json" else explanation.to_text())
    result = explanation.result
    return 1 if result.outcome is None or not result.valid else 0
