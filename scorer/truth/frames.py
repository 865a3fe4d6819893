"""Ground truth from a data frame (pandas, polars, pyarrow; see scorer.frames).

OTTO's shape takes a long frame (session, type, aid — as the Parquet truth), a wide one (session, type,
labels as a list), or one column per type (session, clicks, carts, orders: an item or a list each, as the
JSONL truth). The string shapes take the file's columns (id, items as a list or space-separated; or
id, item, grade; id, value).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.errors import TruthError
from scorer.frames import as_arrow, describe, is_list, strings
from scorer.truth.ids import Truth, from_long


def truth_from_frame(frame, competition, types: tuple[str, ...] | None = None):
    """The Truth (or StringTruth) of a frame; TruthError names the row and column at fault."""
    table = as_arrow(frame).combine_chunks()
    source = describe(frame, table)
    if competition.shape != "id_type":
        return _strings_truth(table, competition, source)
    types = tuple(types) if types is not None else competition.types
    names = set(table.column_names)
    if {"session", "type"} <= names and names & {"aid", "item", "labels"}:
        item_name = "aid" if "aid" in names else "item" if "item" in names else "labels"
        session = _ids(table.column("session"), "session", source)
        kind = _types(table.column("type"), types, source)
        return _from_items(session, kind, table.column(item_name), item_name, types, source)
    if "session" in names and names & set(types):
        session = _ids(table.column("session"), "session", source)
        parts = [(session, np.zeros(len(session), np.int64), np.full(len(session), -1, np.int64))]
        for t, name in enumerate(types):
            if name in names:
                parts.append(_explode(session, np.full(len(session), t, np.int64), table.column(name), name, source))
        session_all, type_all, item_all = (np.concatenate(column) for column in zip(*parts))
        return from_long(session_all, type_all, item_all, types, source)
    raise TruthError(f"truth frame {source}: expected the columns session, type, aid (or labels as a list), "
                     f"or session and one column per type ({', '.join(types)})")


def _ids(column, name: str, source: str) -> np.ndarray:
    import pyarrow as pa

    if not pa.types.is_integer(column.type):
        raise TruthError(f"truth frame {source}: column {name!r} must hold integers, got {column.type}")
    if column.null_count:
        raise TruthError(f"truth frame {source}, row {int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])}: "
                         f"column {name!r} is null")
    try:
        values = column.cast(pa.int64()).to_numpy()
    except pa.ArrowInvalid:
        raise TruthError(f"truth frame {source}: column {name!r} holds ids over 2^63 - 1") from None
    if len(values) and values.min() < 0:
        raise TruthError(f"truth frame {source}, row {int(np.argmin(values))}: column {name!r} holds the negative id {int(values.min())}")
    return values


def _types(column, types: tuple[str, ...], source: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    names = strings(column)
    if names is None:
        raise TruthError(f"truth frame {source}: column 'type' must hold the type names ({', '.join(types)}), got {column.type}")
    index = pc.index_in(names, value_set=pa.array(types, pa.large_string()))
    if index.null_count:
        row = int(np.flatnonzero(index.is_null().to_numpy(zero_copy_only=False))[0])
        raise TruthError(f"truth frame {source}, row {row}: unknown type {names[row].as_py()!r} (the config's types: {', '.join(types)})")
    return index.to_numpy(zero_copy_only=False).astype(np.int64)


def _explode(session: np.ndarray, kind: np.ndarray, column, name: str, source: str):
    """(session, type, item) per label of a column of items or lists of items; a null is no label."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if is_list(column.type):
        owners = pc.list_parent_indices(column).to_numpy()
        column = pc.list_flatten(column)
    else:
        owners = np.arange(len(column))
    if not pa.types.is_integer(column.type):
        raise TruthError(f"truth frame {source}: column {name!r} must hold integers (or lists of them), got {column.type}")
    present = column.is_valid().to_numpy(zero_copy_only=False)
    try:
        items = pc.fill_null(column.cast(pa.int64()), 0).to_numpy()
    except pa.ArrowInvalid:
        raise TruthError(f"truth frame {source}: column {name!r} holds ids over 2^63 - 1") from None
    if (items[present] < 0).any():
        at = int(np.flatnonzero(present & (items < 0))[0])
        raise TruthError(f"truth frame {source}, row {int(owners[at])}: column {name!r} holds the negative item {int(items[at])}")
    owners, items = owners[present], items[present]
    return session[owners], kind[owners], items


def _from_items(session, kind, column, name, types, source) -> Truth:
    labelled = _explode(session, kind, column, name, source)
    every = (session, np.zeros(len(session), np.int64), np.full(len(session), -1, np.int64))  # sessions without a label
    session_all, type_all, item_all = (np.concatenate(pair) for pair in zip(every, labelled))
    return from_long(session_all, type_all, item_all, types, source)


def _strings_truth(table, competition, source: str):
    """The string shapes: the columns as text (lists joined by spaces), read as the file reader reads a CSV."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scorer.truth.strings import _read_strings

    columns = {}
    for name in table.column_names:
        column = table.column(name)
        if is_list(column.type):
            column = pc.binary_join(column.cast(pa.large_list(pa.large_string())), pa.scalar(" ", pa.large_string()))
        columns[name] = pc.fill_null(column.cast(pa.large_string()), "")
    frame = pa.table(columns).to_pandas()
    return _read_strings(Path(source), competition.shape, competition.types[0], frame=frame)
