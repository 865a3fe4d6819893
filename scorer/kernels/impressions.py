"""The impression shape: each line is one impression of the truth, in the truth's order: its id, then the ranks of its
candidates as a JSON list (MIND's and EB-NeRD's `prediction.txt`: `17 [3,1,2]`).

A line is read as the evaluators read it (fields split at runs of whitespace, the list as JSON), and its figures are
worked out in the same pass, written straight into the slot of its impression: the line's number is its slot.
Each candidate's score is 1 / rank; the figures follow the order of np.argsort(scores)[::-1]:

- AUC: the (clicked, not clicked) pairs ranked right, a tie counting one half, over clicked × not clicked
  (scikit-learn's roc_auc_score; no order needed);
- MRR: Σ over the clicked of 1 / position, over the clicked (MIND's and ebrec's mrr_score);
- nDCG@k: Σ over the clicked within the first k of 1 / log2(position + 1), over the same for the best order.

A list that is a permutation of 1..n has no ties: each candidate's position is its rank, no sort. Any other (ties,
gaps, decimals) is sorted as numpy's own argsort sorts (`numpy_order`: its introsort, with no SIMD), so equal ranks
take the places the evaluators gave them.
"""

import numpy as np
from numba import njit

from scorer.kernels import codes
from scorer.kernels.impression_layout import TRUTH_FIELDS, TRUTH_ID, TRUTH_LABELS, TRUTH_OK, TRUTH_ONE_CLASS
from scorer.kernels.kinds import ROW_AUC, ROW_MRR_MEAN, ROW_RR, TIES_NUMPY, VALUES_RANK
from scorer.kernels.parse import _problem

SMALL_SORT = 15  # numpy's SMALL_QUICKSORT: a part of at most 16 is sorted by insertion
EXACT_MANTISSA = 1 << 53  # a decimal m·10^e with m below this and |e| <= 22 is one correctly rounded operation away
POW10 = np.array([10.0**e for e in range(23)], np.float64)  # each exactly a float64
INT_LIMIT = 1 << 62  # whole ranks read as integers below this, then converted once
MAX_ID_DIGITS = 18  # an impression id of more digits is not read as a number (no truth id has them)

# read_number's outcomes
NUMBER, NOT_JSON, NOT_EXACT = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def is_space(c):
    """A byte Python's str.split() splits at (the line end aside): space, \\t, \\v, \\f, \\r and \\x1c-\\x1f."""
    return c == 32 or (9 <= c <= 13 and c != 10) or 28 <= c <= 31


@njit(cache=True, nogil=True, inline="always")
def label(bits, i):
    """The i-th label of a truth's labels packed 8 to a byte, the first in the lowest bit (np.packbits, bitorder little)."""
    return (bits[i >> 3] >> (i & 7)) & 1


@njit(cache=True, nogil=True)
def line_end(buf, pos, n):
    """The index of the line end at or after pos (n when the data end first)."""
    while pos < n and buf[pos] != 10:
        pos += 1
    return pos


@njit(cache=True, nogil=True)
def fields(buf, start, end, bounds):
    """Split buf[start:end] at runs of whitespace: bounds gets the first two fields' (start, end); returns the number of
    fields (2 at most: a third one counts as 3) and, in bounds[4], where the third starts."""
    count = 0
    i = start
    while True:
        while i < end and is_space(buf[i]):
            i += 1
        if i == end:
            return count
        if count == 2:
            bounds[4] = i
            return 3
        bounds[2 * count] = i
        while i < end and not is_space(buf[i]):
            i += 1
        bounds[2 * count + 1] = i
        count += 1


@njit(cache=True, nogil=True)
def read_id(buf, start, end):
    """The value of a canonical decimal id (digits, no leading zero but "0" itself, at most MAX_ID_DIGITS), else -1."""
    length = end - start
    if length == 0 or length > MAX_ID_DIGITS or (buf[start] == 48 and length > 1):
        return np.int64(-1)
    value = np.int64(0)
    for i in range(start, end):
        digit = np.int64(buf[i]) - 48
        if digit < 0 or digit > 9:
            return np.int64(-1)
        value = value * 10 + digit
    return value


@njit(cache=True, nogil=True)
def read_number(buf, i, end):
    """A JSON number at buf[i:end]: (index after it, outcome, its float64 value, its value as a whole number or -1).

    The value is what Python's json.loads and float() make of it: a whole number below 2**62 converted once; a decimal
    m·10^e (trailing zeros of m folded into e) with m < 2**53 and |e| <= 22 by one correctly rounded operation (both
    exact: Clinger's fast path). Any other is NOT_EXACT; text that is not JSON's number grammar is NOT_JSON."""
    negative = i < end and buf[i] == 45
    if negative:
        i += 1
    if i >= end or not 48 <= buf[i] <= 57:
        return i, NOT_JSON, 0.0, np.int64(-1)
    mantissa = np.int64(0)
    digits = 0  # significant digits in mantissa
    exponent = 0
    overflow = False
    if buf[i] == 48:
        i += 1
        if i < end and 48 <= buf[i] <= 57:
            return i, NOT_JSON, 0.0, np.int64(-1)  # a leading zero
    else:
        while i < end and 48 <= buf[i] <= 57:
            if digits < 18:
                mantissa = mantissa * 10 + (buf[i] - 48)
                digits += 1
            else:
                overflow |= buf[i] != 48
                exponent += 1
            i += 1
    if i < end and buf[i] == 46:  # a fraction
        i += 1
        if i >= end or not 48 <= buf[i] <= 57:
            return i, NOT_JSON, 0.0, np.int64(-1)
        while i < end and 48 <= buf[i] <= 57:
            if digits < 18 and (mantissa > 0 or buf[i] != 48):
                mantissa = mantissa * 10 + (buf[i] - 48)
                digits += 1
                exponent -= 1
            elif mantissa == 0:
                exponent -= 1
            else:
                overflow |= buf[i] != 48
            i += 1
    if i < end and (buf[i] == 101 or buf[i] == 69):  # an exponent
        i += 1
        sign = 1
        if i < end and (buf[i] == 43 or buf[i] == 45):
            sign = -1 if buf[i] == 45 else 1
            i += 1
        if i >= end or not 48 <= buf[i] <= 57:
            return i, NOT_JSON, 0.0, np.int64(-1)
        written = 0
        while i < end and 48 <= buf[i] <= 57:
            if written < 100000:
                written = written * 10 + (buf[i] - 48)
            i += 1
        exponent += sign * written
    if negative and mantissa == 0:
        return i, NUMBER, 0.0, np.int64(0)  # -0: a zero like any other (1 / rank fails on it)
    if overflow:
        return i, NOT_EXACT, 0.0, np.int64(-1)
    if mantissa == 0:
        return i, NUMBER, 0.0, np.int64(0)
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    sign_value = -1.0 if negative else 1.0
    if 0 <= exponent <= 18:
        whole = mantissa
        fits = True
        for _ in range(exponent):
            if whole >= INT_LIMIT // 10:
                fits = False
                break
            whole *= 10
        if fits:
            return i, NUMBER, sign_value * np.float64(whole), -whole if negative else whole
    if mantissa >= EXACT_MANTISSA or exponent > 22 or exponent < -22:
        return i, NOT_EXACT, 0.0, np.int64(-1)
    value = np.float64(mantissa) * POW10[exponent] if exponent >= 0 else np.float64(mantissa) / POW10[-exponent]
    return i, NUMBER, sign_value * value, np.int64(-1)


# -- numpy's order ------------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _swap(order, a, b):
    t = order[a]
    order[a] = order[b]
    order[b] = t


@njit(cache=True, nogil=True, inline="always")
def _sift_down(v, order, base, tmp, i, count):
    """Put tmp at heap position i of the heap of count positions (position p is order[base + p]), moving larger
    children up."""
    j = i << 1
    while j <= count:
        if j < count and v[order[base + j]] < v[order[base + j + 1]]:
            j += 1
        if v[tmp] < v[order[base + j]]:
            order[base + i] = order[base + j]
            i = j
            j += j
        else:
            break
    order[base + i] = tmp


@njit(cache=True, nogil=True)
def _heap_order(v, order, first, count):
    """numpy's heapsort of order[first:first + count] by v (1-based heap, as numpy's aheapsort): where its introsort
    has partitioned too deep."""
    base = first - 1  # heap position p is order[base + p]
    half = count >> 1
    while half > 0:
        _sift_down(v, order, base, order[base + half], half, count)
        half -= 1
    while count > 1:
        tmp = order[base + count]
        order[base + count] = order[base + 1]
        count -= 1
        _sift_down(v, order, base, tmp, 1, count)


@njit(cache=True, nogil=True)
def numpy_order(v, n, order, stack):
    """order[:n] = np.argsort(v[:n]) as numpy's own quicksort makes it (no NaN in v): its introsort, step for step —
    the median of three, the partition, insertion sort for parts of at most 16, heapsort past 2·floor(log2 n) levels —
    so that equal values come out where numpy puts them. (A numpy that hands argsort to x86-simd-sort, on AVX2 and
    AVX-512 machines, orders ties otherwise: docs/metrics.md, "The impression shape".) stack: 3 * SORT_STACK int64."""
    for i in range(n):
        order[i] = i
    if n < 2:
        return
    depth = 0
    m = n
    while m > 1:
        m >>= 1
        depth += 1
    depth *= 2
    low = 0
    high = n - 1
    top = 0
    while True:
        if depth < 0:
            _heap_order(v, order, low, high - low + 1)
        else:
            while high - low > SMALL_SORT:
                mid = low + ((high - low) >> 1)
                if v[order[mid]] < v[order[low]]:
                    _swap(order, mid, low)
                if v[order[high]] < v[order[mid]]:
                    _swap(order, high, mid)
                if v[order[mid]] < v[order[low]]:
                    _swap(order, mid, low)
                pivot = v[order[mid]]
                i = low
                j = high - 1
                _swap(order, mid, j)
                while True:
                    i += 1
                    while v[order[i]] < pivot:
                        i += 1
                    j -= 1
                    while pivot < v[order[j]]:
                        j -= 1
                    if i >= j:
                        break
                    _swap(order, i, j)
                _swap(order, i, high - 1)
                depth -= 1
                if i - low < high - i:
                    stack[3 * top] = i + 1
                    stack[3 * top + 1] = high
                    high = i - 1
                else:
                    stack[3 * top] = low
                    stack[3 * top + 1] = i - 1
                    low = i + 1
                stack[3 * top + 2] = depth
                top += 1
            for i in range(low + 1, high + 1):
                moving = order[i]
                value = v[moving]
                j = i
                while j > low and value < v[order[j - 1]]:
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = moving
        if top == 0:
            return
        top -= 1
        low = stack[3 * top]
        high = stack[3 * top + 1]
        depth = stack[3 * top + 2]


@njit(cache=True, nogil=True)
def stable_order(v, n, order):
    """order[:n] = a stable ascending argsort of v[:n] (numpy's mergesort): equal values keep their order."""
    sorted_ = np.argsort(v[:n], kind="mergesort")
    for i in range(n):
        order[i] = sorted_[i]


# -- one impression's figures -------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def placed_figures(placed, n, clicked, pairs2, kinds, ks, discount, ideal, dcg_upto, out):
    """The figures of an impression of n candidates, c of them clicked, from placed (the labels by position, first
    first) into out[j] per metric j; pairs2: twice the (clicked, not clicked) pairs ranked right, or -1 to count them
    here (no ties). dcg_upto: scratch of len(ideal)."""
    kmax = ideal.shape[0] - 1
    seen_clicked = np.int64(0)
    right2 = np.int64(0)
    first = n  # the position of the first click
    rr = 0.0
    dcg = 0.0
    dcg_upto[0] = 0.0
    for p in range(n):
        if placed[p]:
            if seen_clicked == 0:
                first = p
            seen_clicked += 1
            rr += 1.0 / (p + 1)
            if p < kmax:
                dcg += discount[p]
        else:
            right2 += 2 * seen_clicked
        if p < kmax:
            dcg_upto[p + 1] = dcg
    if pairs2 < 0:
        pairs2 = right2
    for j in range(kinds.shape[0]):
        kind = kinds[j]
        if kind == ROW_AUC:
            out[j] = pairs2 / (2.0 * clicked * (n - clicked))
        elif kind == ROW_MRR_MEAN:
            out[j] = rr / clicked
        elif kind == ROW_RR:  # mrr@k: the first click alone
            out[j] = 1.0 / (first + 1) if first < ks[j] else 0.0
        else:  # ndcg@k, gain 2^label - 1: 1 for a click
            k = min(ks[j], n)
            out[j] = dcg_upto[k] / ideal[min(k, clicked)]


@njit(cache=True, nogil=True)
def impression_figures(labels, t_start, n, keys, ties, kinds, ks, discount, ideal, order, placed, stack, dcg_upto, out):
    """The figures of one impression of n candidates (labels t_start..t_start + n - 1, at least one clicked and one not)
    under scores keys[:n], equal scores in the order `ties` gives, into out[j] per metric j."""
    if ties == TIES_NUMPY:
        numpy_order(keys, n, order, stack)
    else:
        stable_order(keys, n, order)
    clicked = 0
    pairs2 = np.int64(0)  # twice the pairs ranked right (a tie: once)
    below = np.int64(0)  # not clicked, with a lower score
    i = 0
    while i < n:
        value = keys[order[i]]
        group_clicked = 0
        j = i
        while j < n and keys[order[j]] == value:
            group_clicked += label(labels, t_start + order[j])
            j += 1
        group_unclicked = (j - i) - group_clicked
        pairs2 += 2 * group_clicked * below + group_clicked * group_unclicked
        below += group_unclicked
        clicked += group_clicked
        i = j
    for p in range(n):
        placed[p] = label(labels, t_start + order[n - 1 - p])
    placed_figures(placed, n, clicked, pairs2, kinds, ks, discount, ideal, dcg_upto, out)


@njit(cache=True, nogil=True)
def plain_line(buf, pos, n, expected, labels, t_start, size, placed):
    """The plain form of a line, `ID [r1,...,rn]` then its end, with the ranks a permutation of 1..size: the labels
    placed by rank. Returns (index after the line end, clicked), or (-1, 0) for any other line (the careful reader
    takes it)."""
    value = np.int64(0)
    p = pos
    while p < n and 48 <= buf[p] <= 57 and p - pos < 18:
        value = value * 10 + (buf[p] - 48)
        p += 1
    if p == pos or value != expected or (buf[pos] == 48 and p - pos > 1) or p + 1 >= n or buf[p] != 32 or buf[p + 1] != 91:
        return np.int64(-1), 0
    p += 2
    for r in range(size):
        placed[r] = 255
    clicked = 0
    for i in range(size):
        rank = np.int64(0)
        digits = p
        while p < n and 48 <= buf[p] <= 57:
            rank = rank * 10 + (buf[p] - 48)
            p += 1
        if p == digits or p - digits > 9 or buf[digits] == 48 or rank > size or placed[rank - 1] != 255 or p >= n:
            return np.int64(-1), 0
        clicked_here = label(labels, t_start + i)
        placed[rank - 1] = clicked_here
        clicked += clicked_here
        if buf[p] != (93 if i == size - 1 else 44):
            return np.int64(-1), 0
        p += 1
    if p < n and buf[p] != 10:
        return np.int64(-1), 0
    return p + 1, clicked


# -- a block of lines --------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def impression_block(buf, pos, n, first_slot, truth, metric, limits, scratch, slot_line, slot_values, counts, found, n_problems):
    """Read the lines of buf[pos:n] (first_slot: the impression of its first line) and write each line's figures into
    its slot. Returns (lines read, problems kept).

    A line of an impression whose label list is empty is not read (the evaluators skip it before they parse it); a
    line past the truth's last impression is counted (EXTRA_LINES) and not read. Any other line that the evaluators
    would stop at is a problem (its first one) and scores 0."""
    ids, id_base, indptr, labels = truth
    kinds, ks, ties, values, discount, ideal = metric
    max_line_bytes, max_per_code = limits
    keys, order, placed, stack, bounds, figures, dcg_upto = scratch
    n_slots = indptr.shape[0] - 1
    line = 0
    while pos < n:
        line += 1
        slot = first_slot + line - 1
        if 0 <= slot < n_slots and values == VALUES_RANK:
            t_start = np.int64(indptr[slot])
            size = np.int64(indptr[slot + 1]) - t_start
            if size > 0:
                after, clicked = plain_line(buf, pos, n, id_base + slot if id_base >= 0 else ids[slot], labels, t_start, size, placed)
                if after >= 0 and after - pos <= max_line_bytes + 1:
                    slot_line[slot] = slot + 1
                    placed_figures(placed, size, clicked, np.int64(-1), kinds, ks, discount, ideal, dcg_upto, figures)
                    for j in range(kinds.shape[0]):
                        slot_values[slot, j] = figures[j]
                    pos = after
                    continue
        end = line_end(buf, pos, n)
        line_start = pos
        pos = end + 1
        if n_slots == 0:  # no truth (validation): each line's form alone
            problem, at, until = _read_line(buf, line_start, end, -1, ids, id_base, -1, values, max_line_bytes, keys, bounds)
            if problem != 0:
                n_problems = _problem(found, n_problems, counts, max_per_code, problem, line, at, until, line_start)
            continue
        if slot >= n_slots:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.EXTRA_LINES, line, line_start, line_start, line_start)
            continue
        slot_line[slot] = slot + 1
        t_start = np.int64(indptr[slot])
        size = np.int64(indptr[slot + 1]) - t_start
        if size == 0:
            continue
        problem, at, until = _read_line(buf, line_start, end, slot, ids, id_base, size, values, max_line_bytes, keys, bounds)
        if problem != 0:
            n_problems = _problem(found, n_problems, counts, max_per_code, problem, line, at, until, line_start)
            counts[codes.ROWS_WITH_ERRORS] += 1
            continue
        impression_figures(labels, t_start, size, keys, ties, kinds, ks, discount, ideal, order, placed, stack, dcg_upto, figures)
        for j in range(kinds.shape[0]):
            slot_values[slot, j] = figures[j]
    return line, n_problems


@njit(cache=True, nogil=True)
def _read_line(buf, start, end, slot, ids, id_base, size, values, max_line_bytes, keys, bounds):
    """Read one line of an impression of `size` candidates as the evaluators read it (fields split at whitespace, the
    list as JSON) into keys (each candidate's score); returns (problem code or 0, start, end of what is wrong).
    Without truth (size -1) the line's form alone is read: an id that is a whole number, a list of ranks."""
    if end - start > max_line_bytes:
        return codes.LINE_TOO_LONG, start + max_line_bytes, end
    found = fields(buf, start, end, bounds)
    if found != 2:
        if found == 3:
            return codes.WRONG_FIELD_COUNT, bounds[4], end
        return codes.WRONG_FIELD_COUNT, start, start
    if size < 0:
        if read_id(buf, bounds[0], bounds[1]) < 0:
            return codes.MALFORMED_ID, bounds[0], bounds[1]
    elif read_id(buf, bounds[0], bounds[1]) != (id_base + slot if id_base >= 0 else ids[slot]):
        return codes.IMPRESSION_ID_MISMATCH, bounds[0], bounds[1]
    list_start, list_end = bounds[2], bounds[3]
    if buf[list_start] != 91 or buf[list_end - 1] != 93 or list_end - list_start < 2:
        return codes.BAD_RANK_LIST, list_start, list_end
    i = list_start + 1
    count = 0
    if i < list_end - 1:
        while True:
            after, outcome, value, _ = read_number(buf, i, list_end - 1)
            if outcome == NOT_JSON:
                return codes.BAD_RANK_LIST, i, max(after, i + 1)
            if outcome == NOT_EXACT:
                return codes.BAD_RANK, i, after
            if values == VALUES_RANK:
                if value == 0.0:
                    return codes.BAD_RANK, i, after  # 1 / 0
                score = 1.0 / value
                if score < 0.0 or score > 1.0:
                    return codes.BAD_RANK, i, after
            else:
                score = value
            if count < size:
                keys[count] = score
            count += 1
            i = after
            if i == list_end - 1:
                break
            if buf[i] != 44 or i + 1 == list_end - 1:
                return codes.BAD_RANK_LIST, i, i + 1
            i += 1
    if count != size and size >= 0:
        return codes.RANK_COUNT, list_start, list_end
    return 0, 0, 0


@njit(cache=True, nogil=True)
def impression_frame_rows(first, last, ids, offsets, values, truth, metric, scratch, slot_line, slot_values, counts, found, n_problems,
                          max_per_code):
    """Rows first..last-1 of a frame (row i: impression i; ids[i] its id, -1 for none; its list values[offsets[i]:
    offsets[i + 1]] as float64, NaN for a null) into their slots, as impression_block reads lines. Problem records:
    (code, row + 1, where (a value's index, or the row), the same, 0 for the id column or 2 for the list)."""
    truth_ids, id_base, indptr, labels = truth
    kinds, ks, ties, values_kind, discount, ideal = metric
    keys, order, placed, stack, bounds, figures, dcg_upto = scratch
    n_slots = indptr.shape[0] - 1
    for row in range(first, last):
        if row >= n_slots:
            if n_slots > 0:
                n_problems = _problem(found, n_problems, counts, max_per_code, codes.EXTRA_LINES, row + 1, row, row, 0)
            continue
        slot_line[row] = row + 1
        t_start = np.int64(indptr[row])
        size = np.int64(indptr[row + 1]) - t_start
        if size == 0:
            continue
        if ids[row] != (id_base + row if id_base >= 0 else truth_ids[row]):
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.IMPRESSION_ID_MISMATCH, row + 1, row, row, 0)
            counts[codes.ROWS_WITH_ERRORS] += 1
            continue
        start = offsets[row]
        if offsets[row + 1] - start != size:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.RANK_COUNT, row + 1, row, row, 2)
            counts[codes.ROWS_WITH_ERRORS] += 1
            continue
        bad = -1
        for i in range(size):
            value = values[start + i]
            if values_kind == VALUES_RANK:
                score = 1.0 / value if value != 0.0 else np.nan
                if not (0.0 <= score <= 1.0):
                    bad = start + i
                    break
            else:
                score = value
                if not np.isfinite(score):
                    bad = start + i
                    break
            keys[i] = score
        if bad >= 0:
            n_problems = _problem(found, n_problems, counts, max_per_code, codes.BAD_RANK, row + 1, bad, bad, 2)
            counts[codes.ROWS_WITH_ERRORS] += 1
            continue
        impression_figures(labels, t_start, size, keys, ties, kinds, ks, discount, ideal, order, placed, stack, dcg_upto, figures)
        for j in range(kinds.shape[0]):
            slot_values[row, j] = figures[j]
    return n_problems


@njit(cache=True, nogil=True)
def fill_missing(slot_line, indptr, labels, metric, scratch, slot_values):
    """MIND's fill: every impression with labels that no line gave is scored as if each candidate had rank 1 (all tied,
    in numpy's order). Returns how many were filled."""
    kinds, ks, ties, values, discount, ideal = metric
    keys, order, placed, stack, bounds, figures, dcg_upto = scratch
    filled = 0
    for slot in range(slot_line.shape[0]):
        if slot_line[slot] != 0:
            continue
        t_start = np.int64(indptr[slot])
        size = np.int64(indptr[slot + 1]) - t_start
        if size == 0:
            continue
        for i in range(size):
            keys[i] = 1.0
        impression_figures(labels, t_start, size, keys, ties, kinds, ks, discount, ideal, order, placed, stack, dcg_upto, figures)
        for j in range(kinds.shape[0]):
            slot_values[slot, j] = figures[j]
        filled += 1
    return filled


@njit(cache=True, nogil=True)
def count_lines(buf, pos, n):
    """The lines of buf[pos:n]: its line ends, and one more when it does not end with one."""
    count = 0
    for i in range(pos, n):
        count += buf[i] == 10
    if n > pos and buf[n - 1] != 10:
        count += 1
    return count


# -- the truth ----------------------------------------------------------------------------------------------------
@njit(cache=True)
def read_impression_truth(buf, n, ids, indptr, labels, bounds):
    """Read a truth file's lines `ImpId [l1,l2,...]` (labels 0 or 1; an empty list masks the impression) into ids,
    indptr (offsets into the labels) and labels (bits, 8 to a byte: `label`; zeros on entry). Returns (impressions,
    labels, error, line, column): error TRUTH_OK or the first TRUTH_* problem, at that line and (1-based) column."""
    pos = 0
    line = 0
    rows = 0
    total = 0
    indptr[0] = 0
    while pos < n:
        end = line_end(buf, pos, n)
        start = pos
        pos = end + 1
        line += 1
        if pos >= n and end == start:  # the data end with a line end: no line after it
            break
        found = fields(buf, start, end, bounds)
        if found != 2:
            return rows, total, TRUTH_FIELDS, line, (bounds[4] if found == 3 else start) - start + 1
        ids[rows] = read_id(buf, bounds[0], bounds[1])
        if ids[rows] < 0:
            return rows, total, TRUTH_ID, line, bounds[0] - start + 1
        i, list_end = bounds[2], bounds[3]
        if buf[i] != 91 or buf[list_end - 1] != 93 or list_end - i < 2:
            return rows, total, TRUTH_LABELS, line, i - start + 1
        i += 1
        clicked = 0
        first = total
        while i < list_end - 1:
            c = buf[i]
            if (c != 48 and c != 49) or (buf[i + 1] != 44 and i + 1 != list_end - 1) or (buf[i + 1] == 44 and i + 2 == list_end - 1):
                return rows, total, TRUTH_LABELS, line, i - start + 1
            if c == 49:
                labels[total >> 3] |= np.uint8(1 << (total & 7))
            clicked += c - 48
            total += 1
            i += 2
        count = total - first
        if count > 0 and (clicked == 0 or clicked == count):
            return rows, total, TRUTH_ONE_CLASS, line, bounds[2] - start + 1
        rows += 1
        indptr[rows] = total
    return rows, total, TRUTH_OK, line, 0
