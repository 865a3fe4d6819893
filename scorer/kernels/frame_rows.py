"""Score the rows of a data frame (OTTO's shape) straight from its Arrow buffers.

A row is an id (a `session_type` string, or a session and a type index worked out beforehand) and a
list of int64 items (list offsets, values, validity bitmaps). frame_rows writes the same row records
as parse_block (scorer.kernels.parse): slot, session, type, line (= row index + 1), hit ranks, and the
stored figures. An id that is not of the plain form is read by parse._read_id, and a row is scored as
parse_block scores it (the same functions: parse.truth_side_hits, parse.item_hits), so the frame and the CSV
paths agree to the last bit (tests/test_frames.py holds them to it). The hot parts are written inline: as numba
calls with array arguments they cost ten times the loop. item_hits (a large truth, or figures to store) is a
plain call: inlined into this loop it slowed every row by a third (0.55 against 0.37 CPU-s at OTTO size).
The hot indexes are cast to np.uint64: numba then leaves out its test for a negative index (0.34 against 0.27
CPU-s at OTTO size).

frame_rows is in the ahead-of-time module (scorer.kernels.aot); scorer.engine.frame_pass gives it one set of argument types.

Problem records are rows of `found`: (code, line, start, end, field). field 0 is the id (or session)
column, 1 the type column, 2 the labels (or item) column; start/end are byte offsets of the bad part of an id
string, the row of a bad session or type given as keys, or the index of the value in the list values for item
problems (end: the list's end for TOO_MANY_ITEMS).
"""

import numpy as np
from numba import njit

from scorer.kernels import codes
from scorer.kernels.parse import (
    NOT_FOUND,
    TRUTH_SIDE_MAX,
    _filter_slot,
    _problem,
    _read_id,
    item_hits,
    session_index,
    truth_side_hits,
)
from scorer.kernels.rows import NULL_SESSION

ID_FIELD = 0
TYPE_FIELD = 1
ITEM_FIELD = 2


@njit(cache=True, nogil=True, inline="always")
def _valid(bitmap, bit_offset, i):
    """Is entry i set in an Arrow validity bitmap (an empty bitmap: no nulls)?"""
    if bitmap.shape[0] == 0:
        return True
    j = bit_offset + i
    return (bitmap[j >> 3] >> (j & 7)) & 1 == 1


@njit(cache=True, nogil=True, inline="always")
def _first_in_row(value, items, n_items, seen, stamp):
    """Is value not among items[:n_items] (parse._first_time, inlined: as a call with array arguments it costs 20
    times the loop)? Marks it in the row's filter seen/stamp."""
    h = _filter_slot(value)
    if seen[h] == stamp:
        for j in range(n_items):
            if items[j] == value:
                seen[h] = stamp
                return False
    seen[h] = stamp
    return True


@njit(cache=True, nogil=True, inline="always")
def _plain_id(buf, start, end, middle, type_names, type_offsets):
    """(session, type index) of an id of the plain form `{session}{middle}{type}` (one middle byte, no prefix or
    suffix, at most 18 digits), or (-1, -1) for anything else (then _read_id reads it and names the problem)."""
    session = np.int64(0)
    p = start
    while p < end and 48 <= buf[np.uint64(p)] <= 57 and p - start < 18:
        session = session * 10 + np.int64(buf[np.uint64(p)] - 48)
        p += 1
    if p == start or p >= end or buf[p] != middle:
        return np.int64(-1), -1
    p += 1
    for t in range(type_offsets.shape[0] - 1):
        if end - p == type_offsets[t + 1] - type_offsets[t]:
            same = True
            for j in range(end - p):
                if buf[np.uint64(p + j)] != type_names[np.uint64(type_offsets[t] + j)]:
                    same = False
                    break
            if same:
                return session, t
    return np.int64(-1), -1


@njit(cache=True, nogil=True)
def frame_rows(row, stop, line_base, ids, keys, lists, idspec, truth, metric, max_per_code, scratch,
               row_ints, row_values, counts, found, n_problems):
    """Score rows [row, stop) until they end or row_ints is full; returns (next row, rows written, problems kept).

    ids: (bytes, offsets, validity, bit offset) of the id strings, or empty arrays when keys hold the
    rows' (sessions, type indexes, lines) (session < 0: NULL_SESSION / NEGATIVE_SESSION; type -1: unknown;
    lines empty: row r is line line_base + r + 1).
    lists: (offsets, validity, bit offset, values, validity, bit offset, line per value or empty).
    A row with a bad item holds its slot and scores 0 (counted in counts[ROWS_WITH_ERRORS]), as a line with an
    error does in parse_block; a null list is an empty one.
    """
    id_bytes, id_offsets, id_valid, id_bit = ids
    sessions_in, types_in, row_lines = keys
    list_offsets, list_valid, list_bit, values, value_valid, value_bit, value_line = lists
    sessions, lookup_base, lookup_table, indptr, truth_items, n_types = truth
    n_dense = (indptr.shape[0] - 1) // n_types  # the truth's sessions, where they are the ids from lookup_base on
    kinds, ks, kmax, discount, ideal = metric
    items, relevant, seen = scratch
    id_prefix, id_middle, id_suffix, session_first, type_names, type_offsets = idspec
    plain = session_first and id_prefix.shape[0] == 0 and id_suffix.shape[0] == 0 and id_middle.shape[0] == 1
    middle = id_middle[0] if id_middle.shape[0] > 0 else np.uint8(0)
    has_nulls = value_valid.shape[0] > 0
    n_rows = np.int64(0)
    capacity = row_ints.shape[0]
    while row < stop and n_rows < capacity:
        line = row_lines[row] if row_lines.shape[0] > 0 else line_base + row + 1
        if id_offsets.shape[0] > 0:
            id_start, id_end = np.int64(id_offsets[np.uint64(row)]), np.int64(id_offsets[np.uint64(row + 1)])
            if not _valid(id_valid, id_bit, row):
                id_end = id_start  # a null id reads as an empty one
            session, type_index = np.int64(-1), -1
            if plain:
                session, type_index = _plain_id(id_bytes, id_start, id_end, middle, type_names, type_offsets)
            if type_index < 0:  # parse_block's own reading of an id, naming its problems
                session, type_index, n_problems = _read_id(id_bytes, id_start, id_end, idspec, line, np.int64(ID_FIELD), np.bool_(True),
                                                           counts, found, n_problems, max_per_code)
                if type_index < 0:
                    session = np.int64(-1)
        else:
            session, type_index = sessions_in[row], types_in[row]
            if type_index < 0:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.UNKNOWN_TYPE, line, row, row, TYPE_FIELD)
            if session < 0:
                code = codes.SESSION_NOT_INTEGER if session == NULL_SESSION else codes.SESSION_OUT_OF_RANGE
                n_problems = _problem(found, n_problems, counts, max_per_code, code, line, row, row, ID_FIELD)
            if type_index < 0:
                session = np.int64(-1)
        # the items: only the first kmax take part; duplicates keep their place but count once; a row with a bad id
        # gives no row, so nothing of it is cut at K or wastes a slot (S013, S014 as in parse_block)
        gives_row = session >= 0
        n_items = 0
        n_tokens = 0
        bad_item = False
        duplicate_seen = False
        stamp = np.uint8(line & 255)
        list_start, list_end = np.int64(list_offsets[np.uint64(row)]), np.int64(list_offsets[np.uint64(row + 1)])
        if not _valid(list_valid, list_bit, row):
            pass
        elif not has_nulls and list_end - list_start <= kmax:
            # the common row, written apart: no null values and no more than kmax of them (every one takes part)
            for p in range(list_start, list_end):
                value = values[np.uint64(p)]
                if value < 0:
                    bad_item = True
                    where = value_line[p] if value_line.shape[0] > 0 else line
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.ITEM_OUT_OF_RANGE, where, p, p, ITEM_FIELD)
                    continue
                first = _first_in_row(value, items, n_items, seen, stamp)
                if not first and not duplicate_seen and gives_row:
                    duplicate_seen = True
                    where = value_line[p] if value_line.shape[0] > 0 else line
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.DUPLICATE_ITEMS, where, p, p, ITEM_FIELD)
                items[np.uint64(n_items)] = value
                relevant[np.uint64(n_items)] = first
                n_items += 1
        else:
            for p in range(list_start, list_end):
                value = values[p]
                if value < 0 or (has_nulls and not _valid(value_valid, value_bit, p)):
                    bad_item = True
                    code = codes.ITEM_NOT_INTEGER if has_nulls and not _valid(value_valid, value_bit, p) else codes.ITEM_OUT_OF_RANGE
                    where = value_line[p] if value_line.shape[0] > 0 else line
                    n_problems = _problem(found, n_problems, counts, max_per_code, code, where, p, p, ITEM_FIELD)
                    continue
                n_tokens += 1
                if n_tokens == kmax + 1 and gives_row:
                    where = value_line[p] if value_line.shape[0] > 0 else line
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.TOO_MANY_ITEMS, where, p, list_end, ITEM_FIELD)
                if n_items < kmax:
                    first = _first_in_row(value, items, n_items, seen, stamp)
                    if not first and not duplicate_seen and gives_row:
                        duplicate_seen = True
                        where = value_line[p] if value_line.shape[0] > 0 else line
                        n_problems = _problem(found, n_problems, counts, max_per_code, codes.DUPLICATE_ITEMS, where, p, p, ITEM_FIELD)
                    items[n_items] = value
                    relevant[n_items] = first
                    n_items += 1
        if session < 0:
            row += 1
            continue
        if bad_item:
            n_items = 0
        index = session_index(session, sessions, lookup_base, lookup_table, n_dense)
        out = np.uint64(n_rows)
        row_ints[out, 0] = -1
        row_ints[out, 1] = session
        row_ints[out, 2] = type_index
        row_ints[out, 3] = line
        row_ints[out, 4] = 0
        for j in range(row_values.shape[1]):  # no view of the row: a view costs a reference count per row
            row_values[n_rows, j] = 0.0
        if index != NOT_FOUND:
            slot = index * n_types + type_index
            row_ints[out, 0] = slot
            if bad_item:
                counts[codes.ROWS_WITH_ERRORS] += 1
            t_start, t_end = np.int64(indptr[np.uint64(slot)]), np.int64(indptr[np.uint64(slot + 1)])
            if t_start < t_end and row_values.shape[1] == 0 and t_end - t_start <= TRUTH_SIDE_MAX:
                row_ints[out, 4] = truth_side_hits(items, n_items, truth_items, t_start, t_end)
            elif t_start < t_end:
                row_ints[n_rows, 4] = item_hits(items, relevant, n_items, truth_items, t_start, t_end, kinds, ks, discount, ideal,
                                                row_values, n_rows)
        n_rows += 1
        row += 1
    return row, n_rows, n_problems

