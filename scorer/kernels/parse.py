"""Parse and score one block of submission lines in a single pass.

A block is a uint8 array of whole lines. Each line goes first through a fast path that
accepts only the plain form (``123_clicks,4 5 6``); anything else (quotes, CR, odd
separators, bad values, duplicates, too many items) is read again by `_careful_line`,
which finds and records every problem. Either way parse_block then writes one row record:
(slot, session, type, line, hit ranks) and one figure per metric.

Problem records are rows of `found` (code, line, start, end, line_start); only the first
`max_per_code` of a code are kept, `counts` counts all of them.
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from scorer.kernels import codes
from scorer.kernels.beyond import prefetch_word, side_row
from scorer.kernels.load import load8, nondigit_mask64
from scorer.kernels.rank import contains, locate, row_figures
from scorer.kernels.rows import FILTER_BITS

INT64_MAX = np.int64(9223372036854775807)
NOT_FOUND = -1
U = np.uint64
POW10 = np.array([10**i for i in range(9)], np.int64)
TRUTH_SIDE_MAX = 32  # up to this many truth items, hits are found from the truth's side (else each item is looked up)


@njit(cache=True, nogil=True)
def _problem(found, n_problems, counts, max_per_code, code, line, start, end, line_start):
    counts[code] += 1
    if counts[code] <= max_per_code:
        found[n_problems, 0] = code
        found[n_problems, 1] = line
        found[n_problems, 2] = start
        found[n_problems, 3] = end
        found[n_problems, 4] = line_start
        return n_problems + 1
    return n_problems


@njit(cache=True, nogil=True)
def first_field_end(buf, start, end):
    """Where the line buf[start:end]'s first field ends: its first comma, else the line's end less a final CR."""
    comma = start
    while comma < end and buf[comma] != 44:
        comma += 1
    if comma == end and end > start and buf[end - 1] == 13:
        comma -= 1
    return comma


@njit(cache=True, nogil=True)
def blank_lines(buf, pos, n, line, max_per_code, counts, found, n_problems):
    """The run of blank lines at pos (line is the one before): the first max_per_code are recorded one by one,
    the rest counted at once, so a file of line ends streams at memory speed. Returns (pos, line, n_problems)."""
    while pos < n and buf[pos] == 10 and counts[codes.BLANK_LINE] < max_per_code:
        line += 1
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.BLANK_LINE, line, pos, pos, pos)
        pos += 1
    run = pos
    while run < n and buf[run] == 10:
        run += 1
    counts[codes.BLANK_LINE] += run - pos
    return run, line + run - pos, n_problems


@njit(cache=True, nogil=True)
def _utf8_error(buf, start, end):
    """Offset of the first byte that breaks UTF-8 in buf[start:end], or -1."""
    i = start
    while i < end:
        c = buf[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            need = 1
        elif 0xE0 <= c <= 0xEF:
            need = 2
        elif 0xF0 <= c <= 0xF4:
            need = 3
        else:
            return i
        for j in range(1, need + 1):
            if i + j >= end or (buf[i + j] & 0xC0) != 0x80:
                return i
        second = buf[i + 1]
        if (c == 0xE0 and second < 0xA0) or (c == 0xED and second > 0x9F) or (c == 0xF0 and second < 0x90) or (c == 0xF4 and second > 0x8F):
            return i
        i += need + 1
    return -1


@njit(cache=True, nogil=True, inline="always")
def _matches(buf, start, end, literal):
    """Does buf[start:end] begin with literal?"""
    if end - start < literal.shape[0]:
        return False
    for j in range(literal.shape[0]):
        if buf[start + j] != literal[j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _find(buf, start, end, literal):
    """First offset of literal in buf[start:end], or -1."""
    for i in range(start, end - literal.shape[0] + 1):
        if _matches(buf, i, end, literal):
            return i
    return -1


@njit(cache=True, nogil=True)
def _type_index(buf, start, end, type_names, type_offsets):
    """Index of the type named by buf[start:end], or -1 (byte by byte: no array views on the hot path)."""
    for t in range(type_offsets.shape[0] - 1):
        if end - start == type_offsets[t + 1] - type_offsets[t]:
            same = True
            for j in range(end - start):
                if buf[start + j] != type_names[type_offsets[t] + j]:
                    same = False
                    break
            if same:
                return t
    return -1


@njit(cache=True, nogil=True)
def _parse_int(buf, start, end):
    """(value, status) of a decimal integer: status 0 ok, 1 not an integer, 2 negative or over 64 bits."""
    if start >= end:
        return np.int64(0), 1
    negative = buf[start] == 45  # '-'
    i = start + 1 if negative else start
    if i >= end:
        return np.int64(0), 1
    value = np.int64(0)
    overflow = False
    for j in range(i, end):
        digit = np.int64(buf[j]) - 48
        if digit < 0 or digit > 9:
            return np.int64(0), 1
        if value > (INT64_MAX - digit) // 10:
            overflow = True
        else:
            value = value * 10 + digit
    if negative or overflow:
        return np.int64(0), 2
    return value, 0


@njit(cache=True, nogil=True, inline="always")
def _digits(buf, p):
    """(value, length) of the run of ASCII digits at buf[p:], eight bytes at a time (SWAR).

    A length over 18 means "too long for int64" and the value is meaningless. Needs SLACK
    readable non-digit bytes after the data.
    """
    value = np.int64(0)
    length = 0
    while True:
        w = load8(buf, p + length)
        high = w & U(0xF0F0F0F0F0F0F0F0)
        carried = (w + U(0x0606060606060606)) & U(0xF0F0F0F0F0F0F0F0)
        other = (high ^ U(0x3030303030303030)) | (carried ^ U(0x3030303030303030))  # zero byte <=> digit
        flags = (((other & U(0x7F7F7F7F7F7F7F7F)) + U(0x7F7F7F7F7F7F7F7F)) | other) & U(0x8080808080808080)
        run = 8 if flags == 0 else np.int64(trailing_zeros(flags)) >> 3
        if run == 0:
            return value, length
        d = (w - U(0x3030303030303030)) << U(8 * (8 - run))  # the run's digits, right-aligned as 8 digits
        d = d * U(10) + (d >> U(8))
        d = (((d & U(0x000000FF000000FF)) * U(100 + (1000000 << 32))) + (((d >> U(16)) & U(0x000000FF000000FF)) * U(1 + (10000 << 32)))) >> U(32)
        value = value * POW10[run] + np.int64(d)
        length += run
        if run < 8 or length > 18:
            return value, length


@njit(cache=True, nogil=True)
def _filter_slot(value):
    """The entry of an item in the filter of the items seen in a line (rows.scratch_for)."""
    return (U(value) * U(0x9E3779B97F4A7C15)) >> U(64 - FILTER_BITS)


@njit(cache=True, nogil=True, inline="always")
def session_index(session, sessions, lookup_base, lookup_table, n_dense):
    """The truth's index of `session`, or NOT_FOUND: by the lookup table when there is one; else, with no sessions
    either, the truth's sessions are the n_dense ids from lookup_base on (n_dense: its slots over its types; none
    without truth, as validate runs); else binary search."""
    offset = session - lookup_base
    if lookup_table.shape[0] > 0:
        return np.int64(lookup_table[offset]) if 0 <= offset < lookup_table.shape[0] else np.int64(NOT_FOUND)
    if sessions.shape[0] == 0:
        return offset if 0 <= offset < n_dense else np.int64(NOT_FOUND)
    return np.int64(locate(sessions, 0, sessions.shape[0], session))


@njit(cache=True, nogil=True, inline="always")
def truth_side_hits(items, n_items, truth_items, t_start, t_end):
    """The hit-rank mask of a row's items[:n_items] against a small truth [t_start, t_end), found from the truth's
    side: each truth item is compared with every item of the row, without a branch, and the lowest bit of its matches is
    its first occurrence (the one that counts). Shared by parse_block and frame_rows, so the file and the frame score
    alike; plain_rows writes the same out."""
    hit_ranks = np.int64(0)
    for q in range(t_start, t_end):
        target = truth_items[q]
        matches = np.int64(0)
        for r in range(n_items):
            matches |= np.int64(items[r] == target) << np.int64(r)
        hit_ranks |= matches & -matches
    return hit_ranks


@njit(cache=True, nogil=True)
def item_hits(items, relevant, n_items, truth_items, t_start, t_end, kinds, ks, discount, ideal, row_values, n_rows):
    """The hit-rank mask of a row, item by item (a large truth, or figures to store in row_values[n_rows]);
    relevant[r] enters as "first occurrence", leaves as "hit". Shared by parse_block and frame_rows; a plain call,
    not inline: inlined, its code slowed frame_rows' loop for every row (parse_block measured the same either way)."""
    hit_ranks = np.int64(0)
    any_hit = False
    n_distinct = np.int64(0)
    for r in range(n_items):
        n_distinct += relevant[r]
        relevant[r] = relevant[r] and contains(truth_items, t_start, t_end, items[r])
        if relevant[r]:
            any_hit = True
            if r < 63:
                hit_ranks |= np.int64(1) << np.int64(r)
    if any_hit and row_values.shape[1] > 0:
        row_figures(relevant, discount[:0], n_items, t_end - t_start, n_distinct, discount[:0], kinds, ks, discount, ideal,
                    row_values[n_rows])
    return hit_ranks


@njit(cache=True, nogil=True, inline="always")
def _first_time(value, items, n_items, seen, stamp):
    """Is value new among items[:n_items]? `seen` is a filter stamped with the line; a hit is checked."""
    h = _filter_slot(value)
    if seen[h] == stamp:
        for j in range(n_items):
            if items[j] == value:
                return False
    seen[h] = stamp
    return True


@njit(cache=True, nogil=True)
def split_line(buf, start, end, line, max_line_bytes, max_per_code, counts, found, n_problems, bounds):
    """The careful reading of the line buf[start:end] (end at its newline or the data's end).

    Checks CR, blank, length, NUL and UTF-8, then splits two fields at the first comma outside
    quotes (a quoted field loses its quotes) into bounds: id start, id end, value start, value end.
    Returns (ok, n_problems); a line that is not ok has had its problem recorded.
    """
    if end > start and buf[end - 1] == 13:
        end -= 1
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.CRLF, line, end, end + 1, start)
    if end == start:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.BLANK_LINE, line, start, start, start)
        return False, n_problems
    if end - start > max_line_bytes:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.LINE_TOO_LONG, line, start + max_line_bytes, end, start)
        return False, n_problems
    for i in range(start, end):
        if buf[i] == 0:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.NUL_BYTE, line, i, i + 1, start)
            return False, n_problems
    bad = _utf8_error(buf, start, end)
    if bad >= 0:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.INVALID_UTF8, line, bad, bad + 1, start)
        return False, n_problems
    n_fields = 0
    i = start
    while True:
        if i < end and buf[i] == 34:  # '"'
            close = i + 1
            while close < end and buf[close] != 34:
                close += 1
            if close >= end or (close + 1 < end and buf[close + 1] != 44):
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.BAD_QUOTES, line, i, min(close + 1, end), start)
                return False, n_problems
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.QUOTED_FIELD, line, i, close + 1, start)
            field_start, field_end, after = i + 1, close, close + 1
        else:
            field_end = i
            while field_end < end and buf[field_end] != 44:
                field_end += 1
            field_start, after = i, field_end
        if n_fields == 2:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.WRONG_FIELD_COUNT, line, i - 1, end, start)
            return False, n_problems
        bounds[2 * n_fields] = field_start
        bounds[2 * n_fields + 1] = field_end
        n_fields += 1
        if after >= end:
            break
        i = after + 1  # past the comma
        if i == end and n_fields < 2:  # "id," : an empty last field
            bounds[2] = end
            bounds[3] = end
            n_fields = 2
            break
        if i == end:  # a trailing comma after the second field: a third, empty field
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.WRONG_FIELD_COUNT, line, i - 1, end, start)
            return False, n_problems
    if n_fields != 2:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.WRONG_FIELD_COUNT, line, end, end, start)
        return False, n_problems
    return True, n_problems


@njit(cache=True, nogil=True)
def skip_separators(buf, i, field_start, field_end, line, line_start, reported, counts, found, n_problems, max_per_code):
    """Skip the run of spaces and tabs at i in a field of items; anything but one space between two items
    is a BAD_SEPARATOR, reported once per line. Returns (index after the run, reported, n_problems)."""
    run = i
    while run < field_end and (buf[run] == 32 or buf[run] == 9):
        run += 1
    odd = buf[i] == 9 or run - i > 1 or buf[run - 1] == 9 or i == field_start or run == field_end
    if odd and not reported:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.BAD_SEPARATOR, line, i, run, line_start)
    return run, reported or odd, n_problems


@njit(cache=True, nogil=True)
def _read_id(buf, id_start, id_end, idspec, line, line_start, report, counts, found, n_problems, max_per_code):
    """(session, type index, n_problems) of the id buf[id_start:id_end]: prefix, session and type in the
    pattern's order, suffix. session is -1 when it is not an integer, type index -1 when not a known type;
    their problems are recorded when `report` is set."""
    id_prefix, id_middle, id_suffix, session_first, type_names, type_offsets = idspec
    session = np.int64(-1)
    type_index = -1
    inner_start = id_start + id_prefix.shape[0]
    inner_end = id_end - id_suffix.shape[0]
    if inner_end < inner_start or not _matches(buf, id_start, id_end, id_prefix) or not _matches(buf, inner_end, id_end, id_suffix):
        if report:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.MALFORMED_ID, line, id_start, id_end, line_start)
        return session, type_index, n_problems
    single_type = type_offsets.shape[0] == 2 and id_middle.shape[0] == 0
    split = 0 if single_type else _find(buf, inner_start, inner_end, id_middle)
    if split < 0:
        if report:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.MALFORMED_ID, line, id_start, id_end, line_start)
        return session, type_index, n_problems
    if single_type:
        session_start, session_end = inner_start, inner_end
        type_index = 0
    else:
        if session_first:
            session_start, session_end = inner_start, split
            type_start, type_end = split + id_middle.shape[0], inner_end
        else:
            type_start, type_end = inner_start, split
            session_start, session_end = split + id_middle.shape[0], inner_end
        type_index = _type_index(buf, type_start, type_end, type_names, type_offsets)
        if type_index < 0 and report:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.UNKNOWN_TYPE, line, type_start, type_end, line_start)
    value, status = _parse_int(buf, session_start, session_end)
    if status == 0:
        session = value
    elif report:
        code = codes.SESSION_NOT_INTEGER if status == 1 else codes.SESSION_OUT_OF_RANGE
        n_problems = _problem(found, n_problems, counts, max_per_code, code, line, session_start, session_end, line_start)
    return session, type_index, n_problems


@njit(cache=True, nogil=True)
def _careful_line(buf, start, n, line, idspec, metric, limits, scratch, counts, found, n_problems):
    """Read one line whatever it holds, recording every problem.

    Returns (next start, session, type index, items, problems): session is -1 when the line gives
    no row; the items are in scratch, relevant[i] flagging an item's first occurrence in the row.
    A line with an error whose id is still well formed gives a row that scores 0: items is -1. When
    the line cannot be split into fields, its id is the text before its first comma, read silently
    (the line's own problem is the one reported).
    """
    kmax = metric[2]
    max_line_bytes, max_per_code = limits
    items, relevant, seen, _ = scratch
    end = start
    while end < n and buf[end] != 10:
        end += 1
    bounds = scratch[3]
    ok, n_problems = split_line(buf, start, end, line, max_line_bytes, max_per_code, counts, found, n_problems, bounds)
    if not ok:
        id_end = first_field_end(buf, start, end)
        session, type_index, n_problems = _read_id(buf, start, id_end, idspec, line, start, np.bool_(False),
                                                   counts, found, n_problems, max_per_code)
        if end == start or session < 0 or type_index < 0:
            return end + 1, -1, -1, 0, n_problems
        return end + 1, session, type_index, -1, n_problems

    session, type_index, n_problems = _read_id(buf, bounds[0], bounds[1], idspec, line, start, np.bool_(True),
                                               counts, found, n_problems, max_per_code)

    # The items: single spaces between them; only the first kmax take part. A line that gives no row (its id is bad) has
    # nothing to cut at K or to waste a slot on: S013 and S014 are for rows (as in string_ids).
    gives_row = session >= 0 and type_index >= 0
    n_items = 0
    n_tokens = 0
    bad_separator = np.bool_(False)
    duplicate_seen = False
    row_error = False
    label_start, label_end = bounds[2], bounds[3]
    i = label_start
    while i < label_end:
        if buf[i] == 32 or buf[i] == 9:
            i, bad_separator, n_problems = skip_separators(buf, i, label_start, label_end, line, start, bad_separator,
                                                           counts, found, n_problems, max_per_code)
            continue
        token_end = i
        while token_end < label_end and buf[token_end] != 32 and buf[token_end] != 9:
            token_end += 1
        value, status = _parse_int(buf, i, token_end)
        if status != 0:
            code = codes.ITEM_NOT_INTEGER if status == 1 else codes.ITEM_OUT_OF_RANGE
            n_problems = _problem(found, n_problems, counts, max_per_code, code, line, i, token_end, start)
            row_error = True
        else:
            n_tokens += 1
            if n_tokens == kmax + 1 and gives_row:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.TOO_MANY_ITEMS, line, i, label_end, start)
            if n_items < kmax:
                first = _first_time(value, items, n_items, seen, np.uint8(line & 255))
                if not first and not duplicate_seen and gives_row:
                    duplicate_seen = True
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.DUPLICATE_ITEMS, line, i, token_end, start)
                items[n_items] = value
                relevant[n_items] = first
                n_items += 1
        i = token_end

    if type_index < 0:
        session = np.int64(-1)
    return end + 1, session, type_index, -1 if row_error else n_items, n_problems


@njit(cache=True, nogil=True)
def nondigit_bytes(w):
    """The high bit of every byte of the word w that is not an ASCII digit (bytes of 0x80 and above included)."""
    x = w ^ U(0x3030303030303030)  # digits become 0-9
    return (((x & U(0x7F7F7F7F7F7F7F7F)) + U(0x7676767676767676)) | x) & U(0x8080808080808080)


@njit(cache=True, nogil=True)
def digits_value(w, run):
    """The number written by the first `run` bytes (1 to 8, all digits) of the word w."""
    d = (w - U(0x3030303030303030)) << U(8 * (8 - run))  # the run's digits, right-aligned as 8 digits
    d = d * U(10) + (d >> U(8))
    d = (((d & U(0x000000FF000000FF)) * U(100 + (1000000 << 32))) + (((d >> U(16)) & U(0x000000FF000000FF)) * U(1 + (10000 << 32)))) >> U(32)
    return np.int64(d)


@njit(cache=True, nogil=True, inline="always")
def chunk_marks(words):
    """A bit per byte of eight words (64 bytes): set where the byte is no ASCII digit (nondigit_marks near the data's
    end, where no 64-byte vector load fits)."""
    marks = U(0)
    for k in range(8):
        marks |= (((nondigit_bytes(words[k]) >> U(7)) * U(0x0102040810204080)) >> U(56)) << U(8 * k)
    return marks


@njit(cache=True, nogil=True, inline="always")
def nondigit_marks(buf, p, n):
    """A bit per byte of buf[p:p + 64]: set where the byte is no ASCII digit. One vector compare (nondigit_mask64) where
    the 64 bytes end by n; else eight words, those past n read at n (its SLACK bytes), so their bits mean nothing: a
    reader stops at the byte at n, which is no digit, or at a line's end before it. No loop and no early return:
    inlined, it counts no reference on buf (the rule in scorer/kernels/__init__.py)."""
    return nondigit_mask64(buf, p) if p + 64 <= n else chunk_marks((
        load8(buf, min(p, n)), load8(buf, min(p + 8, n)), load8(buf, min(p + 16, n)), load8(buf, min(p + 24, n)),
        load8(buf, min(p + 32, n)), load8(buf, min(p + 40, n)), load8(buf, min(p + 48, n)), load8(buf, min(p + 56, n))))


TAG = U(1) << U(63)  # set in the key of an item written with 1 to 7 digits: its bytes; other keys are the item's value
PLAIN_BELOW = 10**7  # items below it are keyed by their bytes (written without leading zeros, they have at most 7 digits)


@njit(cache=True, nogil=True)
def item_key(value):
    """The key of an item as plain_rows reads it: below PLAIN_BELOW its digits as a word, tagged (written
    eight digits at a time: two groups of four, then pairs, then digits, each split with one multiplication); else its value."""
    if value < 0 or value >= PLAIN_BELOW:
        return value
    high = value // 10000
    x = U(high) | (U(value - high * 10000) << U(32))  # the 8 digits zero-padded, first ones lowest: groups of 4
    hundreds = ((x * U(10486)) >> U(20)) & U(0x0000007F0000007F)
    x = hundreds | ((x - U(100) * hundreds) << U(16))  # pairs
    tens = ((x * U(103)) >> U(10)) & U(0x000F000F000F000F)
    x = tens | ((x - U(10) * tens) << U(8))  # digits
    zeros = min(U(trailing_zeros(x)), U(56)) & U(56)  # the leading zero digits' bits (the first digit lowest; 0 keeps one)
    return np.int64(((x | U(0x3030303030303030)) >> zeros) | TAG)


@njit(cache=True, nogil=True)
def key_value(key):
    """The item of a key (item_key's inverse)."""
    if key >= 0:
        return key
    word = U(key) ^ TAG
    return digits_value(word, (71 - np.int64(leading_zeros(word))) >> 3)


@njit(cache=True, nogil=True)
def type_words(type_names, type_offsets):
    """Each type's name and a comma as one little-endian word (what a plain id has after its middle byte), the
    mask of its bytes and its length with the comma; a name of 8 bytes or more gets length 0 (compared byte by byte)."""
    n_types = type_offsets.shape[0] - 1
    words = np.zeros(n_types, np.uint64)
    masks = np.zeros(n_types, np.uint64)
    lengths = np.zeros(n_types, np.int64)
    for t in range(n_types):
        length = type_offsets[t + 1] - type_offsets[t]
        if length + 1 <= 8:
            word = U(44) << U(8 * length)
            for j in range(length):
                word |= U(type_names[type_offsets[t] + j]) << U(8 * j)
            words[t] = word
            masks[t] = U(0xFFFFFFFFFFFFFFFF) >> U(8 * (7 - length))
            lengths[t] = length + 1
    return words, masks, lengths


@njit(cache=True, nogil=True)
def plain_rows(buf, pos, n, line, n_rows, names, truth, metric, max_line_bytes, scratch, row_ints, row_values, side):
    """Read the plain lines `{session}{middle}{type},{item} {item}...` from pos on, eight bytes at a time, and write their
    rows (parse_block's columns), until a line that is not plain, the data's end or a full row_ints. Returns (pos, line,
    n_rows): pos at the start of the first line not read, for parse_block's careful reader; line the last one read.

    side is None for a plain score (no figures stored, no beyond-accuracy metrics): numba then compiles this function
    without the side's branches, each item kept as its key (item_key: its digits as a word, no conversion for the many
    rows that are never compared). Else parse_block's `side`, and items keep their values. One call reads many lines: a call per line costs more than parsing it, and the ahead-of-time build
    keeps a call's reference counting (two atomic operations per array).
    """
    middle, type_names, type_offsets, name_words, name_masks, name_lengths = names
    sessions, lookup_base, lookup_table, indptr, truth_items, n_types = truth
    kinds, ks, kmax, discount, ideal = metric
    items, relevant, seen, _ = scratch
    stored = row_values.shape[1]
    if side is not None:  # (tested as an argument each time: numba drops the branches a None rules out)
        side_kinds, side_ks, packed, popularity, embedding, unknown_word, exposure, side_out, words, total_vector, side_table = side
        n_packed = packed.shape[0] if side_kinds.shape[0] > 0 else 0
    n_names = name_words.shape[0]
    n_lookup = lookup_table.shape[0]
    n_dense = (indptr.shape[0] - 1) // n_types  # the truth's sessions, where they are the ids from lookup_base on
    capacity = row_ints.shape[0]
    while pos < n and n_rows < capacity:
        start = pos
        stamp = np.uint8((line + 1) & 255)
        # the id: up to 18 digits, the middle byte, a type's name of up to 7 bytes and the comma
        session = np.int64(0)
        p = start
        while True:
            w = load8(buf, p)
            flags = nondigit_bytes(w)
            run = 8 if flags == 0 else np.int64(trailing_zeros(flags)) >> 3
            if run > 0:
                session = session * POW10[run] + digits_value(w, run)
                p += run
            if run < 8 or p - start > 18:
                break
        if not (0 < p - start <= 18 and U(buf[np.uint64(p)]) == middle):
            break
        p += 1
        w = load8(buf, p)
        type_index = -1
        for t in range(n_names):
            if name_lengths[t] > 0 and (w & name_masks[t]) == name_words[t]:
                type_index = t
                p += name_lengths[t]
                break
        if type_index < 0:  # a name of 8 bytes or more, or none: byte by byte up to the comma (a call: rare)
            comma = p
            while comma < n and buf[np.uint64(comma)] != 44 and buf[np.uint64(comma)] != 10:
                comma += 1
            if comma < n and buf[np.uint64(comma)] == 44:
                type_index = _type_index(buf, p, comma, type_names, type_offsets)
                p = comma + 1
            if type_index < 0:
                break
        # the items: digits, single spaces between them, a newline (or the data's end) after the last
        n_items = 0
        ok = True
        if p < n and buf[np.uint64(p)] != 10:
            # ends: bit i set when buf[base + i] is no digit and past the items read (the next item's end is the
            # lowest), 64 bytes at a time; clearing a bit, not shifting by p, keeps each end from waiting on the last
            base = p
            ends = U(0)
            while True:
                if ends == U(0):
                    base, ends = p, nondigit_marks(buf, p, n)
                    if ends == U(0):  # 64 digits or more
                        ok = False
                        break
                e = base + np.int64(trailing_zeros(ends))  # the item is buf[p:e]
                ends &= ends - U(1)
                run = e - p
                w = load8(buf, p)
                if run == 0 or run > 18 or (run > 1 and (w & U(0xFF)) == U(48)):  # none, too long, or a leading zero
                    ok = False
                    break
                end = (w >> U(8 * min(run, 7))) & U(0xFF)  # the byte after the item, from the word read (not read again)
                if run >= 8:  # eight digits or more: its value (its key is its value)
                    value = digits_value(w, 8)
                    for q in range(p + 8, e, 8):
                        digits = min(8, e - q)
                        value = value * POW10[digits] + digits_value(load8(buf, q), digits)
                    end = U(buf[np.uint64(e)])
                elif side is None:
                    value = np.int64((w & ((U(1) << U(8 * run)) - U(1))) | TAG)
                else:
                    value = digits_value(w, run)
                p = e
                if n_items == kmax:
                    ok = False
                    break
                h = _filter_slot(value)
                if seen[h] == stamp:  # possibly seen in this line: a repeated item goes to the careful reader
                    for j in range(n_items):
                        if items[np.uint64(j)] == value:
                            ok = False
                            break
                    if not ok:
                        break
                seen[h] = stamp
                items[np.uint64(n_items)] = value
                n_items += 1
                if side is not None:
                    if U(value) < U(n_packed):  # the item's word is on its way as the row is read
                        prefetch_word(packed, value)
                if end == 32:
                    p += 1
                    continue
                if end != 10 and p < n:
                    ok = False
                break
        if not ok or p - start > max_line_bytes:
            break
        line += 1
        pos = p + 1
        # the row: session index (by table, as its id less the first, or by binary search), then hits against its truth
        offset = session - lookup_base
        if n_lookup > 0:
            index = np.int64(lookup_table[np.uint64(offset)]) if 0 <= offset < n_lookup else np.int64(NOT_FOUND)
        elif sessions.shape[0] == 0:  # the ids from lookup_base on (session_index), none without truth
            index = offset if 0 <= offset < n_dense else np.int64(NOT_FOUND)
        else:
            index = np.int64(locate(sessions, 0, sessions.shape[0], session))
        slot = np.int64(NOT_FOUND)
        hit_ranks = np.int64(0)
        for j in range(stored):
            row_values[n_rows, j] = 0.0
        if index != NOT_FOUND:
            slot = index * n_types + type_index
            t_start, t_end = np.int64(indptr[np.uint64(slot)]), np.int64(indptr[np.uint64(slot + 1)])
            if t_start < t_end and stored == 0 and t_end - t_start <= TRUTH_SIDE_MAX:
                for q in range(t_start, t_end):  # truth_side_hits, written out
                    target = truth_items[np.uint64(q)]
                    if side is None:
                        target = item_key(target)
                    matches = np.int64(0)
                    for r in range(n_items):
                        matches |= np.int64(items[np.uint64(r)] == target) << np.int64(r)
                    hit_ranks |= matches & -matches
            elif t_start < t_end:  # a large truth, or figures to store: item by item (every item is a first occurrence)
                relevant[:n_items] = True
                if side is None:
                    for r in range(n_items):
                        items[np.uint64(r)] = key_value(items[np.uint64(r)])
                hit_ranks = item_hits(items, relevant, n_items, truth_items, t_start, t_end, kinds, ks, discount, ideal, row_values,
                                      n_rows)
            if side is not None and side_kinds.shape[0] > 0:
                side_row(side_kinds, side_ks, packed, popularity, embedding, unknown_word, exposure, side_out, words, total_vector,
                         side_table, items, n_items, hit_ranks, type_index, n_rows)
        row_ints[n_rows, 0] = slot
        row_ints[n_rows, 1] = session
        row_ints[n_rows, 2] = type_index
        row_ints[n_rows, 3] = line
        row_ints[n_rows, 4] = hit_ranks
        n_rows += 1
    return pos, line, n_rows


@njit(cache=True, nogil=True)
def parse_block(buf, pos, n, line, idspec, truth, metric, side, limits, scratch, row_ints, row_values, counts, found, n_problems):
    """Parse lines of buf[pos:n] until it ends or row_ints is full; buf[n:n + SLACK] must be readable and continue no
    number of the data's last line: zeros, or (a mapped block, scorer.engine.reader) the bytes after its newline at n - 1.

    `line` is the number of the line before pos. Returns (pos, line, rows written, problems kept).
    `side`: the beyond-accuracy metrics' arrays (scorer.kernels.beyond; no kinds: nothing to do).
    row_ints columns: slot (session_index * n_types + type, or -1 if the session is not in the
    truth), session, type, line, hit ranks (bit r set: the item at 0-based rank r < 63 is a hit).

    Plain lines go to plain_rows, many at a call; the line it stops at, and a few after it if it read none, are read
    here by _careful_line, which records every problem.
    """
    id_prefix, id_middle, id_suffix, session_first, type_names, type_offsets = idspec
    sessions, lookup_base, lookup_table, indptr, truth_items, n_types = truth
    kinds, ks, kmax, discount, ideal = metric
    max_line_bytes = limits[0]
    items, relevant, _, _ = scratch
    side_kinds, side_ks, packed, popularity, embedding, unknown_word, exposure, side_out, words, total_vector, side_table = side
    plain = session_first and id_prefix.shape[0] == 0 and id_suffix.shape[0] == 0 and id_middle.shape[0] == 1
    names = (U(id_middle[0]) if id_middle.shape[0] > 0 else U(0), type_names, type_offsets, *type_words(type_names, type_offsets))
    stored = row_values.shape[1]
    keyed = stored == 0 and side_kinds.shape[0] == 0  # plain_rows keeps items' keys (item_key), not their values
    n_dense = (indptr.shape[0] - 1) // n_types
    n_rows = np.int64(0)  # typed, not 0: numba would compile the callees it reaches once more for a literal
    capacity = row_ints.shape[0]
    careful_lines = 0  # lines to read here before plain_rows is called again
    while pos < n and n_rows < capacity:
        if plain and careful_lines <= 0:
            if keyed:
                pos, line, done = plain_rows(buf, pos, n, line, n_rows, names, truth, metric, max_line_bytes, scratch, row_ints,
                                             row_values, None)
            else:
                pos, line, done = plain_rows(buf, pos, n, line, n_rows, names, truth, metric, max_line_bytes, scratch, row_ints,
                                             row_values, side)
            careful_lines = 1 if done > n_rows else 16  # a run of lines that are not plain: fewer calls
            n_rows = done
            continue
        careful_lines -= 1
        if buf[pos] == 10:
            pos, line, n_problems = blank_lines(buf, pos, n, line, limits[1], counts, found, n_problems)
            continue
        line += 1
        pos, session, type_index, n_items, n_problems = _careful_line(
            buf, pos, n, line, idspec, metric, limits, scratch, counts, found, n_problems)
        if session < 0:
            continue
        row_error = n_items < 0  # a row with an error: it holds its slot and scores 0
        n_items = max(n_items, 0)
        index = session_index(session, sessions, lookup_base, lookup_table, n_dense)
        row_ints[n_rows, 0] = -1
        row_ints[n_rows, 1] = session
        row_ints[n_rows, 2] = type_index
        row_ints[n_rows, 3] = line
        row_ints[n_rows, 4] = 0
        for j in range(stored):
            row_values[n_rows, j] = 0.0
        if index != NOT_FOUND:
            slot = index * n_types + type_index
            row_ints[n_rows, 0] = slot
            if row_error:
                counts[codes.ROWS_WITH_ERRORS] += 1
            t_start, t_end = np.int64(indptr[slot]), np.int64(indptr[slot + 1])
            if t_start < t_end and stored == 0 and t_end - t_start <= TRUTH_SIDE_MAX:
                row_ints[n_rows, 4] = truth_side_hits(items, n_items, truth_items, t_start, t_end)
            elif t_start < t_end:
                row_ints[n_rows, 4] = item_hits(items, relevant, n_items, truth_items, t_start, t_end, kinds, ks, discount, ideal,
                                                row_values, n_rows)
            if side_kinds.shape[0] > 0:
                side_row(side_kinds, side_ks, packed, popularity, embedding, unknown_word, exposure, side_out, words, total_vector,
                         side_table, items, n_items, row_ints[n_rows, 4], type_index, n_rows)
        n_rows += 1
    return pos, line, n_rows, n_problems


@njit(cache=True, nogil=True)
def merge_rows(row_ints, row_values, n_rows, line_offset, slot_line, slot_values, slot_hits, dup, n_dup, unknown, n_unknown):
    """Write rows into the per-slot arrays in line order; a repeated slot keeps the last row.

    Lines become global (+ line_offset). dup rows: (slot, line, previous line); unknown rows:
    (session, line); only the first len(dup) / len(unknown) are kept, all are counted.
    """
    for r in range(n_rows):
        slot = row_ints[r, 0]
        line = row_ints[r, 3] + line_offset
        if slot < 0:
            if n_unknown < unknown.shape[0]:
                unknown[n_unknown, 0] = row_ints[r, 1]
                unknown[n_unknown, 1] = line
            n_unknown += 1
            continue
        if slot_line[slot] != 0:
            if n_dup < dup.shape[0]:
                dup[n_dup, 0] = slot
                dup[n_dup, 1] = line
                dup[n_dup, 2] = slot_line[slot]
            n_dup += 1
        slot_line[slot] = line
        slot_hits[slot] = row_ints[r, 4]
        for j in range(slot_values.shape[1]):
            slot_values[slot, j] = row_values[r, j]
    return n_dup, n_unknown
