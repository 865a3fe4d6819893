"""The engine's side of the table reader (scorer.kernels.table_rows): a competition's own file layout (its key columns,
separators, extra columns, rank column, a first line that is metadata) and its rules at the edges, as kernel arrays,
and the pass's hooks for them.

The columns are found by name in the header line (read_header), or in the config's order where the file has no header
(first_line "row" or "metadata"). A key given twice is merged as rules.repeated_key says (merge); the rows' weights
(weights: missing = skip leaves a missing row out, repeated_key = all counts each row) go to the totals. The long shape
keeps each id's first kmax + 1 rows (absorb) and scores them in rank order once the file is read (finish).
"""

from __future__ import annotations

import numpy as np

from scorer.engine.header import header_fields
from scorer.engine.header import text as quoted
from scorer.engine.problems import Code
from scorer.engine.row_kernel import NamedById, Parsed, RowKernel, first_rows, parse_calls
from scorer.kernels import door
from scorer.kernels.kinds import ABSOLUTE, LIST, LONG, PREDICTION, ROW_VALUE, SQUARED, VALUE, discounts, ideal_dcg
from scorer.kernels.rows import frozen
from scorer.kernels.table_layout import KEEP, KEEP_ALL, REPEAT
from scorer.spec.competition import ROW_INDEX, Competition
from scorer.truth.sides import TableSide, check_side
from scorer.truth.strings import StringTruth

SHAPE_CODES = {"list": LIST, "long": LONG, "value": VALUE}
NO_COLUMN = -1


def value_kind(metric) -> int:
    """What a value row's figure is for this metric: its squared error (rmse), its error (mae), or its prediction."""
    return {"rmse": SQUARED, "mae": ABSOLUTE}.get(metric.name, PREDICTION if metric.row_kind == ROW_VALUE else 0)


def row_columns(competition: Competition) -> list[str]:
    """The columns of a row where the file has no header line: the config's, after the row's position where the key
    holds it (a Parquet file's rows are read as lines that begin with it: scorer.engine.parquet_rows)."""
    return ([ROW_INDEX] if ROW_INDEX in competition.key else []) + list(competition.header)


class TableKernel(NamedById, RowKernel):
    """The competition, its truth and the file's column positions as the arrays parse_table_block takes."""

    hits_dtype = np.int64

    def __init__(self, competition: Competition, truth: StringTruth, max_per_code: int, side: TableSide | None = None):
        check_side(competition, side is not None and side.artists is not None)
        self.competition = competition
        self.shape = SHAPE_CODES[competition.shape]
        metrics = competition.metrics
        self.n_metrics = self.stored_metrics = len(metrics)
        self.kmax = kmax = competition.k
        self.max_per_code = max_per_code
        kinds, ks = competition.row_kinds()
        self.metric = (kinds, ks, np.int64(kmax), discounts(kmax), ideal_dcg(kmax), np.array([value_kind(m) for m in metrics], np.int64))
        from scorer.truth.checks import hash_keys

        names = truth.item_names
        self.tables = (*map(frozen, truth.ids.arrays()), *map(frozen, names.arrays()), frozen(hash_keys(names.keys, names.starts, names.ends)))
        self.widest = int(np.diff(truth.indptr).max(initial=0))  # the longest truth row: each row's own table holds it
        grades = truth.grades if truth.grades is not None else np.empty(0, np.float64)
        sorted_grades = truth.sorted_grades if competition.shape != "value" else np.empty(0, np.float64)
        self.truth = (frozen(truth.indptr), frozen(truth.items), frozen(grades), frozen(sorted_grades))
        self.limits = (np.int64(competition.limits.max_line_bytes), np.int64(max_per_code))
        self.keep = KEEP[competition.rules.repeated_key]
        self.repeat = np.int64(REPEAT[competition.rules.repeated_item])
        self.separator = competition.field_separator
        self.columns(row_columns(competition))
        self.ids = truth.ids
        if competition.shape == "value":  # (validate's empty truth has none)
            self.labels = truth.grades if truth.grades is not None else np.empty(0, np.float64)
        else:
            self.labels = None
        self.preds: list[np.ndarray] = []  # long shape: per call, the kept (slot, line, code, rank) rows, lines made global
        self.seen: np.ndarray | None = None  # long shape: rows kept of each id so far
        self.slot_rows = np.zeros(truth.ids.size if self.keep == KEEP_ALL else 0, np.int32)  # repeated_key = all: rows per key
        self.spare = []
        self.side = tuple(map(frozen, (side or TableSide()).arrays()))  # the seeds of each row and each item's artist, as parse_table_block takes them
        self.widest_seeds = int(np.diff(self.side[0]).max(initial=0))
        self.n_artists = int(max(self.side[10].max(initial=-1), self.side[11].max(initial=-1))) + 1  # codes of the truth's artists

    def columns(self, names: list[str]) -> None:
        """The layout of a file whose columns are `names` (the header line's, or the config's where the file has none)."""
        competition = self.competition
        position = {}
        for at, name in enumerate(names):
            position.setdefault(name, at)
        rest = competition.item_separator == competition.field_separator  # the items are the rest of the line
        self.n_columns, self.names = len(names), list(names)
        self.layout = (np.int64(self.shape), np.int64(ord(self.separator)), np.int64(ord(competition.item_separator)),
                       np.int64(ord(competition.comment) if competition.comment else -1),
                       np.array([position[name] for name in competition.key], np.int64), np.int64(position[competition.prediction]),
                       np.int64(position[competition.rank] if competition.rank else NO_COLUMN), np.int64(len(names)), rest, self.repeat,
                       np.int64(competition.list_length), competition.item_type == "integer",
                       np.array(competition.integer_keys, np.bool_), np.frombuffer(competition.item_prefix.encode() + bytes(8), np.uint8).copy(),
                       np.int64(competition.item_id_bytes))

    def read_header(self, first: bytes) -> tuple[str, bool] | None:
        """None when line 1 names every column of the config (in any order; other columns are read past), the layout then
        taken from it; else (the sentence, whether line 1 is a data row: the header is missing)."""
        names = header_fields(first, self.separator)
        header = list(self.competition.header)
        missing = [name for name in header if name not in names]
        expected = self.separator.join(header)
        if not missing:
            self.columns(names)
            return None
        if len(missing) == len(header) and len(names) == len(header):  # none of the names: a row, the header left out
            return f"header missing: line 1 is a data row ({quoted(first)}); expected the header {expected!r} first", True
        found = ", ".join(map(repr, missing))
        return f"header is {quoted(first)}; expected {expected!r} (in any order, other columns read past): {found} not found", False

    def scratch(self) -> tuple:
        """One thread's work arrays: field bounds, the key's bytes, a row's items and their flags, the set of its items, the
        tables of its truth items and of its seeds, and the marks of the artists of its truth and of those counted."""
        k = self.kmax + 1
        seen, local = 1 << max(4, int(4 * k - 1).bit_length()), 1 << max(4, int(4 * self.widest + 3).bit_length())
        seeds = 1 << max(4, int(4 * self.widest_seeds + 3).bit_length())
        return (np.zeros(2 * self.n_columns + 2, np.int64), np.zeros(self.competition.limits.max_line_bytes + 16, np.uint8),
                np.empty(k, np.int64), np.zeros(k, np.bool_), np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.bool_),
                np.zeros(k, np.float64), np.full(seen, -1, np.int64), np.zeros(seen, np.int64), np.zeros(seen, np.int64),
                np.full(local, -1, np.int64), np.zeros(local, np.uint64), np.zeros(local, np.int64),
                np.full(seeds, -1, np.int64), np.zeros(seeds, np.uint64), np.zeros(seeds, np.int64),
                np.full(self.n_artists, -1, np.int64), np.full(self.n_artists, -1, np.int64))

    def parse(self, data: np.ndarray, start: int, end: int, first_line: int) -> Parsed:
        head = (self.layout, self.tables, self.truth, self.metric, self.limits, self.scratch(), self.side)
        return parse_calls(self, door.kernel("parse_table_block"), head, data, start, end, first_line, 4)

    def merge(self, rows: tuple, line_offset: int, merged) -> tuple[int, int]:
        """A call's rows (row_ints, row_values, n_rows) into the pass's per-slot arrays (merged: the pass), a key given twice
        as the rules say; returns the pass's counts of repeated and unknown rows."""
        row_ints, row_values, n_rows = rows
        return door.kernel("merge_table_rows")(row_ints, row_values, n_rows, line_offset, self.keep, merged.slot_line,
                                               merged.slot_values, merged.slot_hits, self.slot_rows, merged.duplicates,
                                               merged.n_duplicates, merged.unknown, merged.n_unknown)

    def absorb(self, parsed: Parsed, line_offset: int) -> None:
        """Keep a block's predictions (long shape): the first kmax + 1 rows of each id, in line order."""
        for block_preds in first_rows(self, parsed):
            block_preds = block_preds.copy()
            block_preds[:, 1] += line_offset
            if self.competition.rank == "":
                block_preds[:, 3] = block_preds[:, 1]
            self.preds.append(block_preds)

    def finish(self, slot_line, slot_values, slot_hits, report) -> None:
        """Score the long shape's kept rows, each id's in rank order (then line order); report rows past K and repeats."""
        if self.shape != LONG:
            return
        preds = np.concatenate(self.preds) if self.preds else np.empty((0, 4), np.int64)
        self.preds = []
        order = np.lexsort((preds[:, 1], preds[:, 3], preds[:, 0]))
        offsets = np.zeros(len(slot_line) + 1, np.int64)
        np.cumsum(np.bincount(preds[:, 0], minlength=len(slot_line)), out=offsets[1:])
        too_many, duplicates, counters = np.zeros(self.max_per_code, np.int64), np.zeros(self.max_per_code, np.int64), np.zeros(2, np.int64)
        lines, item_codes = np.ascontiguousarray(preds[order, 1]), np.ascontiguousarray(preds[order, 2])
        del preds, order
        door.kernel("finish_table_long")(offsets, lines, item_codes, self.repeat, self.truth, self.metric, self.scratch(), slot_line,
                                         slot_values, slot_hits, too_many, duplicates, counters)
        for number, kept, count, message in (
                (Code.TOO_MANY_ITEMS, too_many, int(counters[0]), f"the id has more than {self.kmax} rows: only its first {self.kmax} "
                                                                   f"{'by rank ' if self.competition.rank else ''}count"),
                (Code.DUPLICATE_ITEMS, duplicates, int(counters[1]), "the item repeats an earlier row of the same id: it counts once "
                                                                     "and wastes a slot")):
            for line in kept[: min(count, self.max_per_code)]:
                report.add(number, message, line=int(line), column=1, k=self.kmax, cut="the rest", hint="")
                shown = report.kept.get(number.code, [])
                if shown and shown[-1].line == int(line):
                    shown[-1].message = message
            report.count_only(number, count - min(count, self.max_per_code))

    def weights(self, slot_line: np.ndarray) -> np.ndarray | None:
        """How many times each row counts in the mean, where the rules weigh rows; None where each counts once."""
        skip = self.competition.rules.missing == "skip" and self.competition.shape != "value"  # the value shape's totals skip already
        if self.keep == KEEP_ALL:
            rows = self.slot_rows.astype(np.float64)
            return rows if skip else np.maximum(rows, 1.0)
        return (slot_line > 0).astype(np.float64) if skip else None

