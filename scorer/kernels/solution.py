"""Read a Kaggle solution's columns straight from their Arrow string buffers (bytes, int64 offsets), one pass each.

plain_ids reads ids of the plain form `{session}{middle}{type}` (parse._read_id's fast case, frame_rows._plain_id);
label_items reads labels made of digits and spaces. Anything else makes them give up (the Arrow way then reads
the column and names the problem), so both only ever agree with it.
"""

import numpy as np
from numba import njit

from scorer.kernels.frame_rows import _plain_id

MAX_DIGITS = 18  # always fits in an int64


@njit(cache=True, nogil=True)
def plain_ids(data, offsets, middle, type_names, type_offsets, session, kinds):
    """Fill session and kinds (type index) of every id; returns False at the first id not of the plain form."""
    for row in range(offsets.shape[0] - 1):
        value, kind = _plain_id(data, offsets[row], offsets[row + 1], middle, type_names, type_offsets)
        if kind < 0:
            return False
        session[row] = value
        kinds[row] = kind
    return True


@njit(cache=True, nogil=True)
def label_items(data, offsets):
    """(ok, items, row of each item) of labels holding only digits and spaces (items at most MAX_DIGITS digits long);
    ok is False, with empty arrays, for any other label."""
    n_items = 0
    for row in range(offsets.shape[0] - 1):  # a first pass checks the bytes and counts the items
        for p in range(offsets[row], offsets[row + 1]):
            c = data[p]
            if c != 32 and (c < 48 or c > 57):
                return False, np.empty(0, np.int64), np.empty(0, np.int64)
            if c != 32 and (p == offsets[row] or data[p - 1] == 32):
                n_items += 1
    items = np.empty(n_items, np.int64)
    rows = np.empty(n_items, np.int64)
    n = 0
    for row in range(offsets.shape[0] - 1):
        p, end = offsets[row], offsets[row + 1]
        while p < end:
            if data[p] == 32:
                p += 1
                continue
            start, value = p, np.int64(0)
            while p < end and data[p] != 32:
                value = value * 10 + np.int64(data[p] - 48)
                p += 1
            if p - start > MAX_DIGITS:
                return False, np.empty(0, np.int64), np.empty(0, np.int64)
            items[n] = value
            rows[n] = row
            n += 1
    return True, items, rows
