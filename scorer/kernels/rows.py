"""The arrays a parse kernel writes into: rows (a fixed number per call, reused once merged) and scratch."""

from __future__ import annotations

import numpy as np

ROWS_PER_CALL = 1 << 16  # rows one kernel call writes before it returns for fresh arrays
NULL_SESSION = -1  # frame_rows: the session column's codes for a row without a usable session (precomputed forms)
NEGATIVE_SESSION = -2


def scratch_for(kmax):
    """parse_block's work arrays: the row's items, their flags, the 256-entry filter of items seen in the line, field bounds."""
    return (np.empty(kmax, np.int64), np.zeros(kmax, np.bool_), np.zeros(256, np.uint8), np.zeros(4, np.int64))


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
