"""The engine's side of the string shapes (list, long, value): competition and truth as kernel arrays.

ShapeKernel is a scorer.engine.row_kernel.RowKernel, as the id_type kernel is, so the pass streams, merges and
reports the same way; the long shape also keeps its predictions (absorb) and scores them once the whole file is
read (finish). A row is named by its id as written (the truth's), or by its line.
"""

from __future__ import annotations

import numpy as np

from scorer.engine.problems import Code
from scorer.engine.row_kernel import NamedById, Parsed, RowKernel, first_rows, parse_calls
from scorer.kernels import door
from scorer.kernels.kinds import ABSOLUTE, LIST, LONG, SQUARED, VALUE, derivable, discounts, ideal_dcg
from scorer.kernels.rows import N_DUPS, N_TOO_MANY, frozen, long_state
from scorer.spec.competition import Competition
from scorer.truth.strings import StringTruth

SHAPE_CODES = {"list": LIST, "long": LONG, "value": VALUE}


class ShapeKernel(NamedById, RowKernel):
    """The competition and truth as the arrays parse_strings_block takes; coverage@K's items; the long shape's rows."""

    def __init__(self, competition: Competition, truth: StringTruth, max_per_code: int):
        self.shape = np.int64(SHAPE_CODES[competition.shape])
        metrics = competition.metrics
        self.n_metrics = len(metrics)
        self.kmax = kmax = competition.k
        value_kinds = [SQUARED if m.name == "rmse" else ABSOLUTE if m.name == "mae" else 0 for m in metrics]
        self.cover_ks = sorted({m.k for m in metrics if m.family == "catalog"})
        # per coverage@K (ascending K) and item of the truth: in some row's top K
        self.covered = np.zeros((len(self.cover_ks), truth.item_names.size), np.bool_)
        self.tables = (*map(frozen, truth.ids.arrays()), *map(frozen, truth.item_names.arrays()), self.covered)
        grades = truth.grades if truth.grades is not None else np.empty(0, np.float64)
        sorted_grades = truth.sorted_grades if competition.shape != "value" else np.empty(0, np.float64)
        self.truth = (frozen(truth.indptr), frozen(truth.items), frozen(grades), frozen(sorted_grades))  # read-only: one signature
        graded = truth.grades is not None
        kinds, ks = competition.row_kinds()
        self.stored_metrics = self.n_metrics if competition.shape == "value" or not derivable(kinds, kmax, graded) else 0
        self.metric = (kinds, ks,
                       np.int64(kmax), discounts(kmax), ideal_dcg(kmax), np.array(value_kinds, np.int64), np.array(self.cover_ks, np.int64))
        self.limits = (np.int64(competition.limits.max_line_bytes), np.int64(max_per_code))
        self.max_per_code = max_per_code
        self.preds: list[tuple] = []  # long shape, per kernel call: (slots, block-local lines, line offset, item codes)
        self.seen: np.ndarray | None = None  # long shape: rows kept of each id so far
        self.slot_type = np.int32 if truth.ids.size < 2**31 else np.int64
        self.spare = []
        self.ids = truth.ids

    def scratch(self):
        k = self.kmax + 1
        return (np.empty(k, np.int64), np.zeros(k, np.bool_), np.zeros(k, np.float64), np.empty(k, np.int64), np.empty(k, np.int64),
                np.zeros(4, np.int64), np.empty(k, np.uint64), np.empty(k, np.uint64), np.full(256, 255, np.uint8))

    def parse(self, data: np.ndarray, start: int, end: int, first_line: int) -> Parsed:
        head = (self.shape, self.tables, self.truth, self.metric, self.limits, self.scratch())
        return parse_calls(self, door.kernel("parse_strings_block"), head, data, start, end, first_line, 3)

    def absorb(self, parsed: Parsed, line_offset: int) -> None:
        """Keep a block's predictions (long shape) compactly: slot (int32) and item code (int64: an unknown item's is a
        hash), 12 bytes each, and their block-local lines (int32) unless they are consecutive (as in a file without
        blank or bad lines), with the line offset; take back its row arrays. Only the first kmax + 1 rows of an id are
        kept (blocks come in line order): what is kept is bounded by the truth's ids, not by the upload's rows."""
        for block_preds in first_rows(self, parsed):
            lines = block_preds[:, 1]
            if lines[-1] - lines[0] == len(lines) - 1:  # lines only increase: consecutive
                kept, offset = np.empty(0, np.int32), line_offset + int(lines[0])
            else:
                kept, offset = lines.astype(np.int32), line_offset
            self.preds.append((block_preds[:, 0].astype(self.slot_type), kept, offset, block_preds[:, 2].copy()))

    def _by_slot(self, counts: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, lines, item codes) of the kept predictions of the chosen slots, grouped by slot (counts[s + 1]:
        slot s's), line order kept within a slot: a counting sort."""
        offsets = np.zeros(len(counts), np.int64)
        np.cumsum(np.where(chosen, counts[1:], 0), out=offsets[1:])
        lines, item_codes = np.empty(offsets[-1], np.int64), np.empty(offsets[-1], np.int64)
        cursor = offsets[:-1].copy()
        for slots, block_lines, line_offset, block_codes in self.preds:
            door.kernel("place_by_slot")(np.asarray(slots, np.int64), block_lines, np.int64(line_offset), block_codes, chosen, cursor, lines,
                                    item_codes)
        return offsets, lines, item_codes

    def finish(self, slot_line, slot_values, slot_hits, report) -> None:
        """Score the long shape's collected predictions per id, in line order; report the rows past K and repeats.

        The ids whose rows are together in the file (as usual) are scored straight from the kept predictions (12-16
        bytes each); only the rows of the others are copied, grouped by id (16 bytes each more), and scored after them."""
        if self.shape != LONG:
            return
        counts = np.zeros(len(slot_line) + 1, np.int64)
        runs = np.zeros(len(slot_line), np.int32)
        previous = -1
        for slots, _, _, _ in self.preds:
            previous = door.kernel("count_slots")(np.asarray(slots, np.int64), counts, runs, previous)
        scattered = runs > 1  # ids whose rows are in several places
        running = long_state(self.kmax)
        too_many = np.zeros(self.max_per_code, np.int64)
        duplicates = np.zeros(self.max_per_code, np.int64)
        figures = (self.truth, self.metric, self.covered, slot_line, slot_values, slot_hits, too_many, duplicates)
        for index, (slots, lines, line_offset, item_codes) in enumerate(self.preds):
            door.kernel("finish_long_runs")(np.asarray(slots, np.int64), lines, np.int64(line_offset), item_codes, scattered,
                                       index == len(self.preds) - 1, running, *figures)
        if scattered.any():
            door.kernel("finish_long")(*self._by_slot(counts, scattered), running, *figures)
        self.preds = []
        n_too_many, n_dups = int(running[0][N_TOO_MANY]), int(running[0][N_DUPS])
        for number, lines, count, message in (
                (Code.TOO_MANY_ITEMS, too_many, n_too_many, f"the id has more than {self.kmax} rows: only its first {self.kmax} rows count"),
                (Code.DUPLICATE_ITEMS, duplicates, n_dups, "the item repeats an earlier row of the same id: it counts once and wastes a slot")):
            for line in lines[: min(count, self.max_per_code)]:
                report.add(number, message, line=int(line), column=1, k=self.kmax, cut="the rest", hint="")
                kept = report.kept.get(number.code, [])
                if kept and kept[-1].line == int(line):
                    kept[-1].message = message  # the id_type templates speak of items in one row
            report.count_only(number, count - min(count, self.max_per_code))

    def coverage(self) -> dict[int, float]:
        """Per coverage@K: the share of the truth's items found in a top-K list of a row (NaN for an empty catalogue)."""
        return {k: float(covered.mean()) if covered.size else float("nan") for k, covered in zip(self.cover_ks, self.covered)}

