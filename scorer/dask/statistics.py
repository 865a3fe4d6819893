"""What one session partition's scoring sends back: sufficient statistics, merged exactly, in any order.

A partition's statistics are, per type and metric, the exact sums (scorer.spec.exact_sums) of the metric's
ratio parts (total = Σ numerator / Σ denominator, scorer.spec.totals), the row counts, the truth's sessions per
type, and the problems: every code's count and its first `max_per_code` problems in the global row order
(part index, line), plus the first missing rows by session id. `merge` is associative and commutative, so a
tree of merges in any shape gives the same statistics, and `to_result` the same figures to the last bit as one
process scoring the concatenated parts. Nothing here grows with the data: a few hundred bytes per metric and
the capped problems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scorer.engine.file_pass import SHOWN_IDS
from scorer.engine.problems import Code, Problem, Report, kind, report_missing_rows, report_unknown_rows
from scorer.spec.competition import Competition
from scorer.spec.exact_sums import ExactSum

ORDER_BITS = 40  # a row's global order: part index << ORDER_BITS | its 0-based row within the part
ROLLED_UP = {Code.MISSING_ROWS.code, Code.UNKNOWN_SESSIONS.code}  # one problem that stands for all: rebuilt at the end


@dataclass(frozen=True)
class Kept:
    """A kept problem and where it sorts: (part index, line, code) of the row it names; rolled-up ones sort first."""

    key: tuple[int, int, str]
    problem: Problem


@dataclass
class Statistics:
    sums: dict[tuple[int, int], tuple[ExactSum, ExactSum]] = field(default_factory=dict)  # (type, metric) -> (Σ num, Σ den)
    counts: dict[str, int] = field(default_factory=dict)
    truth_sessions: list[int] = field(default_factory=list)  # sessions with truth, per type
    problem_counts: dict[str, int] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)
    kept: dict[str, list[Kept]] = field(default_factory=dict)
    missing: list[tuple] = field(default_factory=list)  # the first (session or string id, type index) with no row
    unknown: list[tuple] = field(default_factory=list)  # the first (part, line, session or string id, part name)
    fatal: bool = False
    partitions: int = 0  # how many session partitions these statistics hold


def _add(a: dict, b: dict) -> dict:
    return {key: a.get(key, 0) + b.get(key, 0) for key in a.keys() | b.keys()}


def merge(a: Statistics, b: Statistics, max_per_code: int) -> Statistics:
    """The statistics of both partitions' rows together (associative, commutative)."""
    sums = dict(a.sums)
    for key, (numerator, denominator) in b.sums.items():
        mine = sums.get(key)
        sums[key] = (numerator, denominator) if mine is None else (mine[0] + numerator, mine[1] + denominator)
    kept = {}
    for code in a.kept.keys() | b.kept.keys():
        both = sorted(a.kept.get(code, []) + b.kept.get(code, []), key=lambda entry: entry.key)
        kept[code] = both[: 1 if kind(code).once else max_per_code]
    truth_sessions = [x + y for x, y in zip(a.truth_sessions, b.truth_sessions)] or a.truth_sessions or b.truth_sessions
    return Statistics(sums, _add(a.counts, b.counts), truth_sessions, _add(a.problem_counts, b.problem_counts),
                      _add(a.covered, b.covered), kept, sorted(a.missing + b.missing)[:SHOWN_IDS],
                      sorted(a.unknown + b.unknown)[:SHOWN_IDS], a.fatal or b.fatal, a.partitions + b.partitions)


def of_result(result, competition: Competition, order: np.ndarray, names: list[str]) -> Statistics:
    """The statistics of one partition's Result, scored from a frame whose row r is the submission's row order[r]
    (part index << ORDER_BITS | row within that part); names: the parts' names, by part index."""
    n_types = len(competition.types)
    stats = Statistics(counts=dict(result.counts), fatal=result.report.fatal, partitions=1)
    truth = result.truth
    stats.truth_sessions = [int(np.count_nonzero(truth.type_sizes(t))) for t in range(n_types)]
    if result.outcome is not None:
        from scorer.engine.metric_rows import MetricRows

        for t in range(n_types):
            sizes = truth.type_sizes(t)
            for j, metric in enumerate(competition.metrics):
                values = MetricRows(result.outcome, metric, t, n_types, sizes, j).column()
                numerator, denominator = metric.ratio_parts(values, sizes)
                stats.sums[(t, j)] = (ExactSum.of(numerator), ExactSum.of(denominator))
        missing = np.flatnonzero(result.outcome.slot_line == 0)
        if competition.shape == "id_type":
            stats.missing = [(int(truth.sessions[slot // n_types]), int(slot % n_types)) for slot in missing[:SHOWN_IDS]]
        else:  # string ids: the first by name (each partition's are in its own order)
            stats.missing = sorted((truth.name(int(slot)), 0) for slot in missing)[:SHOWN_IDS]
    report = result.report
    for code, kept in report.kept.items():
        stats.problem_counts[code] = report.counts[code]
        if code in ROLLED_UP:
            continue
        stats.covered[code] = report.covered.get(code, len(kept))
        stats.kept[code] = [_located(problem, order, names) for problem in kept]
    return stats


def part_and_line(order: int) -> tuple[int, int]:
    """(part index, line) of a row's global order (line 1 is a part's header, its 0-based row r line r + 2)."""
    return order >> ORDER_BITS, (order & ((1 << ORDER_BITS) - 1)) + 2


def _located(problem: Problem, order: np.ndarray, names: list[str]) -> Kept:
    """A frame row's problem as a problem of its part and line; rows its message names become parts' lines."""
    import re

    if problem.row is None:
        return Kept((-1, 0, problem.code), problem)

    def named(match) -> str:
        part, line = part_and_line(int(order[int(match.group(1))]))
        return f"{names[part]} line {line}"

    part, line = part_and_line(int(order[problem.row]))
    message = re.sub(r"\brow (\d+)", named, problem.message)
    located = Problem(problem.code, problem.severity, f"{names[part]}: {message}", line, None, None, None, None, problem.field)
    return Kept((part, line, problem.code), located)


def to_result(stats: Statistics, competition: Competition, strict: bool, max_per_code: int, submission: str, seconds: float):
    """The Result of the merged statistics of every partition (no per-row arrays: outcome and truth are None)."""
    from scorer.engine.result import Result

    report = Report(strict=strict, max_per_code=max_per_code, fatal=stats.fatal)
    for code, entries in sorted(stats.kept.items()):
        report.kept[code] = [entry.problem for entry in entries]
        report.counts[code] = stats.problem_counts[code]
        report.covered[code] = stats.covered.get(code, len(entries))
    unknown = stats.problem_counts.get(Code.UNKNOWN_SESSIONS.code, 0)
    if unknown:
        shown = ", ".join(f"{session} ({name} line {line})" if isinstance(session, int) else f"{name} line {line}"
                          for _, line, session, name in stats.unknown)
        report_unknown_rows(report, unknown, shown)
    missing = stats.problem_counts.get(Code.MISSING_ROWS.code, 0)
    if missing:
        shown = ", ".join(competition.id_pattern.format(session=session, type=competition.types[t]) for session, t in stats.missing)
        if competition.shape != "id_type":
            shown = ", ".join(str(session) for session, _ in stats.missing)
        report_missing_rows(report, missing, shown)
    scored = stats.partitions > 0 and bool(stats.sums)
    metrics: dict[str, dict[str, float | None]] = {}
    weighted = 0.0
    for t, type_name in enumerate(competition.types):
        metrics[type_name] = {}
        for j, metric in enumerate(competition.metrics):
            value = _ratio(*stats.sums[(t, j)]) if scored else math.nan
            metrics[type_name][str(metric)] = None if math.isnan(value) else value
        weighted += competition.weights[t] * (metrics[type_name][str(competition.metric)] or 0.0)
    give_score = scored and not report.fatal and not (strict and report.has_errors())
    return Result(competition=competition.name, submission=submission, strict=strict, score=float(weighted) if give_score else None,
                  metrics=metrics, weights=dict(zip(competition.types, competition.weights)), scored_metric=str(competition.metric),
                  counts=stats.counts, report=report, truth_sessions=dict(zip(competition.types, stats.truth_sessions)),
                  seconds=seconds)


def _ratio(numerator: ExactSum, denominator: ExactSum) -> float:
    den = float(denominator)
    return math.nan if den == 0 else float(numerator) / den
