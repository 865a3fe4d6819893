"""The arrays a parse kernel reads and writes: the block's zero bytes after its data, rows (a fixed number per call,
reused once merged), scratch, and the long shape's running state. Plain numpy: the engine makes them without numba."""

from __future__ import annotations

import numpy as np

SLACK = 8  # readable bytes the caller leaves after the data, for 8-byte loads: zeros, or in a mapped block the next line's
# (scorer.engine.reader: its data end with a newline there, so no number runs on into them)
ROWS_PER_CALL = 1 << 16  # rows one kernel call writes before it returns for fresh arrays
LINE_DTYPE = np.int32  # the per-slot line numbers (slot_line): a file of more lines is refused (scorer.engine.file_pass)
INDPTR_DTYPE = np.int32  # a truth's CSR offsets (Truth.indptr): a truth of more labels is refused (scorer.truth.ids)
NULL_SESSION = -1  # frame_rows: the session column's codes for a row without a usable session (precomputed forms)
NEGATIVE_SESSION = -2


def frozen(array, dtype=None) -> np.ndarray:
    """An input as the kernels read it: contiguous, of dtype (a copy only when it is of another), read-only, so that a
    compiled kernel has one signature for Arrow's and mapped files' read-only buffers and for writable arrays alike."""
    array = np.ascontiguousarray(array, dtype)
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


FILTER_BITS = 12  # the filter of the items seen in a line has 2**FILTER_BITS entries: 4 KiB, few false alarms at K 20


def scratch_for(kmax):
    """parse_block's work arrays: the row's items, their flags, the filter of items seen in the line, field bounds."""
    return (np.empty(kmax, np.int64), np.zeros(kmax, np.bool_), np.zeros(1 << FILTER_BITS, np.uint8), np.zeros(4, np.int64))


class RowArrays:
    """Mixin of the kernels: `spare` holds merged (row_ints, row_values) pairs; `stored_metrics` columns of figures."""

    spare: list
    stored_metrics: int

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Row arrays for one kernel call: reused ones if any (fresh pages cost a fault each), else new."""
        try:
            return self.spare.pop()
        except IndexError:
            return np.empty((ROWS_PER_CALL, 5), np.int64), np.empty((ROWS_PER_CALL, self.stored_metrics), np.float64)

    def release(self, parsed) -> None:
        """Take back a block's row arrays once they are merged."""
        self.spare.extend((row_ints, row_values) for row_ints, row_values, _ in parsed.chunks)


SLOT, N_ITEMS, ROWS, FIRST_LINE, N_TOO_MANY, N_DUPS = range(6)  # the long shape's running state (an int64 array)


def long_state(kmax: int) -> tuple:
    """The running state of finish_long and finish_long_runs (scorer.kernels.string_ids): (counters, the open slot's
    items, their relevance, a gains buffer): no slot open, nothing counted."""
    state = np.zeros(6, np.int64)
    state[SLOT] = -1
    return state, np.empty(kmax, np.int64), np.zeros(kmax, np.bool_), np.zeros(kmax, np.float64)
