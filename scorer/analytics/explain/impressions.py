"""`scorer explain` for the impression shape: a file scored under its competition's rules, then with one convention
turned at a time, and what each turn moves: the figure, the gap, the impressions whose figure changes.

The conventions (docs/metrics.md, "The impression shape"):
- gauc: AUC weighted by each impression's candidates (Σ n·AUC / Σ n), as DIN's gauc and this scorer's gauc@K weight it,
  where MIND's evaluate.py and ebrec take the unweighted mean over impressions;
- first-click MRR: 1 / position of the first click alone (the recommender-system MRR, this scorer's mrr@K), where the
  evaluators average 1 / position over every click of the impression;
- ties later_first: equal ranks with the later candidate first at every length, where numpy's own argsort orders lists
  of more than 16 otherwise;
- missing zero: the impressions the file ends before score 0, where MIND's fill ranks their candidates all 1;
- masked zero: an impression with an empty label list counts in the mean with 0, where the evaluators skip it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from scorer.analytics.explain.published import explanation_html, rows_table
from scorer.api import resolve_competition, resolve_truth, score
from scorer.engine.result import Result, finite_or_none
from scorer.errors import UsageError
from scorer.frames import Tabular
from scorer.spec.competition import Competition
from scorer.spec.metrics import parse_metric

DOCS = "docs/metrics.md#the-impression-shape"
SHOWN = 5  # impressions listed per convention


@dataclass(frozen=True)
class Turn:
    name: str
    what: str
    metric: str  # the metric of ours it moves

    def competition(self, ours: Competition, widest: int) -> tuple[Competition, str]:
        """The competition with this convention turned, and the name of the metric to read in its result."""
        if self.name == "gauc":
            turned = parse_metric("auc(weight=candidates)")
            return replace(ours, diagnostics=(*ours.diagnostics, turned)), str(turned)
        if self.name == "first-click-mrr":
            turned = parse_metric(f"mrr@{max(widest, 1)}")
            return replace(ours, k=max(ours.k, widest), diagnostics=(*ours.diagnostics, turned)), str(turned)
        if self.name == "masked-zero":
            return replace(ours, metric=_with_empty_zero(ours.metric), diagnostics=tuple(map(_with_empty_zero, ours.diagnostics))), \
                str(_with_empty_zero(parse_metric(self.metric)))
        rule, value = self.name.split("-", 1)
        return replace(ours, rules=ours.rules.turned(**{rule: value.replace("-", "_")})), self.metric


def _with_empty_zero(metric):
    """The metric with option empty=zero (masked impressions count with 0)."""
    return parse_metric(str(replace(metric, options=(*metric.options, ("empty", "zero")))))


TURNS = (
    Turn("gauc", "AUC weighted by each impression's candidates (DIN's gauc), not the unweighted mean over impressions", "auc"),
    Turn("first-click-mrr", "1 / position of the first click alone, not the mean of 1 / position over every click", "mrr"),
    Turn("ties-later-first", "equal ranks: the later candidate first at every length, not numpy's own argsort order", "mrr"),
    Turn("missing-zero", "impressions the file ends before score 0, not MIND's fill (every candidate rank 1)", "auc"),
    Turn("masked-zero", "an impression with an empty label list counts in the mean with 0, not skipped", "auc"),
)
BY_NAME = {turn.name: turn for turn in TURNS}


@dataclass
class ImpressionExplanation(Tabular):
    """What `scorer explain` reports for the impression shape (scorer.explain): to_dict() its JSON, to_text() its text;
    to_arrow() one row per convention: our figure, theirs, the gap and the impressions it moves."""

    result: Result
    conventions: list = field(default_factory=list)
    all_rules: bool = False  # the text lists every convention either way

    def to_dict(self) -> dict:
        result = self.result
        return {"submission": result.submission, "competition": result.competition, "docs": DOCS, "score": finite_or_none(result.score),
                "valid": result.valid, "metrics": result.metrics, "problem_counts": result.report.summary(),
                "conventions": self.conventions}

    def to_arrow(self):
        rows = [{**row, "theirs": row["value"]} for row in self.conventions]
        return rows_table(rows, ("name", "metric", "as", "ours", "theirs", "gap", "moved"))

    def _repr_html_(self) -> str:
        return explanation_html(self.result, f"each convention turned one at a time ({DOCS})", self.to_arrow(), [])

    def to_text(self, all_rules: bool | None = None) -> str:
        ours = self.result.metrics["all"]
        lines = [f"{self.result.submission} under {self.result.competition}'s rules: "
                 + ", ".join(f"{name} {value:.6f}" for name, value in ours.items() if value is not None), ""]
        lines.append(f"{'convention':<18} {'metric':<10} {'ours':>10} {'theirs':>10} {'gap':>11}  impressions moved")
        for row in self.conventions:
            if row["value"] is None or row["ours"] is None:
                lines.append(f"{row['name']:<18} {row['metric']:<10} (undefined)")
                continue
            lines.append(f"{row['name']:<18} {row['metric']:<10} {row['ours']:>10.6f} {row['value']:>10.6f} {row['gap']:>+11.6f}  "
                         f"{row['moved']:,}" + (f" (first: {', '.join(row['first'])})" if row["first"] else ""))
        lines.append("")
        lines += [f"{row['name']}: {row['what']}" for row in self.conventions]
        lines.append(f"(the rules: {DOCS})")
        return "\n".join(lines)


def explain_impressions(submission, truth, competition, *, config=None, against: str | None = None, threads: int = 2,
                        untrusted: bool = False, shown: int = SHOWN) -> ImpressionExplanation:
    """Score the file under the competition's rules, then under each convention named (default: all)."""
    ours = resolve_competition(competition, config)
    truth = resolve_truth(truth, ours)
    turns = list(TURNS) if against is None else [_turn(name) for name in against.split(",") if name.strip()]
    result = score(submission, truth, ours, threads=threads, untrusted=untrusted)
    explanation = ImpressionExplanation(result)
    if result.outcome is None:
        return explanation
    widest = int(np.diff(truth.indptr).max(initial=0))
    names = [str(metric) for metric in ours.metrics]
    for turn in turns:
        turned, name = turn.competition(ours, widest)
        other = score(submission, truth, turned, threads=threads, untrusted=untrusted)
        value = other.metrics["all"].get(name)
        base = result.metrics["all"].get(turn.metric)
        if turn.name == "masked-zero":  # their figure stays 0; they now count in the mean
            moved = np.flatnonzero(np.diff(truth.indptr) == 0)
        elif turn.name == "gauc":  # each figure stays; every impression is weighed by its candidates
            moved = np.flatnonzero(np.diff(truth.indptr) > 0)[:0]
        else:
            moved = _moved(result, other, names.index(turn.metric), [str(m) for m in turned.metrics].index(name))
        explanation.conventions.append({
            "name": turn.name, "what": turn.what, "metric": turn.metric, "as": name, "ours": base, "value": value,
            "gap": None if value is None or base is None else value - base, "moved": int(len(moved)),
            "first": [f"line {int(slot) + 1} (impression {truth.name(int(slot))})" for slot in moved[:shown]]})
    return explanation


def _turn(name: str) -> Turn:
    name = name.strip()
    if name not in BY_NAME:
        raise UsageError(f"unknown convention {name!r} for the impression shape; known: {', '.join(BY_NAME)}")
    return BY_NAME[name]


def _moved(ours: Result, other: Result, j: int, k: int) -> np.ndarray:
    """The impressions whose figure differs between the two scores (ours in column j, the other in column k)."""
    a, b = ours.outcome.slot_values[:, j], other.outcome.slot_values[:, k]
    sizes = np.diff(ours.truth.indptr)
    return np.flatnonzero((a != b) & (sizes > 0))

