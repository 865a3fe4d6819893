"""scorer compare A B --truth T: is A really better than B? Paired difference, interval, p-value, wins/ties/losses."""

from __future__ import annotations

from scorer.cli.common import add_competition, add_report_options, output_path

USAGE = "scorer compare A B --truth TRUTH [options]"
EXAMPLES = ("scorer compare new.csv old.csv --truth test_labels.jsonl",
            "scorer compare new.csv old.csv --truth test_labels.jsonl --bootstrap 2000 --split usage --report compare.html")
HELP = "compare two submissions on the same truth: paired bootstrap interval and randomization p-value of the difference"


def add_arguments(parser) -> None:
    from scorer.cli.analytics_options import add_bootstrap, add_resampling_options

    parser.add_argument("a", metavar="A", help="first submission CSV (plain, .gz or .zip)")
    parser.add_argument("b", metavar="B", help="second submission CSV")
    parser.add_argument("--truth", required=True, help="ground truth (as for `scorer score`)")
    add_competition(parser)
    parser.add_argument("--strict", action="store_true", help="judge both files as a grader (any error: no comparison)")
    add_bootstrap(parser, 1000, "N paired bootstrap resamples, and as many randomization permutations (default 1000)")
    add_resampling_options(parser)
    parser.add_argument("--split", metavar="public=F|usage",
                        help="also compare on the public and private sessions (hash split, or the truth's Usage column)")
    parser.add_argument("--report", metavar="FILE", help="write the differences and intervals as a plot: FILE.html or FILE.png")
    add_report_options(parser)
    from scorer.cli.item_options import add_arguments as add_items

    add_items(parser)  # --items, --train, --metrics, as for `scorer score`


def run(args) -> int:
    from scorer.cli.outputs import refuse_overwriting
    from scorer.jobs.compare import compare

    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)  # before the work, not after
        refuse_overwriting(args, [("--report", args.report)])
    comparison = compare(args.a, args.b, args.truth, competition=args.competition, config=args.config, strict=args.strict,
                         bootstrap=args.bootstrap, seed=args.seed, level=args.level, split=args.split, items=args.items,
                         train=args.train, metrics=args.metrics, max_per_code=args.max_per_code, threads=args.threads,
                         progress=False if args.no_progress else None, untrusted=args.untrusted)
    if not comparison.ok:  # in either format: which file has no score, and why
        print(comparison.to_text())
        return 1
    if args.report:
        from scorer.analytics.plots import write_compare_report

        write_compare_report(args.report, comparison.figures, comparison.beyond)
    print(comparison.to_json() if args.format == "json" else comparison.to_text())
    return 0
