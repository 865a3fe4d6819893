"""`scorer prepare`: a validation split with labels from raw OTTO session logs, the way the competition made its test set.

The procedure follows otto-de/recsys-dataset `src/testset.py` + `src/labels.py`:

1. ``max_ts`` is the last timestamp of the log; ``split_ts = max_ts - days`` (in the log's time unit).
2. A session whose first event has ``ts > split_ts`` is a test session (all its events). Every other session
   keeps its events with ``ts < split_ts`` (an event exactly at ``split_ts`` goes nowhere, as in the reference)
   and is a training session if at least two remain, else dropped.
3. Test events whose item never occurs in the (kept) training events are removed; test sessions left with
   fewer than two events are dropped.
4. A test session of n events keeps its first k events, k uniform in 1..n-1; its labels come from events k..n-1:
   clicks = the first later click, carts = all later carts, orders = all later orders (sets); no label of a
   type whose future has none.

Where we differ from the reference, on purpose:

- The cut is drawn with a counter-based hash, ``k = 1 + splitmix64(splitmix64(seed) ^ session) % (n - 1)``,
  instead of Python's ``random.randint`` called in file order, so the split is independent of chunking, file
  order and threads (the distribution is the same, the individual draws are not).
- Item id 0 is an ordinary item: the reference drops a clicks label whose item is 0 (a truthiness test).
- Events of a session that are out of time order are sorted stably by ts first (and counted, and reported);
  the reference assumes order and takes the last event of each line as its latest.
- ``max_ts`` is the largest timestamp of any event (the reference takes each line's last event, the same on
  ordered data).
- Label sets are written sorted ascending (the reference writes Python set order).
- ``--days`` defaults to 7 (OTTO's test week; the reference script's default is 2) and may be fractional.
- A JSONL session with ``"events": []`` is dropped (the reference would crash on it).

Every test session has at least one label (its future is not empty and every event has a type), so the labels
list exactly the test sessions, in both formats.

Bad input is refused with a `UsageError` naming the file, the line and column (JSONL) or the row (Parquet) and
the problem, before any output is written: invalid JSON, a truncated last line, a missing field, an unknown
event type, an id that is not a non-negative integer below 2**31, a blank line, the same session on two lines,
a duplicate key. JSONL keys may come in any order, unknown keys are skipped, and ``type`` may also be 0/1/2.
Parquet rows of one session need not be contiguous (they are grouped by a stable sort on session id, which
costs an int64 permutation of all rows; the output is then ordered by session id, else it keeps input order).

Timestamps are milliseconds (OTTO's JSONL) or seconds (common Parquet conversions): with ``ts_unit="auto"``
the largest timestamp decides, ``>= 1e11`` means milliseconds (1e11 s is the year 5138, 1e11 ms is 1973).
Output keeps the input's timestamps unchanged.

Input: OTTO JSONL (one session a line; ``.gz`` allowed), read in 64 MiB blocks cut at newlines and parsed by
a numba kernel on two threads (a fast path for lines shaped like OTTO's, compact or json.dumps-spaced; a general
JSON path for anything else, which also names the problem of a bad line), or Parquet with one event per row
(``session, aid, ts, type``; type a string or 0/1/2) read with ``iter_batches`` (without pre-buffering).
Session and item ids must be integers in 0..2**31-1; in memory an event costs 17 bytes (aid int32, ts int64,
type int8) plus, for Parquet while reading, 4 for its session id (216.7M events: about 3.7 GB + 0.9 GB).

Output in the chosen format (default: the input's), written under temporary names and renamed at the end:
``train_sessions``, ``test_sessions`` (cut), ``test_labels`` and ``summary.json``.

- JSONL: OTTO's format, with json.dumps spacing like the reference's output
  (``{"session": 42, "events": [{"aid": 0, "ts": 1661200010000, "type": "clicks"}]}``,
  ``{"session": 42, "labels": {"clicks": 1, "carts": [2, 3], "orders": [2, 3]}}``, absent keys for types
  without a label).
- Parquet: sessions one event per row, ``session`` int32, ``aid`` int32, ``ts`` int64, ``type`` a string
  column (dictionary-encoded, int8 indices: pandas reads it as a categorical of clicks/carts/orders);
  labels a long table ``session`` int64, ``type`` string, ``aid`` int64 (one row per label item).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from scorer.errors import UsageError
from scorer.kernels import holdout as K

TYPE_NAMES = ("clicks", "carts", "orders")
MAX_ID = 2**31 - 1
MS_THRESHOLD = 10**11
FORMATS = ("jsonl", "parquet")
OUTPUT_NAMES = ("train_sessions", "test_sessions", "test_labels")
DEFAULT_CHUNK_BYTES = 64 << 20
WRITE_CHUNK_EVENTS = 1 << 21

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


# --- readers ---------------------------------------------------------------------------------------
def detect_format(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
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
        stream = gzip.GzipFile(fileobj=raw) if path.name.lower().endswith(".gz") else raw
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
    plain = not path.name.lower().endswith(".gz")
    # With a plain file the sizes are bounded by its length (see _parse_block): allocate once at the bound.
    sessions_bound = size // 26 + 1 if plain else None
    events_bound = size // 24 + 1 if plain else None
    columns = {"sess": _Column(np.int64, sessions_bound), "lens": _Column(np.int64, sessions_bound),
               "aid": _Column(np.int32, events_bound), "ts": _Column(np.int64, events_bound),
               "typ": _Column(np.int8, events_bound)}
    line = 1
    with tqdm(total=size, unit="B", unit_scale=True, desc="reading", disable=not progress, file=sys.stderr) as bar:
        for block, at_eof, parsed, code, pos in _ordered_map(_parse_block, _blocks(path, chunk_bytes, bar), ahead=2):
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
    ns, ne, code, pos = K.parse_jsonl(buf, sess, offs, aid, ts, typ, MAX_ID)
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
            for name, out, limit in (("session", session, MAX_ID), ("aid", aid, MAX_ID), ("ts", ts, 2**63 - 1)):
                col = batch.column(name)
                _check_nulls(path, col, name, row)
                values = col.to_numpy(zero_copy_only=False)
                if values.dtype == np.uint64:
                    limit = min(limit, 2**63 - 1)
                bad = K.copy_checked(values, out, row, values.dtype.type(min(limit, np.iinfo(values.dtype).max)))
                if bad >= 0:
                    raise UsageError(
                        f"{path}: row {row + bad + 1}: {name} {int(values[bad])} is out of range (must be 0..{limit})"
                    )
            col = batch.column("type")
            _check_nulls(path, col, "type", row)
            if type_kind == "int":
                values = col.to_numpy(zero_copy_only=False)
                bad = K.copy_checked(values, typ, row, values.dtype.type(2))
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
    ids, starts = K.run_starts(session)
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
        ids, starts = K.run_starts(session)
    del session
    return Events(ids, starts, aid, ts, typ, "parquet", notes, regrouped=bool(notes))


def _check_nulls(path, col, name, row):
    if col.null_count:
        bad = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise UsageError(f"{path}: row {row + bad + 1}: missing value in column {name!r}")


def read_events(path: Path, fmt: str | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: bool = False) -> Events:
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        return read_jsonl(path, chunk_bytes=chunk_bytes, progress=progress)
    if fmt == "parquet":
        return read_parquet(path, progress=progress)
    raise UsageError(f"unknown input format {fmt!r}; expected one of {', '.join(FORMATS)}")


# --- the procedure -----------------------------------------------------------------------------------
@dataclass
class Split:
    """The result of the procedure, still in memory."""

    events: Events
    role: np.ndarray  # per input session: 0 dropped, 1 train, 2 test
    keep: np.ndarray  # per input session: events kept (train prefix)
    test_ids: np.ndarray
    test_starts: np.ndarray
    test_aid: np.ndarray
    test_ts: np.ndarray
    test_typ: np.ndarray
    kept: np.ndarray  # per test session: events before the cut
    label_starts: np.ndarray
    label_type: np.ndarray
    label_aid: np.ndarray
    summary: dict


def seed_mix(seed: int) -> int:
    return int(K.splitmix64(np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)))


def detect_ts_unit(max_ts: int) -> str:
    return "ms" if max_ts >= MS_THRESHOLD else "s"


def split_events(events: Events, days: float = 7, seed: int = 42, ts_unit: str = "auto") -> Split:
    """Run the competition's procedure on events in memory (sorting out-of-order sessions in place)."""
    if not days > 0:
        raise UsageError(f"--days must be positive, got {days}")
    notes = list(events.notes)
    n_sessions = len(events.sess_ids)
    n_events = len(events.aid)
    bad = K.unordered_sessions(events.ts, events.starts)
    n_bad = int(bad.sum())
    if n_bad:
        first = int(np.flatnonzero(bad)[0])
        K.sort_sessions_by_time(events.ts, events.aid, events.typ, events.starts, bad)
        notes.append(
            f"{n_bad} session(s) had events out of time order (first: session {int(events.sess_ids[first])}"
            f"{events.where(first)}); sorted their events stably by ts"
        )
    max_ts = int(K.max_ts_of(events.ts)) if n_events else 0
    if ts_unit == "auto":
        unit = detect_ts_unit(max_ts)
        how = f"detected: the largest ts {max_ts} is {'>=' if unit == 'ms' else '<'} 1e11"
    elif ts_unit in ("s", "ms"):
        unit, how = ts_unit, "as given"
    else:
        raise UsageError(f"unknown ts unit {ts_unit!r}; expected auto, s or ms")
    per_day = 86_400_000 if unit == "ms" else 86_400
    split_ts = max_ts - int(round(days * per_day))
    when = datetime.fromtimestamp(split_ts / (1000 if unit == "ms" else 1), tz=timezone.utc)
    notes.insert(0, f"timestamps in {'milliseconds' if unit == 'ms' else 'seconds'} ({how}); "
                    f"split at ts {split_ts} ({when:%Y-%m-%d %H:%M:%S} UTC), {days:g} days before the last event")
    if events.ts.shape[0] and int(events.ts.min()) > split_ts:
        notes.append(f"the log covers less than {days:g} days: every session is a test session and none is left "
                     "for training, so the test set is empty")
    role, keep = K.split_roles(events.ts, events.starts, np.int64(split_ts))
    max_aid = int(events.aid.max()) if n_events else 0
    bits = K.train_item_bitmap(events.aid, events.starts, role, keep, max_aid)
    t_ids, t_starts, t_aid, t_ts, t_typ, removed, dropped = K.filter_test(
        events.sess_ids, events.aid, events.ts, events.typ, events.starts, role, bits
    )
    del bits
    kept = K.cut_points(t_ids, t_starts, np.uint64(seed_mix(seed)))
    l_starts, l_type, l_aid = K.labels_after_cut(t_starts, kept, t_aid, t_typ)

    is_train = role == K.ROLE_TRAIN
    is_test = role == K.ROLE_TEST
    # labels are grouped by session, then by type: a (session, type) pair starts where either changes
    first = np.ones(len(l_type), dtype=bool)
    first[1:] = l_type[1:] != l_type[:-1]
    first[l_starts[:-1][l_starts[:-1] < len(l_type)]] = True
    sessions_per_type = np.bincount(l_type[first], minlength=3)
    items_per_type = np.bincount(l_type, minlength=3)
    per_type_sessions = {name: int(sessions_per_type[code]) for code, name in enumerate(TYPE_NAMES)}
    per_type_items = {name: int(items_per_type[code]) for code, name in enumerate(TYPE_NAMES)}
    del first
    summary = {
        "input": {"sessions": n_sessions, "events": n_events, "sessions_reordered": n_bad},
        "ts_unit": unit,
        "days": days,
        "seed": int(seed),
        "max_ts": max_ts,
        "split_ts": split_ts,
        "train": {
            "sessions": int(is_train.sum()),
            "events": int(keep[is_train].sum()),
            "sessions_dropped_short": int((~is_train & ~is_test).sum()),
        },
        "test": {
            "sessions": int(len(t_ids)),
            "events": int(kept.sum()),
            "events_before_cut": int(len(t_aid)),
            "events_removed_unknown_item": int(removed),
            "sessions_dropped_short": int(dropped),
        },
        "labels": {"sessions": per_type_sessions, "items": per_type_items},
        "notes": notes,
    }
    return Split(events, role, keep, t_ids, t_starts, t_aid, t_ts, t_typ, kept, l_starts, l_type, l_aid, summary)


# --- writers ---------------------------------------------------------------------------------------
def _chunks(lens: np.ndarray, target: int):
    """Split consecutive sessions into runs of about `target` events."""
    if len(lens) == 0:
        return []
    cum = np.cumsum(lens)
    total = int(cum[-1])
    cuts = np.searchsorted(cum, np.arange(target, total, target), side="left") + 1
    bounds = np.unique(np.concatenate([[0], cuts, [len(lens)]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def _ordered_map(func, items, workers: int = 2, ahead: int = 3):
    """Like map() over a thread pool (the kernels release the GIL), in order, at most `ahead` pending."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = []
        for item in items:
            pending.append(pool.submit(func, item))
            if len(pending) > ahead:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()


def _write_sessions_jsonl(path, starts, sel, lens, sess_ids, aid, ts, typ, bar):
    def work(bounds):
        j0, j1 = bounds
        n_ev = int(lens[j0:j1].sum())
        out = np.empty(n_ev * K.EVENT_BYTES + (j1 - j0) * K.SESSION_BYTES, dtype=np.uint8)
        used = K.format_sessions(starts, sel[j0:j1], lens[j0:j1], sess_ids, aid, ts, typ, out)
        return out[:used], n_ev

    with open(path, "wb") as f:
        for data, n_ev in _ordered_map(work, _chunks(lens, WRITE_CHUNK_EVENTS)):
            f.write(data.data)
            bar.update(n_ev)


def _write_sessions_parquet(path, starts, sel, lens, sess_ids, aid, ts, typ, bar):
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = pa.array(TYPE_NAMES)
    schema = pa.schema([
        ("session", pa.int32()), ("aid", pa.int32()), ("ts", pa.int64()), ("type", pa.dictionary(pa.int8(), pa.string())),
    ])

    def work(bounds):
        j0, j1 = bounds
        n_ev = int(lens[j0:j1].sum())
        o_sess = np.empty(n_ev, np.int32)
        o_aid = np.empty(n_ev, np.int32)
        o_ts = np.empty(n_ev, np.int64)
        o_typ = np.empty(n_ev, np.int8)
        K.gather_events(starts, sel[j0:j1], lens[j0:j1], aid, ts, typ, o_sess, o_aid, o_ts, o_typ, sess_ids)
        table = pa.Table.from_arrays(
            [pa.array(o_sess), pa.array(o_aid), pa.array(o_ts), pa.DictionaryArray.from_arrays(pa.array(o_typ), names)],
            schema=schema,
        )
        return table, n_ev

    with pq.ParquetWriter(path, schema, compression="snappy", use_dictionary=["type"]) as writer:
        for table, n_ev in _ordered_map(work, _chunks(lens, 2 * WRITE_CHUNK_EVENTS)):
            writer.write_table(table)
            bar.update(n_ev)
    if len(lens) == 0:  # ParquetWriter with no row group still writes a valid empty file
        pass


def _write_labels_jsonl(path, split: Split):
    n = len(split.test_ids)
    label_counts = np.diff(split.label_starts)
    with open(path, "wb") as f:
        for s0 in range(0, n, 1 << 20):
            s1 = min(n, s0 + (1 << 20))
            size = (s1 - s0) * K.LABELS_LINE_BYTES + int(label_counts[s0:s1].sum()) * K.LABEL_BYTES
            out = np.empty(size, dtype=np.uint8)
            used = K.format_labels(s0, s1, split.test_ids, split.label_starts, split.label_type, split.label_aid, out)
            f.write(out[:used].data)


def _write_labels_parquet(path, split: Split):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    session = np.repeat(split.test_ids.astype(np.int64), np.diff(split.label_starts))
    types = pc.take(pa.array(TYPE_NAMES), pa.array(split.label_type))
    table = pa.table({"session": pa.array(session), "type": types, "aid": pa.array(split.label_aid.astype(np.int64))})
    pq.write_table(table, path, compression="snappy")


def write_split(split: Split, out_dir: Path, fmt: str, progress: bool = False) -> dict[str, Path]:
    """Write the three outputs and summary.json under temporary names, then rename them all.

    On any failure the temporaries are removed and no output of this run is left behind."""
    from tqdm import tqdm

    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = {name: out_dir / f"{name}.{fmt}" for name in OUTPUT_NAMES}
    final["summary"] = out_dir / "summary.json"
    temps = {name: path.with_name(f".{path.name}.tmp-{os.getpid()}") for name, path in final.items()}
    ev = split.events
    train_sel = np.flatnonzero(split.role == K.ROLE_TRAIN)
    train_lens = split.keep[train_sel]
    test_sel = np.arange(len(split.test_ids))
    write_sessions = _write_sessions_jsonl if fmt == "jsonl" else _write_sessions_parquet
    write_labels = _write_labels_jsonl if fmt == "jsonl" else _write_labels_parquet
    total = int(train_lens.sum()) + int(split.kept.sum())
    try:
        with tqdm(total=total, unit=" events", unit_scale=True, desc="writing", disable=not progress, file=sys.stderr) as bar:
            write_sessions(temps["train_sessions"], ev.starts, train_sel, train_lens, ev.sess_ids, ev.aid, ev.ts, ev.typ, bar)
            write_sessions(temps["test_sessions"], split.test_starts, test_sel, split.kept, split.test_ids,
                           split.test_aid, split.test_ts, split.test_typ, bar)
        write_labels(temps["test_labels"], split)
        split.summary["outputs"] = {name: path.name for name, path in final.items()}
        temps["summary"].write_text(json.dumps(split.summary, indent=2) + "\n")
        for name, path in final.items():
            os.replace(temps[name], path)
    except BaseException:
        for path in temps.values():
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        raise
    return final


def prepare(events_path, out_dir, days: float = 7, seed: int = 42, fmt: str | None = None,
            input_format: str | None = None, ts_unit: str = "auto", chunk_bytes: int = DEFAULT_CHUNK_BYTES,
            progress: bool = False) -> dict:
    """Read a session log, split it like the competition and write the outputs; return the summary."""
    events_path = Path(events_path)
    out_dir = Path(out_dir)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if not events_path.is_file():
        raise UsageError(f"{events_path}: no such file")
    in_fmt = input_format or detect_format(events_path)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir}: exists and is not a directory")
    started = time.perf_counter()
    if not days > 0:
        raise UsageError(f"--days must be positive, got {days}")
    if ts_unit not in ("auto", "s", "ms"):
        raise UsageError(f"unknown ts unit {ts_unit!r}; expected auto, s or ms")
    events = read_events(events_path, in_fmt, chunk_bytes=chunk_bytes, progress=progress)
    if len(events.aid) == 0:
        raise UsageError(f"{events_path}: no events")
    read_s = time.perf_counter() - started
    split = split_events(events, days=days, seed=seed, ts_unit=ts_unit)
    split_s = time.perf_counter() - started - read_s
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        split.summary["input"]["path"] = str(events_path)
        split.summary["input"]["format"] = in_fmt
        split.summary["format"] = fmt or in_fmt
        write_split(split, out_dir, fmt or in_fmt, progress=progress)
    except BaseException:
        if created:
            try:
                out_dir.rmdir()
            except OSError:
                pass
        raise
    total = time.perf_counter() - started
    split.summary["seconds"] = {"read": round(read_s, 3), "split": round(split_s, 3),
                                "write": round(total - read_s - split_s, 3), "total": round(total, 3)}
    return split.summary


def format_summary(summary: dict) -> str:
    """A short human-readable table of a summary."""
    lines = [
        f"input   {summary['input']['sessions']:>12,} sessions {summary['input']['events']:>14,} events",
        f"train   {summary['train']['sessions']:>12,} sessions {summary['train']['events']:>14,} events"
        f"   ({summary['train']['sessions_dropped_short']:,} sessions dropped: < 2 events before the split)",
        f"test    {summary['test']['sessions']:>12,} sessions {summary['test']['events']:>14,} events"
        f"   (of {summary['test']['events_before_cut']:,} before the cut; "
        f"{summary['test']['events_removed_unknown_item']:,} events on unknown items removed, "
        f"{summary['test']['sessions_dropped_short']:,} sessions dropped)",
    ]
    for name in TYPE_NAMES:
        lines.append(
            f"labels  {name:<7} {summary['labels']['sessions'][name]:>12,} sessions "
            f"{summary['labels']['items'][name]:>10,} items"
        )
    if "seconds" in summary:
        s = summary["seconds"]
        rate = summary["input"]["events"] / s["total"] if s["total"] > 0 else 0.0
        lines.append(f"time    {s['total']:.1f} s (read {s['read']:.1f}, split {s['split']:.1f}, write {s['write']:.1f}); "
                     f"{rate:,.0f} events/s")
    return "\n".join(lines)
