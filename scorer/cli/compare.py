"""scorer compare A B --truth T: is A really better than B? Paired difference, interval, p-value, wins/ties/losses."""

from __future__ import annotations

import json

from scorer.cli.common import add_competition, add_report_options, engine_options, output_path

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
    from scorer.analytics.compare import beyond_sides, compare, render_beyond, render_text
    from scorer.api import resolve_truth, score
    from scorer.cli.analytics_options import split_option
    from scorer.cli.item_options import from_args
    from scorer.cli.outputs import refuse_overwriting
    from scorer.engine.result import render_problems
    from scorer.errors import UsageError

    if args.report:
        from scorer.analytics.plots import REPORT_SUFFIXES

        output_path(args.report, "--report", REPORT_SUFFIXES)  # before the work, not after
        refuse_overwriting(args, [("--report", args.report)])
    competition, items = from_args(args, args.competition)
    truth = resolve_truth(args.truth, competition)
    if truth.n_sessions == 0:
        raise UsageError(f"the truth {args.truth} has no sessions: nothing to compare")
    split = split_option(args.split, truth, args.truth, args.seed)
    # One invocation scores both files (one after the other: each pass already uses the threads) and pairs them per session.
    results = [score(path, truth, competition, strict=args.strict, items=items, **engine_options(args))
               for path in (args.a, args.b)]
    failed = [r for r in results if r.score is None or r.slot_values is None]
    if failed:
        for r in failed:
            if r.unread is not None:
                print(f"{r.submission}: no score: {r.unread}")
                continue
            print(f"{r.submission}: no score" + (" (strict mode)" if r.strict else ""))
            problems = render_problems(r.report)
            if problems:
                print(problems)
        return 1
    subsets = {"all": None} if split is None else {"public": split.mask("public"), "private": split.mask("private"),
                                                  "all": split.mask("all")}
    figures = {name: compare(*results, n=args.bootstrap, seed=args.seed, level=args.level, keep=keep, threads=args.threads)
               for name, keep in subsets.items()}
    beyond = beyond_sides(*results)
    if args.report:
        from scorer.analytics.plots import write_compare_report

        write_compare_report(args.report, figures, beyond)
    if args.format == "json":
        out = {"a": results[0].to_dict(), "b": results[1].to_dict(), "comparison": figures}
        if beyond:
            out["beyond"] = beyond
        if split is not None:
            out["split"] = {"source": split.source, "sessions": split.counts()}
        print(json.dumps(out, indent=2))
    else:
        for name, figure in figures.items():
            if split is not None:
                print(f"== {name} sessions ({split.source}) ==")
            print(render_text(figure))
            print()
        if beyond:
            print(render_beyond(beyond))
            print()
        for r, label in zip(results, "AB"):
            counts = r.report.summary()
            if counts:
                print(f"{label} ({r.submission}): " + ", ".join(f"{row['code']} {row['count']:,}" for row in counts))
    return 0
