"""Data frames as submissions and truth: pandas, polars and pyarrow objects turned into Arrow, and the form
of a frame told from its column names.

pandas and polars are imported only when the object is one of theirs (told by its class's module), so
neither is needed to use the scorer. Arrow arrays stay as they are: the kernels read their buffers.
"""

from __future__ import annotations

import numpy as np

from scorer.errors import UsageError

FRAME_MODULES = ("pandas", "polars", "pyarrow")


def is_frame(obj) -> bool:
    """Is obj a pandas or polars DataFrame, or a pyarrow Table, RecordBatch or RecordBatchReader?"""
    module = type(obj).__module__.split(".")[0]
    return module in FRAME_MODULES and type(obj).__name__ in ("DataFrame", "Table", "RecordBatch", "RecordBatchReader")


def as_arrow(obj):
    """The frame as a pyarrow Table (no copy for polars and pyarrow; pandas through Table.from_pandas)."""
    import pyarrow as pa

    module = type(obj).__module__.split(".")[0]
    if module == "pandas":
        try:
            return pa.Table.from_pandas(obj, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise UsageError(f"cannot read the pandas DataFrame as Arrow: {error}") from None
    if module == "polars":  # its own string views, no copy: a batch's ids are cast as the pass reaches it
        import polars

        return obj.to_arrow(compat_level=polars.CompatLevel.newest()) if hasattr(polars, "CompatLevel") else obj.to_arrow()
    if isinstance(obj, pa.RecordBatchReader):
        return obj.read_all()
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    return obj


def describe(obj, table) -> str:
    """What a Result names as its submission: the frame's kind and size."""
    module = type(obj).__module__.split(".")[0]
    return f"<{module} {type(obj).__name__}: {table.num_rows:,} rows, columns {', '.join(table.column_names)}>"


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
