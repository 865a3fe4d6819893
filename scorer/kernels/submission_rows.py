"""Write the CSV lines of a submission made from a truth (`scorer audit`): perfect, empty or random rows.

A slot is (session index, type index) as in the truth: slot = session * n_types + type. The id of a slot's line is
heads[type] + session digits + tails[type] (the id pattern's literal text around the session); then a comma, the
row's items separated by single spaces, and a newline.

Rows: PERFECT, the slot's truth items (the first k) and then, to fill the row to `pad` items, the filler ids
filler, filler + 1, ... (ids above every truth item: never a hit); EMPTY, no item; RANDOM, min(k, C) distinct
items of the catalogue (C items) drawn uniformly, counter-based: draw j of slot s is
splitmix64(splitmix64(seed) ^ (s * 2^20 + j)) mod C (redrawn on a repeat), so a row depends only on (seed, slot),
never on how the slots are cut into chunks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scorer.kernels.hashing import splitmix64
from scorer.kernels.submission_modes import PERFECT, RANDOM


@njit(cache=True, nogil=True, inline="always")
def write_int(out, pos, value):
    """Write the decimal digits of value >= 0 at out[pos:]; return the position after them."""
    if value == 0:
        out[pos] = 48
        return pos + 1
    digits = 0
    rest = value
    while rest > 0:
        digits += 1
        rest //= 10
    for j in range(digits - 1, -1, -1):
        out[pos + j] = 48 + value % 10
        value //= 10
    return pos + digits


@njit(cache=True, nogil=True, inline="always")
def write_items(out, pos, items, n):
    """Write items[:n] separated by single spaces at out[pos:]; return the position after them."""
    for i in range(n):
        if i:
            out[pos] = 32
            pos += 1
        pos = write_int(out, pos, items[i])
    return pos


@njit(cache=True, nogil=True, inline="always")
def _copy(out, pos, source, start, end):
    for i in range(start, end):
        out[pos] = source[i]
        pos += 1
    return pos


@njit(cache=True, nogil=True)
def write_rows(out, first, last, sessions, n_types, heads, head_offsets, tails, tail_offsets, indptr, items,
               mode, k, pad, filler, catalogue, seed):
    """Write the lines of slots first..last-1 into out (uint8, large enough); return the bytes written."""
    pos = 0
    chosen = np.empty(max(k, 1), np.int64)
    base = splitmix64(np.uint64(seed))
    n_catalogue = catalogue.shape[0]
    for slot in range(first, last):
        t = slot % n_types
        pos = _copy(out, pos, heads, head_offsets[t], head_offsets[t + 1])
        pos = write_int(out, pos, sessions[slot // n_types])
        pos = _copy(out, pos, tails, tail_offsets[t], tail_offsets[t + 1])
        out[pos] = 44  # ','
        pos += 1
        written = 0
        if mode == PERFECT:
            for i in range(np.int64(indptr[slot]), min(np.int64(indptr[slot + 1]), np.int64(indptr[slot]) + k)):
                chosen[written] = items[i]
                written += 1
            extra = filler
            while written < pad:
                chosen[written] = extra
                extra += 1
                written += 1
        elif mode == RANDOM:
            draw = 0
            while written < min(k, n_catalogue):
                index = np.int64(splitmix64(base ^ np.uint64(slot * 1048576 + draw)) % np.uint64(n_catalogue))
                draw += 1
                repeat = False
                for j in range(written):
                    if chosen[j] == catalogue[index]:
                        repeat = True
                        break
                if not repeat:
                    chosen[written] = catalogue[index]
                    written += 1
        pos = write_items(out, pos, chosen, written)
        out[pos] = 10
        pos += 1
    return pos
