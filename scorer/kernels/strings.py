"""Strings as integer codes: an open-addressing hash table over byte strings, built from the truth.

Key i is keys[starts[i]:ends[i]] (keys is any uint8 buffer, such as the truth file's bytes, with 8
readable bytes after the last key). A table entry is (upper 31 bits of the hash) << 32 | key index,
-1 when empty; the table's size is a power of two of at least 1.5 times the number of keys, so probe
sequences are short, and the tag spares most byte comparisons.
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scorer.kernels.load import load8
from scorer.kernels.string_table import LOW, MIX, SEED, U


@njit(cache=True, nogil=True, inline="always")
def word(buf, start, end):
    """Up to the first 8 bytes of buf[start:end] as a little-endian integer (the rest zero); needs 8 readable bytes."""
    n = end - start
    if n <= 0:
        return U(0)
    w = load8(buf, start)
    if n < 8:
        w &= (U(1) << U(8 * n)) - U(1)
    return w


@njit(cache=True, nogil=True, inline="always")
def hash_bytes(buf, start, end):
    """A 64-bit hash of buf[start:end], eight bytes at a time."""
    h = SEED ^ U(end - start)
    p = start
    while p < end:
        h = (h ^ word(buf, p, end)) * MIX
        h ^= h >> U(31)
        p += 8
    h *= MIX
    return h ^ (h >> U(29))


@njit(cache=True, nogil=True, inline="always")
def same_bytes(a, a_start, a_end, b, b_start, b_end):
    """Is a[a_start:a_end] == b[b_start:b_end]? (8 bytes at a time; needs 8 readable bytes after each)"""
    if a_end - a_start != b_end - b_start:
        return False
    for j in range(0, a_end - a_start, 8):
        if word(a, a_start + j, a_end) != word(b, b_start + j, b_end):
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _probe(buf, start, end, h, keys, starts, ends, table):
    """(table position, key index) of buf[start:end] with hash h; the index is -1 at an empty position."""
    tag = np.int64(h >> U(33))
    mask = U(table.shape[0] - 1)
    j = h & mask
    while True:
        entry = table[j]
        if entry == -1:
            return j, np.int64(-1)
        index = entry & LOW
        if (entry >> 32) == tag and same_bytes(buf, start, end, keys, starts[index], ends[index]):
            return j, index
        j = (j + U(1)) & mask


@njit(cache=True, nogil=True, inline="always")
def lookup(buf, start, end, keys, starts, ends, table):
    """(index of buf[start:end] among the keys or -1, its hash)."""
    h = hash_bytes(buf, start, end)
    return _probe(buf, start, end, h, keys, starts, ends, table)[1], h


@njit(cache=True, nogil=True)
def intern(buf, start, end, starts, ends, n_keys, table):
    """The index of buf[start:end], added as key n_keys (keys live in buf) if new; returns (index, n_keys)."""
    h = hash_bytes(buf, start, end)
    j, index = _probe(buf, start, end, h, buf, starts, ends, table)
    if index >= 0:
        return index, n_keys
    table[j] = (np.int64(h >> U(33)) << 32) | n_keys
    starts[n_keys] = start
    ends[n_keys] = end
    return n_keys, n_keys + 1


@njit(cache=True, nogil=True)
def read_rows(buf, start, n, id_starts, id_ends, id_table, item_starts, item_ends, item_table, pair_row, pair_item):
    """Read `id,item item ...` lines of buf[start:n] (no quotes), interning ids and items.

    Returns (ids, items, pairs, bad line or 0): pair j says item pair_item[j] belongs to id pair_row[j].
    Rows of the same id are merged; an id with an empty field has no pairs. A bad line is one without
    exactly one comma, with an empty id, or with a quote (the caller then reads the file another way).
    """
    n_ids = np.int64(0)
    n_items = np.int64(0)
    n_pairs = 0
    line = 1
    pos = start
    while pos < n:
        line += 1
        end = pos
        comma = -1
        bad = False
        while end < n and buf[end] != 10:
            c = buf[end]
            if c == 44:
                if comma >= 0:
                    bad = True
                comma = end
            elif c == 34:
                bad = True
            end += 1
        stop = end - 1 if end > pos and buf[end - 1] == 13 else end
        if stop == pos:  # a blank line
            pos = end + 1
            continue
        if bad or comma <= pos:
            return n_ids, n_items, n_pairs, line
        row, n_ids = intern(buf, pos, comma, id_starts, id_ends, n_ids, id_table)
        i = comma + 1
        while i < stop:
            if buf[i] == 32 or buf[i] == 9:
                i += 1
                continue
            token_end = i
            while token_end < stop and buf[token_end] != 32 and buf[token_end] != 9:
                token_end += 1
            item, n_items = intern(buf, i, token_end, item_starts, item_ends, n_items, item_table)
            pair_row[n_pairs] = row
            pair_item[n_pairs] = item
            n_pairs += 1
            i = token_end
        pos = end + 1
    return n_ids, n_items, n_pairs, 0


@njit(cache=True, nogil=True)
def fill_table(keys, starts, ends, table):
    """Insert keys 0..n-1 (distinct) into an empty table."""
    mask = U(table.shape[0] - 1)
    for i in range(starts.shape[0]):
        h = hash_bytes(keys, starts[i], ends[i])
        j = h & mask
        while table[j] != -1:
            j = (j + U(1)) & mask
        table[j] = (np.int64(h >> U(33)) << 32) | i


ONES = U(0x0101010101010101)
HIGHS = U(0x8080808080808080)


@njit(cache=True, nogil=True)
def byte_matches(w, pattern):
    """High bit set in the bytes of w equal to pattern (a byte repeated 8 times); exact up to the first match."""
    x = w ^ pattern
    return (x - ONES) & ~x & HIGHS


@njit(cache=True, nogil=True, inline="always")
def next_separator(buf, start, end):
    """Offset of the first space or tab in buf[start:end], or end (8 bytes at a time)."""
    p = start
    while p < end:
        w = word(buf, p, end)
        m = byte_matches(w, U(0x2020202020202020)) | byte_matches(w, U(0x0909090909090909))
        if m != U(0):
            return min(p + (np.int64(trailing_zeros(m)) >> 3), end)
        p += 8
    return end


@njit(cache=True, nogil=True, inline="always")
def scan_line(buf, start, n):
    """(end of the line, its first comma or -1, plain): plain means one comma and no quote, CR, NUL or byte >= 0x80.

    Eight bytes at a time; a line that is not plain (or that the filter cannot judge) is for a careful reader.
    """
    p = start
    comma = np.int64(-1)
    while p < n:
        w = word(buf, p, n)
        line_end = byte_matches(w, U(0x0A0A0A0A0A0A0A0A))
        beyond = U(0) if n - p >= 8 else ~((U(1) << U(8 * (n - p))) - U(1))  # bytes past n: not NUL
        odd = (byte_matches(w, U(0x2222222222222222)) | byte_matches(w, U(0x0D0D0D0D0D0D0D0D)) | (w & HIGHS)
               | byte_matches(w | beyond, U(0)))
        commas = byte_matches(w, U(0x2C2C2C2C2C2C2C2C))
        if line_end != U(0):
            below = (line_end & (~line_end + U(1))) - U(1)  # the bits under the first line end
            odd &= below
            commas &= below
        if commas != U(0):
            if comma >= 0 or (commas & (commas - U(1))) != U(0):
                comma = -2  # two commas (or a filter's doubt)
            elif comma == -1:
                comma = p + (np.int64(trailing_zeros(commas)) >> 3)
        if line_end != U(0):
            return p + (np.int64(trailing_zeros(line_end)) >> 3), comma, odd == U(0) and comma >= 0
        if odd != U(0):
            comma = -2
        p += 8
    return n, comma, False


@njit(cache=True, nogil=True)
def count_byte(buf, n, value):
    """How many of buf[:n] equal value (no temporary array)."""
    count = 0
    for i in range(n):
        count += buf[i] == value
    return count
