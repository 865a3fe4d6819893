"""`scorer similar`'s sketch of one submission: one streaming pass keeps a hashed sample of its sessions.

What a row is comes from the competition's config (Spec): OTTO's shape 'id_type' names a row by session and type in its
id (123_clicks), integer ids and items; the shape 'list' (H&M's customer_id,prediction) names a row by its id alone (one
type), ids and items being text kept as written, so '0108775015' and '108775015' are different items; the shape 'long'
(Airbnb's id,country) makes an id's list of its first K rows, in the order of the file.

The sample is the S sessions whose hash h(session) is smallest (a bottom-S sample), h = splitmix64(session id) for
integer ids and hash_bytes(id) of the id's bytes for text ids, so two files over the same sessions keep the same
sessions whatever the order of their rows, and their rows align by key. Each kept row (session, type) becomes 32-bit
tokens of its first K items (an item: its integer, or hash_bytes of its text):

- order: a hash of the ordered list (equal tokens: identical lists);
- min_j, j < m: the MinHash of the item set, min over items of h_j(item) (P[min_j(A) = min_j(B)] = |A ∩ B| / |A ∪ B|),
  h_j salted by the row's key so that rows sharing popular items draw independent slots;
- rank_j: min_j combined with the rank of its item in the list (equal: the same item at the same rank).

Plain numpy: the lines of a block are found and their `session_type` prefixes (or their ids, hashed 8 bytes at a time)
read with vectorized gathers; only the kept lines' labels are parsed. Rows outside the sample are checked for a
well-formed `SESSION_TYPE,` prefix (or `ID,`) only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scorer.analytics.similar.defaults import DEFAULT_SAMPLE
from scorer.errors import SubmissionError, UsageError
from scorer.spec.competition import Competition, id_literals
from scorer.wording import printable

TYPES = ("clicks", "carts", "orders")  # OTTO's, the default competition's
SLOTS = 4  # m, the MinHash functions per row
DEFAULT_K = 20
BASE = (1 << 32) - (1 << 20)  # tokens of real rows are below BASE; the 2^20 values above mark absent rows
EMPTY = BASE - 1  # the tokens of an empty list
MAX_DIGITS = 19  # a session id or item of up to 19 digits, at most LARGEST: the ids `scorer validate` accepts
LARGEST = (1 << 63) - 1
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


@dataclass(frozen=True)
class Spec:
    """What a sketch reads of a competition's submissions (from its config): the header, the types, how a row is
    named, and whether ids and items are text kept as written (every shape but 'id_type')."""

    competition: Competition
    types: tuple[str, ...]
    pattern: str  # a row's name: "{session}_{type}", or "{session}" alone (one type)
    strings: bool
    words: tuple[bytes, ...] = ()  # id_type: per type, the bytes after the session id: "_clicks,"
    long: bool = False  # shape 'long': one item per row, an id's list is its rows in the order of the file

    @property
    def header(self) -> str:
        return ",".join(self.competition.header)


def spec_of(competition: Competition | None = None) -> Spec:
    """The Spec of a competition (default: OTTO); UsageError for what `scorer similar` cannot compare."""
    if competition is None:
        from scorer.spec.competition import load_competition

        competition = load_competition("otto")
    where = f"competition {competition.name!r} ({competition.source or 'config'})"
    if competition.shape == "value":
        raise UsageError(f"{where}: its submissions hold one number per id, not a list of items; scorer similar "
                         "compares lists of items")
    if competition.shape == "impression" or (competition.shape != "id_type" and not competition.two_columns):
        layout = ("hold the ranks of each impression's candidates" if competition.shape == "impression" else
                  "have a layout of their own (key columns, separators, a rank column or a first line other than the header)")
        raise UsageError(f"{where}: its files {layout}; scorer similar reads an id and its items in two columns under a header")
    if competition.shape != "id_type":
        return Spec(competition, tuple(competition.types), "{session}", True, long=competition.shape == "long")
    prefix, middle, suffix = id_literals(competition.id_pattern)
    if prefix or suffix or not competition.session_first or "{type}" not in competition.id_pattern or middle[:1].isdigit():
        raise UsageError(f"{where}: scorer similar reads ids of the form {{session}}SEPARATOR{{type}} (OTTO's "
                         f"'{{session}}_{{type}}'), not {competition.id_pattern!r}")
    return Spec(competition, tuple(competition.types), competition.id_pattern, False,
                tuple((middle + name + ",").encode() for name in competition.types))


@dataclass
class Sketch:
    """A file's bottom-S sample: per kept session (sorted by hash) its id, and per (session, type) the row's tokens."""

    name: str
    rows: int  # data rows read in the whole file
    keys: np.ndarray  # (S,) uint64 session hashes, ascending
    sessions: np.ndarray  # (S,) int64 session ids; object (str) where ids are text
    present: np.ndarray  # (S, T) bool: the file has this row
    order: np.ndarray  # (S, T) uint32
    mins: np.ndarray  # (S, T, m) uint32
    ranks: np.ndarray  # (S, T, m) uint32
    types: tuple[str, ...] = TYPES
    pattern: str = "{session}_{type}"  # how a row is named (Spec.pattern)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.keys, self.sessions, self.present, self.order, self.mins, self.ranks))

    def row_name(self, session, kind: int) -> str:
        return self.pattern.replace("{session}", str(session)).replace("{type}", self.types[kind])


def bad_line(name: str, line: int, text: bytes, why: str, shape: str = "SESSION_TYPE,ITEM ITEM ...") -> SubmissionError:
    shown = printable(bytes(text[:60]).decode("utf-8", "replace"))
    return SubmissionError(f"{name} line {line:,} {why} ({shown!r}): it is not a submission row "
                           f"{shape} (`scorer validate` lists every problem)")


class _Kept:
    """The rows whose session hash is among the S smallest seen so far, pruned per block: the last row of each
    (session, type) only, and of its line the bytes up to its first k items (so a file of repeated rows, or of long
    ones, keeps at most S x types short lines). With `per_key` (shape 'long', an id's list spread over its rows): the
    first `per_key` rows of each id instead, in the order of the file."""

    def __init__(self, sample: int, k: int, width: int | None = None, per_key: int | None = None):
        self.sample = sample
        self.per_key = per_key
        self.width = k * (MAX_DIGITS + 2) if width is None else width  # label bytes kept: k items with room for separators
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
        last = self.first_rows() if self.per_key else self.last_rows()
        if last.size < self.hashes.size:
            self.hashes, self.sessions, self.types = self.hashes[last], self.sessions[last], self.types[last]
            self.numbers, self.label_at = self.numbers[last], self.label_at[last]
            lines = [lines[i] for i in last.tolist()]
        self.lines = lines

    def first_rows(self) -> np.ndarray:
        """Indices of the first `per_key` rows (smallest line numbers) of each key, ordered by (hash, line number)."""
        order = np.lexsort((self.numbers, self.hashes))
        hashes = self.hashes[order]
        starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]])
        rank = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
        return order[rank < self.per_key]

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


def _lines(data: np.ndarray, first_line: int):
    """Per line of a block of whole lines, blank lines left out: (starts, ends, ends before a CR, line numbers), and the
    number of lines."""
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
    return starts, ends, cut, numbers, lines


def _prefixes(data: np.ndarray, name: str, first_line: int, spec: Spec | None = None):
    """Per line of a block of whole lines: (session ids, type codes, label starts, ends, starts, line numbers), blank
    lines left out, and the number of lines; SubmissionError at the first line without a `SESSION_TYPE,` prefix (the
    competition's separator and types: OTTO's `_clicks,` ... by default)."""
    words = spec.words if spec is not None else tuple(f"_{kind},".encode() for kind in TYPES)
    starts, ends, cut, numbers, lines = _lines(data, first_line)
    head = _gather(data, starts, _HEAD) - np.uint8(48)  # (lines, _HEAD): a digit is below 10
    count = np.argmin(head < 10, axis=1)
    ok = (count >= 1) & (count <= MAX_DIGITS)
    value = np.zeros(starts.size, np.uint64)  # 19 digits fit a uint64
    for j in range(int(count[ok].max(initial=0))):
        value = np.where(j < count, value * np.uint64(10) + head[:, j], value)
    ok &= value <= np.uint64(LARGEST)
    sessions = np.where(ok, value, 0).astype(np.int64)
    after = starts + count
    width = -(-max(map(len, words)) // 8)  # uint64 words of the longest SEPARATOR TYPE ","
    word = _gather(data, after, 8 * width).view("<u8")  # (lines, width), little-endian
    types = np.full(starts.size, -1, np.int8)
    label = np.zeros(starts.size, np.int64)
    for code, text in enumerate(words):
        match = np.ones(starts.size, bool)
        for j in range(-(-len(text) // 8)):
            pattern, mask, _ = _word(text[8 * j: 8 * j + 8])
            match &= (word[:, j] & mask) == pattern
        types[match] = code
        label[match] = after[match] + len(text)
    ok &= (types >= 0) & (label <= cut)
    if not ok.all():
        bad = int(np.argmin(ok))
        raise bad_line(name, int(numbers[bad]), data[starts[bad]: ends[bad]], "has no SESSION_TYPE, prefix with a type of "
                       + "/".join(spec.types if spec is not None else TYPES))
    return sessions, types, label, cut, starts, numbers, lines


def _read8(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """(len(at), 8) bytes of data from each of the positions `at` (any order, each below data.size), zeros past its end;
    no copy of data (the last few positions read a padded copy of its last 8 bytes)."""
    out = np.zeros((at.size, 8), np.uint8)
    fit = at <= data.size - 8
    if data.size >= 8:
        out[fit] = np.lib.stride_tricks.as_strided(data, (data.size - 7, 8), (1, 1), writeable=False)[at[fit]]
    if not fit.all():
        low = max(0, data.size - 8)
        tail = np.zeros(16, np.uint8)
        tail[: data.size - low] = data[low:]
        out[~fit] = np.lib.stride_tricks.as_strided(tail, (9, 8), (1, 1), writeable=False)[at[~fit] - low]
    return out


def hash_bytes(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """uint64 hashes of the byte strings data[starts[i]:ends[i]]: their length, then 8 bytes at a time (zero-padded)
    folded through splitmix64. Work in proportion to the bytes hashed: pass j reads only the strings longer than 8 j
    (sorted by length once), so one long field does not make every line's pass long."""
    lengths = (ends - starts).astype(np.int64)
    hashes = splitmix64(lengths.astype(np.uint64) ^ np.uint64(0x6A09E667F3BCC909))
    if lengths.size == 0:
        return hashes
    by_length = np.argsort(-lengths, kind="stable")
    descending = -lengths[by_length]
    columns = np.arange(8)
    for j in range(-(-int(lengths.max()) // 8)):
        active = by_length[: int(np.searchsorted(descending, -8 * j, side="left"))]
        at = starts[active] + 8 * j
        chunk = _read8(data, at) * (columns[None, :] < (ends[active] - at)[:, None])  # bytes past the string's end: zero
        hashes[active] = splitmix64(hashes[active] ^ chunk.view("<u8")[:, 0])
    return hashes


def _ids(data: np.ndarray, name: str, first_line: int, spec: Spec):
    """Per line of a block of whole lines of a text-id shape (ID,ITEM ITEM ...): (id hashes, type codes (0), label
    starts, ends, starts, line numbers), blank lines left out, and the number of lines; SubmissionError at the first
    line without an `ID,` prefix."""
    starts, ends, cut, numbers, lines = _lines(data, first_line)
    commas = np.flatnonzero(data == 44)
    at = np.searchsorted(commas, starts)
    comma = commas[np.minimum(at, max(commas.size - 1, 0))] if commas.size else np.full(starts.size, -1, np.int64)
    ok = (at < commas.size) & (comma > starts) & (comma < cut)
    if not ok.all():
        bad = int(np.argmin(ok))
        id_name = spec.competition.header[0]
        raise bad_line(name, int(numbers[bad]), data[starts[bad]: ends[bad]], f"has no {id_name} before a comma",
                       f"{id_name.upper()},ITEM ITEM ...")
    return hash_bytes(data, starts, comma), np.zeros(starts.size, np.int8), comma + 1, cut, starts, numbers, lines


def _labels(line: bytes, start: int, k: int, name: str, number: int) -> list[int]:
    """The first k items of a kept line's labels."""
    fields = line[start:].rstrip(b"\r").split()
    if len(fields) > k:
        fields = fields[:k]
    items = list(map(int, fields)) if fields and b"".join(fields).isdigit() and max(map(len, fields)) <= MAX_DIGITS else None
    if fields and (items is None or max(items) > LARGEST):
        raise bad_line(name, number, line, f"has a label that is not an item id (digits, at most {LARGEST})")
    return items or []


def _text_labels(line: bytes, start: int, k: int, name: str, number: int, spec: Spec) -> list[bytes]:
    """The first k items of a kept line of a text-id shape, each as written (separated by spaces)."""
    field = line[start:].rstrip(b"\r")
    if b"," in field or b'"' in field:
        id_name = spec.competition.header[0]
        raise bad_line(name, number, line, "has a third field or a quote after its id", f"{id_name.upper()},ITEM ITEM ...")
    return [item for item in field.split(b" ") if item][:k]


def _long_item(line: bytes, start: int, name: str, number: int, spec: Spec) -> bytes:
    """The one item of a kept line of shape 'long' (ID,ITEM), as written."""
    item = line[start:].rstrip(b"\r")
    if not item or b"," in item or b'"' in item or b" " in item:
        id_name = spec.competition.header[0]
        raise bad_line(name, number, line, "has no single item after its id", f"{id_name.upper()},ITEM")
    return item


def sketch_blocks(blocks, name: str, sample: int = DEFAULT_SAMPLE, k: int = DEFAULT_K, spec: Spec | None = None) -> Sketch:
    """Sketch a submission given as blocks of whole lines (bytes-like), the header first: line 1 not the competition's
    header raises the sentence `scorer validate` gives (scorer.engine.header)."""
    from scorer.engine.header import BOM, header_problem

    spec = spec or spec_of()
    kept = _Kept(sample, k, spec.competition.limits.max_line_bytes if spec.strings else None, k if spec.long else None)
    line = 1
    rows = 0
    header_seen = False
    for block in blocks:
        data = np.frombuffer(block, np.uint8)
        if not header_seen:
            end = bytes(block[:4096]).find(b"\n")
            first = bytes(data[: data.size if end < 0 else end]).rstrip(b"\r")
            problem = header_problem(first.removeprefix(BOM), spec.competition)
            if problem is not None:
                raise SubmissionError(f"{name} line 1: {problem[0]}")
            header_seen = True
            data = data[end + 1:] if end >= 0 else data[:0]
            line = 2
        if data.size == 0:
            continue
        if spec.strings:
            hashes, types, label, cut, starts, numbers, lines = _ids(data, name, line, spec)
            sessions = np.zeros(hashes.size, np.int64)  # text ids: read from the kept lines at the end
        else:
            sessions, types, label, cut, starts, numbers, lines = _prefixes(data, name, line, spec)
            hashes = splitmix64(sessions.view(np.uint64))
        line += lines
        rows += sessions.size
        kept.add(hashes, sessions, types, numbers, label - starts, starts, cut, data)
    if not header_seen:
        raise SubmissionError(f"{name} is empty: not even the header {spec.header!r}")
    if rows == 0:
        raise SubmissionError(f"{name} has a header but no rows: nothing to compare")
    return _finish(kept, name, rows, k, spec)


def sketch_file(path, sample: int = DEFAULT_SAMPLE, k: int = DEFAULT_K, spec: Spec | None = None) -> Sketch:
    """Sketch a submission file (plain CSV, .gz or .zip) in one pass of blocks of whole lines, under the competition's
    limits (file and decompressed size, time: scorer.spec.competition.Limits), so an archive bomb stops with a sentence."""
    from scorer.engine.reader import BlockReader, Deadline, LimitExceeded

    spec = spec or spec_of()
    limits = spec.competition.limits
    reader = BlockReader(path, max_file_bytes=limits.max_file_bytes, max_decompressed_bytes=limits.max_decompressed_bytes,
                         deadline=Deadline(limits.max_seconds))

    def blocks():
        for block in reader:
            yield block.data
            reader.release(block)

    try:
        return sketch_blocks(blocks(), str(path), sample, k, spec)
    except SubmissionError as error:  # the reader's limits and damaged archives: named by the file they are about
        if isinstance(error, LimitExceeded) or str(path) not in str(error):
            raise SubmissionError(f"{path}: {error}") from None
        raise


def sketch_files(paths: list, sample: int = DEFAULT_SAMPLE, k: int = DEFAULT_K, threads: int = 2,
                 spec: Spec | None = None) -> list[Sketch]:
    """The sketches of `paths`, in their order, `threads` files at a time (numpy's passes release the GIL); memory: one
    block per thread and the sketches. The first file that cannot be read raises its error."""
    spec = spec or spec_of()
    if threads <= 1 or len(paths) <= 1:
        return [sketch_file(path, sample, k, spec) for path in paths]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda path: sketch_file(path, sample, k, spec), paths))


PAD = np.uint64(np.iinfo(np.uint64).max)  # the item in a list's unused places (an int64 -1)


def _finish(kept: _Kept, name: str, rows: int, k: int, spec: Spec) -> Sketch:
    """The kept rows' tokens: the last row of a (session, type) counts, as in a score (shape 'long': an id's first k
    rows, in the order of the file, are its list)."""
    order = kept.first_rows() if spec.long else kept.last_rows()
    keys, where = np.unique(kept.hashes[order], return_index=True)
    n, t = keys.size, len(spec.types)
    if spec.long:  # one row of the sketch per key: its rows' items at ranks 0, 1, ...
        counts = np.diff(np.r_[where, order.size])
        texts = [[_long_item(kept.lines[i], int(kept.label_at[i]), name, int(kept.numbers[i]), spec)] for i in order.tolist()]
        place = (np.repeat(np.arange(n), counts), np.arange(order.size) - np.repeat(where, counts))
        rows_at, kind, lengths = order[where], np.zeros(n, np.int64), counts.astype(np.int64)
    else:
        rows_at, kind = order, kept.types[order].astype(np.int64)
        lengths = np.zeros(order.size, np.int64)
    items = np.full((rows_at.size, k), PAD, np.uint64)
    if spec.strings:
        if not spec.long:
            texts = [_text_labels(kept.lines[i], int(kept.label_at[i]), k, name, int(kept.numbers[i]), spec) for i in order.tolist()]
            lengths[:] = [len(got) for got in texts]
            place = np.nonzero(np.arange(k)[None, :] < lengths[:, None])  # row by row, in order
        joined = np.frombuffer(b"".join(item for got in texts for item in got), np.uint8)
        sizes = np.array([len(item) for got in texts for item in got], np.int64)
        ends = np.cumsum(sizes)
        items[place] = hash_bytes(joined, ends - sizes, ends)
        sessions = np.array([kept.lines[i][: int(kept.label_at[i]) - 1].decode("utf-8", "replace")
                             for i in order[where].tolist()], dtype=object)
    else:
        for row, i in enumerate(order.tolist()):
            got = _labels(kept.lines[i], int(kept.label_at[i]), k, name, int(kept.numbers[i]))
            items[row, : len(got)] = got
            lengths[row] = len(got)
        sessions = kept.sessions[order][where]
    slot = np.searchsorted(keys, kept.hashes[rows_at])
    present = np.zeros((n, t), bool)
    present[slot, kind] = True
    order_tokens = np.zeros((n, t), np.uint32)
    mins = np.zeros((n, t, SLOTS), np.uint32)
    ranks = np.zeros((n, t, SLOTS), np.uint32)
    o, m, r = row_tokens(items, lengths, splitmix64(kept.hashes[rows_at] ^ kind.astype(np.uint64)))
    order_tokens[slot, kind] = o
    mins[slot, kind] = m
    ranks[slot, kind] = r
    return Sketch(name, rows, keys, sessions, present, order_tokens, mins, ranks, spec.types, spec.pattern)


def row_tokens(items: np.ndarray, lengths: np.ndarray, salts: np.ndarray):
    """(order, mins, ranks) tokens of rows given as an (R, K) uint64 matrix of item ids or hashes padded with PAD (an
    int64 matrix padded with -1 reads the same), their lengths, and a salt per row (a hash of its session and type):
    h_j(item) = splitmix64(item ^ seed_j ^ salt), so the slots of different rows are independent even where rows share
    items (a popular item is not the minimum of every row it is in)."""
    r, k = items.shape
    as_u = items.astype(np.uint64)
    mixed = np.full(r, 0x5851F42D4C957F2D, np.uint64)
    for j in range(k):
        mixed = splitmix64(mixed ^ as_u[:, j])
    order = token(splitmix64(mixed ^ lengths.astype(np.uint64)))
    hashed = splitmix64(as_u[:, :, None] ^ (_SEEDS[None, None, :SLOTS] ^ salts.astype(np.uint64)[:, None, None]))  # (R, K, m)
    hashed[np.arange(k)[None, :] >= lengths[:, None]] = PAD
    at = np.argmin(hashed, axis=1)  # (R, m): the rank of each slot's item
    low = np.take_along_axis(hashed, at[:, None, :], axis=1)[:, 0, :]
    mins = token(low)
    ranks = token(splitmix64(low ^ (at.astype(np.uint64) + np.uint64(1)) * _GOLDEN))
    empty = lengths == 0
    order[empty] = EMPTY
    mins[empty] = EMPTY
    ranks[empty] = EMPTY
    return order, mins, ranks
