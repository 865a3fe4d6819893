"""Ground truth with integer ids: the Truth model and its readers (OTTO JSONL, long Parquet/CSV).

A Truth holds the sorted session ids and, for every (session, type) slot
``slot = session_index * n_types + type_index``, a CSR row of sorted, distinct item ids:
``items[indptr[slot]:indptr[slot + 1]]``. The compiled form is read by scorer.truth.compiled, cached by
scorer.truth.cache, and a truth file is loaded through both by scorer.truth.load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np

from scorer.errors import TruthError
from scorer.file_formats import is_parquet
from scorer.handed_back import nests_deeper
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.truth.npz import CACHE_VERSION, write_npz

USAGES = ("public", "private", "ignored")  # Truth.usage codes 0, 1, 2: Kaggle's Usage column (any case)
MAX_LABELS = int(np.iinfo(INDPTR_DTYPE).max)  # the most labels a truth's offsets hold: a truth of more is refused


@dataclass(frozen=True, eq=False)
class Truth:
    types: tuple[str, ...]
    sessions: np.ndarray  # int64, sorted, distinct
    indptr: np.ndarray  # INDPTR_DTYPE (int32), len(sessions) * len(types) + 1
    items: np.ndarray  # int64, sorted within each slot
    source: str = ""
    usage: np.ndarray | None = None  # int8 per session (USAGES codes), None when the truth has no Usage

    @property
    def n_sessions(self) -> int:
        return len(self.sessions)

    @cached_property
    def sizes(self) -> np.ndarray:
        """|truth| per slot (int64), shaped (n_sessions, n_types)."""
        return np.subtract(self.indptr[1:], self.indptr[:-1], dtype=np.int64).reshape(self.n_sessions, len(self.types))

    def type_sizes(self, t: int) -> np.ndarray:
        """|truth| of type t per session, without making the whole sizes table; in the offsets' own integer type
        (INDPTR_DTYPE, int32: no cast, half the bytes to count and compare; numpy sums a narrower integer in int64)."""
        n_types = len(self.types)
        return np.subtract(self.indptr[t + 1 :: n_types], self.indptr[t : -1 : n_types])

    @cached_property
    def lookup(self) -> tuple[int, np.ndarray]:
        """(base, table): table[id - base] is the session index or -1, when the ids are dense enough.

        An empty table means the kernel falls back to binary search on ``sessions``.
        """
        if self.n_sessions == 0:
            return 0, np.empty(0, np.int32)
        base, span = int(self.sessions[0]), int(self.sessions[-1] - self.sessions[0]) + 1
        if span > 4 * self.n_sessions + 1024 or self.n_sessions >= 2**31:
            return base, np.empty(0, np.int32)
        table = np.full(span, -1, np.int32)
        table[self.sessions - base] = np.arange(self.n_sessions, dtype=np.int32)
        return base, table

    def labels(self, session: int, type_name: str) -> list[int]:
        """The truth items of one session and type (for tests and messages)."""
        index = int(np.searchsorted(self.sessions, session))
        if index == self.n_sessions or self.sessions[index] != session:
            raise KeyError(session)
        slot = index * len(self.types) + self.types.index(type_name)
        return self.items[self.indptr[slot] : self.indptr[slot + 1]].tolist()

    def save(self, path: str | Path, folder: int | None = None) -> None:
        """Write the compiled form (an uncompressed .npz, the session lookup table included) atomically
        (with folder, a private folder's descriptor: the file `path` names in it, see scorer.truth.npz.write_npz)."""
        extra = {} if self.usage is None else {"usage": self.usage}
        base, table = self.lookup
        write_npz(path, {"version": CACHE_VERSION, "types": list(self.types), "source": self.source, "lookup_base": base},
                  folder=folder, sessions=self.sessions, indptr=self.indptr, items=self.items, lookup_table=table, **extra)


def from_long(session: np.ndarray, type_index: np.ndarray, item: np.ndarray, types: tuple[str, ...], source: str = "") -> Truth:
    """Compile long arrays (one label per entry; item < 0 marks a session with no label) into a Truth."""
    session = np.asarray(session, np.int64)
    type_index = np.asarray(type_index, np.int64)
    item = np.asarray(item, np.int64)
    sessions = _unique(session, kind="stable")  # often a few sorted runs (rows, then labels)
    labelled = item >= 0
    n_types = len(types)
    slot = np.searchsorted(sessions, session[labelled]) * n_types + type_index[labelled]
    labels = item[labelled]
    span = int(labels.max()) + 1 if len(labels) else 1
    if len(sessions) * n_types <= (2**63 - 1) // span:  # one int64 key per label: a flat sort (much faster than axis=1)
        keys = _unique(slot * span + labels)
        label_slot, label_item = keys // span, keys % span
    else:
        label_slot, label_item = np.unique(np.stack([slot, labels]), axis=1)
    indptr = offsets(np.bincount(label_slot, minlength=len(sessions) * n_types), source)
    return Truth(tuple(types), sessions, indptr, np.ascontiguousarray(label_item, dtype=np.int64), source)


def check_label_count(n_labels: int, source: str) -> None:
    """Refuse a truth of more labels than its offsets (INDPTR_DTYPE) hold."""
    if n_labels > MAX_LABELS:
        raise TruthError(f"{f'truth {source}' if source else 'the truth'} has {n_labels:,} labels, more than the {MAX_LABELS:,} this "
                         "scorer holds")


def offsets(counts: np.ndarray, source: str) -> np.ndarray:
    """A truth's CSR offsets (INDPTR_DTYPE) over rows of these sizes; a truth of more than MAX_LABELS labels is refused."""
    check_label_count(int(counts.sum()), source)
    indptr = np.zeros(len(counts) + 1, INDPTR_DTYPE)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def _unique(values: np.ndarray, kind: Literal["quicksort", "stable"] = "quicksort") -> np.ndarray:
    """Sorted distinct values (no sort when they come sorted; kind="stable" merges sorted runs in linear time)."""
    if len(values) > 1 and not np.all(values[1:] >= values[:-1]):
        values = np.sort(values, kind=kind)
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if len(values) else values


def attach_usage(truth: Truth, sessions: np.ndarray, values, where: str = "line", numbers=None) -> Truth:
    """The truth with a Usage code per session; values[i] ("Public", "Private" or "Ignored") belongs to sessions[i].

    Every entry of a session must agree; a bad value or a disagreement raises TruthError naming where.
    """
    code_of = {name: code for code, name in enumerate(USAGES)}
    codes = np.array([code_of.get(value.strip().lower(), -1) if isinstance(value, str) else -1 for value in values], np.int8)
    numbers = np.arange(1, len(codes) + 1) if numbers is None else np.asarray(numbers)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise TruthError(f"truth file {truth.source}, {where} {numbers[i]}: Usage {values[i]!r} is not Public, Private or Ignored")
    index = np.searchsorted(truth.sessions, np.asarray(sessions, np.int64))
    usage = np.full(truth.n_sessions, -1, np.int8)
    usage[index] = codes
    clash = usage[index] != codes
    if clash.any():
        i = int(np.flatnonzero(clash)[0])
        raise TruthError(f"truth file {truth.source}, {where} {numbers[i]}: session {int(sessions[i])} has Usage {values[i]!r} here and "
                         f"{USAGES[usage[index[i]]].title()!r} elsewhere")
    if (usage < 0).any():
        raise TruthError(f"truth file {truth.source}: session {int(truth.sessions[np.flatnonzero(usage < 0)[0]])} has no Usage")
    return replace(truth, usage=usage)


def _bad(source, line, message) -> TruthError:
    return TruthError(f"truth file {source}, line {line}: {message}")


def _check_id(value, what, source, line) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(source, line, f"{what} must be an integer, got {json.dumps(value)}")
    if not 0 <= value < 2**63:
        raise _bad(source, line, f"{what} {value} is out of range (0 to 2^63-1)")
    return value


SMALL_JSONL_BYTES = 4 << 20  # below this the line reader is faster than importing pyarrow (about 1 s) and reading


def read_jsonl(path: Path, types: tuple[str, ...]) -> Truth:
    """OTTO labels: one {"session": s, "labels": {"clicks": a, "carts": [...], ...}} per line.

    A small file is read line by line with the json module; a large one by pyarrow in a few seconds. Both give the
    same truth or the same error for the same bytes: whatever pyarrow cannot take, or would read otherwise than the
    line reader, is read again line by line, which names the line at fault.
    """
    if path.stat().st_size <= SMALL_JSONL_BYTES:
        return _read_jsonl_lines(path, types)
    return _read_jsonl_large(path, types)


def _read_jsonl_large(path: Path, types: tuple[str, ...]) -> Truth:
    lines = _lines_without_null(path)
    fast = None if lines is None else _read_jsonl_arrow(path, types, lines)
    return fast if fast is not None else _read_jsonl_lines(path, types)


def _lines_without_null(path: Path, chunk_bytes: int = 16 << 20) -> int | None:
    """The file's lines as the line reader iterates them (a last line without its newline counts), or None when a
    `null` is written anywhere: pyarrow reads a null as an absent key, which the line reader refuses."""
    count, tail = 0, b""
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            if b"null" in tail + chunk:  # tail: a word cut at the chunk's start
                return None
            count += chunk.count(b"\n")
            tail = chunk[-3:]
    return count + (tail[-1:] not in (b"", b"\n"))


def _read_jsonl_arrow(path: Path, types: tuple[str, ...], lines: int) -> Truth | None:
    """The truth as pyarrow reads it, or None where the line reader must decide: pyarrow cannot read it, it breaks a
    rule, or its rows are not the file's lines (pyarrow reads two objects on a line, or one over several lines, and
    skips blank lines; a blank line is then read again, line by line, to the same truth)."""
    import pyarrow as pa
    import pyarrow.json as pj

    if nests_deeper(path):  # pyarrow's reader would crash the process; the line reader names the line
        return None
    try:
        table = pj.read_json(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None
    if table.num_rows != lines:
        return None
    try:
        return _truth_of_table(table, types, path)
    except UnicodeDecodeError:  # pyarrow keeps a string's bytes unchecked; the line reader names the line
        return None


def _truth_of_table(table, types: tuple[str, ...], path: Path) -> Truth | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = table.schema
    if set(schema.names) - {"session", "labels", "usage"} or "session" not in schema.names or not pa.types.is_integer(schema.field("session").type):
        return None
    session = table.column("session").combine_chunks()
    if session.null_count:
        return None
    sessions_np = session.to_numpy().astype(np.int64)
    if len(sessions_np) and (sessions_np.min() < 0 or len(np.unique(sessions_np)) != len(sessions_np)):
        return None
    parts = [(sessions_np, np.zeros(len(sessions_np), np.int64), np.full(len(sessions_np), -1, np.int64))]
    if "labels" in schema.names:
        labels_type = schema.field("labels").type
        if not pa.types.is_struct(labels_type):
            return None
        labels = table.column("labels").combine_chunks()
        for field in labels_type:
            if field.name not in types:
                return None
            column = labels.field(field.name)
            if pa.types.is_integer(field.type):
                present = column.is_valid().to_numpy(zero_copy_only=False)
                owners, values = np.flatnonzero(present), column.drop_null().to_numpy().astype(np.int64)
            elif pa.types.is_list(field.type) and pa.types.is_integer(field.type.value_type):
                flat = pc.list_flatten(column)
                if flat.null_count:
                    return None
                owners, values = pc.list_parent_indices(column).to_numpy(), flat.to_numpy().astype(np.int64)
            else:
                return None
            if len(values) and values.min() < 0:
                return None
            parts.append((sessions_np[owners], np.full(len(values), types.index(field.name), np.int64), values))
    session_all, type_all, item_all = (np.concatenate(column) for column in zip(*parts))
    truth = from_long(session_all, type_all, item_all, types, str(path))
    if "usage" in schema.names:
        usage = table.column("usage")
        if not pa.types.is_string(usage.type) or usage.null_count:
            return None  # the line reader names the line
        try:
            truth = attach_usage(truth, sessions_np, usage.to_pylist())
        except TruthError:
            return None
    return truth


def _read_jsonl_lines(path: Path, types: tuple[str, ...]) -> Truth:
    type_of = {name: index for index, name in enumerate(types)}
    sessions, kinds, items = [], [], []
    usage_sessions: list[int] = []
    usage_values: list[object] = []
    usage_lines: list[int] = []
    seen_line: dict[int, int] = {}
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as error:
                raise _bad(path, line_number, f"not valid JSON ({error})") from None
            except RecursionError:
                raise _bad(path, line_number, "not valid JSON (nested too deeply)") from None
            if not isinstance(record, dict) or "session" not in record:
                raise _bad(path, line_number, 'expected an object with a "session" key')
            session = _check_id(record["session"], "session", path, line_number)
            if session in seen_line:
                raise _bad(path, line_number, f"session {session} already appeared on line {seen_line[session]}")
            seen_line[session] = line_number
            labels = record.get("labels", {})
            if not isinstance(labels, dict):
                raise _bad(path, line_number, f'"labels" must be an object, got {json.dumps(labels)[:60]}')
            sessions.append(session)
            kinds.append(0)
            items.append(-1)
            if "usage" in record or usage_values:
                usage_sessions.append(session)
                usage_values.append(record.get("usage"))
                usage_lines.append(line_number)
            for name, value in labels.items():
                if name not in type_of:
                    raise _bad(path, line_number, f"unknown type {name!r} (the config's types: {', '.join(types)})")
                for item in value if isinstance(value, list) else [value]:
                    sessions.append(session)
                    kinds.append(type_of[name])
                    items.append(_check_id(item, f"{name} item", path, line_number))
    truth = from_long(np.array(sessions, np.int64), np.array(kinds, np.int64), np.array(items, np.int64), types, str(path))
    if usage_values:
        if len(usage_values) < len(seen_line):
            first = min(line for session, line in seen_line.items() if line < usage_lines[0])
            raise _bad(path, first, 'no "usage" key, while later lines have one (give every line a usage or none)')
        truth = attach_usage(truth, np.array(usage_sessions, np.int64), usage_values, "line", usage_lines)
    return truth


def read_table(path: Path, types: tuple[str, ...]) -> Truth:
    """A long table with columns session, type, aid (or item): Parquet or CSV.

    Ids are read as nullable integers (never through float64, which would round ids above 2^53 when a cell is empty);
    a type is a name of the config's types or its index among them.
    """
    import pandas as pd

    integers = {"session": "Int64", "aid": "Int64", "item": "Int64"}
    try:
        if is_parquet(path):
            frame = pd.read_parquet(path, dtype_backend="numpy_nullable")
        else:
            frame = pd.read_csv(path, dtype={"type": "string", **integers}, keep_default_na=True)
    except OverflowError:
        raise TruthError(f"cannot read truth file {path}: an id is out of range (0 to 2^63-1)") from None
    except Exception as error:  # pandas/pyarrow raise many kinds; the message is what matters
        raise TruthError(f"cannot read truth file {path}: {error}") from None
    item_column = "aid" if "aid" in frame.columns else "item"
    missing = {"session", "type", item_column} - set(frame.columns)
    if missing:
        raise TruthError(f"truth file {path}: missing column(s) {', '.join(sorted(missing))}; expected session, type, aid")
    labelled = (frame[item_column].notna() & frame["type"].notna()).to_numpy(np.bool_)
    codes = _type_codes(frame["type"], labelled, types, path)
    if frame["session"].isna().any():
        raise TruthError(f"truth file {path}, row {int(np.flatnonzero(frame['session'].isna())[0]) + 1}: no session")
    for column in ("session", item_column):
        values = frame[column][labelled] if column == item_column else frame[column]
        integral = pd.api.types.is_integer_dtype(values.dtype) or (
            pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype) and (values % 1 == 0).all())
        if not (values.empty or integral):
            raise TruthError(f"truth file {path}: column {column!r} must hold integers")
    session = frame["session"].to_numpy(np.int64)
    item = np.where(labelled, frame[item_column].fillna(-1).to_numpy(np.int64), -1)
    if (session < 0).any() or (item[labelled] < 0).any():
        raise TruthError(f"truth file {path}: negative session or item id")
    truth = from_long(session, np.where(labelled, codes, 0), item, types, str(path))
    usage_column = next((name for name in frame.columns if str(name).lower() == "usage"), None)
    if usage_column is not None:
        values = [value if isinstance(value, str) else None for value in frame[usage_column].tolist()]
        truth = attach_usage(truth, session, values, "row")
    return truth


def _type_codes(type_column, labelled: np.ndarray, types: tuple[str, ...], path: Path) -> np.ndarray:
    """Each row's type index: the column holds the config's type names or their indices (as numbers or as text)."""
    import pandas as pd

    if pd.api.types.is_integer_dtype(type_column.dtype) or pd.api.types.is_float_dtype(type_column.dtype):
        codes = type_column.fillna(0).to_numpy(np.float64)
        bad = labelled & ((codes < 0) | (codes >= len(types)) | (codes % 1 != 0))
    else:
        names = type_column.astype("string")
        by_name = {name: index for index, name in enumerate(types)}
        by_name.update({str(index): index for index in range(len(types)) if str(index) not in by_name})
        codes = names.map(by_name).fillna(-1).to_numpy(np.float64)
        bad = labelled & (codes < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise TruthError(f"truth file {path}, row {row + 1}: unknown type {type_column.iloc[row]!r} "
                         f"(the config's types: {', '.join(types)}, or their indices 0 to {len(types) - 1})")
    return codes.astype(np.int64)


def empty_truth(types) -> Truth:
    """A truth with no sessions: validation without truth (no missing or unknown rows are judged)."""
    return Truth(tuple(types), np.empty(0, np.int64), np.zeros(1, INDPTR_DTYPE), np.empty(0, np.int64), "")
