"""Paired comparison of two submissions scored against the same truth.

Per session s and type t, δ_st = hits^A_st - hits^B_st (the scored metric's numerator) and
d_st = min(K, |T_st|). The figures:
  Δ_t = Σ_s δ_st / Σ_s d_st  (recall of A minus recall of B),   Δ = Σ_t w_t Δ_t;
  paired bootstrap: sessions redrawn with replacement, both files together → percentile interval of Δ, Δ_t;
  randomization test: each session's δ_s has its sign flipped with probability 1/2 (A and B swapped),
    p = (1 + #{|Δ*| ≥ |Δ|}) / (1 + R), two-sided, per type and for the weighted score;
  wins / ties / losses: sessions where c_s = Σ_t w_t δ_st / Σ_s' d_s't is > 0, = 0, < 0
    (per type: sessions with truth where δ_st > 0, = 0, < 0).
Beyond-accuracy metrics (diagnostics) are shown side by side over all sessions, without a paired test.
"""

from __future__ import annotations

import numpy as np

from scorer.analytics.bootstrap import SessionTable, interval, resample
from scorer.engine.result import finite_or_none
from scorer.errors import UsageError
from scorer.kernels import door
from scorer.wording import fixed, inline, listed, significant


def compare(result_a, result_b, n: int = 1000, seed: int = 0, level: float = 0.95, keep: np.ndarray | None = None,
            threads: int = 2) -> dict:
    """The paired figures of A - B over the kept sessions (all when keep is None); see the module docstring."""
    a, b = SessionTable.from_result(result_a), SessionTable.from_result(result_b)
    if a.types != b.types or a.values.shape != b.values.shape or not np.array_equal(a.sizes, b.sizes):
        raise UsageError("the two results were not scored against the same truth and competition")
    scored = [(t, 0) for t in range(len(a.types))]
    hits_a, den = a.parts(a.values, a.sizes, scored)
    hits_b, _ = b.parts(b.values, b.sizes, scored)
    if keep is not None:
        hits_a, hits_b, den = hits_a[keep], hits_b[keep], den[keep]
    delta = hits_a - hits_b
    n_types = len(a.types)
    den_total = den.sum(axis=0)
    safe = np.where(den_total > 0, den_total, 1.0)
    observed = np.where(den_total > 0, delta.sum(axis=0) / safe, np.nan)
    weights = a.weights
    observed_score = float((np.nan_to_num(observed) * weights).sum())

    group, first = door.kernel("group_rows")(np.ascontiguousarray(delta).view(np.int64), np.ascontiguousarray(den).view(np.int64))
    counts = np.bincount(group, minlength=len(first)).astype(np.int64)
    values = np.concatenate([delta[first], den[first]], axis=1)

    def figures(d_sums, den_sums):
        with np.errstate(invalid="ignore", divide="ignore"):
            per_type = np.where(den_sums > 0, d_sums / np.where(den_sums > 0, den_sums, 1.0), np.nan)
        return np.concatenate([(np.nan_to_num(per_type) * weights).sum(axis=1, keepdims=True), per_type], axis=1)

    boot = resample(values, counts, n, seed, "bootstrap", threads)
    boot_figures = figures(boot[:, :n_types], boot[:, n_types:])
    low, high = interval(boot_figures, level)

    moving = np.any(values[:, :n_types] != 0, axis=1)  # sessions with δ = 0 everywhere do not move under a flip
    flips = resample(values[moving, :n_types], counts[moving], n, seed + 1, "flip", threads)
    flip_figures = figures(flips, np.broadcast_to(den_total, flips.shape))
    obs = np.concatenate([[observed_score], observed])
    tolerance = 1e-12 * np.maximum(1.0, np.abs(obs))
    extreme = (np.abs(flip_figures) >= np.abs(obs) - tolerance).sum(axis=0)
    p_values = (1 + extreme) / (1 + n) if n else np.full(len(obs), np.nan)

    contribution = (delta / safe * np.where(den_total > 0, weights, 0.0)).sum(axis=1)
    has_truth = den > 0
    outcome = lambda x, mask: {"wins": int((x[mask] > 0).sum()), "ties": int((x[mask] == 0).sum()), "losses": int((x[mask] < 0).sum())}  # noqa: E731

    def row(j, value):
        return {"difference": finite_or_none(value), "low": finite_or_none(low[j]), "high": finite_or_none(high[j]),
                "p_value": finite_or_none(p_values[j])}

    recall_a = np.where(den_total > 0, hits_a.sum(axis=0) / safe, np.nan)
    recall_b = np.where(den_total > 0, hits_b.sum(axis=0) / safe, np.nan)
    out = {
        "a": result_a.submission, "b": result_b.submission, "metric": str(a.metrics[0]),
        "resamples": n, "seed": seed, "level": level, "sessions": int(len(den)),
        "score": {"a": float((np.nan_to_num(recall_a) * weights).sum()), "b": float((np.nan_to_num(recall_b) * weights).sum()),
                  **row(0, observed_score), **outcome(contribution, np.ones(len(contribution), bool))},
        "types": {},
    }
    for t, type_name in enumerate(a.types):
        out["types"][type_name] = {"a": finite_or_none(recall_a[t]), "b": finite_or_none(recall_b[t]), **row(t + 1, observed[t]),
                                   **outcome(delta[:, t], has_truth[:, t])}
    return out


def p_text(p: float | None) -> str:
    """A p-value as read: '<0.001' below 0.001 (a randomization test of n resamples gives at least 1/(n + 1), such as
    0.000999, which only says that no resample was as extreme), else three decimals; '-' for none."""
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def p_is(p: float | None) -> str:
    """'p = 0.006', 'p < 0.001'."""
    shown = p_text(p)
    return f"p {shown[0]} {shown[1:]}" if shown.startswith("<") else f"p = {shown}"


def how_often(p: float) -> str:
    """A randomization p-value as how often two equally good files differ as much: 'less than 0.1% of the time'."""
    if p < 0.001:
        return "less than 0.1% of the time"
    return f"{100 * p:.1f}% of the time" if p < 0.01 else f"{100 * p:.0f}% of the time"


def clear(row: dict, level: float) -> bool:
    """A difference is clear when its interval leaves out zero and its p-value is at most 1 - level (both say so)."""
    return (row["p_value"] is not None and row["low"] is not None and row["p_value"] <= 1.0 - level + 1e-12
            and (row["low"] > 0 or row["high"] < 0))


def _lower_is_better(figures: dict) -> bool:
    """Is the compared metric one where the smaller figure is the better (clicks, log_loss): the verdict turns round."""
    from scorer.spec.metrics import parse_metric

    try:
        return parse_metric(figures["metric"]).lower_is_better
    except (KeyError, ValueError):
        return False


def verdict(figures: dict, where: str = "") -> str:
    """Which of A and B is better, by how much and how sure, in plain words (the technical terms beside them); where: the
    sessions it is about (' on the public sessions'), said when there is a split."""
    row, level = figures["score"], figures["level"]
    a, b = inline(figures["a"]), inline(figures["b"])
    d = row["difference"]
    if d is None:
        return f"A ({a}) and B ({b}) could not be compared{where}: no difference has a figure."
    if d == 0:
        return f"A ({a}) and B ({b}) score the same{where}: {fixed(row['a'])}."
    better, worse, high, low = ("A", "B", row["a"], row["b"]) if (d > 0) != _lower_is_better(figures) else ("B", "A", row["b"], row["a"])
    names = f"{better} ({a if better == 'A' else b})", f"{worse} ({b if better == 'A' else a})"
    numbers = f"{fixed(high)} against {fixed(low)} for {names[1]}, a gap of {significant(abs(d))}"
    if row["low"] is None or row["p_value"] is None:
        return (f"{names[0]} scores {numbers}{where}; without resamples (--bootstrap 0) this report cannot say whether that gap is more than "
                "chance.")
    span = (f"redrawing the sessions {figures['resamples']:,} times, the gap stays between {fixed(row['low'], 6, '+')} and "
            f"{fixed(row['high'], 6, '+')} in {100 * level:g}% of the draws (its interval)")
    odds = f"two equally good files would differ this much {how_often(row['p_value'])} ({p_is(row['p_value'])})"
    if clear(row, level):
        sentence = f"{names[0]} is better{where}: it scores {numbers}; {span}, and {odds}."
    else:
        sentence = f"Neither is clearly better{where}: {names[0]} scores {numbers} that may be chance: {span}, and {odds}."
    return sentence + _by_type(figures)


def _by_type(figures: dict) -> str:
    """' By type: A is better on carts; no clear difference on clicks and orders.' (nothing with one type)."""
    types = figures["types"]
    if len(types) < 2 or figures["score"]["low"] is None:
        return ""
    groups = {"A": [], "B": [], "": []}
    for name, row in types.items():
        if row["difference"] is None:
            continue
        a_better = (row["difference"] > 0) != _lower_is_better(figures)
        groups[("A" if a_better else "B") if clear(row, figures["level"]) else ""].append(inline(name))
    parts = [f"{side} is better on {listed(names)}" for side, names in groups.items() if side and names]
    if groups[""]:
        parts.append(f"no clear difference on {listed(groups[''])}")
    return " By type: " + "; ".join(parts) + "."


def lead(figures: dict) -> str:
    """The report's opening: the verdict on all sessions, then a clause for each side of a split."""
    whole = figures.get("all") or next(iter(figures.values()))
    sides = [name for name in figures if name != "all"]
    if not sides:
        return verdict(whole)
    said = []
    for name in sides:
        row = figures[name]["score"]
        if row["difference"] is None or row["difference"] == 0:
            said.append(f"on the {name} sessions the two score the same")
            continue
        better = "A" if row["difference"] > 0 else "B"
        sure = "clearly" if clear(row, figures[name]["level"]) else "not clearly"
        said.append(f"on the {name} sessions {better} scores higher, {sure} ({p_is(row['p_value'])})")
    return f"{verdict(whole, ' on all sessions')} Split: {'; '.join(said)}."


def render_text(figures: dict, where: str = "") -> str:
    """The verdict in words, then a table of A, B, A - B, its interval, the p-value and the session outcomes, per type and
    weighted."""
    level = round(100 * figures["level"])
    lines = [verdict(figures, where), "", f"A = {figures['a']}", f"B = {figures['b']}",
             f"paired over {figures['sessions']:,} sessions; {figures['resamples']:,} resamples (seed {figures['seed']}), "
             f"{level}% percentile interval, two-sided randomization p-value", ""]
    header = f"{'':<10}{'A':>10}{'B':>10}{'A - B':>11}{f'{level}% interval':>24}{'p':>9}{'A wins':>11}{'ties':>11}{'B wins':>11}"
    lines += [header, "-" * len(header)]
    fmt = lambda x, w=10, sign="": f"{fixed(x, 6, sign):>{w}}"  # noqa: E731
    rows = [("score", figures["score"])] + [(f"{t}", v) for t, v in figures["types"].items()]
    for name, v in rows:
        span = "-" if v["low"] is None else f"[{fixed(v['low'], 6, '+')}, {fixed(v['high'], 6, '+')}]"
        p = p_text(v["p_value"])
        lines.append(f"{name:<10}{fmt(v['a'])}{fmt(v['b'])}{fmt(v['difference'], 11, '+')}{span:>24}{p:>9}"
                     f"{v['wins']:>11,}{v['ties']:>11,}{v['losses']:>11,}")
    lines.append("")
    lines.append(f"score row: per-session weighted contribution; type rows: sessions with truth of that type ({figures['metric']} hits)")
    lines += [f"key: interval  where the gap A - B stays in {level}% of the redraws of the sessions",
              "     p         how often two equally good files would differ this much (<0.001: less than once in 1,000)",
              "     wins      the sessions where that file does better; ties: where both do as well"]
    return "\n".join(lines)


BEYOND_NOTE = "diagnostics over all sessions, side by side: no paired test or interval"


def beyond_sides(result_a, result_b) -> dict:
    """{"note", "metrics": {type: {metric: {"a", "b", "difference"}}}} of the beyond-accuracy metrics ({} without them)."""
    from scorer.spec.metrics import parse_metric

    metrics: dict = {}
    for type_name, values in result_a.metrics.items():
        for name, a in values.items():
            if parse_metric(name).family != "beyond":
                continue
            b = result_b.metrics[type_name].get(name)
            a, b = finite_or_none(a), finite_or_none(b)
            metrics.setdefault(type_name, {})[name] = {"a": a, "b": b, "difference": None if a is None or b is None else a - b}
    return {"note": BEYOND_NOTE, "metrics": metrics} if metrics else {}


def render_beyond(beyond: dict) -> str:
    """The beyond-accuracy metrics of A and B per type, one line each."""
    header = f"{'':<10}{'metric':<28}{'A':>12}{'B':>12}{'A - B':>12}"
    lines = [f"beyond-accuracy metrics ({beyond['note']})", header, "-" * len(header)]
    fmt = lambda x, sign="": f"{fixed(x, 6, sign):>12}"  # noqa: E731
    for type_name, values in beyond["metrics"].items():
        for name, v in values.items():
            lines.append(f"{type_name:<10}{name:<28}{fmt(v['a'])}{fmt(v['b'])}{fmt(v['difference'], '+')}")
    return "\n".join(lines)
