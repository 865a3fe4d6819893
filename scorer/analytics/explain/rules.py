"""`scorer explain` for the string shapes (list, long, value): a file scored under its competition's rules at the edges
([rules]: missing, repeated_key, repeated_item, truth), then with each rule turned to each of its other values, one at a
time, and what each turn moves: every metric, the gap, the rows whose figure (or whether they count) changes.

The rules are the config's (scorer.spec.competition.RULES says what each value does); a turn that the shape does not have
is not made. A turn of `truth` reads the truth again (as a set or a multiset).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from scorer.analytics.explain.published import explanation_html, rows_table
from scorer.api import resolve_competition, resolve_truth, score
from scorer.engine.result import Result, finite_or_none
from scorer.errors import UsageError
from scorer.frames import Tabular
from scorer.spec.competition import RULES, SHAPE_RULES

SHOWN = 5  # rows listed per turn


@dataclass
class RulesExplanation(Tabular):
    """What `scorer explain` reports for the string shapes (scorer.explain): to_dict() its JSON, to_text() its text;
    to_arrow() (and to_pandas(), to_polars()) one row per rule's turn and metric: our figure, theirs, the gap and the rows
    it moves."""

    result: Result
    shape: str
    rules: dict = field(default_factory=dict)  # the competition's rule values
    conventions: list = field(default_factory=list)  # one entry per (rule, value) turned
    all_rules: bool = False

    def to_dict(self) -> dict:
        result = self.result
        return {"submission": result.submission, "competition": result.competition, "rules": self.rules,
                "score": finite_or_none(result.score), "valid": result.valid, "metrics": result.metrics,
                "problem_counts": result.report.summary(), "conventions": self.conventions}

    def to_arrow(self):
        return rows_table(self.conventions, ("name", "metric", "ours", "theirs", "gap", "moved"))

    def _repr_html_(self) -> str:
        return explanation_html(self.result, "each rule at the edges turned one at a time", self.to_arrow(), [])

    def to_text(self, all_rules: bool | None = None) -> str:
        """The table of turns (all_rules: also the rows of the turns that move no figure)."""
        everything = self.all_rules if all_rules is None else all_rules
        result = self.result
        if result.unread is not None:
            return f"explain: {result.submission} could not be read: {result.unread}"
        ours = result.metrics["all"]
        lines = [f"{result.submission} under {result.competition}'s rules ({', '.join(f'{k} = {v}' for k, v in self.rules.items())}): "
                 + ", ".join(f"{name} {value:.6f}" for name, value in ours.items() if value is not None), ""]
        lines.append(f"{'turned':<26} {'metric':<14} {'ours':>10} {'theirs':>10} {'gap':>11}  rows moved")
        still = 0
        for row in self.conventions:
            if row["gap"] == 0.0 and not row["moved"] and not everything:
                still += 1
                continue
            if row["theirs"] is None or row["ours"] is None:
                lines.append(f"{row['name']:<26} {row['metric']:<14} (undefined)")
                continue
            first = f" (first: {', '.join(row['first'])})" if row["first"] else ""
            lines.append(f"{row['name']:<26} {row['metric']:<14} {row['ours']:>10.6f} {row['theirs']:>10.6f} {row['gap']:>+11.6f}  "
                         f"{row['moved']:,}{first}")
        if still:
            lines.append(f"({still:,} more turns move no figure and no row: --all lists them)")
        lines += ["", "rules:"]
        for name, value in self.rules.items():
            lines += [f"  {name} = {option}: {RULES[name][option]}" for option in SHAPE_RULES[self.shape][name]]
        return "\n".join(lines)


def explain_rules(submission, truth, competition, *, config=None, against: str | None = None, threads: int = 2,
                  untrusted: bool = False, shown: int = SHOWN) -> RulesExplanation:
    """Score the file under the competition's rules, then with each rule turned (against: "rule=value,..." to choose;
    default: every other value of every rule of the shape)."""
    ours = resolve_competition(competition, config)
    allowed = SHAPE_RULES.get(ours.shape)
    if allowed is None or ours.shape == "impression":
        raise UsageError(f"explain turns the rules of the string shapes (list, long, value); {ours.name!r} has shape {ours.shape!r}")
    rules = {name: getattr(ours.rules, name) for name in allowed}
    turns = _turns(allowed, rules, against)
    result = score(submission, resolve_truth(truth, ours), ours, threads=threads, untrusted=untrusted)
    explanation = RulesExplanation(result, ours.shape, rules)
    if result.outcome is None:
        return explanation
    names = [str(metric) for metric in ours.metrics]
    for rule, value in turns:
        turned = replace(ours, rules=ours.rules.turned(**{rule: value}))
        other = score(submission, resolve_truth(truth, turned) if rule == "truth" else result.truth, turned, threads=threads,
                      untrusted=untrusted)
        moved = _moved(result, other)
        first = [_row_name(result, int(slot)) for slot in moved[:shown]]  # the same rows for every metric of the turn
        for name in names:
            base, theirs = result.metrics["all"].get(name), other.metrics["all"].get(name)
            explanation.conventions.append({
                "name": f"{rule} = {value}", "what": RULES[rule][value], "metric": name, "ours": base, "theirs": theirs,
                "gap": None if theirs is None or base is None else theirs - base, "moved": int(len(moved)), "first": list(first)})
    return explanation


def _turns(allowed: dict, rules: dict, against: str | None) -> list[tuple[str, str]]:
    """The (rule, value) turns: those named ("rule=value", comma-separated), else every other value of each rule."""
    if against is None:
        return [(name, value) for name, values in allowed.items() for value in values if value != rules[name]]
    turns = []
    for part in filter(None, (piece.strip() for piece in against.split(","))):
        name, _, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if name not in allowed or value not in allowed[name]:
            known = "; ".join(f"{rule}={'|'.join(values)}" for rule, values in allowed.items())
            raise UsageError(f"unknown turn {part!r} for this shape; known: {known}")
        turns.append((name, value))
    return turns


def _moved(ours: Result, other: Result) -> np.ndarray:
    """The rows whose figure of any metric, or whether and how often they count, differs between the two scores."""
    a, b = ours.outcome.slot_values, other.outcome.slot_values
    changed = (a != b).any(axis=1) if a.shape == b.shape else np.ones(len(a), np.bool_)
    weights_a, weights_b = ours.outcome.weights, other.outcome.weights
    if weights_a is not None or weights_b is not None:
        ones = np.ones(len(changed))
        changed |= (ones if weights_a is None else weights_a) != (ones if weights_b is None else weights_b)
    return np.flatnonzero(changed)


def _row_name(result: Result, slot: int) -> str:
    line = int(result.slot_line[slot])
    return f"{result.truth.name(slot)!r} ({f'line {line}' if line else 'missing'})"
