"""The Result of scoring or validating a submission, and its text and JSON renderings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scorer.engine.problems import Problem, Report
from scorer.errors import UsageError
from scorer.frames import Tabular
from scorer.wording import fixed, printable


def finite_or_none(value) -> float | None:
    """The value as a float, or None when it is None, NaN or infinite (a figure JSON can hold)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass
class Result(Tabular):
    """What scoring or validating a submission gives (scorer.score, scorer.validate).

    score: the weighted score, None when there is none (strict mode with an error, or an unreadable file); metrics:
    {type: {metric text: value}}, a value None where no session has truth of the type; counts: the row counts of the
    text's last line (rows expected, read, scored, missing, ...); valid: no error-severity problem; problems: the
    problems kept (each with its code, severity, line, column and message); to_dict(), to_json() and to_text(): the
    command's JSON and text output; to_pandas(), to_polars() and to_arrow(): one row per type (its weight, its
    metrics, its sessions with truth); sessions: the per-session figures (scored with per_session=True).
    """

    competition: str
    submission: str
    strict: bool
    score: float | None  # weighted score; None when the submission is invalid (strict) or unreadable
    metrics: dict[str, dict[str, float | None]]  # {type: {"recall@20": x, ...}}
    weights: dict[str, float]
    scored_metric: str
    counts: dict[str, int]
    report: Report
    truth_sessions: dict[str, int] = field(default_factory=dict)  # sessions with truth, per type
    outcome: object = field(default=None, repr=False)  # the pass's per-slot arrays (scorer.engine.file_pass.PassResult), None if unscored
    truth: object = field(default=None, repr=False)  # the scorer.truth.ids.Truth scored against
    seconds: float = 0.0
    per_session: object = field(default=None, repr=False)  # pyarrow Table of scorer.engine.session_table, when asked for

    @property
    def sessions(self):
        """A pyarrow Table, one row per truth session and type: session, type, line, truth, hits, denominator and a
        column per metric (scorer.engine.session_table; docs/api.md says how each metric's total sums its column).
        Kept by scorer.score(..., per_session=True)."""
        if self.per_session is None:
            why = ("the submission could not be read" if self.outcome is None
                   else "score with per_session=True to keep them (scorer.score(..., per_session=True))")
            raise UsageError(f"no per-session figures: {why}")
        return self.per_session

    @property
    def slot_line(self) -> np.ndarray | None:
        """Per (session, type) slot: the line of the row that counted, 0 if none."""
        return None if self.outcome is None else self.outcome.slot_line

    @property
    def slot_values(self) -> np.ndarray | None:
        """Per slot and metric: the row figure (made on first use when the pass derived it from the hits)."""
        return None if self.outcome is None else self.outcome.slot_values

    @property
    def slot_hits(self) -> np.ndarray | None:
        """Per slot: bit r set when the item at 0-based rank r (< 63) is a hit (uint32 where K is at most 32, else int64)."""
        return None if self.outcome is None else self.outcome.slot_hits

    @property
    def truth_sizes(self) -> np.ndarray | None:
        """|truth| per (session, type), shaped (n_sessions, n_types)."""
        return None if self.truth is None else self.truth.sizes

    @property
    def valid(self) -> bool:
        return not self.report.has_errors()

    @property
    def problems(self) -> list[Problem]:
        return self.report.problems

    @property
    def unread(self) -> str | None:
        """Why nothing of the file could be scored, in one line ("S027 error: cannot open submission x.csv: No such file or
        directory"), None when it was read."""
        if self.outcome is not None:
            return None
        first = next((kept[0] for kept in self.report.kept.values() if kept and kept[0].severity == "error"), None)
        if first is None:
            return "the submission could not be read"
        return printable(f"{first.code} error{'' if first.where == 'file' else ' at ' + first.where}: {first.message}")

    def to_dict(self) -> dict:
        # NaN only: an infinite figure (rmse of a prediction such as 1e200) is written as such
        clean = lambda value: None if value is None or (isinstance(value, float) and math.isnan(value)) else value  # noqa: E731
        return {
            "competition": self.competition,
            "submission": self.submission,
            "mode": "strict" if self.strict else "lenient",
            "valid": self.valid,
            "score": clean(self.score),
            "scored_metric": self.scored_metric,
            "weights": self.weights,
            "metrics": {t: {name: clean(v) for name, v in values.items()} for t, values in self.metrics.items()},
            "counts": self.counts,
            "problem_counts": self.report.summary(),
            "problems": [problem.to_dict() for problem in self.report.problems],
            "seconds": round(self.seconds, 3),
            **({"metadata": self.metadata} if self.metadata is not None else {}),
        }

    @property
    def metadata(self) -> str | None:
        """The file's metadata line where its competition has one (Spotify's `team_info,...`), as written."""
        return None if self.outcome is None else getattr(self.outcome, "metadata", None)

    def to_arrow(self):
        """One row per type: type, weight, every metric (null where undefined), sessions (those with truth of the type)."""
        import pyarrow as pa

        names = list(next(iter(self.metrics.values())).keys()) if self.metrics else []
        types = list(self.metrics)
        columns = {"type": pa.array(types, pa.string()), "weight": pa.array([self.weights.get(t) for t in types], pa.float64())}
        for name in names:
            columns[name] = pa.array([finite_or_none(self.metrics[t][name]) for t in types], pa.float64())
        columns["sessions"] = pa.array([self.truth_sessions.get(t, 0) for t in types], pa.int64())
        return pa.table(columns)

    def _repr_html_(self) -> str:
        from scorer.engine import display

        if self.unread is not None:
            return display.block(display.heading("score none:", self.unread))
        title = f"score {fixed(self.score)}" if self.score is not None else "score none"
        detail = (f"({self.scored_metric}, weighted {', '.join(f'{t} {w:g}' for t, w in self.weights.items())})" if self.score is not None
                  else "the submission is not valid" + (" (strict mode)" if self.strict else ""))
        table = self.to_arrow()
        rows = [[row[name] for name in table.column_names if name != "weight"] for row in table.to_pylist()]
        counts = ", ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in self.counts.items())
        return display.block(display.heading(title, detail), display.paragraph(f"{self.competition}: {self.submission}"),
                             display.table([name for name in table.column_names if name != "weight"], rows),
                             display.paragraph(counts) if counts else "", display.problems(self.report))

    def to_text(self, warning_examples: int | None = None) -> str:
        """The score, the metrics table, the counts and the problems (with warning_examples, at most that many examples
        of each warning or note code: all are counted)."""
        if self.unread is not None:  # nothing read: no table of dashes, the reason in one line
            return f"score  none: {self.unread}"
        lines = []
        if self.score is not None:
            lines.append(f"score  {fixed(self.score)}   ({self.scored_metric}, weighted {', '.join(f'{t} {w:g}' for t, w in self.weights.items())})")
        else:
            lines.append("score  none: the submission is not valid" + (" (strict mode)" if self.strict else ""))
        names = list(next(iter(self.metrics.values())).keys()) if self.metrics else []
        widths = [max(12, len(name) + 2) for name in names]
        header = f"{'type':<10}" + "".join(f"{name:>{w}}" for name, w in zip(names, widths)) + f"{'sessions':>12}"
        lines += ["", header, "-" * len(header)]
        for type_name, values in self.metrics.items():
            cells = "".join(f"{fixed(v):>{w}}" for v, w in zip(values.values(), widths))
            lines.append(f"{type_name:<10}{cells}{self.truth_sessions.get(type_name, 0):>12,}")
        lines.append("")
        lines.append("  ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in self.counts.items()))
        problems = render_problems(self.report, warning_examples)
        if problems:
            lines += ["", problems]
        return "\n".join(lines)


def render_problems(report: Report, warning_examples: int | None = None) -> str:
    """Per code the kept problems as `line:column code severity message`, a caret under the bad part, and the total;
    with warning_examples, at most that many of each warning or note code (errors all that are kept)."""
    out = []
    for row in report.summary():
        kept = report.kept[row["code"]] if report.examples else []
        shown = row["shown"]
        if warning_examples is not None and row["severity"] != "error" and len(kept) > warning_examples:
            kept, shown = kept[:warning_examples], warning_examples
        more = f" (showing {len(kept)})" if row["count"] > shown and kept else ""
        out.append(f"{row['code']} {row['severity']}: {row['title']} — {row['count']:,} in all{more}")
        for problem in kept:
            out.append(f"  {problem.where}: {printable(problem.message)}")
            if problem.context is not None and problem.caret is not None:
                start, width = problem.caret
                out.append(f"    | {problem.context}")
                out.append(f"    | {' ' * start}{'^' * max(1, min(width, len(problem.context) - start))}")
    return "\n".join(out)
