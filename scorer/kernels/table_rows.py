"""Parse and score blocks of the table reader: the string shapes (list, long, value) as a competition's own files are
laid out, one line per row, its fields split at the config's field separator.

Which columns name the row (the key: one or several, in the config's order), which holds the prediction (the items of a
list row, split at the item separator; the item of a long row; the value of a value row) and which the rank of a long
row is the layout (scorer.engine.table_kernel resolves it from the header line); other columns are read past. A key of
several columns is looked up as its fields joined by the field separator, as the truth's keys are written
(scorer.truth.published). Items and keys become codes by the truth's hash tables (scorer.kernels.strings), an unknown
item -1 - (hash >> 1), as the two-column reader does (scorer.kernels.string_ids); rows are written in its form, so the
pass merges, reports and totals them the same way.

The rules at the edges (scorer.spec.competition.RULES) that a row's figures follow are its repeat mode (REPEAT_*): a
repeated item counts at its first rank, clears the row's hits when it repeats a truth item (zero), or leaves the
ranks of the distinct items (collapse: cut, then de-duplicated). Keys given twice are merged by merge_table_rows
(last, first or all).
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scorer.kernels import codes
from scorer.kernels.kinds import (
    LONG,
    ROW_AP,
    ROW_CLICKS,
    ROW_HITS,
    ROW_JACCARD,
    ROW_MRR_MEAN,
    ROW_NDCG,
    ROW_NDCG_EXP,
    ROW_RPREC,
    ROW_RPREC_ARTIST,
    ROW_RR,
    ROW_SET_F1,
    VALUE,
)
from scorer.kernels.parse import _problem, _utf8_error, blank_lines
from scorer.kernels.rank import locate
from scorer.kernels.string_ids import parse_float, value_figures
from scorer.kernels.strings import HIGHS, byte_matches, hash_bytes, lookup, next_separator, same_bytes, word
from scorer.kernels.table_layout import ARTIST_CREDIT, BAD_INTEGER_KEY, KEEP_ALL, KEEP_FIRST, REPEAT_COLLAPSE, REPEAT_ZERO

U = np.uint64
NO_COLUMN = -1


@njit(cache=True, nogil=True, inline="always")
def _line_end(buf, start, n):
    """(offset of the line's newline, or n; odd): odd when the line holds a quote, CR, NUL or a byte of 0x80 or more,
    which the careful checks then read. Eight bytes at a time."""
    p = start
    odd = U(0)
    while p < n:
        w = word(buf, p, n)
        beyond = U(0) if n - p >= 8 else ~((U(1) << U(8 * (n - p))) - U(1))  # bytes past n: not NUL
        flagged = (byte_matches(w, U(0x2222222222222222)) | byte_matches(w, U(0x0D0D0D0D0D0D0D0D)) | (w & HIGHS)
                   | byte_matches(w | beyond, U(0)))
        line_end = byte_matches(w, U(0x0A0A0A0A0A0A0A0A))
        if line_end != U(0):
            below = (line_end & (~line_end + U(1))) - U(1)
            return p + (np.int64(trailing_zeros(line_end)) >> 3), (odd | (flagged & below)) != U(0)
        odd |= flagged
        p += 8
    return n, odd != U(0)


@njit(cache=True, nogil=True, inline="always")
def _next_byte(buf, start, end, value):
    """Offset of the first byte equal to value (not 0) in buf[start:end], or end: eight bytes at a time."""
    pattern = U(value) * U(0x0101010101010101)
    p = start
    while p < end:
        found = byte_matches(word(buf, p, end), pattern)
        if found != U(0):
            return min(p + (np.int64(trailing_zeros(found)) >> 3), end)
        p += 8
    return end


@njit(cache=True, nogil=True)
def split_fields(buf, start, end, separator, n_columns, rest, bounds, line, max_per_code, counts, found, n_problems):
    """Split the line buf[start:end] (no newline, no final CR) into its n_columns fields at `separator`; a field that opens
    with a quote runs to the next quote (its quotes left out, a note). With `rest`, the last field is the rest of the
    line. bounds[2c], bounds[2c + 1]: field c's start and end. Returns (ok, fields found, n_problems); a line that is not
    ok has had its problem recorded."""
    i = start
    c = 0
    while True:
        if c == n_columns:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.WRONG_FIELD_COUNT, line, i - 1, end, start)
            return False, c, n_problems
        if rest and c == n_columns - 1:
            bounds[2 * c] = i
            bounds[2 * c + 1] = end
            return True, c + 1, n_problems
        if i < end and buf[i] == 34:
            close = _next_byte(buf, i + 1, end, 34)
            if close >= end or (close + 1 < end and buf[close + 1] != separator):
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.BAD_QUOTES, line, i, min(close + 1, end), start)
                return False, c, n_problems
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.QUOTED_FIELD, line, i, close + 1, start)
            bounds[2 * c] = i + 1
            bounds[2 * c + 1] = close
            after = close + 1
        else:
            after = _next_byte(buf, i, end, separator)
            bounds[2 * c] = i
            bounds[2 * c + 1] = after
        c += 1
        if after >= end:
            break
        i = after + 1
        if i == end:  # a separator that ends the line: one more, empty field
            if c == n_columns:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.WRONG_FIELD_COUNT, line, i - 1, end, start)
                return False, c, n_problems
            bounds[2 * c] = end
            bounds[2 * c + 1] = end
            c += 1
            break
    if c != n_columns:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.WRONG_FIELD_COUNT, line, end, end, start)
        return False, c, n_problems
    return True, c, n_problems


@njit(cache=True, nogil=True, inline="always")
def _trim(buf, start, end):
    """[start, end) without the spaces and tabs around it."""
    while start < end and (buf[start] == 32 or buf[start] == 9):
        start += 1
    while end > start and (buf[end - 1] == 32 or buf[end - 1] == 9):
        end -= 1
    return start, end


@njit(cache=True, nogil=True)
def join_key(buf, bounds, key_columns, integers, separator, keybuf):
    """The key's fields, in the key's order, joined by the separator into keybuf (as the truth writes a key of several
    columns), a column of integers as int() prints its field (spaces, a '+' and leading zeros left out: pandas reads 0100
    as 100); returns its length, -1 - c where column c of the line, a key column, is empty, or -1 - c - BAD_INTEGER_KEY
    where it holds no whole number."""
    length = 0
    for p in range(key_columns.shape[0]):
        c = key_columns[p]
        start, end = bounds[2 * c], bounds[2 * c + 1]
        if end == start:
            return -1 - c
        if p > 0:
            keybuf[length] = separator
            length += 1
        if integers[p]:
            start, end = _trim(buf, start, end)
            negative = start < end and buf[start] == 45
            digits = integer_start(buf, start, end)
            if digits < 0:  # a whole number written as a float (100.0, 1e2): pandas reads the column as floats, which join
                value, good = parse_float(buf, start, end)
                if not good or value != np.floor(value) or abs(value) >= 2.0**53:
                    return -1 - c - BAD_INTEGER_KEY
                length = _write_integer(np.int64(value), keybuf, length)
                continue
            if negative:
                digits = integer_start(buf, start + 1, end)  # "-007" is -7, and "-0" is 0
                if digits < 0 or not (end - digits == 1 and buf[digits] == 48):
                    keybuf[length] = 45
                    length += 1
            start = digits
        for i in range(start, end):
            keybuf[length] = buf[i]
            length += 1
    for i in range(length, length + 8):  # the loads of the hash read 8 bytes
        keybuf[i] = 0
    return length


@njit(cache=True, nogil=True, inline="always")
def _write_integer(value, keybuf, at):
    """Write value's decimal digits (a '-' before a negative one) into keybuf at `at`; returns the offset after them."""
    if value < 0:
        keybuf[at] = 45
        at += 1
        value = -value
    n = 1
    while value // 10 ** n > 0:
        n += 1
    for i in range(n - 1, -1, -1):
        keybuf[at + i] = 48 + value % 10
        value //= 10
    return at + n


@njit(cache=True, nogil=True, inline="always")
def _mix(code):
    return (U(code) * U(0x9E3779B97F4A7C15)) >> U(40)


@njit(cache=True, nogil=True)
def first_time(code, stamp, at, buf, starts, ends, seen_stamp, seen_code, seen_at):
    """Is the item `code` (its bytes buf[starts[at]:ends[at]]) new in the row stamped `stamp`? An open-addressing set of
    the row's items (stamped, so it is never cleared): equal codes of items not in the truth (hashes) are compared on
    their bytes, so a repeat is exact. Records it when new."""
    mask = seen_stamp.shape[0] - 1
    j = np.int64(_mix(code)) & mask
    while seen_stamp[j] == stamp:
        if seen_code[j] == code:
            other = seen_at[j]
            if code >= 0 or other < 0 or same_bytes(buf, starts[other], ends[other], buf, starts[at], ends[at]):
                return False
        j = (j + 1) & mask
    seen_stamp[j] = stamp
    seen_code[j] = code
    seen_at[j] = at
    return True


@njit(cache=True, nogil=True)
def score_items(places, firsts, n_items, truth_items, truth_grades, sorted_grades, t_start, t_end, kinds, ks, discount, ideal,
                repeat_mode, hits, gains, out):
    """Each metric's figure of one row (places: each item's position in the truth's items, -1 where it is not in the
    row's truth; firsts: first occurrences) against the truth's CSR row [t_start, t_end) (sorted codes, repeated where
    the truth is a multiset); returns the hit-rank mask (ranks below 63).

    |T| counts the truth row's items with their repeats (the multiset rule's denominators), |T|set its distinct items
    (R-precision's cut, Jaccard). A row with empty truth gets 0 for every figure."""
    graded = truth_grades.shape[0] > 0
    n_truth = t_end - t_start
    n_set = n_truth
    for t in range(t_start + 1, t_end):
        if truth_items[t] == truth_items[t - 1]:
            n_set -= 1
    mask = np.int64(0)
    n_distinct = 0
    repeated_hit = False
    for r in range(n_items):
        hits[r] = False
        if firsts[r]:
            n_distinct += 1
        at = places[r]
        if at < 0:
            continue
        if not firsts[r]:
            repeated_hit = True
            continue
        hits[r] = True
        if graded:
            gains[r] = truth_grades[at]
        if r < 63:
            mask |= np.int64(1) << np.int64(r)
    if repeated_hit and repeat_mode == REPEAT_ZERO:
        for r in range(n_items):
            hits[r] = False
        mask = np.int64(0)
    collapse = repeat_mode == REPEAT_COLLAPSE
    for j in range(kinds.shape[0]):
        kind, k = kinds[j], ks[j]
        if n_truth == 0:
            out[j] = 0.0
            continue
        cut = n_items if kind == ROW_MRR_MEAN or kind == ROW_SET_F1 or kind == ROW_JACCARD else min(k, n_items)
        if kind == ROW_RPREC or kind == ROW_RPREC_ARTIST:
            cut = min(n_set, n_items)
        exponential = kind == ROW_NDCG_EXP
        n_hits = 0
        total = 0.0
        first = -1
        position = 0  # the rank the figure weighs a hit at, 0-based: its place, or among the distinct items (collapse)
        for r in range(cut):
            if r > 0 and (not collapse or firsts[r - 1]):
                position += 1
            if not hits[r]:
                continue
            n_hits += 1
            if first < 0:
                first = r if kind == ROW_CLICKS else position
            if kind == ROW_AP:
                total += n_hits / (position + 1.0)
            elif kind == ROW_NDCG or kind == ROW_NDCG_EXP:
                grade = gains[r] if graded else 1.0
                total += (2.0**grade - 1.0 if exponential else grade) * discount[position]
        if kind == ROW_HITS:
            out[j] = n_hits
        elif kind == ROW_AP:
            out[j] = total / min(k, n_truth)
        elif kind == ROW_NDCG or kind == ROW_NDCG_EXP:
            if graded:
                best = 0.0
                for i in range(min(k, n_truth)):
                    grade = sorted_grades[t_start + i]
                    best += (2.0**grade - 1.0 if exponential else grade) * discount[i]
                out[j] = total / best if best > 0.0 else 0.0
            else:
                out[j] = total / ideal[min(k, n_truth)]
        elif kind == ROW_RR or kind == ROW_MRR_MEAN:
            out[j] = 1.0 / (first + 1) if first >= 0 else 0.0
        elif kind == ROW_RPREC or kind == ROW_RPREC_ARTIST:  # (the artist credit is added by artist_credit)
            out[j] = n_hits / n_set
        elif kind == ROW_CLICKS:
            out[j] = float(first // 10) if first >= 0 else k / 10.0 + 1.0
        elif kind == ROW_SET_F1:
            out[j] = 2.0 * n_hits / (n_distinct + n_truth)
        elif kind == ROW_JACCARD:
            out[j] = n_hits / (n_distinct + n_set - n_hits)
        else:
            out[j] = 0.0
    return mask


@njit(cache=True, nogil=True)
def truth_row_table(truth_items, item_hashes, t_start, t_end, stamp, local_stamp, local_hash, local_at):
    """Put the truth row's distinct items in a small table (stamped with the row, so it is never cleared): hash -> position
    in truth_items. The row's predictions are then matched in the CPU's cache, not in the table of every truth item."""
    mask = local_stamp.shape[0] - 1
    for t in range(t_start, t_end):
        if t > t_start and truth_items[t] == truth_items[t - 1]:
            continue  # a multiset's repeat: the first position stands for it
        h = item_hashes[truth_items[t]]
        j = np.int64(h >> U(20)) & mask
        while local_stamp[j] == stamp:
            j = (j + 1) & mask
        local_stamp[j] = stamp
        local_hash[j] = h
        local_at[j] = t


@njit(cache=True, nogil=True, inline="always")
def truth_place(buf, start, end, h, stamp, local_stamp, local_hash, local_at, truth_items, item_keys, item_starts, item_ends):
    """The position in truth_items of the item buf[start:end] (hash h) in the row's table, or -1: equal hashes are
    compared on the bytes, so a match is exact."""
    mask = local_stamp.shape[0] - 1
    j = np.int64(h >> U(20)) & mask
    while local_stamp[j] == stamp:
        if local_hash[j] == h:
            code = truth_items[local_at[j]]
            if same_bytes(buf, start, end, item_keys, item_starts[code], item_ends[code]):
                return local_at[j]
        j = (j + 1) & mask
    return np.int64(-1)


@njit(cache=True, nogil=True, inline="always")
def _row_head(row_ints, n_rows, index, row_key, line):
    """A row's slot (-1: an id not in the truth), its key, its line; its hit mask 0 until scored."""
    row_ints[n_rows, 0] = index
    row_ints[n_rows, 1] = row_key
    row_ints[n_rows, 2] = 0
    row_ints[n_rows, 3] = line
    row_ints[n_rows, 4] = 0


@njit(cache=True, nogil=True, inline="always")
def _unknown_row(row_ints, row_values, n_rows, row_key, line):
    _row_head(row_ints, n_rows, -1, row_key, line)
    for j in range(row_values.shape[1]):
        row_values[n_rows, j] = 0.0


@njit(cache=True, nogil=True, inline="always")
def integer_start(buf, start, end):
    """Where the integer buf[start:end] starts as int() would print it (a '+' and leading zeros left out), or -1 when it is
    no whole number (an optional sign, then digits only)."""
    i = start + 1 if start < end and (buf[start] == 43 or buf[start] == 45) else start
    if i == end:
        return np.int64(-1)
    for j in range(i, end):
        if not 48 <= buf[j] <= 57:
            return np.int64(-1)
    if buf[start] == 45:  # a negative id: as written (it matches no truth item of int()'s form but its own)
        return np.int64(start)
    while i < end - 1 and buf[i] == 48:
        i += 1
    return np.int64(i)


@njit(cache=True, nogil=True)
def parse_rank(buf, start, end):
    """(rank, ok): a whole number from 1 to 2^31 - 1, as written (a sign, a decimal point or an exponent is not ok)."""
    if start == end or end - start > 10:
        return 0, False
    value = np.int64(0)
    for i in range(start, end):
        if not 48 <= buf[i] <= 57:
            return 0, False
        value = value * 10 + (buf[i] - 48)
    return value, 1 <= value <= 2147483647


@njit(cache=True, nogil=True, inline="always")
def item_form_ok(buf, start, end, prefix, id_bytes):
    """Is buf[start:end] the prefix, then id_bytes bytes none of which is the prefix's last (verify_submission.py's
    is_track_uri: 'spotify:track:' and 22 characters, three fields at ':')? prefix: its bytes, then 8 zero bytes; both
    are read eight bytes at a time."""
    n_prefix = prefix.shape[0] - 8
    if end - start != n_prefix + id_bytes:
        return False
    for p in range(0, n_prefix, 8):
        if word(buf, start + p, start + min(p + 8, n_prefix)) != word(prefix, p, n_prefix):
            return False
    delimiter = U(prefix[n_prefix - 1]) * U(0x0101010101010101)
    for p in range(start + n_prefix, end, 8):
        if byte_matches(word(buf, p, end), delimiter) != U(0):
            return False
    return True


@njit(cache=True, nogil=True)
def artist_credit(buf, starts, ends, places, n_items, truth_items, t_start, t_end, truth_artist, artist_keys, artist_starts, artist_ends,
                  artist_table, artist_of, stamp, row_artists, counted):
    """The challenge rules' artist credit of a list row: ARTIST_CREDIT · |S_A ∩ A_T| / |T|, S_A the artists of its first |T|
    items (|T| = the row's distinct truth items), A_T those of its truth items; an artist counts once, and an item whose
    artist is not in the table has none. An item of the row's truth takes its artist from truth_artist, another from the
    table of items and artists (row_artists and counted: per artist, stamped with the row, so never cleared)."""
    n_set = 0
    for t in range(t_start, t_end):
        if t == t_start or truth_items[t] != truth_items[t - 1]:
            n_set += 1
        artist = truth_artist[truth_items[t]]
        if artist >= 0:
            row_artists[artist] = stamp
    if n_set == 0:
        return 0.0
    matched = 0
    for r in range(min(n_set, n_items)):
        at = places[r]
        if at >= 0:
            artist = truth_artist[truth_items[at]]
        else:
            index, _ = lookup(buf, starts[r], ends[r], artist_keys, artist_starts, artist_ends, artist_table)
            artist = artist_of[index] if index >= 0 else np.int64(-1)
        if artist >= 0 and row_artists[artist] == stamp and counted[artist] != stamp:
            counted[artist] = stamp
            matched += 1
    return ARTIST_CREDIT * matched / n_set


@njit(cache=True, nogil=True)
def parse_table_block(buf, pos, n, line, layout, tables, truth, metric, limits, scratch, side, row_ints, row_values, preds, counts,
                      found, n_problems):
    """Parse lines of buf[pos:n] until it ends, row_ints is full or (long shape) preds is full.

    Returns (pos, line, rows written, predictions written, problems kept). preds rows (long shape): slot, line, item
    code, rank (its line where the file has no rank column), one per line of a known id; the rows of unknown ids go to
    row_ints as the list and value shapes' rows do. side: the list shape's seeds of each truth row (a row may not list
    one: S042) and the table of each item's artist (r_precision with credit=artist), empty where there are none."""
    (shape, separator, item_separator, comment, key_columns, prediction, rank_column, n_columns, rest, repeat_mode, list_length,
     integers, integer_keys, form_prefix, form_bytes) = layout
    id_keys, id_starts, id_ends, id_table, item_keys, item_starts, item_ends, item_table, item_hashes = tables
    indptr, truth_items, truth_grades, sorted_grades = truth
    kinds, ks, kmax, discount, ideal, value_kinds = metric
    max_line_bytes, max_per_code = limits
    (bounds, keybuf, places, firsts, starts, ends, hits, gains, seen_stamp, seen_code, seen_at, local_stamp, local_hash, local_at,
     seed_stamp, seed_hash, seed_at, row_artists, counted_artists) = scratch
    (seed_indptr, seed_items, seed_keys, seed_starts, seed_ends, seed_hashes, artist_keys, artist_starts, artist_ends, artist_table,
     artist_of, truth_artist) = side
    has_seeds = seed_indptr.shape[0] > 1
    credit_artists = False
    for j in range(kinds.shape[0]):
        if kinds[j] == ROW_RPREC_ARTIST:
            credit_artists = True
    n_ids = id_starts.shape[0]
    previous = -1  # rows usually come in the truth's order: try the next id before hashing
    n_rows = 0
    n_preds = 0
    while pos < n and n_rows < row_ints.shape[0] and n_preds < preds.shape[0]:
        if buf[pos] == 10:
            pos, line, n_problems = blank_lines(buf, pos, n, line, max_per_code, counts, found, n_problems)
            continue
        line += 1
        line_start = pos
        end, odd = _line_end(buf, pos, n)
        pos = end + 1
        if comment >= 0 and buf[line_start] == comment:
            continue
        if odd:
            if end > line_start and buf[end - 1] == 13:
                end -= 1
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.CRLF, line, end, end + 1, line_start)
            if end == line_start:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.BLANK_LINE, line, end, end, line_start)
                continue
        if end - line_start > max_line_bytes:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.LINE_TOO_LONG, line, line_start + max_line_bytes, end,
                                  line_start)
            continue
        if odd:
            bad = -1
            for i in range(line_start, end):
                if buf[i] == 0:
                    bad = i
                    break
            if bad >= 0:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.NUL_BYTE, line, bad, bad + 1, line_start)
                continue
            bad = _utf8_error(buf, line_start, end)
            if bad >= 0:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.INVALID_UTF8, line, bad, bad + 1, line_start)
                continue
        ok, n_fields, n_problems = split_fields(buf, line_start, end, separator, n_columns, rest, bounds, line, max_per_code, counts,
                                                found, n_problems)
        if not ok:
            continue
        length = join_key(buf, bounds, key_columns, integer_keys, separator, keybuf)
        if length < 0:
            c = (-1 - length) % BAD_INTEGER_KEY
            at, to = bounds[2 * c], bounds[2 * c] if -1 - length < BAD_INTEGER_KEY else bounds[2 * c + 1]  # empty, or not a number
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.MALFORMED_ID, line, at, to, line_start)
            continue
        guess = previous + 1
        if guess < n_ids and same_bytes(keybuf, 0, length, id_keys, id_starts[guess], id_ends[guess]):
            index = guess
            row_key = np.int64(guess)
        else:
            index, key_hash = lookup(keybuf, 0, length, id_keys, id_starts, id_ends, id_table)
            row_key = np.int64(key_hash >> U(1))
        if index >= 0:
            previous = index
        field_start, field_end = bounds[2 * prediction], bounds[2 * prediction + 1]
        if shape == LONG:
            item_start, item_end = _trim(buf, field_start, field_end)
            if item_start == item_end:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.EMPTY_FIELD, line, field_start, field_end, line_start)
                continue
            if integers:
                canonical = integer_start(buf, item_start, item_end)
                if canonical < 0:
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.ITEM_NOT_INTEGER, line, item_start, item_end,
                                          line_start)
                else:
                    item_start = canonical
            rank = line
            if rank_column != NO_COLUMN:
                rank_start, rank_end = _trim(buf, bounds[2 * rank_column], bounds[2 * rank_column + 1])
                rank, good = parse_rank(buf, rank_start, rank_end)
                if not good:
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.BAD_RANK, line, rank_start, rank_end, line_start)
                    continue
            if index >= 0:
                code, h = lookup(buf, item_start, item_end, item_keys, item_starts, item_ends, item_table)
                preds[n_preds, 0] = index
                preds[n_preds, 1] = line
                preds[n_preds, 2] = code if code >= 0 else -1 - np.int64(h >> U(1))
                preds[n_preds, 3] = rank
                n_preds += 1
                continue
            _unknown_row(row_ints, row_values, n_rows, line, line)
            n_rows += 1
            continue
        if shape == VALUE:
            value_start, value_end = _trim(buf, field_start, field_end)
            value, good = parse_float(buf, value_start, value_end)
            if not good:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.VALUE_NOT_NUMBER, line, value_start, value_end,
                                      line_start)
                continue
            if index < 0:
                _unknown_row(row_ints, row_values, n_rows, row_key, line)
                n_rows += 1
                continue
            _row_head(row_ints, n_rows, index, row_key, line)
            value_figures(value, index, indptr, truth_grades, value_kinds, row_values[n_rows])
            n_rows += 1
            continue
        # LIST: the items of the prediction field, split at the item separator (and, for a space, tabs)
        t_start, t_end = (np.int64(indptr[index]), np.int64(indptr[index + 1])) if index >= 0 else (np.int64(0), np.int64(0))
        truth_row_table(truth_items, item_hashes, t_start, t_end, line, local_stamp, local_hash, local_at)
        s_start, s_end = (np.int64(seed_indptr[index]), np.int64(seed_indptr[index + 1])) if has_seeds and index >= 0 else (0, 0)
        truth_row_table(seed_items, seed_hashes, s_start, s_end, line, seed_stamp, seed_hash, seed_at)
        n_items = 0
        n_tokens = 0
        reported = False
        repeat_said = False
        not_integer_said = False
        form_said = False
        seed_said = False
        i = field_start
        while i < field_end:
            if item_separator == 32:
                token_end = next_separator(buf, i, field_end)  # a space or a tab
            else:
                token_end = _next_byte(buf, i, field_end, item_separator)
            token_start, token_stop = (i, token_end) if item_separator == 32 else _trim(buf, i, token_end)
            if token_start == token_stop or (item_separator == 32 and token_end < field_end and buf[token_end] == 9):
                if not reported:  # two separators in a row, one at an end, or a tab: read past, said once a line
                    reported = True
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.BAD_SEPARATOR, line, token_start,
                                          min(token_end + 1, field_end), line_start)
            if token_start < token_stop:
                n_tokens += 1
                if n_tokens == kmax + 1:
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.TOO_MANY_ITEMS, line, token_start, field_end,
                                          line_start)
                if form_bytes > 0 and not form_said and not item_form_ok(buf, token_start, token_stop, form_prefix, form_bytes):
                    form_said = True  # said once a line: the first item not of the form
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.ITEM_FORM, line, token_start, token_stop,
                                          line_start)
                if integers:  # compared as int() reads them: "007" is 7; anything else is said once a line, and a miss
                    canonical = integer_start(buf, token_start, token_stop)
                    if canonical < 0 and not not_integer_said:
                        not_integer_said = True
                        n_problems = _problem(found, n_problems, counts, max_per_code, codes.ITEM_NOT_INTEGER, line, token_start,
                                              token_stop, line_start)
                    token_start = canonical if canonical >= 0 else token_start
                h = hash_bytes(buf, token_start, token_stop) if n_items < kmax or s_end > s_start else U(0)
                if s_end > s_start and not seed_said and truth_place(buf, token_start, token_stop, h, line, seed_stamp, seed_hash, seed_at,
                                                                     seed_items, seed_keys, seed_starts, seed_ends) >= 0:
                    seed_said = True  # said once a line, as verify_submission.py says it once a playlist
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.SEED_ITEM, line, token_start, token_stop,
                                          line_start)
                if n_items < kmax:  # (a row of an unknown id too: its repeats are still said)
                    at = truth_place(buf, token_start, token_stop, h, line, local_stamp, local_hash, local_at, truth_items, item_keys,
                                     item_starts, item_ends) if t_end > t_start else np.int64(-1)
                    code = truth_items[at] if at >= 0 else -1 - np.int64(h >> U(1))  # an item not in the row's truth: its hash
                    places[n_items] = at
                    starts[n_items] = token_start
                    ends[n_items] = token_stop
                    firsts[n_items] = first_time(code, line, n_items, buf, starts, ends, seen_stamp, seen_code, seen_at)
                    if not firsts[n_items] and not repeat_said:  # said once a line, as the two-column reader says it
                        repeat_said = True
                        n_problems = _problem(found, n_problems, counts, max_per_code, codes.DUPLICATE_ITEMS, line, token_start,
                                              token_stop, line_start)
                    n_items += 1
            i = token_end + 1
        if list_length > 0 and n_tokens != list_length and n_tokens <= kmax:  # more than kmax: S013 says so
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.LIST_LENGTH, line, field_start, field_end, line_start)
        if index < 0:
            _unknown_row(row_ints, row_values, n_rows, row_key, line)
            n_rows += 1
            continue
        _row_head(row_ints, n_rows, index, row_key, line)
        row_ints[n_rows, 4] = score_items(places, firsts, n_items, truth_items, truth_grades, sorted_grades, t_start, t_end, kinds, ks,
                                          discount, ideal, repeat_mode, hits, gains, row_values[n_rows])
        if credit_artists:
            credit = artist_credit(buf, starts, ends, places, n_items, truth_items, t_start, t_end, truth_artist, artist_keys,
                                   artist_starts, artist_ends, artist_table, artist_of, line, row_artists, counted_artists)
            for j in range(kinds.shape[0]):
                if kinds[j] == ROW_RPREC_ARTIST:
                    row_values[n_rows, j] += credit
        n_rows += 1
    return pos, line, n_rows, n_preds, n_problems


@njit(cache=True, nogil=True)
def merge_table_rows(row_ints, row_values, n_rows, line_offset, keep, slot_line, slot_values, slot_hits, slot_rows, dup, n_dup,
                     unknown, n_unknown):
    """Merge a call's rows into the per-slot arrays (lines offset by line_offset), a key given twice as `keep` says:
    its last row (KEEP_LAST), its first (KEEP_FIRST), or every row (KEEP_ALL: figures added up, slot_rows counting
    them). Repeats and unknown rows are noted as parse.merge_rows notes them. Returns (n_dup, n_unknown)."""
    for r in range(n_rows):
        slot = row_ints[r, 0]
        line = row_ints[r, 3] + line_offset
        if slot < 0:
            if n_unknown < unknown.shape[0]:
                unknown[n_unknown, 0] = row_ints[r, 1]
                unknown[n_unknown, 1] = line
            n_unknown += 1
            continue
        previous = slot_line[slot]
        if previous != 0:
            if n_dup < dup.shape[0]:
                dup[n_dup, 0] = slot
                dup[n_dup, 1] = line
                dup[n_dup, 2] = previous
            n_dup += 1
            if keep == KEEP_FIRST:
                continue
            if keep == KEEP_ALL:
                for j in range(row_values.shape[1]):
                    slot_values[slot, j] += row_values[r, j]
                slot_rows[slot] += 1
                continue
        slot_line[slot] = line
        slot_hits[slot] = row_ints[r, 4]
        for j in range(row_values.shape[1]):
            slot_values[slot, j] = row_values[r, j]
        if keep == KEEP_ALL:
            slot_rows[slot] = 1
    return n_dup, n_unknown


@njit(cache=True)
def finish_table_long(offsets, lines, item_codes, repeat_mode, truth, metric, scratch, slot_line, slot_values, slot_hits, too_many,
                      duplicates, counters):
    """Score the long shape: the rows of slot s, in rank order (then line order), are lines / item_codes[offsets[s]:
    offsets[s + 1]]; only its first kmax count. too_many / duplicates receive the lines of the first rows past kmax and
    of the first repeated items; counters[0], counters[1] count them all."""
    indptr, truth_items, truth_grades, sorted_grades = truth
    kinds, ks, kmax, discount, ideal, value_kinds = metric
    bounds, keybuf, places, firsts, starts, ends, hits, gains, seen_stamp, seen_code, seen_at = scratch[:11]
    for slot in range(offsets.shape[0] - 1):
        begin, stop = offsets[slot], offsets[slot + 1]
        if begin == stop:
            continue
        t_start, t_end = np.int64(indptr[slot]), np.int64(indptr[slot + 1])
        first_line = lines[begin]
        n_items = 0
        for h in range(begin, stop):
            first_line = min(first_line, lines[h])
            if n_items == kmax:
                if counters[0] < too_many.shape[0]:
                    too_many[counters[0]] = lines[h]
                counters[0] += 1
                continue
            places[n_items] = locate(truth_items, t_start, t_end, item_codes[h]) if item_codes[h] >= 0 else -1
            starts[n_items] = -1  # an unknown item's code is its hash: an equal one is taken for a repeat
            firsts[n_items] = first_time(item_codes[h], slot, -1, keybuf, starts, ends, seen_stamp, seen_code, seen_at)
            if not firsts[n_items]:
                if counters[1] < duplicates.shape[0]:
                    duplicates[counters[1]] = lines[h]
                counters[1] += 1
            n_items += 1
        slot_line[slot] = first_line
        slot_hits[slot] = score_items(places, firsts, n_items, truth_items, truth_grades, sorted_grades, t_start, t_end, kinds, ks,
                                      discount, ideal, repeat_mode, hits, gains, slot_values[slot])
