"""What a platform shows: one short sentence about an invalid submission, and the leaderboard figures."""

from __future__ import annotations

import math

from scorer.engine.problems import ERROR, Code
from scorer.engine.result import Result

ELLIPSIS = "…"
SUMMED = {Code.MISSING_ROWS.code, Code.UNKNOWN_SESSIONS.code}  # one problem that already counts its rows


def _describe(problem) -> str:
    where = f" line {problem.line}" if problem.line else ""
    return f"{problem.code}{where}: {problem.message}"


def participant_message(result: Result, max_chars: int | None = None, max_errors: int = 2) -> str:
    """One sentence naming the first error(s) in file order (code, line, message) and how many more there are.

    With ``max_chars`` the sentence is cut to fit (Kaggle shows at most 280 characters).
    """
    errors = [problem for problem in result.problems if problem.severity == ERROR]
    errors.sort(key=lambda p: (p.line is None, p.line or 0, p.code))  # in file order; whole-file problems last
    total = sum(1 if code in SUMMED else result.report.counts.get(code, 0) for code in {p.code for p in errors})
    if not errors:  # not expected for an invalid result; keep the promise of a sentence anyway
        return "Submission rejected: it could not be scored."
    for shown in range(min(max_errors, len(errors)), 0, -1):
        rest = total - shown
        tail = f" (and {rest:,} more error{'s' if rest != 1 else ''})" if rest > 0 else ""
        text = "Submission rejected: " + "; ".join(_describe(p) for p in errors[:shown]) + tail + "."
        if max_chars is None or len(text) <= max_chars or shown == 1:
            break
    if max_chars is not None and len(text) > max_chars:
        keep = max(0, max_chars - len(tail) - len(ELLIPSIS) - 1)
        text = text[: len(text) - len(tail) - 1][:keep] + ELLIPSIS + tail + "."
        text = text[:max_chars]
    return text


def leaderboard_keys(types) -> list[str]:
    """The leaderboard column keys: the weighted score, then the scored metric of each type."""
    return ["score", *types]


def leaderboard_values(result: Result) -> dict[str, float]:
    """{"score": x, type: scored metric, ...}, all finite (a type no session has truth for gives 0.0)."""
    if result.score is None:
        raise ValueError("an invalid submission has no leaderboard figures")
    values = {"score": float(result.score)}
    for type_name, metrics in result.metrics.items():
        value = metrics.get(result.scored_metric)
        values[type_name] = float(value) if value is not None and math.isfinite(value) else 0.0
    if not all(math.isfinite(value) for value in values.values()):
        raise ValueError(f"a leaderboard figure is not finite: {values}")
    return values
