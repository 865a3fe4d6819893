"""The leaderboard-analytics options of `scorer score` (--split, --bootstrap, --seed, --level, --breakdown, --sessions,
--report) and `scorer compare` (--bootstrap, --seed, --level): parsed here, computed by scorer.analytics."""

from __future__ import annotations

import argparse
import json

from scorer.cli.common import add_aliased, add_seed, warning_examples, whole_number
from scorer.engine.receipt_schema import MAX_RESAMPLES
from scorer.errors import UsageError


def level_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1 (such as 0.95), got {value}")
    return value


count_value = whole_number(0, MAX_RESAMPLES, "a number of resamples")


def add_bootstrap(parser, default: int, help: str) -> None:
    """--bootstrap N of `scorer score` and `scorer compare` (--resamples, compare's old spelling, still parses)."""
    add_aliased(parser, ("--bootstrap",), ("--resamples",), type=count_value, default=default, metavar="N", help=help)


def add_resampling_options(parser) -> None:
    add_seed(parser, what="seed of the resamples and of --split public=F")
    parser.add_argument("--level", type=level_value, default=0.95, help="confidence level of the intervals (default 0.95)")


def add_arguments(parser) -> None:
    """The analytics options of `scorer score`."""
    group = parser.add_argument_group("leaderboard analytics")
    add_bootstrap(group, 0, "N bootstrap resamples of the sessions: percentile intervals of the score and every metric "
                            "(default 0: none)")
    group.add_argument("--split", metavar="public=F|usage",
                       help="public/private split: public=F hashes the sessions (seeded by --seed), a fraction F public; usage: the "
                            "truth's Usage column (also used by default by the other analytics options when the truth has one)")
    add_resampling_options(group)
    group.add_argument("--breakdown", action="store_true",
                       help="recall@k for k = 1..K, hit-rank histogram, recall by truth size (and session length with --sessions)")
    group.add_argument("--sessions", metavar="FILE",
                       help="test sessions (OTTO JSONL or Parquet/CSV with a session column): adds recall by session length")
    group.add_argument("--report", metavar="FILE",
                       help="write the plots (recall@k, intervals, breakdowns) to FILE.html (self-contained) or FILE.png")


def requested(args) -> bool:
    return bool(getattr(args, "bootstrap", 0) or getattr(args, "split", None) or getattr(args, "breakdown", False)
                or getattr(args, "sessions", None) or getattr(args, "report", None))


def receipt_settings(args, analytics: dict | None = None) -> tuple[dict | None, dict | None]:
    """The split and bootstrap settings a receipt records (scorer.engine.receipt), None for those not asked for."""
    split = None
    if analytics and "split" in analytics:
        from scorer.analytics.split import parse_split

        split = {"usage": True} if getattr(args, "split", None) in (None, "usage") else {"public": parse_split(args.split), "seed": args.seed}
    bootstrap = {"resamples": args.bootstrap, "seed": args.seed, "level": args.level} if getattr(args, "bootstrap", 0) else None
    return split, bootstrap


def with_receipt(args, result, competition, analytics: dict | None = None) -> str:
    """The Result's JSON (with its analytics, when they ran) and its receipt."""
    from scorer.engine.receipt import make_receipt

    out = result.to_dict()
    if analytics is not None:
        out["analytics"] = analytics
    split, bootstrap = receipt_settings(args, analytics)
    receipt_figures = None if analytics is None else {key: value for key, value in analytics.items() if key in ("split", "bootstrap")}
    out["receipt"] = make_receipt(result, competition, args.submission, split=split, bootstrap=bootstrap, analytics=receipt_figures)
    return json.dumps(out, indent=2)


def finish(args, result, competition) -> int:
    """Post-process a scored Result for `scorer score`: analyse, print text or JSON (with its receipt), write the report."""
    from scorer.analytics.split import parse_split, resolve_split
    from scorer.analytics.summary import analyse, render_text  # here: building the parser loads no engine

    if result.slot_values is None or result.truth_sizes is None or result.score is None:  # nothing to analyse
        print(with_receipt(args, result, competition) if args.format == "json" else result.to_text(warning_examples(args)))
        return 0 if result.score is not None else 1
    truth = result.truth  # the truth just scored against: not loaded a second time
    fraction = parse_split(args.split) if getattr(args, "split", None) not in (None, "usage") else None
    if getattr(args, "split", None) == "usage" and getattr(truth, "usage", None) is None:
        raise UsageError(f"--split usage: the truth {args.truth} has no Usage column (or \"usage\" key); use --split public=F")
    analytics = analyse(result, truth, n_bootstrap=args.bootstrap, seed=args.seed, level=args.level,
                        split=resolve_split(truth, fraction, args.seed), breakdowns=args.breakdown or bool(args.report),
                        sessions_file=args.sessions, threads=getattr(args, "threads", 2))
    if args.report:
        from scorer.analytics.plots import write_report

        write_report(args.report, result.to_dict(), analytics)
    if args.format == "json":
        print(with_receipt(args, result, competition, analytics))
    else:
        print(result.to_text(warning_examples(args)) + "\n" + render_text(analytics))
        if args.report:
            print(f"\nreport written to {args.report}")
    return 0 if result.score is not None else 1
