"""The candidate stage: the hits of long candidate tables (a row per session and item), found run by run.

A run is a stretch of rows with the same session. In a run, the rows of type t, and the rows without a type
(which serve every type), form the list of (session, t); each list is ranked by score, highest first (equal
scores: the earlier row first), or by row order without a score column. An item counts once per list, at its
best rank; its repeats keep their place (S014). Rows with a bad id, an unknown type or a score that is no number
are left out of every list (a problem each).

candidate_runs is one function body per call: per run it fills a small hash table with the session's truth items
(key: item; value: the bit mask of the types whose truth holds it), then reads each row once (one probe: a hit,
a repeat, or a new item). Ranks of hits come from the row order when the run's scores never increase; otherwise
from a scan of the run per hit (a few hits), or from a sort of the run (many).

Problem records are rows of `found`: (code, row, value); counts[code] counts all.
"""

import numpy as np
from numba import njit

from scorer.kernels import codes
from scorer.kernels.frame_rows import _valid
from scorer.kernels.parse import NOT_FOUND, session_index
from scorer.kernels.strings import lookup

MIX = np.uint64(0x9E3779B97F4A7C15)
SCAN_HITS = 64  # an unsorted run with more hit rows than this is ranked by a sort of the run
EVERY_LIST = -1  # a row without a type: in the list of every type
LEFT_OUT = -3  # a row in no list (an unknown type, a bad item or score)


@njit(cache=True, nogil=True)
def _note(found, n_found, counts, max_per_code, code, row, value):
    counts[code] += 1
    if counts[code] <= max_per_code and n_found < found.shape[0]:
        found[n_found, 0] = code
        found[n_found, 1] = row
        found[n_found, 2] = value
        n_found += 1
    return n_found


@njit(cache=True, nogil=True, inline="always")
def _int_at(wide, narrow, r):
    """Row r of an integer column held as int64 (wide) or int32 (narrow); the other one is empty."""
    return np.int64(wide[np.uint64(r)]) if wide.shape[0] > 0 else np.int64(narrow[np.uint64(r)])


@njit(cache=True, nogil=True)
def candidate_runs(start, stop, row_base, columns, truth, n_types, max_per_code, tables, scratch,
                   slot_candidates, session_runs, hits, unknown, found, counts):
    """Read the runs of rows [start, stop) (whole runs) until they end or an output is full.

    columns: (sessions, narrow sessions, session validity, bit offset, items, narrow items, item validity, bit offset,
    types, scores, narrow scores, score validity, bit offset): a column's values are int64 (float64) or, in its narrow
    array, int32 (float32), the other one empty; types: per row -1 (no type: every type), -2 (an unknown type) or the
    type's index, or empty (no type column); scores empty without a score column. truth: (sessions, lookup base, lookup table, indptr, items).
    tables: (keys, stamps, truth masks, seen masks, hit index) of a power-of-two size; scratch: (occurrence rows,
    occurrence hit index, occurrence hit types, occurrence ranks (n, n_types), best ranks (n, n_types), best ties
    (n, n_types), the run's row lists, the run's row scores).
    Outputs: slot_candidates[slot] += the list's length; session_runs[session index] += 1 (saturating at 255);
    hits: (slot, rank, tied) with hits[3][0] the count written; unknown: first row of each run of a session the truth
    lacks, unknown[1][0] its count, unknown[1][1] the rows; problems in found/counts (row: row_base + row).
    Returns (the next row, problems kept).

    Written out in one body (the kernels' inlining rule): a helper taking arrays, called per run or per row, would
    count references on each of them.
    """
    sessions, narrow_sessions, session_valid, session_bit, items, narrow_items, item_valid, item_bit, types, scores, narrow_scores, \
        score_valid, score_bit = columns
    truth_sessions, lookup_base, lookup_table, indptr, truth_items = truth
    keys, stamps, truth_mask, seen_mask, hit_index = tables
    occ_row, occ_hit, occ_types, occ_rank, best_rank, best_tie, run_list, run_score = scratch
    hit_slot, hit_rank, hit_tied, n_hits_out = hits
    unknown_rows, unknown_counts = unknown
    has_types = types.shape[0] > 0
    has_scores = scores.shape[0] > 0 or narrow_scores.shape[0] > 0
    score_nulls = score_valid.shape[0] > 0
    all_types = (np.int64(1) << n_types) - 1
    n_dense = (indptr.shape[0] - 1) // n_types  # the truth's sessions, where they are the ids from lookup_base on
    n_found = np.int64(0)
    n_hits = n_hits_out[0]
    stamp = stamps.max() + 1
    counter = np.zeros(n_types, np.int64)
    sorted_ranks = counter[:0]  # the ranks of a run ranked by a sort
    i = start
    while i < stop:
        if not _valid(session_valid, session_bit, i):
            n_found = _note(found, n_found, counts, max_per_code, codes.SESSION_NOT_INTEGER, row_base + i, np.int64(0))
            i += 1
            continue
        session = _int_at(sessions, narrow_sessions, i)
        j = i + 1
        while j < stop and _int_at(sessions, narrow_sessions, j) == session and _valid(session_valid, session_bit, j):
            j += 1
        if session < 0:
            for r in range(i, j):
                n_found = _note(found, n_found, counts, max_per_code, codes.SESSION_OUT_OF_RANGE, row_base + r, session)
            i = j
            continue
        index = session_index(session, truth_sessions, lookup_base, lookup_table, n_dense)
        if index == NOT_FOUND:
            if unknown_counts[0] >= unknown_rows.shape[0]:
                break
            unknown_rows[unknown_counts[0]] = row_base + i
            unknown_counts[0] += 1
            unknown_counts[1] += j - i
            i = j
            continue
        first_slot = index * n_types
        t_first, t_last = np.int64(indptr[first_slot]), np.int64(indptr[first_slot + n_types])
        if n_hits + (t_last - t_first) > hit_slot.shape[0]:
            break  # the caller empties the hit arrays and calls again from this run
        n_rows = j - i
        if 2 * (n_rows + t_last - t_first) > keys.shape[0] or n_rows > occ_row.shape[0]:
            size = 1 << 12
            while size < 2 * (n_rows + t_last - t_first):
                size <<= 1
            keys, stamps = np.zeros(size, np.int64), np.zeros(size, np.int64)
            truth_mask, seen_mask, hit_index = np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64)
            occ_row, occ_hit, occ_types = np.zeros(n_rows, np.int64), np.zeros(n_rows, np.int64), np.zeros(n_rows, np.int64)
            occ_rank = np.zeros((n_rows, n_types), np.int64)
            best_rank, best_tie = np.zeros((n_rows, n_types), np.int64), np.zeros((n_rows, n_types), np.bool_)
            run_list, run_score = np.zeros(n_rows, np.int64), np.zeros(n_rows, np.float64)
            stamp = 1
        bits = 6  # the run's part of the table: the smallest power of two of at least twice its items (kept in L1)
        while (1 << bits) < 2 * (n_rows + t_last - t_first):
            bits += 1
        mask = np.uint64((1 << bits) - 1)
        shift = np.uint64(64 - bits)
        if session_runs[index] < 255:
            session_runs[index] += 1
        # the session's truth items: per item the mask of the types whose truth holds it
        for t in range(n_types):
            for q in range(np.int64(indptr[first_slot + t]), np.int64(indptr[first_slot + t + 1])):
                item = truth_items[q]
                p = (np.uint64(item) * MIX) >> shift
                while stamps[p] == stamp and keys[p] != item:
                    p = (p + np.uint64(1)) & mask
                if stamps[p] != stamp:
                    stamps[p] = stamp
                    keys[p] = item
                    truth_mask[p] = 0
                    seen_mask[p] = 0
                    hit_index[p] = -1
                truth_mask[p] |= np.int64(1) << t
        for t in range(n_types):
            counter[t] = 0
        n_every = 0  # rows that serve every type (the list of type t: n_every + counter[t] rows so far)
        in_order = np.bool_(True)
        left_out = 0  # rows of the run in no list (a problem each)
        previous = np.inf
        n_occ = np.int64(0)
        n_distinct = np.int64(0)
        for r in range(i, j):
            run_list[r - i] = LEFT_OUT  # the row's list: EVERY_LIST, a type's index, or LEFT_OUT
            run_score[r - i] = np.nan
            served = all_types
            code = EVERY_LIST
            if has_types:
                code = np.int64(types[r])
                if code == -2:
                    n_found = _note(found, n_found, counts, max_per_code, codes.UNKNOWN_TYPE, row_base + r, np.int64(0))
                    left_out += 1
                    continue
                if code >= 0:
                    served = np.int64(1) << code
            if not _valid(item_valid, item_bit, r):
                n_found = _note(found, n_found, counts, max_per_code, codes.ITEM_NOT_INTEGER, row_base + r, np.int64(0))
                left_out += 1
                continue
            item = _int_at(items, narrow_items, r)
            if item < 0:
                n_found = _note(found, n_found, counts, max_per_code, codes.ITEM_OUT_OF_RANGE, row_base + r, item)
                left_out += 1
                continue
            if has_scores:
                score = np.float64(scores[np.uint64(r)]) if scores.shape[0] > 0 else np.float64(narrow_scores[np.uint64(r)])
                if score != score or (score_nulls and not _valid(score_valid, score_bit, r)):  # NaN or null
                    n_found = _note(found, n_found, counts, max_per_code, codes.VALUE_NOT_NUMBER, row_base + r, np.int64(0))
                    left_out += 1
                    continue
                in_order &= not score > previous
                previous = score
                run_score[r - i] = score
            run_list[r - i] = code
            p = (np.uint64(item) * MIX) >> shift
            while stamps[p] == stamp and keys[p] != item:
                p = (p + np.uint64(1)) & mask
            if stamps[p] != stamp:
                stamps[p] = stamp
                keys[p] = item
                truth_mask[p] = 0
                seen_mask[p] = served
            else:
                if seen_mask[p] & served:
                    n_found = _note(found, n_found, counts, max_per_code, codes.DUPLICATE_ITEMS, row_base + r, item)
                seen_mask[p] |= served
                hit_types = truth_mask[p] & served
                if hit_types:
                    if hit_index[p] < 0:
                        hit_index[p] = n_distinct
                        for t in range(n_types):
                            best_rank[n_distinct, t] = -1
                        n_distinct += 1
                    occ_row[n_occ] = r - i
                    occ_hit[n_occ] = hit_index[p]
                    occ_types[n_occ] = hit_types
                    for t in range(n_types):
                        occ_rank[n_occ, t] = n_every + counter[t]
                    n_occ += 1
            if served == all_types:
                n_every += 1
            else:
                counter[code] += 1
        for t in range(n_types):
            slot_candidates[first_slot + t] += n_every + counter[t]
        # each hit's rank in each list it is in (occ_rank when the rows come in list order), and whether another row
        # of the list has its score; a distinct item keeps its best
        by_sort = has_scores and not in_order and n_occ > SCAN_HITS
        if by_sort:
            sorted_ranks = _ranks_by_sort(run_list[:n_rows], run_score[:n_rows], n_types)
        for o in range(n_occ):
            k = occ_row[o]  # the row, counted from the run's first
            d = occ_hit[o]
            own = run_score[k]
            for t in range(n_types):
                if not (occ_types[o] >> t) & 1:
                    continue
                tied = False
                if not has_scores or in_order:
                    rank = occ_rank[o, t]
                    if has_scores:  # equal scores sit next to each other in the list (other rows between them)
                        for step in (-1, 1):
                            q = k + step
                            while 0 <= q < n_rows and not tied:
                                if run_list[q] == EVERY_LIST or run_list[q] == t:
                                    if run_score[q] != own:
                                        break
                                    tied = True
                                q += step
                elif by_sort:
                    rank = sorted_ranks[k * n_types + t]
                    tied = sorted_ranks[n_rows * n_types + k * n_types + t] > 0
                elif left_out == 0 and not has_types:  # every row is in the list: counts in loops the compiler vectorises
                    before, after, equal = np.int64(0), np.int64(0), np.int64(0)
                    for q in range(np.uint64(0), np.uint64(k)):  # unsigned: no test for a negative index
                        before += np.int64(run_score[q] >= own)
                        equal += np.int64(run_score[q] == own)
                    for q in range(np.uint64(k + 1), np.uint64(n_rows)):
                        after += np.int64(run_score[q] > own)
                        equal += np.int64(run_score[q] == own)
                    rank = before + after
                    tied = equal > 0
                else:
                    rank = 0
                    for q in range(n_rows):
                        other = run_score[q]
                        if q != k and other >= own and (run_list[q] == EVERY_LIST or run_list[q] == t):
                            if other > own or q < k:
                                rank += 1
                            if other == own:
                                tied = True
                if best_rank[d, t] < 0 or rank < best_rank[d, t]:
                    best_rank[d, t] = rank
                    best_tie[d, t] = tied
        for d in range(n_distinct):
            for t in range(n_types):
                if best_rank[d, t] >= 0:
                    hit_slot[n_hits] = first_slot + t
                    hit_rank[n_hits] = best_rank[d, t]
                    hit_tied[n_hits] = best_tie[d, t]
                    n_hits += 1
        stamp += 1
        i = j
    n_hits_out[0] = n_hits
    return i, n_found


@njit(cache=True, nogil=True)
def _ranks_by_sort(run_list, run_score, n_types):
    """Per row of the run and type: its rank in the type's list (by score, then row), and then whether another row of
    the list has its score; laid out as [rank (n_rows * n_types), tied (n_rows * n_types)]. run_list holds each row's
    list (EVERY_LIST, a type's index or LEFT_OUT), run_score its score (NaN when left out)."""
    n_rows = run_list.shape[0]
    out = np.zeros(2 * n_rows * n_types, np.int64)
    keyed = np.empty(n_rows, np.float64)
    for k in range(n_rows):
        keyed[k] = -run_score[k] if run_list[k] != LEFT_OUT else np.inf
    order = np.argsort(keyed, kind="mergesort")  # stable: equal scores keep row order
    for t in range(n_types):
        rank = 0
        for position in range(n_rows):
            k = order[position]
            if not (run_list[k] == EVERY_LIST or run_list[k] == t):
                continue
            out[k * n_types + t] = rank
            rank += 1
            q = position - 1  # the rows before with this score, of this list
            while q >= 0 and keyed[order[q]] == keyed[k]:
                if run_list[order[q]] == EVERY_LIST or run_list[order[q]] == t:
                    out[n_rows * n_types + k * n_types + t] = 1
                    out[n_rows * n_types + order[q] * n_types + t] = 1
                    break
                q -= 1
    return out


@njit(cache=True, nogil=True)
def string_codes(buf, offsets, keys, starts, ends, table, n_known, out):
    """The code of each string buf[offsets[r]:offsets[r + 1]]: its index among the truth's strings, else n_known plus
    a 62-bit hash of its bytes (strings the truth lacks are told apart by that hash). buf needs 8 readable bytes after
    the last string."""
    low = np.uint64((1 << 62) - 1)
    for r in range(out.shape[0]):
        index, h = lookup(buf, offsets[r], offsets[r + 1], keys, starts, ends, table)
        out[r] = index if index >= 0 else n_known + np.int64(h & low)
    return out
