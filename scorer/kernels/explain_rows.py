"""`scorer explain`'s pass over a submission: per row of the truth, where its hits and repeats sit in its first 63 items.

A row of the truth (session, type) with truth gives two 63-bit masks of 0-based ranks r < 63: `hits` (the item
at r is a truth item) and `repeats` (the item at r is a repeat of one before it), and how many items were read (up to
63). Every published convention of docs/metrics.md is a function of these and |truth| (scorer.kernels.conventions):
hits & ~repeats are our hits, uncut (a truth item's first occurrence), hits & repeats a truth item repeated.

Lines of the plain form (``123_clicks,4 5 6``) are read here; any other goes through parse.py's careful reader,
whose problems are dropped (`scorer score` reports them). A line with an error gives a row of no items.

The reading of a line is one function body (see the rule in scorer/kernels/__init__.py), as parse_block's is: the id
and its type's word, the session's index by table or by id, the filter of items seen and the truth row's search are
written out in explain_block (inlined from parse.py and rank.py, those helpers' reference counts were 46% of explain's
CPU at OTTO size); only the rare paths call (parse._type_index for a long type name, rank.locate for sparse session ids
and a truth row of more than TRUTH_SIDE_MAX items). Items are read as parse_block reads them: an item of up to 7
digits is kept as its bytes (parse.item_key), not converted, and a truth row of up to TRUTH_SIDE_MAX items is looked
up from its side, each truth item keyed.
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scorer.kernels.explain_layout import MAX_RANKS
from scorer.kernels.load import load8, newline_mask64
from scorer.kernels.parse import (
    TAG,
    TRUTH_SIDE_MAX,
    _careful_line,
    _digits,
    _filter_slot,
    _type_index,
    item_key,
    key_value,
    nondigit_marks,
    session_index,
    type_words,
)
from scorer.kernels.rank import locate

U = np.uint64


@njit(cache=True, nogil=True, inline="always")
def line_end(buf, p, n):
    """The position of the first newline at or after p (n if none): 64 bytes at a time (one vector compare) while they
    end by n, then eight at a time (SLACK bytes after n)."""
    while p + 64 <= n:
        newlines = newline_mask64(buf, p)
        if newlines != U(0):
            return p + np.int64(trailing_zeros(newlines))
        p += 64
    while p < n:
        w = load8(buf, p) ^ U(0x0A0A0A0A0A0A0A0A)  # a zero byte where buf holds a newline
        flags = (w - U(0x0101010101010101)) & ~w & U(0x8080808080808080)
        if flags != 0:
            return min(p + (np.int64(trailing_zeros(flags)) >> 3), n)
        p += 8
    return n


@njit(cache=True, nogil=True)
def explain_block(buf, pos, n, line, idspec, truth, row_of_slot, careful, limits, scratch, rows, counts, found):
    """Read the lines of buf[pos:n] (SLACK zero bytes after) until it ends or `rows` is full.

    `line` is the number of the line before pos; row_of_slot maps a slot to its row of the truth (-1: no truth).
    Returns (pos, line, rows written); rows[i] = (truth row, hits, repeats, items read).
    """
    id_prefix, id_middle, id_suffix, session_first, type_names, type_offsets = idspec
    sessions, lookup_base, lookup_table, indptr, truth_items, n_types = truth
    n_dense = (indptr.shape[0] - 1) // n_types  # the truth's sessions, where they are the ids from lookup_base on
    items, relevant, seen, _ = scratch
    fast = session_first and id_prefix.shape[0] == 0 and id_suffix.shape[0] == 0 and id_middle.shape[0] == 1
    middle = id_middle[0] if id_middle.shape[0] > 0 else np.uint8(0)
    name_words, name_masks, name_lengths = type_words(type_names, type_offsets)
    n_names = name_words.shape[0]
    n_rows = 0
    while pos < n and n_rows < rows.shape[0]:
        if buf[pos] == 10:
            pos += 1
            line += 1
            continue
        line += 1
        start = pos
        stamp = np.uint8(line & 255)  # the filter of the items seen in this line
        # the plain id `{session}{middle}{type},`
        session, length = _digits(buf, start)
        p = start + length
        ok = fast and 0 < length <= 18 and p < n and buf[p] == middle
        type_index = -1
        if ok:  # the type's name and its comma as one word (parse.type_words), as parse_block matches them
            p += 1
            w = load8(buf, p)
            for t in range(n_names):
                if name_lengths[t] > 0 and (w & name_masks[t]) == name_words[t]:
                    type_index = t
                    p += name_lengths[t] - 1  # at the comma
                    break
            if type_index < 0:  # a name of 8 bytes or more, or none: byte by byte up to the comma (a call: rare)
                comma = p
                while comma < n and buf[comma] != 44 and buf[comma] != 10:
                    comma += 1
                if comma < n and buf[comma] == 44:
                    type_index = _type_index(buf, p, comma, type_names, type_offsets)
                    p = comma
            ok = type_index >= 0
        row = -1
        if ok:
            index = np.int64(-1)
            offset = session - lookup_base
            if lookup_table.shape[0] > 0:
                if 0 <= offset < lookup_table.shape[0]:
                    index = np.int64(lookup_table[offset])
            elif sessions.shape[0] == 0:  # the ids from lookup_base on (session_index)
                if 0 <= offset < n_dense:
                    index = offset
            else:  # sparse ids: binary search (a call per line, as in parse_block)
                index = np.int64(locate(sessions, 0, sessions.shape[0], session))
            if index >= 0:
                row = row_of_slot[index * n_types + type_index]
            if row < 0:  # no truth for this slot: nothing to read
                pos = line_end(buf, p, n) + 1
                continue
        n_items = 0
        keyed = ok  # the fast reading keeps each item's key (parse.item_key: up to 7 digits, its bytes), not its value
        if ok:  # the items, single spaces between them, read a word at a time as parse_block reads them
            p += 1
            if p < n and buf[p] != 10:
                base = p  # ends: bit i set when buf[base + i] is no digit and past the items read (as in parse_block)
                ends = U(0)
                while True:
                    if ends == U(0):
                        base, ends = p, nondigit_marks(buf, p, n)
                        if ends == U(0):  # 64 digits or more
                            ok = False
                            break
                    run = base + np.int64(trailing_zeros(ends)) - p  # the item is buf[p:p + run]
                    ends &= ends - U(1)
                    w = load8(buf, p)
                    if run == 0 or run > 18 or (run > 1 and (w & U(0xFF)) == U(48)):  # none, too long, or a leading zero
                        ok = False
                        break
                    end = (w >> U(8 * min(run, 7))) & U(0xFF)  # the byte after the item, from the word read (as parse reads it)
                    if run < 8:
                        value = np.int64((w & ((U(1) << U(8 * run)) - U(1))) | TAG)
                    else:  # eight digits or more (rare): the value is the key
                        value, _length = _digits(buf, p)
                        end = U(buf[p + run])
                    p += run
                    if n_items < MAX_RANKS:  # is the item new in the row? (as parse._first_time)
                        h = _filter_slot(value)
                        new = True
                        if seen[h] == stamp:
                            for j in range(n_items):
                                if items[j] == value:
                                    new = False
                                    break
                        seen[h] = stamp
                        relevant[n_items] = new
                        items[n_items] = value
                        n_items += 1
                    if p >= n or end == U(10):
                        break
                    if end != U(32):
                        ok = False
                        break
                    p += 1
            ok = ok and p - start <= limits[0]
        if ok:
            pos = p + 1
        else:
            keyed = False
            pos, session, type_index, n_items, _kept = _careful_line(buf, start, n, line, idspec, careful, limits, scratch, counts, found,
                                                                     np.int64(0))
            counts[:] = 0
            if session < 0:
                continue
            index = session_index(session, sessions, lookup_base, lookup_table, n_dense)
            row = row_of_slot[index * n_types + type_index] if index >= 0 else -1
            if row < 0:
                continue
            n_items = max(n_items, 0)  # a line with an error: a row of no items
        # repeats (any item repeated at r) and hits (a truth item at r)
        slot = index * n_types + type_index
        t_start, t_end = np.int64(indptr[slot]), np.int64(indptr[slot + 1])
        repeats = np.int64(0)
        hits = np.int64(0)
        for r in range(n_items):
            if not relevant[r]:
                repeats |= np.int64(1) << np.int64(r)
        if t_end - t_start <= TRUTH_SIDE_MAX:  # from the truth's side: the filter of the row's items rules most out
            for q in range(t_start, t_end):
                target = item_key(truth_items[q]) if keyed else truth_items[q]
                if seen[_filter_slot(target)] == stamp:
                    for r in range(n_items):
                        if items[r] == target:
                            hits |= np.int64(1) << np.int64(r)
        else:  # a large truth (rare): each item searched in it
            for r in range(n_items):
                if locate(truth_items, t_start, t_end, key_value(items[r]) if keyed else items[r]) >= 0:
                    hits |= np.int64(1) << np.int64(r)
        rows[n_rows, 0] = row
        rows[n_rows, 1] = hits
        rows[n_rows, 2] = repeats
        rows[n_rows, 3] = n_items
        n_rows += 1
    return pos, line, n_rows


@njit(cache=True, nogil=True)
def merge_explain_rows(rows, n_rows, hits, repeats, n_items):
    """Rows into the per-truth-row arrays, in line order: a repeated row's last reading stays (as in the score)."""
    for i in range(n_rows):
        row = rows[i, 0]
        hits[row] = rows[i, 1]
        repeats[row] = rows[i, 2]
        n_items[row] = rows[i, 3]
