"""What the pass (scorer.engine.file_pass.Pass) asks of a kernel, whatever the file shape.

Four kernels implement it: IdKernel (OTTO's `session_type` ids, scorer.engine.id_kernel), ShapeKernel (string
ids: list, long and value shapes, scorer.engine.string_kernel), TableKernel (the table reader, scorer.engine.table_kernel)
and ImpressionKernel (scorer.engine.impression_kernel). They parse a block into row arrays the pass merges; the hooks
below are where the shapes differ (how rows are merged, what a block leaves behind, the figures worked out once the
file is read, and how a row is named in a message).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from scorer.engine.figures import hits_kernel
from scorer.kernels import codes, door
from scorer.kernels.kinds import LONG
from scorer.kernels.rows import ROWS_PER_CALL, RowArrays

if TYPE_CHECKING:
    from scorer.truth.strings import StringTable


@dataclass
class Parsed:
    """A block as a kernel parsed it."""

    data: np.ndarray  # the bytes parsed (messages quote no byte past them)
    chunks: list  # (row_ints, row_values, n_rows), one per kernel call
    counts: np.ndarray  # per problem code: occurrences
    found: np.ndarray  # the first problems of each code: (code, line, start, end, line start)
    n_problems: int
    last_line: int  # block-local number of the block's last line
    sides: list = field(default_factory=list)  # id shape, per chunk: the rows' side figures (beyond-accuracy metrics)
    preds: list = field(default_factory=list)  # long shape: (slot, line, code) arrays, block-local lines


def parse_calls(kernel, block_kernel, head, data: np.ndarray, start: int, end: int, first_line: int, pred_columns: int) -> Parsed:
    """Parse data[start:end] with a string-shape block kernel, call after call, each on fresh row arrays (and, for the long
    shape, pred_columns columns of predictions): block_kernel(data, pos, end, line, *head, row_ints, row_values, preds,
    counts, found, n_problems) returns (pos, line, rows, predictions, problems kept)."""
    counts = np.zeros(codes.N_CODES, np.int64)
    found = np.zeros((kernel.max_per_code * codes.N_CODES, 5), np.int64)
    pos, line, n_problems, chunks, preds = start, first_line - 1, 0, [], []
    while pos < end:
        row_ints, row_values = kernel.rows()
        block_preds = np.empty((ROWS_PER_CALL if kernel.shape == LONG else 1, pred_columns), np.int64)
        pos, line, n_rows, n_preds, n_problems = block_kernel(data, pos, end, line, *head, row_ints, row_values, block_preds, counts,
                                                              found, n_problems)
        chunks.append((row_ints, row_values, n_rows))
        if n_preds:
            preds.append(block_preds[:n_preds])
    return Parsed(data, chunks, counts, found, n_problems, line, preds=preds)


def first_rows(kernel, parsed: Parsed) -> list[np.ndarray]:
    """Take back a block's row arrays, then its predictions (long shape), call by call, cut to the first kmax + 1 rows of
    each id (blocks come in line order; kernel.seen counts each id's rows kept so far): what is kept is bounded by the
    truth's ids, not by the upload's rows. A call with none left is left out."""
    kernel.release(parsed)
    if parsed.preds and kernel.seen is None:
        kernel.seen = np.zeros(kernel.ids.size, np.int32)
    kept = []
    for block_preds in parsed.preds:
        keep = np.empty(len(block_preds), np.bool_)
        if door.kernel("first_rows")(block_preds[:, 0], kernel.seen, np.int32(kernel.kmax + 1), keep) < len(block_preds):
            block_preds = block_preds[keep]
        if len(block_preds):
            kept.append(block_preds)
    return kept


class RowKernel(RowArrays, ABC):
    """A competition and its truth as the arrays a parse kernel takes, and the pass's per-shape hooks."""

    n_metrics: int
    kmax: int
    max_per_code: int
    hits_dtype: type = np.int64  # of the per-slot hit-rank masks the pass keeps (figures.hits_dtype)
    positional: bool = False  # line i is slot i (the impression shape): the pass counts each block's lines before it is parsed
    names: list[str] | None = None  # a row's fields as the file has them, where the kernel finds its columns by name; None: the config's header
    labels: np.ndarray | None = None  # value shape: per slot, the truth's value (the totals over all rows read them)

    @abstractmethod
    def parse(self, data: np.ndarray, start: int, end: int, first_line: int) -> Parsed:
        """Parse data[start:end] (followed by SLACK zero bytes); first_line is the block-local number of its first line."""

    def merge(self, rows: tuple, line_offset: int, merged) -> tuple[int, int]:
        """A call's rows (row_ints, row_values, n_rows) into the pass's per-slot arrays (merged: the pass), the last of a
        row given twice kept; returns the pass's counts of repeated and unknown rows."""
        row_ints, row_values, n_rows = rows
        return hits_kernel("merge_rows", merged.slot_hits)(row_ints, row_values, n_rows, line_offset, merged.slot_line, merged.slot_values,
                                                           merged.slot_hits, merged.duplicates, merged.n_duplicates, merged.unknown,
                                                           merged.n_unknown)

    def absorb(self, parsed: Parsed, line_offset: int) -> None:
        """After the pass merged a block's rows (lines offset by line_offset): keep what the shape needs of the block
        and take back its row arrays."""
        self.release(parsed)

    def finish(self, slot_line: np.ndarray, slot_values: np.ndarray, slot_hits: np.ndarray, report) -> None:
        """Once the whole file is read: figures only the whole file gives, and their problems."""

    def coverage(self) -> dict[int, float]:
        """Per coverage@K: the share of the truth's items in some row's top K (none where the shape has no catalogue)."""
        return {}

    def side_figures(self):
        """The beyond-accuracy metrics' scorer.engine.beyond.SideFigures, None without them."""
        return None

    def weights(self, slot_line: np.ndarray) -> np.ndarray | None:
        """How many times each row counts in the mean, where the rules weigh rows; None where each counts once."""
        return None

    @abstractmethod
    def slot_name(self, slot: int) -> str:
        """The id of a (session, type) slot of the truth, as a row writes it."""

    @abstractmethod
    def repeat_name(self, session: int, kind: int, line: int) -> str:
        """How a message names a row found repeated without truth: its session and type codes, and its line."""

    @abstractmethod
    def unknown_name(self, session: int, line: int) -> str:
        """How a message names a row whose session is not in the truth."""


class NamedByLine:
    """How messages name the rows of shapes whose ids are strings: by their line (no session code to name)."""

    def repeat_name(self, session: int, kind: int, line: int) -> str:
        return f"of line {int(line)}"

    def unknown_name(self, session: int, line: int) -> str:
        return f"line {int(line)}"


class NamedById(NamedByLine):
    """... and a slot by its id, as the truth's table of ids holds it."""

    ids: StringTable

    def slot_name(self, slot: int) -> str:
        return self.ids.name(slot)
