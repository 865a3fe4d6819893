"""Parse and score blocks of the string shapes: a row of items per id (list), a row per prediction (long),
a value per id (value).

Ids and items are read as the bytes written (leading zeros kept) and turned into codes by the hash
tables built from the truth (scorer.kernels.strings). A predicted item that is not in the truth gets
the code -1 - (hash >> 1): never a hit, still compared (byte for byte in a list row) to find repeats.
Rows are written as the id_type kernel writes them (scorer.kernels.parse), so the engine merges them
the same way: row_ints columns are slot (-1: id not in the truth), a 63-bit hash of the id (long shape:
the line), 0, line, hit ranks.
"""

import numpy as np
from numba import njit

from scorer.kernels import codes
from scorer.kernels.kinds import ABSOLUTE, LIST, LONG, PREDICTION, SQUARED, VALUE
from scorer.kernels.parse import _problem, blank_lines, first_field_end, skip_separators, split_line
from scorer.kernels.rank import score_row
from scorer.kernels.rows import FIRST_LINE, N_DUPS, N_ITEMS, N_TOO_MANY, ROWS, SLOT
from scorer.kernels.strings import lookup, next_separator, same_bytes, scan_line, word

MAX_VALUE = 1e100  # a value shape's number: larger ones are refused (S031), so a squared error stays finite

NO_ROW, ROW, ERROR_ROW = 0, 1, 2  # what a line gives: nothing, a row, a row with an error (list shape: it scores 0)


@njit(cache=True, nogil=True)
def _fields(buf, start, n, line, max_line_bytes, max_per_code, counts, found, n_problems, bounds):
    """Find the line's end and split it into two fields (quotes allowed); return (next_start, status, n_problems).

    bounds receives id start, id end, value start, value end. A line that cannot be split (its problem
    recorded) is an ERROR_ROW when the text before its first comma is a plain, non-empty id: bounds
    then hold that id and an empty value.
    """
    end, first_comma, plain = scan_line(buf, start, n)
    next_start = end + 1
    if plain and first_comma > start and end - start <= max_line_bytes:  # the plain form
        bounds[0] = start
        bounds[1] = first_comma
        bounds[2] = first_comma + 1
        bounds[3] = end
        return next_start, ROW, n_problems
    ok, n_problems = split_line(buf, start, end, line, max_line_bytes, max_per_code, counts, found, n_problems, bounds)
    if not ok:
        comma = first_field_end(buf, start, end)
        if comma == start or buf[start] == 34:  # a blank line, no id, or a quoted one: no row
            return next_start, NO_ROW, n_problems
        bounds[0] = start
        bounds[1] = comma
        bounds[2] = comma
        bounds[3] = comma
        return next_start, ERROR_ROW, n_problems
    if bounds[1] == bounds[0]:
        n_problems = _problem(found, n_problems, counts, max_per_code, codes.MALFORMED_ID, line, bounds[0], bounds[1], start)
        return next_start, NO_ROW, n_problems
    return next_start, ROW, n_problems


@njit(cache=True, nogil=True)
def parse_float(buf, start, end):
    """(value, ok) of a decimal number such as 3, -0.5 or 4.5e-1 (no nan, no inf, magnitude at most MAX_VALUE)."""
    i = start
    negative = False
    if i < end and (buf[i] == 45 or buf[i] == 43):
        negative = buf[i] == 45
        i += 1
    mantissa = np.int64(0)
    scale = 0
    digits = 0  # significant digits in the mantissa: leading zeros do not use up its 18
    any_digit = False
    while i < end and 48 <= buf[i] <= 57:
        any_digit = True
        if digits < 18:
            mantissa = mantissa * 10 + (buf[i] - 48)
            digits += mantissa > 0
        else:
            scale -= 1
        i += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            any_digit = True
            if digits < 18:
                mantissa = mantissa * 10 + (buf[i] - 48)
                scale += 1
                digits += mantissa > 0
            i += 1
    if not any_digit:
        return 0.0, False
    exponent = 0
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        sign = 1
        if i < end and (buf[i] == 45 or buf[i] == 43):
            sign = -1 if buf[i] == 45 else 1
            i += 1
        if i >= end:
            return 0.0, False
        while i < end and 48 <= buf[i] <= 57:
            exponent = min(exponent * 10 + (buf[i] - 48), 400)
            i += 1
        exponent *= sign
    if i != end:
        return 0.0, False
    power = exponent - scale
    value = float(mantissa)
    if power > 0:
        value = value * 10.0**power
    elif power < 0:
        value = value / 10.0**(-power)
    if value > MAX_VALUE * (1.0 + 1e-9):  # its squared error would overflow to inf; "1e100" itself passes, however rounded
        return 0.0, False
    return -value if negative else value, True


@njit(cache=True, nogil=True, inline="always")
def value_figures(value, index, indptr, truth_grades, value_kinds, out):
    """A value row's figure of each metric: its squared error (value_kinds SQUARED, rmse), its error (ABSOLUTE, mae), the
    prediction itself (PREDICTION, the table reader's classification figures), else 0. A row whose id has no truth value
    has error 0."""
    has_truth = indptr[index + 1] > indptr[index]
    error = value - truth_grades[indptr[index]] if has_truth else 0.0
    for j in range(value_kinds.shape[0]):
        if value_kinds[j] == SQUARED:
            out[j] = error * error
        elif value_kinds[j] == ABSOLUTE:
            out[j] = abs(error)
        elif value_kinds[j] == PREDICTION:
            out[j] = value
        else:
            out[j] = 0.0


@njit(cache=True, nogil=True)
def _cover(covered, cover_ks, code, rank):
    """Mark the truth item code as seen at 0-based rank for every coverage@K with rank < K (cover_ks ascending)."""
    for c in range(cover_ks.shape[0] - 1, -1, -1):
        if rank >= cover_ks[c]:
            break
        covered[c, code] = True  # the same value from any thread: no lock needed


@njit(cache=True, nogil=True)
def parse_strings_block(buf, pos, n, line, shape, tables, truth, metric, limits, scratch,
                        row_ints, row_values, preds, counts, found, n_problems):
    """Parse lines of buf[pos:n] until it ends, row_ints is full or (long shape) preds is full.

    Returns (pos, line, rows written, predictions written, problems kept). preds rows (long shape):
    slot, line, item code, one per line of a known id; the rows of unknown ids go to row_ints.
    """
    id_keys, id_starts, id_ends, id_table, item_keys, item_starts, item_ends, item_table, covered = tables
    indptr, truth_items, truth_grades, sorted_grades = truth
    kinds, ks, kmax, discount, ideal, value_kinds, cover_ks = metric
    cover_k = cover_ks[-1] if cover_ks.shape[0] else 0
    max_line_bytes, max_per_code = limits
    items, relevant, gains, starts, ends, bounds, first_words, second_words, seen = scratch
    n_ids = id_starts.shape[0]
    previous = -1  # ids usually come in the truth's order: try the next one before hashing
    n_rows = 0
    n_preds = 0
    while pos < n and n_rows < row_ints.shape[0] and n_preds < preds.shape[0]:
        if buf[pos] == 10:
            pos, line, n_problems = blank_lines(buf, pos, n, line, max_per_code, counts, found, n_problems)
            continue
        line += 1
        line_start = pos
        pos, status, n_problems = _fields(buf, pos, n, line, max_line_bytes, max_per_code, counts, found, n_problems, bounds)
        if status == NO_ROW or (status == ERROR_ROW and shape != LIST):  # a rating or a prediction with an error: no row
            continue
        guess = previous + 1
        if guess < n_ids and same_bytes(buf, bounds[0], bounds[1], id_keys, id_starts[guess], id_ends[guess]):
            index = guess
            row_key = guess  # (row keys only matter without truth, where every id is hashed)
        else:
            index, id_hash = lookup(buf, bounds[0], bounds[1], id_keys, id_starts, id_ends, id_table)
            row_key = np.int64(id_hash >> np.uint64(1))
        if shape == LONG:
            row_key = line  # many rows per id are normal
        if index >= 0:
            previous = index
        value_start, value_end = bounds[2], bounds[3]
        if shape == LONG:
            while value_start < value_end and buf[value_start] == 32:
                value_start += 1
            while value_end > value_start and buf[value_end - 1] == 32:
                value_end -= 1
            if value_start == value_end:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.EMPTY_FIELD, line, bounds[2], bounds[3], line_start)
                continue
            if index >= 0:
                code, h = lookup(buf, value_start, value_end, item_keys, item_starts, item_ends, item_table)
                preds[n_preds, 0] = index
                preds[n_preds, 1] = line
                preds[n_preds, 2] = code if code >= 0 else -1 - np.int64(h >> np.uint64(1))
                n_preds += 1
                continue
        elif shape == VALUE:
            value, good = parse_float(buf, value_start, value_end)
            if not good:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.VALUE_NOT_NUMBER, line, value_start, value_end, line_start)
                continue
            if index >= 0:
                row_ints[n_rows, 0] = index
                row_ints[n_rows, 1] = row_key
                row_ints[n_rows, 2] = 0
                row_ints[n_rows, 3] = line
                row_ints[n_rows, 4] = 0
                value_figures(value, index, indptr, truth_grades, value_kinds, row_values[n_rows])
                n_rows += 1
                continue
        else:  # LIST: items separated by single spaces; only the first kmax take part
            n_items = 0
            n_tokens = 0
            bad_separator = np.bool_(False)
            duplicate_seen = False
            i = value_start
            while i < value_end:
                if buf[i] == 32 and i > value_start and i + 1 < value_end and buf[i + 1] != 32 and buf[i + 1] != 9:
                    i += 1  # the one space between two items (a call per separator would cost more than the line)
                    continue
                if buf[i] == 32 or buf[i] == 9:
                    i, bad_separator, n_problems = skip_separators(buf, i, value_start, value_end, line, line_start, bad_separator,
                                                                   counts, found, n_problems, max_per_code)
                    continue
                token_end = next_separator(buf, i, value_end)
                n_tokens += 1
                if n_tokens == kmax + 1:
                    n_problems = _problem(found, n_problems, counts, max_per_code, codes.TOO_MANY_ITEMS, line, i, value_end, line_start)
                if n_items < kmax:
                    length = token_end - i
                    first_word = word(buf, i, token_end)
                    second_word = word(buf, i + 8, token_end)
                    first = True
                    # a 256-entry filter stamped with the line: only a possible repeat is compared, on the bytes (exact)
                    slot = ((first_word ^ (second_word * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(length))
                            * np.uint64(0xD6E8FEB86659FD93)) >> np.uint64(56)
                    stamp = np.uint8(line & 255)
                    if seen[slot] == stamp:
                        for j in range(n_items):
                            if (first_words[j] == first_word and second_words[j] == second_word and ends[j] - starts[j] == length
                                    and (length <= 16 or same_bytes(buf, starts[j], ends[j], buf, i, token_end))):
                                first = False
                                break
                    seen[slot] = stamp
                    first_words[n_items] = first_word
                    second_words[n_items] = second_word
                    if not first and not duplicate_seen:
                        duplicate_seen = True
                        n_problems = _problem(found, n_problems, counts, max_per_code, codes.DUPLICATE_ITEMS, line, i, token_end, line_start)
                    relevant[n_items] = first
                    starts[n_items] = i
                    ends[n_items] = token_end
                    n_items += 1
                i = token_end
            if index >= 0:
                if status == ERROR_ROW:  # it holds its slot with no items: it scores 0
                    counts[codes.ROWS_WITH_ERRORS] += 1
                row_ints[n_rows, 0] = index
                row_ints[n_rows, 1] = row_key
                row_ints[n_rows, 2] = 0
                row_ints[n_rows, 3] = line
                t_start, t_end = np.int64(indptr[index]), np.int64(indptr[index + 1])
                if t_start < t_end or cover_k > 0:  # items become codes only when they can count
                    for r in range(n_items):
                        if relevant[r]:
                            code, h = lookup(buf, starts[r], ends[r], item_keys, item_starts, item_ends, item_table)
                            if code < 0:
                                code = -1 - np.int64(h >> np.uint64(1))
                            elif r < cover_k:
                                _cover(covered, cover_ks, code, r)
                            items[r] = code
                if t_start == t_end:
                    row_ints[n_rows, 4] = 0
                    for j in range(row_values.shape[1]):  # (a slice assignment writes out of bounds when the row is empty)
                        row_values[n_rows, j] = 0.0
                else:
                    row_ints[n_rows, 4] = score_row(items, relevant, gains, n_items, truth_items, truth_grades, sorted_grades,
                                                    t_start, t_end, kinds, ks, discount, ideal, row_values[n_rows])
                n_rows += 1
                continue
        # an id that is not in the truth
        row_ints[n_rows, 0] = -1
        row_ints[n_rows, 1] = row_key
        row_ints[n_rows, 2] = 0
        row_ints[n_rows, 3] = line
        row_ints[n_rows, 4] = 0
        for j in range(row_values.shape[1]):
            row_values[n_rows, j] = 0.0
        n_rows += 1
    return pos, line, n_rows, n_preds, n_problems


@njit(cache=True, nogil=True)
def count_slots(slots, counts, runs, previous):
    """counts[slot + 1] += 1 for each slot (a cumulative sum then gives each slot's first position), and runs[slot] += 1
    where a run of the slot's rows starts; previous: the slot of the row before the chunk. Returns the chunk's last."""
    for i in range(slots.shape[0]):
        slot = slots[i]
        counts[slot + 1] += 1
        if slot != previous:
            runs[slot] += 1
            previous = slot
    return previous


@njit(cache=True, nogil=True)
def first_rows(slots, seen, limit, keep):
    """keep[i]: is row i among the first `limit` rows of its slot, in line order (seen: each slot's rows kept in earlier
    chunks, updated)? The long shape needs no more of a slot than its first kmax + 1 rows (the one past kmax is
    reported); the rest are only counted. Returns the number kept."""
    kept = 0
    for i in range(slots.shape[0]):
        slot = slots[i]
        keep[i] = seen[slot] < limit
        if keep[i]:
            seen[slot] += 1
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def place_by_slot(slots, lines, line_offset, item_codes, chosen, cursor, out_lines, out_codes):
    """Write one chunk's predictions of the chosen slots at their slot's cursor (advanced), their lines made global: a
    counting sort that keeps the line order within a slot when the chunks are placed in line order. An empty `lines`:
    the chunk's predictions are on consecutive lines, the first at line_offset."""
    for i in range(slots.shape[0]):
        if chosen[slots[i]]:
            at = cursor[slots[i]]
            out_lines[at] = (lines[i] if lines.shape[0] else i) + line_offset
            out_codes[at] = item_codes[i]
            cursor[slots[i]] = at + 1


@njit(cache=True, nogil=True)
def _take(code, line, state, items, relevant, covered, cover_ks, kmax, too_many, duplicates):
    """The open slot's next prediction: past kmax only counted (its first such row noted), else ranked, a repeated
    item noted and kept as a miss."""
    n_items = state[N_ITEMS]
    if n_items == kmax:
        if state[ROWS] == kmax:
            if state[N_TOO_MANY] < too_many.shape[0]:
                too_many[state[N_TOO_MANY]] = line
            state[N_TOO_MANY] += 1
    else:
        first = True
        for j in range(n_items):
            if items[j] == code:
                first = False
        if not first:
            if state[N_DUPS] < duplicates.shape[0]:
                duplicates[state[N_DUPS]] = line
            state[N_DUPS] += 1
        if code >= 0:
            _cover(covered, cover_ks, code, n_items)
        items[n_items] = code
        relevant[n_items] = first
        state[N_ITEMS] = n_items + 1
    state[ROWS] += 1


@njit(cache=True, nogil=True)
def _close(state, items, relevant, gains, truth, metric, slot_line, slot_values, slot_hits):
    """Score the open slot's ranked list and start afresh."""
    indptr, truth_items, truth_grades, sorted_grades = truth
    kinds, ks, kmax, discount, ideal, value_kinds, cover_ks = metric
    slot = state[SLOT]
    slot_line[slot] = state[FIRST_LINE]
    t_start, t_end = np.int64(indptr[slot]), np.int64(indptr[slot + 1])
    if t_start == t_end:
        for j in range(slot_values.shape[1]):
            slot_values[slot, j] = 0.0
        slot_hits[slot] = 0
    else:
        slot_hits[slot] = score_row(items, relevant, gains, state[N_ITEMS], truth_items, truth_grades, sorted_grades,
                                    t_start, t_end, kinds, ks, discount, ideal, slot_values[slot])
    state[N_ITEMS] = 0
    state[ROWS] = 0


@njit(cache=True)
def finish_long(offsets, lines, item_codes, running, truth, metric, covered, slot_line, slot_values, slot_hits, too_many, duplicates):
    """Score the long shape: the predictions of an id in line order are its ranked list.

    The predictions are grouped by slot: those of slot s are lines / item_codes[offsets[s]:offsets[s + 1]], in
    line order. too_many / duplicates receive the lines of the first rows past kmax and of the first repeated
    items (as many as they hold); running (long_state(kmax)) counts them all.
    """
    kmax, cover_ks = metric[2], metric[6]
    state, items, relevant, gains = running
    for slot in range(offsets.shape[0] - 1):
        if offsets[slot] == offsets[slot + 1]:
            continue
        state[SLOT], state[FIRST_LINE] = slot, lines[offsets[slot]]
        for h in range(offsets[slot], offsets[slot + 1]):
            _take(item_codes[h], lines[h], state, items, relevant, covered, cover_ks, kmax, too_many, duplicates)
        _close(state, items, relevant, gains, truth, metric, slot_line, slot_values, slot_hits)


@njit(cache=True)
def finish_long_runs(slots, lines, line_offset, item_codes, skipped, last, running, truth, metric, covered, slot_line,
                     slot_values, slot_hits, too_many, duplicates):
    """finish_long for the slots whose rows are together in the file (each id's rows, as usual), one chunk at a time
    in line order, with no copy: a slot is scored when the next one starts (and, with `last`, the final one at the
    chunk's end); the rows of `skipped` slots are left out. An empty `lines`: the chunk's predictions are on
    consecutive lines, the first at line_offset. running (long_state(kmax)) carries the open slot from
    chunk to chunk."""
    kmax, cover_ks = metric[2], metric[6]
    state, items, relevant, gains = running
    for i in range(slots.shape[0]):
        if skipped[slots[i]]:
            continue
        line = (lines[i] if lines.shape[0] else i) + line_offset
        if slots[i] != state[SLOT]:
            if state[SLOT] >= 0:
                _close(state, items, relevant, gains, truth, metric, slot_line, slot_values, slot_hits)
            state[SLOT], state[FIRST_LINE] = slots[i], line
        _take(item_codes[i], line, state, items, relevant, covered, cover_ks, kmax, too_many, duplicates)
    if last and state[SLOT] >= 0:
        _close(state, items, relevant, gains, truth, metric, slot_line, slot_values, slot_hits)
