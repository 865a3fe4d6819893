"""Leaderboard analytics on a scored Result: public/private split, bootstrap intervals, breakdowns, report.

The `scorer score` options --split, --bootstrap, --seed, --level, --breakdown, --sessions and
--report call `finish(args, result)`, which post-processes the Result (nothing is scored again).
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from scorer.cli.common import whole_number
from scorer.errors import UsageError

# scorer.analytics.bootstrap, .breakdown and .split (numba kernels) are imported where used, so that building
# the CLI's parser stays light.


def level_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1 (such as 0.95), got {value}")
    return value


count_value = whole_number(0, 100_000, "a number of resamples")
seed_value = whole_number(0, 2**63 - 1, "a seed")


def add_resampling_options(parser) -> None:
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the resamples and of --split (default 0)")
    parser.add_argument("--level", type=level_value, default=0.95, help="confidence level of the intervals (default 0.95)")


def add_arguments(parser) -> None:
    """The analytics options of `scorer score`."""
    group = parser.add_argument_group("leaderboard analytics")
    group.add_argument("--bootstrap", type=count_value, default=0, metavar="N",
                       help="N bootstrap resamples of the sessions: percentile intervals of the score and every metric")
    group.add_argument("--split", metavar="public=F",
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


def _clean(value):
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else float(value)


def _figures(table, keep: np.ndarray | None) -> dict:
    """Score and every ratio metric over the kept sessions (no resampling)."""
    values = table.values if keep is None else table.values[keep]
    sizes = table.sizes if keep is None else table.sizes[keep]
    num, den = table.parts(values, sizes)
    score, ratios = table.figures(num.sum(axis=0), den.sum(axis=0))
    metrics: dict = {}
    for c, (type_name, metric) in enumerate(table.names):
        metrics.setdefault(type_name, {})[metric] = _clean(ratios[c])
    return {"sessions": int(len(sizes)), "score": _clean(score), "metrics": metrics}


def analyse(result, truth, *, n_bootstrap: int = 0, seed: int = 0, level: float = 0.95, split=None,
            breakdowns: bool = False, sessions_file=None, threads: int = 2) -> dict:
    """The analytics of one Result: {"split": ..., "bootstrap": ..., "breakdown": ...} (only those asked for).

    Subsets: "all" (every session, or public and private when there is a split: Ignored counts nowhere),
    "public" and "private".
    """
    from scorer.analytics.bootstrap import SessionTable, bootstrap
    from scorer.analytics.breakdown import breakdown, session_lengths

    table = SessionTable.from_result(result)
    subsets: dict[str, np.ndarray | None] = {"all": None}
    out: dict = {}
    if split is not None:
        if len(split.usage) != table.sizes.shape[0]:
            raise UsageError("the split does not match the truth's sessions")
        subsets = {"public": split.mask("public"), "private": split.mask("private"), "all": split.mask("all")}
        out["split"] = {"source": split.source, "sessions": split.counts(),
                        "figures": {name: _figures(table, keep) for name, keep in subsets.items()}}
    if n_bootstrap:
        out["bootstrap"] = {
            "resamples": n_bootstrap, "seed": seed, "level": level,
            "method": "percentile; sessions redrawn with replacement (Poisson(1) times each)",
            "subsets": {name: bootstrap(table, n_bootstrap, seed, level, keep, threads) for name, keep in subsets.items()},
        }
    if breakdowns or sessions_file is not None:
        lengths = session_lengths(sessions_file, truth.sessions) if sessions_file is not None else None
        from scorer.kernels.resample import hit_counts

        # recall@k from the hit masks, whatever the scored metric; the masks hold the first 63 ranks
        kmax = max(1, min(max(m.k or 1 for m in table.metrics), 63))
        hits = hit_counts(np.ascontiguousarray(result.slot_hits, np.int64), kmax).reshape(table.sizes.shape)
        from scorer.engine.beyond import per_row_metrics, subset_figures

        beyond = per_row_metrics(result)
        per_bin = (lambda t, rows: subset_figures(result, beyond, t, rows)) if beyond else None
        out["breakdown"] = breakdown(result.slot_hits, hits, table.sizes, table.types, kmax, subsets["all"], lengths, per_bin)
        out["breakdown"]["metric"] = f"recall@{kmax}"
        out["breakdown"]["weights"] = table.weights.tolist()
        totals = _beyond_totals(result)
        if totals:
            out["breakdown"]["beyond"] = {"totals": totals, "note": BEYOND_NOTE}
    return out


BEYOND_NOTE = ("per bin: each beyond-accuracy metric aggregated as the whole-run figure, over the bin's sessions "
               "(all with truth of the type); gini is catalogue-level: in the totals only")


def _beyond_totals(result) -> dict:
    """{type: {metric: value}} of the Result's beyond-accuracy metrics (gini included): the breakdown's totals."""
    from scorer.spec.metrics import parse_metric

    return {t: {name: _clean(v) for name, v in values.items() if parse_metric(name).family == "beyond"}
            for t, values in result.metrics.items() if any(parse_metric(n).family == "beyond" for n in values)}


def _value(x, width=12, fmt=".6f") -> str:
    return f"{'-' if x is None else format(x, fmt):>{width}}"


def render_text(analytics: dict) -> str:
    """The analytics as plain-text tables."""
    lines: list[str] = []
    if "split" in analytics:
        split = analytics["split"]
        counts = split["sessions"]
        lines += ["", f"leaderboard split ({split['source']}): {counts['public']:,} public, {counts['private']:,} private, "
                      f"{counts['ignored']:,} ignored sessions (ignored count nowhere)"]
        names = list(split["figures"])
        header = f"{'':<22}" + "".join(f"{name:>12}" for name in names)
        lines += [header, "-" * len(header)]
        lines.append(f"{'score':<22}" + "".join(_value(split["figures"][n]["score"]) for n in names))
        first = split["figures"][names[0]]["metrics"]
        for type_name, metrics in first.items():
            for metric in metrics:
                lines.append(f"{type_name + ' ' + metric:<22}" + "".join(_value(split["figures"][n]["metrics"][type_name][metric]) for n in names))
    if "bootstrap" in analytics:
        boot = analytics["bootstrap"]
        level = f"{100 * boot['level']:g}%"
        lines += ["", f"bootstrap: {boot['resamples']:,} resamples of the sessions (seed {boot['seed']}), {level} percentile intervals"]
        for name, figures in boot["subsets"].items():
            header = f"{name:<22}{'value':>12}{level + ' interval':>28}{'se':>12}"
            lines += [header, "-" * len(header)]
            rows = [("score", figures["score"])] + [(f"{t} {m}", v) for t, ms in figures["metrics"].items() for m, v in ms.items()]
            for label, v in rows:
                span = "-" if v["low"] is None else f"[{v['low']:.6f}, {v['high']:.6f}]"
                lines.append(f"{label:<22}{_value(v['value'])}{span:>28}{_value(v['se'])}")
    if "breakdown" in analytics:
        b = analytics["breakdown"]
        kmax, metric = b["k"], b["metric"]
        shown = sorted({k for k in (1, 2, 3, 5, 10, 15, 20, 50, 100, kmax) if k <= kmax})
        header = f"{'':<10}" + "".join(f"{'@' + str(k):>10}" for k in shown)
        lines += ["", f"recall@k ({metric.split('@')[0]} with the first k items)", header, "-" * len(header)]
        for type_name, curve in b["recall_at_k"].items():
            lines.append(f"{type_name:<10}" + "".join(_value(curve[k - 1], 10, ".4f") for k in shown))
        lines += ["", f"hits by rank (1 = first item; ranks 1..{kmax})"]
        for type_name, counts in b["hit_ranks"].items():
            lines.append(f"{type_name:<10}" + " ".join(f"{c:,}" for c in counts))
        for key, title in (("truth_size", "truth size"), ("session_length", "session length (events)")):
            if key not in b:
                continue
            extra = list(next(iter(next(iter(b[key].values()))), {}).get("beyond", {}))
            widths = [max(12, len(name) + 2) for name in extra]
            header = f"{'':<10}{title:>24}{'sessions':>12}{metric:>12}{'share':>9}" + "".join(f"{n:>{w}}" for n, w in zip(extra, widths))
            lines += ["", f"{metric} by {title} (share: the bin's part of the denominator)", header, "-" * len(header)]
            for type_name, rows in b[key].items():
                for row in rows:
                    share = "-" if row["share"] is None else f"{100 * row['share']:.1f}%"
                    lines.append(f"{type_name:<10}{row['bin']:>24}{row['sessions']:>12,}{_value(row['recall'])}{share:>9}"
                                 + "".join(_value(row["beyond"][n], w) for n, w in zip(extra, widths)))
        if "beyond" in b:
            lines += ["", "beyond-accuracy totals (diagnostics; " + b["beyond"]["note"] + ")"]
            for type_name, values in b["beyond"]["totals"].items():
                lines.append(f"{type_name:<10}" + "  ".join(f"{n} {'-' if v is None else format(v, '.6f')}" for n, v in values.items()))
    return "\n".join(lines)


def finish(args, result) -> int:
    """Post-process a scored Result for `scorer score`: analyse, print text or JSON, write the report."""
    from scorer.api import resolve_competition, resolve_truth
    from scorer.analytics.leaderboard_split import parse_split, resolve_split

    if result.slot_values is None or result.truth_sizes is None or result.score is None:  # nothing to analyse
        print(result.to_json() if args.format == "json" else result.to_text())
        return 0 if result.score is not None else 1
    competition = resolve_competition(args.competition, getattr(args, "config", None))
    truth = resolve_truth(args.truth, competition)
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
        out = result.to_dict()
        out["analytics"] = analytics
        print(json.dumps(out, indent=2))
    else:
        print(result.to_text() + "\n" + render_text(analytics))
        if args.report:
            print(f"\nreport written to {args.report}")
    return 0 if result.score is not None else 1
