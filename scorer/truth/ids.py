"""Ground truth: readers (OTTO JSONL, long Parquet/CSV, compiled .npz) and the compiled cache.

A Truth holds the sorted session ids and, for every (session, type) slot
``slot = session_index * n_types + type_index``, a CSR row of sorted, distinct item ids:
``items[indptr[slot]:indptr[slot + 1]]``.
"""

from __future__ import annotations

import hashlib
import io
import json
import mmap
import os
import stat
import sys
import threading
import zipfile
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

import numpy as np

from scorer import private_files
from scorer.errors import TruthError
from scorer.file_formats import format_of, is_parquet
from scorer.private_files import Untrusted, cache_dir

CACHE_VERSION = 4  # the compiled format and the cache key: bump when either changes
COMPILED_SUFFIX = ".truth.npz"
USAGES = ("public", "private", "ignored")  # Truth.usage codes 0, 1, 2: Kaggle's Usage column (any case)


@dataclass(frozen=True, eq=False)
class Truth:
    types: tuple[str, ...]
    sessions: np.ndarray  # int64, sorted, distinct
    indptr: np.ndarray  # int64, len(sessions) * len(types) + 1
    items: np.ndarray  # int64, sorted within each slot
    source: str = ""
    usage: np.ndarray | None = None  # int8 per session (USAGES codes), None when the truth has no Usage

    @property
    def n_sessions(self) -> int:
        return len(self.sessions)

    @cached_property
    def sizes(self) -> np.ndarray:
        """|truth| per slot, shaped (n_sessions, n_types)."""
        return np.diff(self.indptr).reshape(self.n_sessions, len(self.types))

    def type_sizes(self, t: int) -> np.ndarray:
        """|truth| of type t per session (without making the whole sizes table)."""
        n_types = len(self.types)
        return self.indptr[t + 1 :: n_types] - self.indptr[t : -1 : n_types]

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
        (with folder, a private folder's descriptor: the file `path` names in it, see write_npz)."""
        extra = {} if self.usage is None else {"usage": self.usage}
        base, table = self.lookup
        write_npz(path, {"version": CACHE_VERSION, "types": list(self.types), "source": self.source, "lookup_base": base},
                  folder=folder, sessions=self.sessions, indptr=self.indptr, items=self.items, lookup_table=table, **extra)


ALIGN = 64  # where each array's data starts in a written .npz, so that read_npz can map it aligned


def write_npz(path: str | Path, meta: dict, folder: int | None = None, **arrays: np.ndarray) -> None:
    """Write arrays and a JSON meta record as an uncompressed .npz (np.load reads it) whose arrays' data start
    at multiples of ALIGN, atomically (a reader never sees half a file, and a failed write leaves none).
    With folder (a private folder's descriptor, scorer.private_files), the file named path.name in it, 0600."""
    path = Path(path)
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays}
    if folder is not None:
        private_files.write(folder, path.name, lambda handle: _write_aligned(handle, arrays))
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # one per writer, threads too
    try:
        with open(tmp, "wb") as handle:
            _write_aligned(handle, arrays)
        os.replace(tmp, path)
    except BaseException:  # a full disk, a signal: never leave the half-written file behind
        tmp.unlink(missing_ok=True)
        raise


def _write_aligned(handle: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    from numpy.lib import format as npy_format

    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            header = io.BytesIO()
            npy_format.write_array_header_2_0(header, npy_format.header_data_from_array_1_0(array))
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            local = 30 + len(info.filename.encode()) + 20  # the local header, with room for a zip64 extra field
            pad = -(handle.tell() + local + 4 + len(header.getvalue())) % ALIGN
            info.extra = b"\xfe\xca" + pad.to_bytes(2, "little") + bytes(pad)  # an unregistered padding field
            info.file_size = len(header.getvalue()) + array.nbytes
            with archive.open(info, "w", force_zip64=True) as member:
                member.write(header.getvalue())
                member.write(memoryview(array).cast("B") if array.nbytes else b"")


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
    counts = np.bincount(label_slot, minlength=len(sessions) * n_types)
    indptr = np.zeros(len(sessions) * n_types + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return Truth(tuple(types), sessions, indptr, np.ascontiguousarray(label_item, dtype=np.int64), source)


def _unique(values: np.ndarray, kind: str = "quicksort") -> np.ndarray:
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


def read_jsonl(path: Path, types: tuple[str, ...]) -> Truth:
    """OTTO labels: one {"session": s, "labels": {"clicks": a, "carts": [...], ...}} per line.

    pyarrow reads well-formed files in a few seconds; anything it cannot take, or that breaks a rule,
    is read again line by line, which names the line at fault.
    """
    fast = _read_jsonl_arrow(path, types)
    return fast if fast is not None else _read_jsonl_lines(path, types)


def _read_jsonl_arrow(path: Path, types: tuple[str, ...]) -> Truth | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    try:
        table = pj.read_json(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None
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
    usage_sessions, usage_values, usage_lines = [], [], []
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
            sessions.append(session), kinds.append(0), items.append(-1)
            if "usage" in record or usage_values:
                usage_sessions.append(session), usage_values.append(record.get("usage")), usage_lines.append(line_number)
            for name, value in labels.items():
                if name not in type_of:
                    raise _bad(path, line_number, f"unknown type {name!r} (the config's types: {', '.join(types)})")
                for item in value if isinstance(value, list) else [value]:
                    sessions.append(session), kinds.append(type_of[name])
                    items.append(_check_id(item, f"{name} item", path, line_number))
    truth = from_long(np.array(sessions, np.int64), np.array(kinds, np.int64), np.array(items, np.int64), types, str(path))
    if usage_values:
        if len(usage_values) < len(seen_line):
            first = min(line for session, line in seen_line.items() if line < usage_lines[0])
            raise _bad(path, first, 'no "usage" key, while later lines have one (give every line a usage or none)')
        truth = attach_usage(truth, np.array(usage_sessions, np.int64), usage_values, "line", usage_lines)
    return truth


def read_table(path: Path, types: tuple[str, ...]) -> Truth:
    """A long table with columns session, type, aid (or item): Parquet or CSV."""
    import pandas as pd

    try:
        if is_parquet(path):
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, dtype={"type": "string"}, keep_default_na=True)
    except Exception as error:  # pandas/pyarrow raise many kinds; the message is what matters
        raise TruthError(f"cannot read truth file {path}: {error}") from None
    item_column = "aid" if "aid" in frame.columns else "item"
    missing = {"session", "type", item_column} - set(frame.columns)
    if missing:
        raise TruthError(f"truth file {path}: missing column(s) {', '.join(sorted(missing))}; expected session, type, aid")
    labelled = frame[item_column].notna() & frame["type"].notna()
    type_column = frame["type"]
    if pd.api.types.is_integer_dtype(type_column.dtype) or (pd.api.types.is_float_dtype(type_column.dtype)):
        codes = type_column.fillna(0).astype(np.int64).to_numpy()
        bad = labelled.to_numpy() & ((codes < 0) | (codes >= len(types)))
    else:
        names = type_column.astype("string")
        codes = names.map({name: index for index, name in enumerate(types)}).fillna(-1).astype(np.int64).to_numpy()
        bad = labelled.to_numpy() & (codes < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise TruthError(f"truth file {path}, row {row + 1}: unknown type {type_column.iloc[row]!r} (the config's types: {', '.join(types)})")
    for column in ("session", item_column):
        values = frame[column][labelled] if column == item_column else frame[column]
        if not pd.api.types.is_integer_dtype(values.dtype) and not (values.empty or (values % 1 == 0).all()):
            raise TruthError(f"truth file {path}: column {column!r} must hold integers")
    session = frame["session"].to_numpy(np.int64)
    item = np.where(labelled, frame[item_column].fillna(-1), -1).astype(np.int64)
    if (session < 0).any() or (item[labelled.to_numpy()] < 0).any():
        raise TruthError(f"truth file {path}: negative session or item id")
    truth = from_long(session, np.where(labelled, codes, 0), item, types, str(path))
    usage_column = next((name for name in frame.columns if str(name).lower() == "usage"), None)
    if usage_column is not None:
        values = [value if isinstance(value, str) else None for value in frame[usage_column].tolist()]
        truth = attach_usage(truth, session, values, "row")
    return truth


def map_file(source: str | Path | BinaryIO) -> mmap.mmap:
    """A file's bytes (a path, or a file opened for binary reading), mapped once, copy-on-write: a change made
    through the mapping never reaches the file. Where the file system cannot map, its bytes are read into an
    anonymous mapping. The bytes are then hashed (a memo's key), parsed and checked from this one mapping."""
    opened = nullcontext(source) if hasattr(source, "read") else open(source, "rb")
    with opened as handle:
        try:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError) as error:
            size = os.fstat(handle.fileno()).st_size
            if not size:
                raise ValueError("the file is empty") from error
            copy = mmap.mmap(-1, size)
            handle.seek(0)
            handle.readinto(copy)
            return copy


def read_npz(source: str | Path | BinaryIO | mmap.mmap) -> dict[str, np.ndarray]:
    """The arrays of an .npz (a path, a file opened for binary reading, or its map_file mapping). Those stored
    uncompressed (as write_npz stores them) are views of the mapping: nothing is read until a page is used.
    Anything else is read by np.load (from a copy of the same mapped bytes)."""
    from numpy.lib import format as npy_format

    mapped = source if isinstance(source, mmap.mmap) else map_file(source)
    arrays = {}
    mapped.seek(0)
    with zipfile.ZipFile(mapped) as archive:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            local = mapped[info.header_offset : info.header_offset + 30]
            start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
            mapped.seek(start)
            if info.compress_type != zipfile.ZIP_STORED:
                arrays[name] = None
                continue
            version = npy_format.read_magic(mapped)
            read_header = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
            shape, fortran, dtype = read_header(mapped)
            if dtype.hasobject:
                arrays[name] = None
                continue
            if 0 in shape:
                arrays[name] = np.empty(shape, dtype, order="F" if fortran else "C")
                continue
            view = np.ndarray(shape, dtype, buffer=mapped, offset=mapped.tell(), order="F" if fortran else "C")
            arrays[name] = view if view.flags.aligned else view.copy()  # the kernels are compiled for aligned arrays
    if any(array is None for array in arrays.values()):  # not written by write_npz: read from a copy of the bytes
        with np.load(io.BytesIO(mapped), allow_pickle=False) as data:
            arrays = {name: data[name] if array is None else array for name, array in arrays.items()}
    return arrays


def read_compiled(path: Path, types: tuple[str, ...] | None = None, source: str | None = None, opened: BinaryIO | None = None,
                  use_memo: bool = True) -> Truth:
    """A Truth written by Truth.save(), its arrays checked (scorer.truth.checks, see check_compiled) before a kernel
    sees them. TruthError names the file and what is wrong. `source` replaces the recorded source (a cache entry
    serves every copy of the same bytes); `opened`: the file at path, opened from the private cache folder;
    use_memo: remember (and look up) that these bytes passed the full check."""
    from scorer.truth.checks import check_truth

    try:
        mapped = map_file(path if opened is None else opened)
        data = read_npz(mapped)
        meta = json.loads(bytes(data["meta"]).decode())
        truth = Truth(tuple(meta["types"]), data["sessions"], data["indptr"], data["items"], source or meta.get("source", str(path)),
                      data.get("usage"))
        lookup = (meta["lookup_base"], data["lookup_table"]) if "lookup_table" in data else None
    except Exception as error:
        raise TruthError(f"cannot read compiled truth {path}: {error}") from None
    if meta.get("version") != CACHE_VERSION:
        raise TruthError(f"compiled truth {path} has format version {meta.get('version')}, this scorer reads {CACHE_VERSION}: compile it again")
    if types is not None and truth.types != tuple(types):
        raise TruthError(f"compiled truth {path} has types {list(truth.types)}, the config has {list(types)}")
    check_compiled(mapped, "truth", lambda full: check_truth(truth, path, lookup, full=full), vouched=opened is not None, use_memo=use_memo)
    if lookup is not None:
        truth.__dict__["lookup"] = (int(lookup[0]), lookup[1])  # the cached_property's value
    return truth


MEMO_SUFFIX = ".checked"


def check_compiled(mapped: mmap.mmap, kind: str, check, vouched: bool, use_memo: bool = True) -> None:
    """check(full) on the arrays of a compiled truth mapped from `mapped`. The full check, unless the bytes are
    vouched for by this user's scorer: an entry of the private cache (vouched), or a file whose exact bytes
    passed the full check before (a memo in the private cache folder, keyed by the mapping's content, `kind`,
    CACHE_VERSION and the checks' CHECK_VERSION); those get only the checks that keep the kernels safe
    (full=False). A full check that passes leaves its memo; without a private cache folder, always the full check."""
    if vouched:
        return check(False)
    with ExitStack() as stack:
        folder = _cache_folder(stack, cache_dir(), create=True) if use_memo else None
        if folder is None:
            return check(True)
        key, name = memo_name(mapped, kind)
        if _memo_holds(folder, name, key):
            return check(False)
        check(True)
        try:
            private_files.write(folder, name, key)
        except OSError:
            pass  # an unwritable or full cache: the next load checks in full again


def memo_name(mapped: mmap.mmap, kind: str) -> tuple[bytes, str]:
    """The memo's content (its key) and file name for these bytes read as `kind`."""
    from scorer.truth import checks as truth_checks

    key = json.dumps([bytes_key(mapped), kind, CACHE_VERSION, truth_checks.CHECK_VERSION]).encode()
    return key, f"{hashlib.sha256(key).hexdigest()[:32]}{MEMO_SUFFIX}"


def _memo_holds(folder: int, name: str, key: bytes) -> bool:
    """Is there a memo of this key, this user's regular file (scorer.private_files)? Anything else is no memo."""
    try:
        with private_files.opened_file(folder, name) as fd:
            return private_files.read_all(fd, len(key) + 1) == key
    except (OSError, Untrusted):
        return False


def _content_digest():
    """xxh3-128 (xxhash, about 10 GB/s); blake2b-128 (hashlib, about 1 GB/s) where xxhash is not installed,
    as after Kaggle's `pip install --no-deps`. The name goes into the key, so the two never mix."""
    try:
        import xxhash
    except ImportError:
        return "blake2b", hashlib.blake2b(digest_size=16)
    return "xxh3", xxhash.xxh3_128()


def bytes_key(data) -> str:
    """The content key of bytes in memory or mapped (see content_key)."""
    name, digest = _content_digest()
    digest.update(data)
    return f"{name}-{len(data)}-{digest.hexdigest()}"


def content_key(path: Path) -> str | None:
    """A hash of the file's bytes, mapped rather than read (xxh3: ~10 ms for OTTO's 113 MB from the page cache,
    bench/bench_truth_key.py); None for what is not a regular file or says it is empty (as /proc's): never cached."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None  # a FIFO or device: opening it could block, and its bytes can change under the key
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return None
        try:
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return bytes_key(mapped)
        except (OSError, ValueError):  # a file system that cannot map: read it in blocks
            pass
        name, digest = _content_digest()
        handle.seek(0)
        while block := handle.read(1 << 24):
            digest.update(block)
    return f"{name}-{size}-{digest.hexdigest()}"


def cache_path(path: Path, what: list, suffix: str = COMPILED_SUFFIX) -> Path | None:
    """The cache entry of a truth file read as `what` (types, shape): keyed by the file's content, so a file
    rewritten with the same size and time, or another file put at its path, is read again. None: not cached."""
    try:
        content = content_key(path)
    except OSError:
        return None  # the reader names the problem
    if content is None:
        return None
    key = json.dumps([content, what, CACHE_VERSION])
    return cache_dir() / f"{path.name[:100]}.{hashlib.sha256(key.encode()).hexdigest()[:24]}{suffix}"


_refused: set[Path] = set()  # cache folders this process said it does not use


def _cache_folder(stack: ExitStack, folder: Path, create: bool) -> int | None:
    """The cache folder's descriptor (open until the stack closes) if it is private (scorer.private_files: this
    user's, not a symlink, not writable by others; made 0700); else None, and a folder that is there but not
    private is named on stderr, once per process. A missing or unmakeable folder is just no cache."""
    try:
        return stack.enter_context(private_files.opened_folder(folder, create=create))
    except Untrusted as error:
        if folder not in _refused:
            _refused.add(folder)
            print(f"scorer: warning: the truth cache {folder} is not used: {error}; truths are read from their files "
                  "(slower). Point $SCORER_CACHE_DIR at a folder of your own, or remove this one.", file=sys.stderr)
    except OSError:
        pass
    return None


def cached_copy(cached: Path | None, reader, *args, source: str):
    """The cache entry read by reader(cached, *args, source=..., opened=file) if there is a sound one in a private
    cache folder, else None: a missing, damaged or crafted entry is a miss, and so is one that is not this
    user's regular file (a symlink is not followed, a FIFO never waited on)."""
    if cached is None:
        return None
    with ExitStack() as stack:
        folder = _cache_folder(stack, cached.parent, create=False)
        try:
            if folder is None:
                return None
            fd = stack.enter_context(private_files.opened_file(folder, cached.name))
            opened = stack.enter_context(os.fdopen(os.dup(fd), "rb"))
            return reader(cached, *args, source=source, opened=opened)
        except (TruthError, OSError, Untrusted):
            return None


def save_to_cache(truth, cached: Path | None, path: Path, what: list, suffix: str = COMPILED_SUFFIX) -> None:
    """Keep a compiled copy (0600, in the private cache folder), unless the file changed while it was read (the
    key would not be its content's); an unwritable, full or refused cache only costs speed (no partial file)."""
    if cached is None or cache_path(path, what, suffix) != cached:
        return
    with ExitStack() as stack:
        folder = _cache_folder(stack, cached.parent, create=True)
        try:
            if folder is not None:
                truth.save(cached.name, folder=folder)
        except OSError:
            pass


def load_truth(path: str | Path, types: tuple[str, ...] | list[str], use_cache: bool = True) -> Truth:
    """Load ground truth from JSONL, Parquet, CSV or a compiled .truth.npz, using the compiled cache.

    The cache entry is keyed by the file's content (cache_path); an entry that fails its checks is
    rebuilt from the file, while a compiled .truth.npz given directly that fails them is a TruthError.
    """
    path, types = Path(path), tuple(types)
    if not path.is_file():
        raise TruthError(f"truth file not found: {path}")
    if path.name.endswith(COMPILED_SUFFIX):
        return read_compiled(path, types, use_memo=use_cache)
    cached = cache_path(path, list(types)) if use_cache else None
    hit = cached_copy(cached, read_compiled, types, source=str(path))
    if hit is not None:
        return hit
    suffix = "".join(path.suffixes[-1:]).lower()
    if format_of(path) == "jsonl":
        truth = read_jsonl(path, types)
    elif format_of(path) in ("parquet", "csv"):
        truth = read_table(path, types)
    else:
        raise TruthError(f"truth file {path}: unknown format {suffix!r} (use .jsonl, .parquet, .csv or {COMPILED_SUFFIX})")
    save_to_cache(truth, cached, path, list(types))
    return truth


def empty_truth(types) -> Truth:
    """A truth with no sessions: validation without truth (no missing or unknown rows are judged)."""
    return Truth(tuple(types), np.empty(0, np.int64), np.zeros(1, np.int64), np.empty(0, np.int64), "")
