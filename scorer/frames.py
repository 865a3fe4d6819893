"""Data frames as submissions and truth: pandas, polars and pyarrow objects turned into Arrow, and the form
of a frame told from its column names; the one door that says what a source may be (a path or a frame).

pandas and polars are imported only when the object is one of theirs (told by its class's module), so
neither is needed to use the scorer. Arrow arrays stay as they are: the kernels read their buffers. A polars
LazyFrame and a pyarrow RecordBatchReader are streams: read a batch at a time (Batches), never held whole by
the submission's pass.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

import numpy as np

from scorer.errors import UsageError

FRAME_MODULES = ("pandas", "polars", "pyarrow")
FRAME_NAMES = ("DataFrame", "LazyFrame", "Table", "RecordBatch", "RecordBatchReader")
ACCEPTED = ("a file path (str or pathlib.Path) or a data frame: a pandas or polars DataFrame, a polars LazyFrame, "
            "a pyarrow Table, RecordBatch or RecordBatchReader")
STREAM_ROWS = 1 << 16  # rows a polars LazyFrame hands over at a time (its streaming engine's chunks)


def is_frame(obj) -> bool:
    """Is obj a pandas or polars DataFrame, a polars LazyFrame, or a pyarrow Table, RecordBatch or RecordBatchReader?"""
    module = type(obj).__module__.split(".")[0]
    return module in FRAME_MODULES and type(obj).__name__ in FRAME_NAMES


def is_stream(obj) -> bool:
    """Is obj a frame read a batch at a time (a polars LazyFrame, a pyarrow RecordBatchReader)?"""
    return is_frame(obj) and type(obj).__name__ in ("LazyFrame", "RecordBatchReader")


def check_source(obj, what: str = "the submission", more: str = "") -> None:
    """UsageError unless obj is a path (str, os.PathLike) or a frame: the sentence names what is accepted (and `more`)."""
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if ("\0" if isinstance(path, str) else b"\0") in path:
            raise UsageError(f"{what}'s path holds a NUL byte, which no file's name can")
        return
    if is_frame(obj):
        return
    kind = type(obj)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    raise UsageError(f"{what} is of type {name}: give {ACCEPTED}{more}")


class Batches:
    """A frame's rows as Arrow record batches, in order, read once: a stream's a batch at a time (a polars LazyFrame
    through its streaming engine, STREAM_ROWS rows a chunk), a held frame's as they are. schema: the batches' schema,
    known before any row is read; rows: the rows handed out so far."""

    def __init__(self, obj):
        import pyarrow as pa

        self.obj, self.rows = obj, 0
        if type(obj).__name__ == "LazyFrame":
            import polars

            with _query(obj):
                empty = polars.DataFrame(schema=obj.collect_schema())  # the plan's schema: no row is read
            self.schema = as_arrow(empty).schema
            self._source = _chunks(obj)
        elif isinstance(obj, pa.RecordBatchReader):
            self.schema, self._source = obj.schema, _read(obj)
        else:
            table = as_arrow(obj)
            self.schema, self._source = table.schema, iter([table])

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    def __iter__(self):
        for part in self._source:
            for batch in part.to_batches() if hasattr(part, "to_batches") else [part]:
                if batch.num_rows:
                    self.rows += batch.num_rows
                    yield batch

    def read_all(self):
        """Every row as one Table (the forms whose rows are grouped or aligned across the whole frame)."""
        import pyarrow as pa

        return pa.Table.from_batches(list(self), schema=self.schema)


@contextmanager
def _query(lazy):
    """A LazyFrame's query that fails (a file not found, a value polars cannot cast) as a UsageError naming it."""
    import polars

    try:
        yield
    except (polars.exceptions.PolarsError, OSError) as error:
        raise UsageError(f"the polars LazyFrame could not be read: {_first_line(error)}") from None


def _first_line(error: BaseException) -> str:
    """An error's first line of text, else its type's name (what a UsageError quotes of a frame library's error)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _read(reader):
    """A RecordBatchReader's batches; one it cannot give (its source raised, a batch of another schema) is a UsageError
    naming why. Only the reading is caught: what the pass does with a batch raises as it would."""
    import pyarrow as pa

    batches = iter(reader)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, ValueError, TypeError, OSError, KeyError, IndexError, RuntimeError) as error:
            raise UsageError(f"the pyarrow RecordBatchReader could not be read: {type(error).__name__}: {_first_line(error)}") from None
        yield batch


def _chunks(lazy):
    """The LazyFrame's rows through polars' streaming engine, STREAM_ROWS at a time, as Arrow tables."""
    with _query(lazy):
        for chunk in lazy.collect_batches(chunk_size=STREAM_ROWS, lazy=True, engine="streaming"):
            yield as_arrow(chunk)


def as_arrow(obj):
    """The frame as a pyarrow Table (no copy for polars and pyarrow; pandas through Table.from_pandas; a polars
    LazyFrame collected, for what is held whole anyway: a truth, a candidate table)."""
    import pyarrow as pa

    module = type(obj).__module__.split(".")[0]
    if type(obj).__name__ == "LazyFrame":
        obj = obj.collect()
    if module == "pandas":
        try:
            return pa.Table.from_pandas(obj, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as error:  # ValueError: columns of one name
            raise UsageError(f"cannot read the pandas DataFrame as Arrow: {error}") from None
    if module == "polars":  # its own string views, no copy: a batch's ids are cast as the pass reaches it
        import polars

        return obj.to_arrow(compat_level=polars.CompatLevel.newest()) if hasattr(polars, "CompatLevel") else obj.to_arrow()
    if isinstance(obj, pa.RecordBatchReader):
        return pa.Table.from_batches(list(_read(obj)), schema=obj.schema)
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    return obj


def frame_of(table, library: str, owner: str):
    """An Arrow table as a pandas or polars DataFrame; a UsageError naming what to install when the library is not."""
    import importlib

    try:
        module = importlib.import_module(library)
    except ModuleNotFoundError:
        raise UsageError(f"{owner}.to_{library}() needs {library}, which is not installed here: pip install {library}") from None
    return table.to_pandas() if library == "pandas" else module.from_arrow(table)


class Tabular:
    """to_json() of what an object's to_dict() gives, to_pandas() and to_polars() of what its to_arrow() gives (pandas and
    polars stay optional)."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    def to_json(self) -> str:
        """The object's to_dict() as the commands' --format json prints it."""
        import json

        return json.dumps(self.to_dict(), indent=2)

    def to_arrow(self):
        raise NotImplementedError

    def to_pandas(self):
        """The object's table as a pandas DataFrame (needs pandas)."""
        return frame_of(self.to_arrow(), "pandas", type(self).__name__)

    def to_polars(self):
        """The object's table as a polars DataFrame (needs polars)."""
        return frame_of(self.to_arrow(), "polars", type(self).__name__)


def describe(obj, table) -> str:
    """What a Result names as its submission: the frame's kind and size (table: the Table or the Batches read)."""
    module = type(obj).__module__.split(".")[0]
    rows = table.rows if isinstance(table, Batches) else table.num_rows
    return f"<{module} {type(obj).__name__}: {rows:,} rows, columns {', '.join(table.column_names)}>"


def pick_form(columns: list[str], competition) -> str:
    """The frame's form from its column names: 'id_labels' (the file's two columns), 'session_type_labels'
    (session, type, labels) or 'long' (session, type, aid[, rank]); a UsageError lists the accepted ones."""
    names = set(columns)
    id_name, labels_name = competition.header
    if {id_name, labels_name} <= names:
        return "id_labels"
    if competition.shape == "id_type":
        if {"session", "type", "labels"} <= names:
            return "session_type_labels"
        if {"session", "type", "aid"} <= names:
            return "long"
    accepted = [f"{id_name!r} and {labels_name!r}"]
    if competition.shape == "id_type":
        accepted += ["'session', 'type' and 'labels'", "'session', 'type', 'aid' (and 'rank')"]
    raise UsageError(f"the frame has columns {columns}; expected {' or '.join(accepted)}")


def strings(array):
    """A string array (dictionary, string_view and binary types included) as large_string, or None when it is of
    another type."""
    import pyarrow as pa

    kind = array.type
    if pa.types.is_dictionary(kind):
        if not _is_text(kind.value_type):
            return None
        if isinstance(array, pa.ChunkedArray):
            return pa.chunked_array([_decoded(chunk) for chunk in array.chunks], pa.large_string())
        return _decoded(array)
    return array.cast(pa.large_string()) if _is_text(kind) else None


def _is_text(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_null(kind) or pa.types.is_string(kind) or pa.types.is_large_string(kind) or getattr(pa.types, "is_string_view", lambda _: False)(kind)


def _decoded(array):
    """A dictionary array's values, row by row, as large_string (polars' Categorical and Enum are dictionaries of
    string views, which Arrow cannot cast to a string type in one step)."""
    import pyarrow as pa

    return array.dictionary.cast(pa.large_string()).take(array.indices)


def is_list(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_list(kind) or pa.types.is_large_list(kind) or getattr(pa.types, "is_list_view", lambda _: False)(kind)


def buffer_view(array, index: int, dtype, length: int) -> np.ndarray:
    """numpy view of an Arrow array's buffer (no copy); validity bitmaps come as uint8 (empty when absent)."""
    buffer = array.buffers()[index]
    if buffer is None:
        return np.empty(0, dtype)
    return np.frombuffer(buffer, dtype, count=min(length, buffer.size // np.dtype(dtype).itemsize))


def validity(array) -> tuple[np.ndarray, int]:
    """(bitmap bytes, bit offset) of an array's nulls; an empty bitmap when it has none."""
    if array.null_count == 0:
        return np.empty(0, np.uint8), 0
    return buffer_view(array, 0, np.uint8, (array.offset + len(array) + 7) // 8), array.offset


def row_of(line: int) -> int:
    """A frame row's 0-based position from the kernels' line number (row + 1)."""
    return line - 1
