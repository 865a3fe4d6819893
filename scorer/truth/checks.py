"""The invariants of a compiled truth's arrays, checked before a kernel sees them.

A compiled file or cache entry is not trusted to be sound: the kernels index without bounds checks and find
items and sessions by binary search, so an offset out of range could crash the process and an unsorted row
could change a score. Every check is vectorised numpy (bench/bench_truth_key.py times them at OTTO and H&M
size); a broken one raises TruthError naming the file and the invariant. Bytes this user's scorer vouches for
(an entry of the private cache, or a compiled file whose exact bytes passed the full check before:
scorer.truth.compiled.check_compiled) get full=False: only what keeps the kernels' indexing in bounds, and a spot check of
the string tables (see check_table).
"""

from __future__ import annotations

import numpy as np

from scorer.errors import TruthError
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.kernels.string_table import LOW, MIX, SEED, U

CHECK_VERSION = 1  # part of a memo's key (scorer.truth.compiled.check_compiled): bump when a full check is added or changed

def _fail(path, message: str) -> TruthError:
    return TruthError(f"compiled truth {path} is damaged or was not written by this scorer: {message}")


def _require(condition, path, message: str) -> None:
    if not condition:
        raise _fail(path, message)


def _vector(array, name: str, dtype, path) -> np.ndarray:
    _require(isinstance(array, np.ndarray) and array.dtype == np.dtype(dtype) and array.ndim == 1 and array.flags.c_contiguous
             and array.flags.aligned, path, f"{name} must be a 1-D {np.dtype(dtype).name} array, got "
             f"{getattr(array, 'dtype', type(array).__name__)} of shape {getattr(array, 'shape', '?')}")
    return array


def _length(shapes: dict[str, tuple[int, ...]], name: str) -> int:
    shape = shapes.get(name)
    if shape is None or len(shape) != 1:
        raise ValueError(f"{name} is {'missing' if shape is None else f'of shape {shape}'}, not a 1-D array")
    return int(shape[0])


def declared_truth(shapes: dict[str, tuple[int, ...]]) -> None:
    """Do the declared lengths of a .truth.npz's arrays go together (indptr a whole number of rows per session, usage
    one code per session)? Checked on the npy headers (scorer.truth.npz.read_npz), before any array is inflated."""
    sessions, rows = _length(shapes, "sessions"), _length(shapes, "indptr") - 1
    if rows < 0 or (rows % sessions if sessions else rows):
        raise ValueError(f"indptr declares {rows + 1:,} entries for {sessions:,} sessions")
    _length(shapes, "items")
    if "usage" in shapes and _length(shapes, "usage") != sessions:
        raise ValueError(f"usage declares {_length(shapes, 'usage'):,} entries for {sessions:,} sessions")


def declared_strings(shapes: dict[str, tuple[int, ...]]) -> None:
    """declared_truth for a .strings.npz: one row per id, as many id starts as ends, a grade per item."""
    sessions = _length(shapes, "sessions")
    if _length(shapes, "indptr") != sessions + 1:
        raise ValueError(f"indptr declares {_length(shapes, 'indptr'):,} entries for {sessions:,} ids")
    if _length(shapes, "id_starts") != _length(shapes, "id_ends") or _length(shapes, "item_starts") != _length(shapes, "item_ends"):
        raise ValueError("the string tables declare as many starts as ends")
    if "grades" in shapes and _length(shapes, "grades") != _length(shapes, "items"):
        raise ValueError(f"{_length(shapes, 'grades'):,} grades for {_length(shapes, 'items'):,} items")


def check_csr(indptr: np.ndarray, items: np.ndarray, n_rows: int, path, full: bool = True, repeats: bool = False) -> None:
    """indptr: n_rows + 1 offsets from 0 to len(items), never decreasing; with full, items: >= 0, strictly increasing
    within each row (the kernels' binary search; out of order they give a wrong score, never a read out of bounds), or
    never decreasing where the truth keeps repeats (a multiset)."""
    _require(len(indptr) == n_rows + 1, path, f"indptr has {len(indptr):,} entries, {n_rows + 1:,} expected")
    _require(indptr[0] == 0 and indptr[-1] == len(items), path, f"indptr runs from {indptr[0]} to {indptr[-1]}, "
             f"not from 0 to the {len(items):,} items")
    _require(not (indptr[1:] < indptr[:-1]).any(), path, "indptr decreases")
    if not full:
        return
    _require(not len(items) or items.min() >= 0, path, "an item id is negative")
    row_start = np.zeros(len(items) + 1, np.bool_)
    row_start[indptr] = True
    out_of_order = (items[1:] < items[:-1]) if repeats else (items[1:] <= items[:-1])
    _require(not (out_of_order & ~row_start[1:-1]).any(), path, f"items are not sorted{'' if repeats else ' and distinct'} within a row")


def check_truth(truth, path, lookup=None, full: bool = True) -> None:
    """The arrays of an id_type Truth (and its stored session lookup (base, table), if any); without full, not the
    order of sessions and items nor the lookup's exact map, only that its entries are session indices or -1."""
    types = truth.types
    _require(len(types) > 0 and all(isinstance(name, str) and name for name in types) and len(set(types)) == len(types),
             path, f"types {list(types)!r} are not distinct names")
    sessions = _vector(truth.sessions, "sessions", np.int64, path)
    check_csr(_vector(truth.indptr, "indptr", INDPTR_DTYPE, path), _vector(truth.items, "items", np.int64, path),
              len(sessions) * len(types), path, full)
    if full:
        _require(not len(sessions) or sessions[0] >= 0, path, "a session id is negative")
        _require(not (sessions[1:] <= sessions[:-1]).any(), path, "sessions are not sorted and distinct")
    if truth.usage is not None:
        usage = _vector(truth.usage, "usage", np.int8, path)
        _require(len(usage) == len(sessions), path, f"usage has {len(usage):,} entries for {len(sessions):,} sessions")
        _require(not ((usage < 0) | (usage > 2)).any(), path, "a usage code is not 0, 1 or 2")
    if lookup is not None:
        _check_lookup(lookup, sessions, path, full)


def every_id(sessions: np.ndarray) -> bool:
    """Are sorted, distinct sessions every id from the first to the last? Then a session's index is its id less the
    first, and no kernel reads a lookup table (scorer.engine.id_kernel.truth_arrays)."""
    return len(sessions) > 0 and int(sessions[-1]) - int(sessions[0]) + 1 == len(sessions)


def _check_lookup(lookup, sessions: np.ndarray, path, full: bool = True) -> None:
    """The table maps exactly the sessions to their index (or is empty: binary search); without full, its entries
    are session indices or -1 (what the kernel indexes with), unless the sessions are every id from the first to the
    last: then no kernel reads the table (id_kernel.truth_arrays), and its pages are not read in for the check."""
    base, table = lookup
    table = _vector(table, "lookup_table", np.int32, path)
    if not len(table):
        return
    if not full and every_id(sessions):
        return
    if not full:  # any int64 base and length: the kernel looks up only offsets inside the table
        _require(isinstance(base, int) and -(2**63) <= base < 2**63, path, "lookup_base is not a 64-bit integer")
        _require(table.min() >= -1 and table.max() < len(sessions), path, "lookup_table has an entry that is not a session index")
        return
    _require(isinstance(base, int) and len(sessions) and base == int(sessions[0]), path, "lookup_base is not the first session")
    span = int(sessions[-1]) - base + 1
    _require(len(table) == span, path, f"lookup_table has {len(table):,} entries for a span of {span:,} session ids")
    _require(np.array_equal(table[sessions - base], np.arange(len(sessions), dtype=np.int32)), path,
             "lookup_table does not map each session to its index")
    _require(np.count_nonzero(table != -1) == len(sessions), path, "lookup_table has entries that are not sessions")


def check_string_truth(truth, path, full: bool = True) -> None:
    """A StringTruth: one type, session i = id i, the CSR over item codes, grades, and both string tables
    (full or not: see check_table)."""
    _require(len(truth.types) == 1 and isinstance(truth.types[0], str), path, f"types {list(truth.types)!r} are not one name")
    ids = check_table(truth.ids, "id", path, full)
    names = check_table(truth.item_names, "item", path, full)
    _require(np.array_equal(_vector(truth.sessions, "sessions", np.int64, path), np.arange(ids, dtype=np.int64)), path,
             "sessions are not 0 .. ids - 1")
    check_csr(_vector(truth.indptr, "indptr", INDPTR_DTYPE, path), _vector(truth.items, "items", np.int64, path), ids, path, full,
              repeats=truth.multiset)
    items = truth.items
    if names:
        _require(not len(items) or items.max() < names, path, "an item code is past the item names")
    else:  # shape 'value': one placeholder item 0 per id that has a value
        _require(not items.any(), path, "item codes without item names")
    if truth.grades is not None:
        grades = _vector(truth.grades, "grades", np.float64, path)
        _require(len(grades) == len(items), path, f"{len(grades):,} grades for {len(items):,} items")
        _require(np.isfinite(grades).all(), path, "a grade is not a finite number")



CHUNK = 1 << 15  # keys hashed together: their few arrays stay in the CPU's cache across the words
LONG_KEY = 256  # longer keys (rare) are hashed apart, all together, so that one does not slow a chunk down
MAX_KEY_BYTES = 1 << 16  # a longer id or item in a compiled truth is refused (as long as the default longest line)


def hash_keys(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """scorer.kernels.strings.hash_bytes of every key, in numpy: one 8-byte word of a chunk of keys at a time
    (keys needs 8 readable bytes after the last key, as for the kernel)."""
    windows = np.ndarray((max(len(keys) - 7, 0),), "<u8", keys, strides=(1,))  # every byte offset as a little-endian uint64
    out = np.empty(len(starts), U)
    long = ends - starts > LONG_KEY
    with np.errstate(over="ignore"):
        if long.any():
            out[long] = _hash_chunk(windows, starts[long], ends[long])
            short = np.flatnonzero(~long)
            out[short] = hash_keys(keys, starts[short], ends[short])
            return out
        for first in range(0, len(starts), CHUNK):
            out[first : first + CHUNK] = _hash_chunk(windows, starts[first : first + CHUNK], ends[first : first + CHUNK])
    return out


def _hash_chunk(windows: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    lengths = ends - starts
    h = SEED ^ lengths.astype(U)
    at = starts.copy()
    for w in range((int(lengths.max()) + 7) // 8):
        if lengths.min() >= 8 * (w + 1):  # every key has a whole word here
            word = windows[at]
            np.bitwise_xor(h, word, out=h)
            np.multiply(h, MIX, out=h)
            np.bitwise_xor(h, h >> U(31), out=h)
        else:
            active = np.flatnonzero(lengths > 8 * w)
            word = windows[at[active]]
            left = lengths[active] - 8 * w
            short = left < 8
            word[short] &= (U(1) << (U(8) * left[short].astype(U))) - U(1)
            mixed = (h[active] ^ word) * MIX
            h[active] = mixed ^ (mixed >> U(31))
        at += 8
    np.multiply(h, MIX, out=h)
    return h ^ (h >> U(29))


def check_table(table, what: str, path, full: bool = True) -> int:
    """A StringTable the kernels can use safely: every key inside the buffer, every probe ending at an empty
    entry, every entry a key's index. With full, also a correct one: every key found at its own index by the
    kernels' probe (so keys are distinct and each is in the table once). Without (an entry of the private cache,
    which only this user's scorer can have written: trusted as its code is), only a spot check of SPOT keys,
    which catches a table built another way (a changed hash or layout) for ~1 ms instead of ~100 ms at H&M size.
    Returns the number of keys."""
    keys = _vector(table.keys, f"{what}_keys", np.uint8, path)
    starts = _vector(table.starts, f"{what}_starts", np.int64, path)
    ends = _vector(table.ends, f"{what}_ends", np.int64, path)
    slots = _vector(table.table, f"{what}_table", np.int64, path)
    n = len(starts)
    _require(len(ends) == n, path, f"{what}_starts and {what}_ends differ in length")
    _require(not n or (starts.min() >= 0 and (ends >= starts).all() and ends.max() <= len(keys) - 8), path,
             f"a {what} string lies outside {what}_keys (with its 8 bytes of slack)")
    _require(not n or (ends - starts).max() <= MAX_KEY_BYTES, path, f"a {what} is longer than {MAX_KEY_BYTES:,} bytes")
    size = len(slots)
    _require(size > 0 and size & (size - 1) == 0, path, f"{what}_table's size {size:,} is not a power of two")
    _require(size > n, path, f"{what}_table has {size:,} entries for {n:,} {what}s (a probe must end at an empty one)")
    empty = slots == -1
    occupied = np.flatnonzero(~empty)
    _require(len(occupied) == n, path, f"{what}_table does not hold each {what} once ({len(occupied):,} entries for {n:,})")
    index = slots[occupied] & LOW
    _require(not n or ((slots[occupied] >> 32) >= 0).all() and index.max() < n, path, f"{what}_table has an entry that is not a {what}")
    if not full:
        _spot_check(keys, starts, ends, slots, what, path)
        return n
    _require((np.bincount(index, minlength=n) == 1).all(), path, f"{what}_table does not hold each {what} once")
    if not n:
        return 0
    h = hash_keys(keys, starts, ends)
    entry_hash = h[index]  # walked in table order: one gather, the rest sequential
    _require(np.array_equal(slots[occupied] >> 32, (entry_hash >> U(33)).astype(np.int64)), path, f"{what}_table's tags are not the hashes")
    # a key is reachable when no empty entry lies between its home (hash & mask) and where it sits
    previous = np.cumsum(empty, dtype=np.int32)[occupied] - 1  # which empty entry comes last before each key's
    last_empty = np.flatnonzero(empty)[previous] - np.where(previous < 0, size, 0)  # none: the cluster wraps round
    home = (entry_hash & U(size - 1)).astype(np.int64)
    _require((((occupied - home) & (size - 1)) < occupied - last_empty).all(), path, f"a {what} is not reachable in {what}_table")
    _check_distinct(keys, starts, ends, h, what, path)
    return n


SPOT = 64  # keys looked up in a cache entry's table (evenly spaced over the keys)
LONGEST_PROBE = 4096  # entries a spot-checked probe may pass (a table at most 2/3 full has runs of tens)


def _spot_check(keys, starts, ends, slots, what: str, path) -> None:
    """SPOT keys, each found at its own index by the kernels' probe (scorer.kernels.strings._probe, in Python)."""
    n, mask = len(starts), len(slots) - 1
    chosen = np.unique(np.linspace(0, n - 1, min(n, SPOT)).astype(np.int64))
    for i, h in zip(chosen.tolist(), hash_keys(keys, starts[chosen], ends[chosen]).tolist()):
        key, tag, at = keys[starts[i] : ends[i]].tobytes(), h >> 33, h & mask
        for _ in range(LONGEST_PROBE):
            entry = int(slots[at])
            _require(entry != -1, path, f"a {what} is not reachable in {what}_table")
            found = entry & int(LOW)
            if entry >> 32 == tag and keys[starts[found] : ends[found]].tobytes() == key:
                _require(found == i, path, f"two {what}s are the same string")
                break
            at = (at + 1) & mask
        else:
            raise _fail(path, f"a probe in {what}_table passes over {LONGEST_PROBE:,} entries")


def _check_distinct(keys, starts, ends, h, what: str, path) -> None:
    """No two keys with the same bytes (only keys of equal hashes are compared)."""
    ordered = np.sort(h)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if len(repeated):
        same_hash = np.flatnonzero(np.isin(h, repeated))
        distinct = {(h[i], keys[starts[i]:ends[i]].tobytes()) for i in same_hash}
        _require(len(distinct) == len(same_hash), path, f"two {what}s are the same string")
