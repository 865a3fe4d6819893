"""Partitioned scoring: each part scored where it lies to a partial result, partials reduced exactly.

A part's partial holds only the slots it has rows for (slot = session_index * n_types + type_index
over the truth's sorted sessions): their line, per-metric row figures and hit ranks, which is
40 bytes a row instead of full-truth-sized arrays. The reduction writes them into full arrays in
part-name order — a slot already set by an earlier part is a repeated row, and the later part's
row counts (lenient), as in the concatenated file — then aggregates with the single-machine code
(scorer.api.result_from), so the figures equal those of the concatenated file to the last bit.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field, replace

import numpy as np

from scorer.engine.figures import SlotFigures
from scorer.engine.file_pass import SHOWN_IDS, PassResult
from scorer.engine.problems import Code, Report, report_missing_rows, report_repeated_rows
from scorer.engine.reader import Deadline, LimitExceeded
from scorer.kernels.rows import LINE_DTYPE
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth


@dataclass
class Partial:
    """What scoring one part sends back: its problems (named by part) and its rows by slot."""

    name: str
    report: Report
    rows_read: int = 0
    rows_unknown: int = 0
    rows_duplicate: int = 0  # repeated within the part
    rows_with_errors: int = 0  # read with an error (they score 0)
    slots: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    lines: np.ndarray = field(default_factory=lambda: np.empty(0, LINE_DTYPE))  # line within the part
    values: np.ndarray | None = None  # (rows, metrics)
    hits: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    seconds: float = 0.0


def _named(report: Report, name: str) -> Report:
    """The part's problems with the part's name in front; missing rows are judged after the reduction."""
    out = Report(strict=report.strict, max_per_code=report.max_per_code, fatal=report.fatal)
    for code, kept in report.kept.items():
        if code == Code.MISSING_ROWS.code:
            continue
        out.kept[code] = [replace(problem, message=f"{name}: {problem.message}") for problem in kept]
        out.counts[code] = report.counts[code]
    return out


def score_part(path: str, name: str, truth: str | Truth, competition: Competition, strict: bool = False,
               max_per_code: int = 20, threads: int = 1, untrusted: bool = False, deadline: Deadline | None = None) -> Partial:
    """Score one part file (CSV, or Parquet streamed to a temporary CSV under the config's limits) against the whole
    truth; `untrusted` as in score(); `deadline`: one shared by the parts of a submission (default: the config's
    max_seconds from now, for this part alone)."""
    from scorer.api import score
    from scorer.dask.parts import is_parquet, parquet_to_csv
    from scorer.dask.truthcache import truth_for

    started = time.monotonic()
    if not isinstance(truth, Truth):
        truth = truth_for(truth, competition)
    with tempfile.TemporaryDirectory(prefix="scorer-part-") as scratch:
        source = path
        if is_parquet(path):
            source = os.path.join(scratch, "part.csv")
            try:
                parquet_to_csv(path, source, untrusted=untrusted, limits=competition.limits,
                               deadline=deadline or Deadline(competition.limits.max_seconds, started))
            except Exception as error:  # pyarrow raises several kinds; the message says what is wrong
                report = Report(strict=strict, max_per_code=max_per_code, fatal=True)
                if isinstance(error, LimitExceeded):
                    report.add(error.number, str(error), error.line, error.column, stopped=True, **error.words)
                else:
                    report.add(Code.UNREADABLE, f"cannot read the Parquet part: {error}")
                return Partial(name, _named(report, name), seconds=time.monotonic() - started)
        result = score(source, truth, competition, strict=strict, max_per_code=max_per_code, threads=threads,
                       untrusted=untrusted, deadline=deadline)
    partial = Partial(name, _named(result.report, name), seconds=time.monotonic() - started)
    if result.slot_line is not None:
        slots = np.flatnonzero(result.slot_line)
        partial.slots, partial.lines = slots, result.slot_line[slots]
        stored = result.outcome.figures.stored  # None when the figures are derived from the hits
        partial.values, partial.hits = None if stored is None else stored[slots], result.slot_hits[slots]
        partial.rows_read = result.counts.get("rows_read", 0)
        partial.rows_unknown = result.counts.get("rows_unknown_session", 0)
        partial.rows_duplicate = result.counts.get("rows_duplicate", 0)
        partial.rows_with_errors = result.counts.get("rows_with_errors", 0)
    return partial


def _absorb(report: Report, part: Report) -> None:
    """Add a part's problems: counts summed, the first max_per_code of each code kept, in part order."""
    report.fatal = report.fatal or part.fatal
    for code, kept in part.kept.items():
        report.counts[code] = report.counts.get(code, 0) + part.counts[code]
        mine = report.kept.setdefault(code, [])
        mine.extend(kept[: report.max_per_code - len(mine)])


def reduce(partials: list[Partial], competition: Competition, truth: Truth, strict: bool, max_per_code: int,
           submission: str, seconds: float):
    """One Result from the partials of the parts, given in part-name order."""
    from scorer.api import result_from

    n_types = len(competition.types)
    n_slots = truth.n_sessions * n_types
    slot_line = np.zeros(n_slots, LINE_DTYPE)
    stored = any(part.values is not None for part in partials)
    slot_values = np.zeros((n_slots, len(competition.metrics) if stored else 0), np.float64)
    slot_hits = np.zeros(n_slots, np.int64)
    slot_part = np.full(n_slots, -1, np.int64)
    report = Report(strict=strict, max_per_code=max_per_code)
    name_of = lambda slot: competition.id_pattern.format(session=int(truth.sessions[slot // n_types]),  # noqa: E731
                                                         type=competition.types[slot % n_types])
    rows_read = rows_unknown = rows_duplicate = 0
    for index, part in enumerate(partials):
        _absorb(report, part.report)
        rows_read += part.rows_read
        rows_unknown += part.rows_unknown
        rows_duplicate += part.rows_duplicate
        if not len(part.slots):
            continue
        earlier = slot_part[part.slots]
        again = np.flatnonzero(earlier >= 0)
        shown = max(0, min(len(again), report.max_per_code - len(report.kept.get(Code.DUPLICATE_ROW.code, []))))
        repeats = [(name_of(int(part.slots[j])), int(part.lines[j]), f"{partials[earlier[j]].name} line {int(slot_line[part.slots[j]])}")
                   for j in again[:shown]]
        report_repeated_rows(report, repeats, len(again), prefix=f"{part.name}: ")
        rows_duplicate += len(again)
        slot_line[part.slots] = part.lines
        if stored:
            slot_values[part.slots] = part.values
        slot_hits[part.slots] = part.hits
        slot_part[part.slots] = index
    missing = np.flatnonzero(slot_line == 0)
    if len(missing):
        first = ", ".join(name_of(int(slot)) for slot in missing[:SHOWN_IDS])
        report_missing_rows(report, len(missing), first, " from every part")
    counts = {
        "sessions_in_truth": truth.n_sessions,
        "rows_expected": n_slots,
        "rows_read": rows_read,
        "rows_scored": int(n_slots - len(missing)),
        "rows_missing": int(len(missing)),
        "rows_unknown_session": rows_unknown,
        "rows_duplicate": rows_duplicate,
        "rows_with_errors": sum(part.rows_with_errors for part in partials),
        "rows_cut_at_k": report.counts.get(Code.TOO_MANY_ITEMS.code, 0),
        "rows_with_duplicate_items": report.counts.get(Code.DUPLICATE_ITEMS.code, 0),
    }
    outcome = PassResult(slot_line, SlotFigures.of(competition, truth.indptr, slot_hits, slot_values if stored else None), slot_hits, counts)
    return result_from(competition, truth, report, outcome, submission, strict, seconds)
