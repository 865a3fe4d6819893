"""The engine's side of the impression shape: the truth's label lists and the competition's metrics as the arrays
scorer.kernels.impressions takes, and the shape's hooks of the pass.

The shape is positional: line i of a file is impression i of the truth, whatever the blocks, so the pass counts each
block's lines before a thread parses it (`positional`) and the kernel writes each line's figures straight into its
impression's slot (no rows to merge). Once the file is read, the impressions it ended before are filled (the rules'
missing = "fill": every candidate rank 1, MIND's fill) or left at 0 (missing = "zero").
"""

from __future__ import annotations

import numpy as np

from scorer.engine.problems import Code
from scorer.engine.row_kernel import NamedByLine, Parsed, RowKernel
from scorer.kernels import codes, door
from scorer.kernels.impression_layout import SORT_STACK
from scorer.kernels.kinds import TIES_LATER_FIRST, TIES_NUMPY, VALUES_RANK, VALUES_SCORE, discounts, ideal_dcg
from scorer.kernels.rows import frozen
from scorer.spec.competition import Competition
from scorer.truth.impressions import ImpressionTruth
from scorer.wording import counted

TIES = {"numpy": TIES_NUMPY, "later_first": TIES_LATER_FIRST}
VALUES = {"rank": VALUES_RANK, "score": VALUES_SCORE}
SHOWN_FIELD = 40  # characters of a field quoted in a message


class ImpressionKernel(NamedByLine, RowKernel):
    """The arrays impression_block takes; the slots it writes are the pass's (attach)."""

    positional = True
    hits_dtype = np.uint8  # no hit masks: the figures are stored (the pass's zeroed array is never touched)

    def __init__(self, competition: Competition, truth: ImpressionTruth, max_per_code: int):
        self.competition = competition
        self.n_metrics = self.stored_metrics = len(competition.metrics)
        self.kmax = competition.k
        self.max_per_code = max_per_code
        kinds, ks = competition.row_kinds()
        self.metric = (kinds, ks, np.int64(TIES[competition.rules.ties]), np.int64(VALUES[competition.values]),
                       discounts(self.kmax), ideal_dcg(self.kmax))
        self.truth_arrays = (frozen(truth.sessions), np.int64(truth.id_base), frozen(truth.indptr), frozen(truth.bits))
        self.limits = (np.int64(competition.limits.max_line_bytes), np.int64(max_per_code))
        sizes = np.diff(truth.indptr)
        self.widest = int(sizes.max(initial=0))
        self.truth = truth
        self.spare = []
        self.slot_line = self.slot_values = None

    def attach(self, slot_line: np.ndarray, slot_values: np.ndarray) -> None:
        """The pass's per-slot arrays, which the kernel writes."""
        self.slot_line, self.slot_values = slot_line, slot_values

    def scratch(self) -> tuple:
        """One thread's work arrays: a line's scores, their order, the labels by position; the sort's stack; field bounds;
        the figures; the DCG up to each cut-off."""
        n = self.widest + 1
        return (np.empty(n, np.float64), np.empty(n, np.int64), np.empty(n, np.uint8), np.empty(3 * SORT_STACK, np.int64),
                np.zeros(6, np.int64), np.empty(self.n_metrics, np.float64), np.empty(self.kmax + 1, np.float64))

    def lines_in(self, data: np.ndarray, start: int, end: int) -> int:
        return door.kernel("count_lines")(data, start, end)

    def parse(self, data: np.ndarray, start: int, end: int, first_line: int, first_slot: int = 0) -> Parsed:
        counts = np.zeros(codes.N_CODES, np.int64)
        found = np.zeros((self.max_per_code * codes.N_CODES, 5), np.int64)
        lines, n_problems = door.kernel("impression_block")(data, start, end, np.int64(first_slot), self.truth_arrays, self.metric,
                                                            self.limits, self.scratch(), self.slot_line, self.slot_values, counts,
                                                            found, 0)
        return Parsed(data, [], counts, found, n_problems, lines)

    def finish(self, slot_line, slot_values, slot_hits, report) -> None:
        """The impressions the file ended before: filled with rank 1 (missing = "fill"), else left at 0 (reported as
        missing rows by the pass)."""
        if self.competition.rules.missing != "fill":
            return
        filled = door.kernel("fill_missing")(slot_line, self.truth_arrays[2], self.truth_arrays[3], self.metric, self.scratch(),
                                             slot_values)
        if filled:
            first = int(np.flatnonzero((slot_line == 0) & (np.diff(self.truth.indptr) > 0))[0])
            report.add(Code.IMPRESSIONS_FILLED, f"the file ends before {counted(filled, 'impression')} of the truth: "
                       f"{'it is' if filled == 1 else 'each is'} scored as if every candidate had rank 1 (MIND's fill); "
                       f"first: line {first + 1}, impression id {self.truth.name(first)}", line=first + 1, count=filled)

    def missing_slots(self, slot_line: np.ndarray) -> np.ndarray:
        """The impressions with labels that no line gave and no rule filled."""
        if self.competition.rules.missing == "fill":
            return np.empty(0, np.int64)
        return np.flatnonzero((slot_line == 0) & (np.diff(self.truth.indptr) > 0))

    def words(self, code: int, text: bytes, start: int, end: int, line: int) -> dict:
        """The words of a problem's message that the impression shape knows (line: the problem's line in the file)."""
        slot = line - 1
        field = text[start:end].decode("utf-8", "replace")
        shown = field if len(field) <= SHOWN_FIELD else field[:SHOWN_FIELD] + "…"
        if code == codes.IMPRESSION_ID_MISMATCH:
            hint = ""
            if slot + 1 < self.truth.n_sessions and field == self.truth.name(slot + 1):
                hint = " (a line seems to be missing before this one)"
            elif slot > 0 and field == self.truth.name(slot - 1):
                hint = " (the line before seems to be given twice)"
            return {"value": repr(shown), "expected": self.truth.name(slot), "hint": hint}
        if code == codes.RANK_COUNT:
            inner = field.strip("[]")
            return {"value": f"{len(inner.split(',')) if inner else 0:,}", "expected": f"{self._size(slot):,}"}
        if code == codes.BAD_RANK:
            hint = ""
            if any(c in field for c in ".eE") or len(field.lstrip("-")) > 18:
                hint = " (this scorer reads a rank of at most 18 digits, and a decimal one of at most 15 significant digits)"
            return {"value": repr(shown), "hint": hint, "what": "rank", "expected": "a number of at least 1 (1 is the first place)"}
        if code == codes.BAD_RANK_LIST:
            whole = text.decode("utf-8", "replace").split()
            hint = " (write the list without spaces: [2,1,3])" if len(whole) > 2 and whole[1].startswith("[") else ""
            return {"value": repr(shown) if shown else "nothing", "hint": hint}
        if code == codes.WRONG_FIELD_COUNT:
            fields = text.decode("utf-8", "replace").split()
            found = "found none" if not fields else "found one" if len(fields) == 1 else f"found more: {shown}"
            hint = " (write the list without spaces: [2,1,3])" if len(fields) > 2 and fields[1].startswith("[") else ""
            return {"value": found, "expected": "the impression id, then its ranks such as 17 [2,1,3]", "hint": hint}
        if code == codes.MALFORMED_ID:
            return {"value": repr(shown), "expected": "a whole number (no sign, no leading zero, at most 18 digits)", "hint": ""}
        if code == codes.EXTRA_LINES:
            return {"expected": f"last impression (line {self.truth.n_sessions:,})"}
        return {}

    def size_of(self, slot: int) -> int:
        """The candidates of an impression (0 past the truth)."""
        return self._size(slot)

    def _size(self, slot: int) -> int:
        return int(self.truth.indptr[slot + 1] - self.truth.indptr[slot]) if 0 <= slot < self.truth.n_sessions else 0

    def slot_name(self, slot: int) -> str:
        return f"{self.truth.name(slot)} (line {slot + 1})"

