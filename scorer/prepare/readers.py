"""Session-log readers of `scorer prepare`: OTTO JSONL and Parquet into Events (flat arrays), and the format by name.

Input: OTTO JSONL (one session a line; ``.gz`` allowed), read in 64 MiB blocks cut at newlines and parsed by
a numba kernel on two threads (a fast path for lines shaped like OTTO's, compact or json.dumps-spaced; a general
JSON path for anything else, which also names the problem of a bad line), or Parquet with one event per row
(``session, aid, ts, type``; type a string or 0/1/2) read with ``iter_batches`` (without pre-buffering).
Session and item ids must be integers in 0..2**31-1; in memory an event costs 17 bytes (aid int32, ts int64,
type int8) plus, for Parquet while reading, 4 for its session id (216.7M events: about 3.7 GB + 0.9 GB).

Bad input is refused with a `UsageError` naming the file, the line and column (JSONL) or the row (Parquet) and
the problem, before any output is written: invalid JSON, a truncated last line, a missing field, an unknown
event type, an id that is not a non-negative integer below 2**31, a blank line, the same session on two lines,
a duplicate key. JSONL keys may come in any order, unknown keys are skipped, and ``type`` may also be 0/1/2.
Parquet rows of one session need not be contiguous (they are grouped by a stable sort on session id, which
costs an int64 permutation of all rows; the output is then ordered by session id, else it keeps input order).
"""

from __future__ import annotations

import gzip
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scorer.errors import UsageError
from scorer.file_formats import format_of, is_gzip, not_text, unreadable
from scorer.kernels import door
from scorer.kernels import holdout_layout as K

TYPE_NAMES = ("clicks", "carts", "orders")
MAX_ID = 2**31 - 1
FORMATS = ("jsonl", "parquet")
DEFAULT_CHUNK_BYTES = 64 << 20

_MESSAGES = {
    K.ERR_TRUNCATED: "the line ends before its JSON object is complete",
    K.ERR_SYNTAX: "unexpected character",
    K.ERR_MISSING_SESSION: 'missing field "session"',
    K.ERR_MISSING_EVENTS: 'missing field "events"',
    K.ERR_MISSING_AID: 'an event has no "aid"',
    K.ERR_MISSING_TS: 'an event has no "ts"',
    K.ERR_MISSING_TYPE: 'an event has no "type"',
    K.ERR_NOT_INTEGER: "expected a non-negative integer",
    K.ERR_NEGATIVE: "negative number where a non-negative integer belongs",
    K.ERR_TOO_LARGE: "number too large",
    K.ERR_UNKNOWN_TYPE: "unknown event type",
    K.ERR_BLANK_LINE: "blank line",
    K.ERR_TRAILING: "unexpected text after the end of the session object",
    K.ERR_DUPLICATE_KEY: "duplicate key",
}
_HINTS = {
    K.ERR_TOO_LARGE: f" (session and item ids must be at most {MAX_ID}, ts below 10**18)",
    K.ERR_UNKNOWN_TYPE: ' (expected "clicks", "carts", "orders" or 0, 1, 2)',
}


@dataclass
class Events:
    """A session log in memory: session s has events starts[s]:starts[s+1] of aid/ts/typ."""

    sess_ids: np.ndarray  # int64, one per session
    starts: np.ndarray  # int64, n_sessions + 1
    aid: np.ndarray  # int32
    ts: np.ndarray  # int64
    typ: np.ndarray  # int8 (0 clicks, 1 carts, 2 orders)
    kind: str  # "jsonl" (session s is on line s + 1) or "parquet"
    notes: list = field(default_factory=list)
    regrouped: bool = False  # Parquet rows were sorted by session: row numbers are no longer the file's

    def where(self, s: int) -> str:
        if self.kind == "jsonl":
            return f", line {s + 1}"
        return "" if self.regrouped else f", from row {int(self.starts[s]) + 1}"



def detect_format(path: Path) -> str:
    fmt = format_of(path, through_gzip=True)
    if fmt in FORMATS:
        return fmt
    raise UsageError(f"{path}: cannot tell the input format from the name; expected .jsonl or .parquet")


def _snippet(block: bytes, pos: int) -> str:
    end = pos
    while end < len(block) and end - pos < 40 and block[end : end + 1] not in (b",", b"}", b"]", b"\n"):
        end += 1
    text = block[pos : max(end, pos + 1)].decode("utf-8", "replace").strip()
    return text


def _jsonl_error(path, block: bytes, base_line: int, code: int, pos: int, at_eof: bool) -> UsageError:
    line_start = block.rfind(b"\n", 0, pos) + 1
    line = base_line + block.count(b"\n", 0, line_start)
    column = pos - line_start + 1
    message = _MESSAGES.get(code, f"parse error {code}")
    if code == K.ERR_TRUNCATED and at_eof and block.find(b"\n", line_start) < 0:
        message = "the last line is truncated (the file ends inside a session object)"
    elif code not in (K.ERR_TRUNCATED, K.ERR_BLANK_LINE, K.ERR_MISSING_SESSION, K.ERR_MISSING_EVENTS,
                      K.ERR_MISSING_AID, K.ERR_MISSING_TS, K.ERR_MISSING_TYPE):
        message += f": {_snippet(block, pos)!r}"
    message += _HINTS.get(code, "")
    return UsageError(f"{path}: line {line}, column {column}: {message}")


def _blocks(path: Path, chunk_bytes: int, bar):
    """Yield (block, at end of file): complete lines of the file in ~chunk_bytes pieces, without copying them.

    A line cut by a chunk boundary is completed from the next chunk and yielded on its own (small copy); the
    last line, when the file does not end with a newline, comes with at_eof=True."""
    carry = b""
    done = 0
    with open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if is_gzip(path) else raw
        while True:
            try:
                data = stream.read(chunk_bytes)
            except (OSError, EOFError) as error:
                raise UsageError(f"{path}: cannot read: {error}") from None
            pos = raw.tell()
            bar.update(pos - done)
            done = pos
            if not data:
                if carry:
                    yield carry, True
                return
            start = 0
            if carry:
                newline = data.find(b"\n")
                if newline < 0:
                    carry += data
                    continue
                yield carry + data[: newline + 1], False
                start = newline + 1
            cut = data.rfind(b"\n") + 1
            if cut > start:
                yield memoryview(data)[start:cut], False
                carry = data[cut:]
            else:
                carry = data[start:]


def read_jsonl(path: Path, chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: bool = False) -> Events:
    """Read OTTO session JSONL in byte chunks cut at newlines, parsed by a numba kernel on two threads.

    Every line is one session (blank lines are refused), so a block's first line number is one more than
    the number of sessions before it."""
    from tqdm import tqdm

    size = path.stat().st_size
    plain = not is_gzip(path)
    # With a plain file the sizes are bounded by its length (see _parse_block): allocate once at the bound.
    sessions_bound = size // 26 + 1 if plain else None
    events_bound = size // 24 + 1 if plain else None
    columns = {"sess": _Column(np.int64, sessions_bound), "lens": _Column(np.int64, sessions_bound),
               "aid": _Column(np.int32, events_bound), "ts": _Column(np.int64, events_bound),
               "typ": _Column(np.int8, events_bound)}
    line = 1
    with tqdm(total=size, unit="B", unit_scale=True, desc="reading", disable=not progress, file=sys.stderr) as bar:
        for block, at_eof, parsed, code, pos in ordered_map(_parse_block, _blocks(path, chunk_bytes, bar), ahead=2):
            if code != K.OK:
                raise _jsonl_error(path, bytes(block), line, code, pos, at_eof)
            for column, values in zip(columns.values(), parsed):
                column.append(values)
            line += len(parsed[0])
    sess_ids = columns["sess"].result()
    lens = columns["lens"].result()
    columns = {name: columns[name].result() for name in ("aid", "ts", "typ")}
    starts = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    events = Events(sess_ids, starts, columns["aid"], columns["ts"], columns["typ"], "jsonl")
    _check_unique_sessions(path, events)
    return events


class _Column:
    """Collects chunks into one array. Given an upper bound on the length it allocates that once and returns a
    view: pages never written cost no memory (Linux allocates lazily), and there is no final copy. Without a
    bound (gzip input) it concatenates the chunks at the end, which briefly needs the column twice."""

    def __init__(self, dtype, bound: int | None = None):
        self.dtype = dtype
        self.n = 0
        self.array = np.empty(bound, dtype=dtype) if bound is not None else None
        self.chunks: list = []

    def append(self, values: np.ndarray) -> None:
        if self.array is not None:
            self.array[self.n : self.n + len(values)] = values
        else:
            self.chunks.append(values)
        self.n += len(values)

    def result(self) -> np.ndarray:
        if self.array is not None:
            return self.array[: self.n]
        out = np.concatenate(self.chunks) if self.chunks else np.zeros(0, dtype=self.dtype)
        self.chunks = []
        return out


def _parse_block(item):
    block, at_eof = item
    buf = np.frombuffer(block, dtype=np.uint8)
    lines = len(buf) // 26 + 1  # the shortest line, {"session":0,"events":[]} and its newline, has 26 bytes
    cap = len(buf) // 24 + 1  # the shortest event, {"aid":0,"ts":0,"type":0}, has 25
    sess = np.empty(lines, dtype=np.int64)
    offs = np.empty(lines + 1, dtype=np.int64)
    aid = np.empty(cap, dtype=np.int32)
    ts = np.empty(cap, dtype=np.int64)
    typ = np.empty(cap, dtype=np.int8)
    ns, ne, code, pos = door.kernel("parse_jsonl")(buf, sess, offs, aid, ts, typ, MAX_ID)
    parsed = (sess[:ns].copy(), np.diff(offs[: ns + 1]), aid[:ne].copy(), ts[:ne].copy(), typ[:ne].copy())
    return block, at_eof, parsed, int(code), int(pos)


def _check_unique_sessions(path, events: Events) -> None:
    ids = events.sess_ids
    if len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1])):
        return
    order = np.sort(ids)
    dup = np.flatnonzero(order[1:] == order[:-1])
    if len(dup) == 0:
        return
    first = order[dup[0]]
    places = np.flatnonzero(ids == first)[:2]
    raise UsageError(
        f"{path}: session {int(first)} appears twice ({events.where(int(places[0]))[2:]} and "
        f"{events.where(int(places[1]))[2:]}); each session must be on one line"
    )


def _column_kind(pa, arrow_type) -> str:
    if pa.types.is_integer(arrow_type):
        return "int"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    if pa.types.is_dictionary(arrow_type) and (
        pa.types.is_string(arrow_type.value_type) or pa.types.is_large_string(arrow_type.value_type)
    ):
        return "dict"
    return "other"


def read_parquet(path: Path, progress: bool = False, batch_rows: int = 1 << 22) -> Events:
    """Read Parquet with one event per row (session, aid, ts, type) batch by batch into flat arrays."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from tqdm import tqdm

    try:
        # pre_buffer=False: with pre-buffering, iter_batches keeps the read column chunks of the whole file in
        # Arrow's pool (2.4 GB at 216.7M events); without it memory stays at a few batches, and it is as fast.
        pf = pq.ParquetFile(path, pre_buffer=False)
    except Exception as error:  # pyarrow raises ArrowInvalid/OSError for non-Parquet files
        raise UsageError(f"{path}: not a readable Parquet file ({error})") from None
    schema = pf.schema_arrow
    missing = [c for c in ("session", "aid", "ts", "type") if c not in schema.names]
    if missing:
        raise UsageError(f"{path}: missing column(s) {', '.join(missing)}; expected session, aid, ts, type")
    for name in ("session", "aid", "ts"):
        kind = _column_kind(pa, schema.field(name).type)
        if kind != "int":
            raise UsageError(f"{path}: column {name!r} has type {schema.field(name).type}; it must hold integers")
    type_kind = _column_kind(pa, schema.field("type").type)
    if type_kind == "other":
        raise UsageError(
            f"{path}: column 'type' has type {schema.field('type').type}; expected strings "
            "(clicks/carts/orders) or integers 0/1/2"
        )
    n = pf.metadata.num_rows
    session = np.empty(n, dtype=np.int32)
    aid = np.empty(n, dtype=np.int32)
    ts = np.empty(n, dtype=np.int64)
    typ = np.empty(n, dtype=np.int8)
    names = pa.array(TYPE_NAMES)
    row = 0
    with tqdm(total=n, unit=" events", unit_scale=True, desc="reading", disable=not progress, file=sys.stderr) as bar:
        for batch in pf.iter_batches(batch_size=batch_rows, columns=["session", "aid", "ts", "type"]):
            m = batch.num_rows
            for name, out, limit, copy in (("session", session, MAX_ID, "copy_checked_int32"), ("aid", aid, MAX_ID, "copy_checked_int32"),
                                           ("ts", ts, 2**63 - 1, "copy_checked_int64")):
                col = batch.column(name)
                _check_nulls(path, col, name, row)
                values = col.to_numpy(zero_copy_only=False)
                if values.dtype == np.uint64:
                    limit = min(limit, 2**63 - 1)
                bad = door.kernel(copy)(_as_int64(values), out, row, np.int64(limit))
                if bad >= 0:
                    raise UsageError(
                        f"{path}: row {row + bad + 1}: {name} {int(values[bad])} is out of range (must be 0..{limit})"
                    )
            col = batch.column("type")
            _check_nulls(path, col, "type", row)
            if type_kind == "int":
                values = col.to_numpy(zero_copy_only=False)
                bad = door.kernel("copy_checked_int8")(_as_int64(values), typ, row, np.int64(2))
                if bad >= 0:
                    raise UsageError(
                        f"{path}: row {row + bad + 1}: unknown event type {int(values[bad])} "
                        "(expected 0 clicks, 1 carts, 2 orders, or the names)"
                    )
            else:
                if type_kind == "dict":
                    col = col.dictionary_decode() if hasattr(col, "dictionary_decode") else pc.cast(col, pa.string())
                codes = pc.index_in(col, value_set=names)
                if codes.null_count:
                    bad = int(np.flatnonzero(codes.is_null().to_numpy(zero_copy_only=False))[0])
                    raise UsageError(
                        f"{path}: row {row + bad + 1}: unknown event type {col[bad].as_py()!r} "
                        "(expected clicks, carts or orders)"
                    )
                typ[row : row + m] = codes.to_numpy(zero_copy_only=False)
            row += m
            bar.update(m)
    ids, starts = door.kernel("run_starts")(session)
    notes = []
    order = np.sort(ids)
    if len(order) > 1 and bool(np.any(order[1:] == order[:-1])):
        # Rows of a session are not contiguous: group them by session id (stable, so time order within a
        # session is kept for the ordering check that follows). Costs an int64 permutation of all rows.
        notes.append("rows of some sessions were not contiguous; grouped them by session id (output ordered by session)")
        perm = np.argsort(session, kind="stable")
        session = session[perm]
        aid = aid[perm]
        ts = ts[perm]
        typ = typ[perm]
        del perm
        ids, starts = door.kernel("run_starts")(session)
    del session
    return Events(ids, starts, aid, ts, typ, "parquet", notes, regrouped=bool(notes))


def _as_int64(values: np.ndarray) -> np.ndarray:
    """An integer column as copy_checked takes it: int64 (uint64 values past 2^63 - 1 turn negative, so out of range)."""
    return np.ascontiguousarray(values.astype(np.int64, copy=False))


def _check_nulls(path, col, name, row):
    if col.null_count:
        bad = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise UsageError(f"{path}: row {row + bad + 1}: missing value in column {name!r}")


def read_events(path: Path, fmt: str | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: bool = False) -> Events:
    path = Path(path)
    why = unreadable(path, "session log")
    if why:
        raise UsageError(why)
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        if found := not_text(path, gzip_ok=True):
            raise UsageError(f"{path} is {found}" + (" or give --input-format parquet" if "Parquet" in found else ""))
        return read_jsonl(path, chunk_bytes=chunk_bytes, progress=progress)
    if fmt == "parquet":
        return read_parquet(path, progress=progress)
    raise UsageError(f"unknown input format {fmt!r}; expected one of {', '.join(FORMATS)}")


def ordered_map(func, items, workers: int = 2, ahead: int = 3):
    """Like map() over a thread pool (the kernels release the GIL), in order, at most `ahead` pending."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = []
        for item in items:
            pending.append(pool.submit(func, item))
            if len(pending) > ahead:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()

