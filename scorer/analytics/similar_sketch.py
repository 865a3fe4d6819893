"""`scorer similar`'s sketch of one submission: one streaming pass keeps a hashed sample of its sessions.

The sample is the S sessions whose hash h(session) = splitmix64(session id) is smallest (a bottom-S sample), so two
files over the same sessions keep the same sessions whatever the order of their rows, and their rows align by key.
Each kept row (session, type) becomes 32-bit tokens of its first K items:

- order: a hash of the ordered list (equal tokens: identical lists);
- min_j, j < m: the MinHash of the item set, min over items of h_j(item) (P[min_j(A) = min_j(B)] = |A ∩ B| / |A ∪ B|),
  h_j salted by the row's key so that rows sharing popular items draw independent slots;
- rank_j: min_j combined with the rank of its item in the list (equal: the same item at the same rank).

Plain numpy: the lines of a block are found and their `session_type` prefixes read with vectorized gathers; only the
kept lines' labels are parsed. Rows outside the sample are checked for a well-formed `SESSION_TYPE,` prefix only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scorer.errors import SubmissionError
from scorer.wording import printable

TYPES = ("clicks", "carts", "orders")
HEADER = b"session_type,labels"
SLOTS = 4  # m, the MinHash functions per row
DEFAULT_SAMPLE = 2048  # S, sessions kept per file
DEFAULT_K = 20
BASE = (1 << 32) - (1 << 20)  # tokens of real rows are below BASE; the 2^20 values above mark absent rows
EMPTY = BASE - 1  # the tokens of an empty list
MAX_DIGITS = 18  # a session id of up to 18 digits fits an int64
_HEAD = MAX_DIGITS + 2  # bytes of each line read for its session id and the "_" after it
_MIX1, _MIX2, _GOLDEN = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)
_SEEDS = np.array([0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89,
                   0x452821E638D01377, 0xBE5466CF34E90C6C, 0xC0AC29B7C97C50DD, 0x3F84D5B5B5470917], np.uint64)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer of x + golden ratio: a bijection of uint64 whose output bits all depend on every input bit."""
    with np.errstate(over="ignore"):  # a 0-d input computes in scalars, which warn on the wrap-around meant here
        z = np.asarray(x, np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return z ^ (z >> np.uint64(31))


def token(x: np.ndarray) -> np.ndarray:
    """A 64-bit hash as a 32-bit token below BASE (its top 32 bits, folded)."""
    return ((np.asarray(x, np.uint64) >> np.uint64(32)) % np.uint64(BASE)).astype(np.uint32)


@dataclass
class Sketch:
    """A file's bottom-S sample: per kept session (sorted by hash) its id, and per (session, type) the row's tokens."""

    name: str
    rows: int  # data rows read in the whole file
    keys: np.ndarray  # (S,) uint64 session hashes, ascending
    sessions: np.ndarray  # (S,) int64 session ids
    present: np.ndarray  # (S, T) bool: the file has this row
    order: np.ndarray  # (S, T) uint32
    mins: np.ndarray  # (S, T, m) uint32
    ranks: np.ndarray  # (S, T, m) uint32

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.keys, self.sessions, self.present, self.order, self.mins, self.ranks))


def bad_line(name: str, line: int, text: bytes, why: str) -> SubmissionError:
    shown = printable(bytes(text[:60]).decode("utf-8", "replace"))
    return SubmissionError(f"{name} line {line:,} {why} ({shown!r}): it is not a submission row "
                           f"SESSION_TYPE,ITEM ITEM ... (`scorer validate` lists every problem)")


class _Kept:
    """The rows whose session hash is among the S smallest seen so far, pruned per block: the last row of each
    (session, type) only, and of its line the bytes up to its first k items (so a file of repeated rows, or of long
    ones, keeps at most S x types short lines)."""

    def __init__(self, sample: int, k: int):
        self.sample = sample
        self.width = k * (MAX_DIGITS + 2)  # label bytes kept: k items with room for separators
        self.limit = np.uint64(np.iinfo(np.uint64).max)
        self.hashes = np.empty(0, np.uint64)
        self.sessions = np.empty(0, np.int64)
        self.types = np.empty(0, np.int8)
        self.numbers = np.empty(0, np.int64)
        self.label_at = np.empty(0, np.int64)
        self.lines: list[bytes] = []

    def add(self, hashes, sessions, types, numbers, label_at, starts, ends, data: np.ndarray) -> None:
        take = np.flatnonzero(hashes <= self.limit)
        if take.size == 0:
            return
        distinct = np.unique(np.concatenate([self.hashes, hashes[take]]))
        if distinct.size > self.sample:
            self.limit = distinct[self.sample - 1]
        keep_old = self.hashes <= self.limit
        take = take[hashes[take] <= self.limit]
        view = memoryview(data)
        cut = np.minimum(ends[take], starts[take] + label_at[take] + self.width)
        new_lines = [_whole_items(bytes(view[s:e]), e < end) for s, e, end in zip(starts[take].tolist(), cut.tolist(), ends[take].tolist())]
        lines = [line for line, k in zip(self.lines, keep_old.tolist()) if k] + new_lines
        self.hashes = np.concatenate([self.hashes[keep_old], hashes[take]])
        self.sessions = np.concatenate([self.sessions[keep_old], sessions[take]])
        self.types = np.concatenate([self.types[keep_old], types[take]])
        self.numbers = np.concatenate([self.numbers[keep_old], numbers[take]])
        self.label_at = np.concatenate([self.label_at[keep_old], label_at[take]])
        last = self.last_rows()
        if last.size < self.hashes.size:
            self.hashes, self.sessions, self.types = self.hashes[last], self.sessions[last], self.types[last]
            self.numbers, self.label_at = self.numbers[last], self.label_at[last]
            lines = [lines[i] for i in last.tolist()]
        self.lines = lines

    def last_rows(self) -> np.ndarray:
        """Indices of the last row (largest line number) of each (session, type), ordered by (hash, type)."""
        order = np.lexsort((self.numbers, self.types, self.hashes))
        hashes, types = self.hashes[order], self.types[order]
        last = np.ones(order.size, bool)
        last[:-1] = (hashes[1:] != hashes[:-1]) | (types[1:] != types[:-1])
        return order[last]


def _whole_items(line: bytes, cut: bool) -> bytes:
    """A line cut short after its first items ends at its last separator: no item is kept cut in two."""
    return line[: line.rfind(b" ")] if cut and b" " in line else line


def _word(text: bytes) -> tuple[np.uint64, np.uint64, int]:
    """(pattern, mask, length) of a type's word and its comma, as the low bytes of a little-endian uint64."""
    return np.uint64(int.from_bytes(text, "little")), np.uint64((1 << (8 * len(text))) - 1), len(text)


_WORDS = [_word(name.encode() + b",") for name in TYPES]


def _gather(data: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """(len(at), width) bytes of data from each of the ascending positions `at`, zeros past its end (no copy of data:
    the positions whose bytes fit are read through a strided view, the last few from a padded copy of the tail)."""
    fit = int(np.searchsorted(at, data.size - width, side="right")) if data.size >= width else 0
    parts = []
    if fit:
        parts.append(np.lib.stride_tricks.as_strided(data, (data.size - width + 1, width), (1, 1), writeable=False)[at[:fit]])
    if fit < at.size:
        low = int(at[fit])
        tail = np.zeros(data.size - low + width, np.uint8)
        tail[: data.size - low] = data[low:]
        parts.append(np.lib.stride_tricks.as_strided(tail, (tail.size - width + 1, width), (1, 1), writeable=False)[
            np.minimum(at[fit:], data.size) - low])
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros((0, width), np.uint8)


def _prefixes(data: np.ndarray, name: str, first_line: int):
    """Per line of a block of whole lines: (session ids, type codes, label starts, ends, starts, line numbers), blank
    lines left out, and the number of lines; SubmissionError at the first line without a `SESSION_TYPE,` prefix."""
    ends = np.flatnonzero(data == 10)
    if data.size and data[-1] != 10:
        ends = np.append(ends, data.size)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    lines = int(ends.size)
    numbers = first_line + np.arange(lines, dtype=np.int64)
    cut = ends - (data[np.maximum(ends - 1, 0)] == 13) * (ends > starts)  # a line's end before a CR
    filled = cut > starts
    if not filled.all():
        starts, ends, cut, numbers = starts[filled], ends[filled], cut[filled], numbers[filled]
    head = _gather(data, starts, _HEAD) - np.uint8(48)  # (lines, _HEAD): a digit is below 10
    count = np.argmin(head < 10, axis=1)
    ok = (count >= 1) & (count <= MAX_DIGITS) & (head[np.arange(head.shape[0]), count] == 95 - 48)
    sessions = np.zeros(starts.size, np.int64)
    for j in range(int(count[ok].max(initial=0))):
        sessions = np.where(j < count, sessions * 10 + head[:, j], sessions)
    after = starts + count + 1
    word = _gather(data, after, 8).view("<u8")[:, 0]  # the 8 bytes after "_", little-endian
    types = np.full(starts.size, -1, np.int8)
    label = np.zeros(starts.size, np.int64)
    for code, (pattern, mask, size) in enumerate(_WORDS):
        match = (word & mask) == pattern
        types[match] = code
        label[match] = after[match] + size
    ok &= (types >= 0) & (label <= cut)
    if not ok.all():
        bad = int(np.argmin(ok))
        raise bad_line(name, int(numbers[bad]), data[starts[bad]: ends[bad]], "has no SESSION_TYPE, prefix with a type of "
                       + "/".join(TYPES))
    return sessions, types, label, cut, starts, numbers, lines


def _labels(line: bytes, start: int, k: int, name: str, number: int) -> list[int]:
    """The first k items of a kept line's labels."""
    fields = line[start:].rstrip(b"\r").split()
    if len(fields) > k:
        fields = fields[:k]
    if fields and not (b"".join(fields).isdigit() and max(map(len, fields)) <= MAX_DIGITS):
        raise bad_line(name, number, line, "has a label that is not an item id (digits)")
    return list(map(int, fields))


def sketch_blocks(blocks, name: str, sample: int = DEFAULT_SAMPLE, k: int = DEFAULT_K) -> Sketch:
    """Sketch a submission given as blocks of whole lines (bytes-like), the header first."""
    kept = _Kept(sample, k)
    line = 1
    rows = 0
    header_seen = False
    for block in blocks:
        data = np.frombuffer(block, np.uint8)
        if not header_seen:
            end = bytes(block[:4096]).find(b"\n")
            first = bytes(data[: data.size if end < 0 else end]).rstrip(b"\r")
            if first.lstrip(b"\xef\xbb\xbf") != HEADER:
                raise SubmissionError(f"{name} line 1 is {printable(first[:60].decode('utf-8', 'replace'))!r}, not the "
                                      f"header {HEADER.decode()!r}: is it a submission?")
            header_seen = True
            data = data[end + 1:] if end >= 0 else data[:0]
            line = 2
        if data.size == 0:
            continue
        sessions, types, label, cut, starts, numbers, lines = _prefixes(data, name, line)
        line += lines
        rows += sessions.size
        hashes = splitmix64(sessions.view(np.uint64))
        kept.add(hashes, sessions, types, numbers, label - starts, starts, cut, data)
    if not header_seen:
        raise SubmissionError(f"{name} is empty: not even the header {HEADER.decode()!r}")
    if rows == 0:
        raise SubmissionError(f"{name} has a header but no rows: nothing to compare")
    return _finish(kept, name, rows, k)


def sketch_file(path, sample: int = DEFAULT_SAMPLE, k: int = DEFAULT_K) -> Sketch:
    """Sketch a submission file (plain CSV, .gz or .zip) in one pass of blocks of whole lines, under a score's default
    limits (file and decompressed size, time: scorer.spec.competition.Limits), so an archive bomb stops with a sentence."""
    from scorer.engine.reader import BlockReader, Deadline, LimitExceeded
    from scorer.spec.competition import Limits

    limits = Limits()
    reader = BlockReader(path, max_file_bytes=limits.max_file_bytes, max_decompressed_bytes=limits.max_decompressed_bytes,
                         deadline=Deadline(limits.max_seconds))

    def blocks():
        for block in reader:
            yield block.data
            reader.release(block)

    try:
        return sketch_blocks(blocks(), str(path), sample, k)
    except SubmissionError as error:  # the reader's limits and damaged archives: named by the file they are about
        if isinstance(error, LimitExceeded) or str(path) not in str(error):
            raise SubmissionError(f"{path}: {error}") from None
        raise


def sketch_files(paths: list, sample: int = DEFAULT_SAMPLE, k: int = DEFAULT_K, threads: int = 2) -> list[Sketch]:
    """The sketches of `paths`, in their order, `threads` files at a time (numpy's passes release the GIL); memory: one
    block per thread and the sketches. The first file that cannot be read raises its error."""
    if threads <= 1 or len(paths) <= 1:
        return [sketch_file(path, sample, k) for path in paths]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda path: sketch_file(path, sample, k), paths))


def _finish(kept: _Kept, name: str, rows: int, k: int) -> Sketch:
    """The kept rows' tokens: the last row of a (session, type) counts, as in a score."""
    order = kept.last_rows()
    keys, where = np.unique(kept.hashes[order], return_index=True)
    n, t = keys.size, len(TYPES)
    items = np.full((order.size, k), -1, np.int64)
    lengths = np.zeros(order.size, np.int64)
    for row, i in enumerate(order.tolist()):
        got = _labels(kept.lines[i], int(kept.label_at[i]), k, name, int(kept.numbers[i]))
        items[row, : len(got)] = got
        lengths[row] = len(got)
    slot = np.searchsorted(keys, kept.hashes[order])
    kind = kept.types[order].astype(np.int64)
    present = np.zeros((n, t), bool)
    present[slot, kind] = True
    order_tokens = np.zeros((n, t), np.uint32)
    mins = np.zeros((n, t, SLOTS), np.uint32)
    ranks = np.zeros((n, t, SLOTS), np.uint32)
    o, m, r = row_tokens(items, lengths, splitmix64(kept.hashes[order] ^ kind.astype(np.uint64)))
    order_tokens[slot, kind] = o
    mins[slot, kind] = m
    ranks[slot, kind] = r
    return Sketch(name, rows, keys, kept.sessions[order][where], present, order_tokens, mins, ranks)


def row_tokens(items: np.ndarray, lengths: np.ndarray, salts: np.ndarray):
    """(order, mins, ranks) tokens of rows given as an (R, K) int64 matrix padded with -1, their lengths, and a salt per
    row (a hash of its session and type): h_j(item) = splitmix64(item ^ seed_j ^ salt), so the slots of different rows
    are independent even where rows share items (a popular item is not the minimum of every row it is in)."""
    r, k = items.shape
    as_u = items.astype(np.uint64)
    mixed = np.full(r, 0x5851F42D4C957F2D, np.uint64)
    for j in range(k):
        mixed = splitmix64(mixed ^ as_u[:, j])
    order = token(splitmix64(mixed ^ lengths.astype(np.uint64)))
    hashed = splitmix64(as_u[:, :, None] ^ (_SEEDS[None, None, :SLOTS] ^ salts.astype(np.uint64)[:, None, None]))  # (R, K, m)
    hashed[items < 0] = np.uint64(np.iinfo(np.uint64).max)
    at = np.argmin(hashed, axis=1)  # (R, m): the rank of each slot's item
    low = np.take_along_axis(hashed, at[:, None, :], axis=1)[:, 0, :]
    mins = token(low)
    ranks = token(splitmix64(low ^ (at.astype(np.uint64) + np.uint64(1)) * _GOLDEN))
    empty = lengths == 0
    order[empty] = EMPTY
    mins[empty] = EMPTY
    ranks[empty] = EMPTY
    return order, mins, ranks
