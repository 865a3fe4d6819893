"""`scorer explain`'s own pass over a submission: per row of the truth, its hit and repeat masks (kernels/explain_rows.py).

The score pass keeps one hit mask per slot, of first occurrences within K: enough for our metrics, not for
the conventions that count a repeat twice or let it take no slot (items past K then move up). This pass
reads each row of the truth once more, to rank 63, on the same blocks and threads as the score pass; rows of
slots without truth are skipped at their id. The file has been read by `scorer score` first, which reports
its problems and limits; here a line with an error is a row with no items.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from scorer.engine.file_pass import BOM
from scorer.engine.id_kernel import IdKernel
from scorer.engine.reader import DEFAULT_BLOCK_BYTES, BlockReader, Deadline
from scorer.kernels import codes, door
from scorer.kernels.explain_layout import MAX_RANKS, ROW_COLUMNS
from scorer.kernels.rows import ROWS_PER_CALL, scratch_for
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth


@dataclass
class TruthRows:
    """Per row of the truth (a slot with truth; by type, then slot): what explain's conventions read. The rows of
    type t are [type_starts[t], type_starts[t + 1]): each array's part for a type is a view, not a copy."""

    slots: np.ndarray  # int32: the row's (session, type) slot
    type_starts: np.ndarray  # int64, n_types + 1
    hits: np.ndarray  # int64 masks of 0-based ranks < 63: a truth item (& ~repeats: its first occurrence)
    repeats: np.ndarray  # any item repeated
    n_items: np.ndarray  # uint8: items read (at most 63; 0 for a missing row or a line with an error)
    sizes: np.ndarray  # int32: |T| of the row
    label0: np.ndarray  # bool: the row's label is item 0 alone


def truth_rows_of(truth: Truth) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(slots with truth, by type then slot; where each type's rows start, and the end; per slot its row among them or
    -1; |T| of each row; whether its label is item 0 alone). int32 slots, rows and sizes: each row holds a label of the
    truth, whose offsets are int32."""
    n_types = len(truth.types)
    type_starts = np.cumsum([0] + [np.count_nonzero(truth.type_sizes(t)) for t in range(n_types)], dtype=np.int64)
    n_rows = int(type_starts[-1])
    slots, sizes, label0 = np.empty(n_rows, np.int32), np.empty(n_rows, np.int32), np.empty(n_rows, np.bool_)
    row_of_slot = np.empty(len(truth.indptr) - 1, np.int32)
    door.kernel("place_truth_rows")(truth.indptr, truth.items, np.int64(n_types), type_starts, row_of_slot, slots, sizes, label0)
    return slots, type_starts, row_of_slot, sizes, label0


def _data_start(data: np.ndarray, header: tuple[str, ...]) -> tuple[int, int]:
    """(offset of the first data row, its line number): past a byte-order mark and the header line when there is one."""
    offset = 3 if data[:3].tobytes() == BOM else 0
    end = data[offset:].tobytes().find(b"\n")
    first = data[offset : offset + end if end >= 0 else len(data)].tobytes().rstrip(b"\r")
    fields = [part.strip().strip('"') for part in first.decode("utf-8", "replace").split(",")]
    if fields == list(header):
        return (offset + end + 1 if end >= 0 else len(data)), 2
    return offset, 1


def block_arguments(competition: Competition, truth: Truth, row_of_slot: np.ndarray) -> tuple:
    """explain_block's arguments after the block and its position: (id spec, truth, row of each slot (truth_rows_of),
    what the careful reading takes, limits) and one call's work arrays (scratch, rows, problem counts and records)."""
    kernel = IdKernel(competition, truth, 1)
    careful = (np.empty(0, np.int64), np.empty(0, np.int64), np.int64(MAX_RANKS), np.empty(0), np.empty(0))  # _careful_line reads K only
    limits = (np.int64(competition.limits.max_line_bytes), np.int64(1))
    return kernel.idspec, kernel.truth, row_of_slot, careful, limits, *_work()


def _work() -> tuple:
    """One thread's work arrays: scratch, rows, problem counts and records."""
    return (scratch_for(MAX_RANKS), np.empty((ROWS_PER_CALL, ROW_COLUMNS), np.int64), np.zeros(codes.N_CODES, np.int64),
            np.zeros((codes.N_CODES, 5), np.int64))


def read_truth_rows(path, competition: Competition, truth: Truth, threads: int = 2, block_bytes: int = DEFAULT_BLOCK_BYTES,
                    untrusted: bool = False) -> TruthRows:
    """One pass over the submission file: the masks of every row of the truth."""
    slots, type_starts, row_of_slot, sizes, label0 = truth_rows_of(truth)
    fixed = block_arguments(competition, truth, row_of_slot)[:5]
    explain_block, merge_explain_rows = door.kernel("explain_block"), door.kernel("merge_explain_rows")
    out = TruthRows(slots, type_starts, np.zeros(len(slots), np.int64), np.zeros(len(slots), np.int64), np.zeros(len(slots), np.uint8), sizes,
                    label0)
    spare: list = []  # row arrays merged, for the next call (a fresh one costs its pages' faults and zeroing)
    limits_of = competition.limits
    reader = BlockReader(path, block_bytes, limits_of.max_file_bytes, limits_of.max_decompressed_bytes, limits_of.max_line_bytes,
                         Deadline(limits_of.max_seconds), untrusted=untrusted)

    def parse(data: np.ndarray, start: int, end: int, first_line: int) -> list:
        scratch, _, counts, found = _work()
        chunks, pos, line = [], start, first_line - 1
        while pos < end:
            rows = spare.pop() if spare else np.empty((ROWS_PER_CALL, ROW_COLUMNS), np.int64)
            pos, line, n_rows = explain_block(data, pos, end, line, *fixed, scratch, rows, counts, found)
            chunks.append((rows, n_rows))
        return chunks

    pool = ThreadPoolExecutor(max(1, threads))
    pending: list = []

    def merge(chunks: list) -> None:
        for rows, n_rows in chunks:
            merge_explain_rows(rows, n_rows, out.hits, out.repeats, out.n_items)
            spare.append(rows)

    try:
        first = True
        for block in reader:
            data = np.frombuffer(block.buffer, np.uint8)
            offset, first_line = _data_start(data[block.start : block.end], competition.header) if first else (0, 1)
            offset += block.start
            first = False
            pending.append((block, pool.submit(parse, data, offset, block.end, first_line)))
            while len(pending) > threads:
                done, future = pending.pop(0)
                merge(future.result())
                reader.release(done)
        for _, future in pending:
            merge(future.result())
    finally:
        pool.shutdown(wait=True)
    return out
