"""Leaderboard analytics on a scored Result: public/private split, bootstrap intervals, breakdowns, and their text.

The options of `scorer score` that ask for them are parsed in scorer.cli.analytics_options, which post-processes
the Result with analyse() (nothing is scored again).
"""

from __future__ import annotations

import numpy as np

from scorer.engine.result import finite_or_none
from scorer.errors import UsageError
from scorer.kernels import door
from scorer.wording import fixed, percent

# scorer.analytics.bootstrap, .breakdown and .split (numba kernels) are imported where used, so that building
# the CLI's parser stays light.


def _figures(table, keep: np.ndarray | None) -> dict:
    """Score and every ratio metric over the kept sessions (no resampling)."""
    values = table.values if keep is None else table.values[keep]
    sizes = table.sizes if keep is None else table.sizes[keep]
    num, den = table.parts(values, sizes)
    score, ratios = table.figures(num.sum(axis=0), den.sum(axis=0))
    metrics: dict = {}
    for c, (type_name, metric) in enumerate(table.names):
        metrics.setdefault(type_name, {})[metric] = finite_or_none(ratios[c])
    return {"sessions": int(len(sizes)), "score": finite_or_none(score), "metrics": metrics}


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
        # recall@k from the hit masks, whatever the scored metric; the masks hold the first 63 ranks
        kmax = max(1, min(max(m.k or 1 for m in table.metrics), 63))
        hits = door.kernel("hit_counts")(np.ascontiguousarray(result.slot_hits, np.int64), kmax).reshape(table.sizes.shape)
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

    return {t: {name: finite_or_none(v) for name, v in values.items() if parse_metric(name).family == "beyond"}
            for t, values in result.metrics.items() if any(parse_metric(n).family == "beyond" for n in values)}


def _value(x, width=12, places=6) -> str:
    return f"{fixed(x, places):>{width}}"


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
                span = "-" if v["low"] is None else f"[{fixed(v['low'])}, {fixed(v['high'])}]"
                lines.append(f"{label:<22}{_value(v['value'])}{span:>28}{_value(v['se'])}")
    if "breakdown" in analytics:
        b = analytics["breakdown"]
        kmax, metric = b["k"], b["metric"]
        shown = sorted({k for k in (1, 2, 3, 5, 10, 15, 20, 50, 100, kmax) if k <= kmax})
        header = f"{'':<10}" + "".join(f"{'@' + str(k):>10}" for k in shown)
        lines += ["", f"recall@k ({metric.split('@')[0]} with the first k items)", header, "-" * len(header)]
        for type_name, curve in b["recall_at_k"].items():
            lines.append(f"{type_name:<10}" + "".join(_value(curve[k - 1], 10, 4) for k in shown))
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
                    lines.append(f"{type_name:<10}{row['bin']:>24}{row['sessions']:>12,}{_value(row['recall'])}{percent(row['share']):>9}"
                                 + "".join(_value(row["beyond"][n], w) for n, w in zip(extra, widths)))
        if "beyond" in b:
            lines += ["", "beyond-accuracy totals (diagnostics; " + b["beyond"]["note"] + ")"]
            for type_name, values in b["beyond"]["totals"].items():
                lines.append(f"{type_name:<10}" + "  ".join(f"{n} {fixed(v)}" for n, v in values.items()))
    return "\n".join(lines)
