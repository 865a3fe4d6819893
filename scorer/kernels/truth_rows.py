"""The rows of the truth `scorer explain` reads, and the rows an older evaluator stops at: one pass over the truth's
offsets each, instead of numpy's temporaries over every slot (a slot is (session, type), slot = session * n_types + type).
"""

from numba import njit


@njit(cache=True, nogil=True)
def place_truth_rows(indptr, items, n_types, type_starts, row_of_slot, slots, sizes, label0):
    """The slots with truth as rows, by type then session: row r (from type_starts[t] for type t) gets its slot, |T|
    and whether its label is the single item 0 (label0); row_of_slot[slot] is the slot's row, or -1 without truth."""
    n_sessions = (indptr.shape[0] - 1) // n_types
    rows = type_starts[:n_types].copy()  # each type's next row
    for session in range(n_sessions):
        for t in range(n_types):
            slot = session * n_types + t
            size = indptr[slot + 1] - indptr[slot]
            if size > 0:
                row = rows[t]
                rows[t] += 1
                row_of_slot[slot] = row
                slots[row] = slot
                sizes[row] = size
                label0[row] = size == 1 and items[indptr[slot]] == 0
            else:
                row_of_slot[slot] = -1


@njit(cache=True, nogil=True)
def rows_missing_beside_others(slot_line, indptr, n_types, first):
    """How many slots with truth have no line while their session has a line of another type; first gets the first of
    them (its slots, in order, as many as it holds)."""
    n_sessions = (indptr.shape[0] - 1) // n_types
    found = 0
    for session in range(n_sessions):
        base = session * n_types
        read = False
        for t in range(n_types):
            read = read or slot_line[base + t] > 0
        if not read:
            continue
        for t in range(n_types):
            slot = base + t
            if slot_line[slot] == 0 and indptr[slot + 1] > indptr[slot]:
                if found < first.shape[0]:
                    first[found] = slot
                found += 1
    return found
