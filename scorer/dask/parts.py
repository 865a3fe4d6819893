"""The part files of a partitioned submission, and Parquet parts streamed as CSV text for the engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.engine.reader import open_regular
from scorer.errors import UsageError
from scorer.file_formats import PARQUET_SUFFIXES, FolderTooDeep, entries_below

COLUMNS = ("session_type", "labels")
BATCH_ROWS = 65_536


def list_parts(directory: str | Path) -> list[Path]:
    """Every data file under `directory`, sorted by relative path (the order that decides repeated rows).

    Names starting with "." or "_" (_SUCCESS, _metadata, .crc files) are not parts.
    """
    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"not a directory of part files: {root}")
    try:
        entries = entries_below(root)
    except FolderTooDeep as error:
        raise UsageError(f"{root} has {error}: not a partitioned submission") from None
    parts = [path for path in entries if path.is_file()
             and not any(piece.startswith((".", "_")) for piece in path.relative_to(root).parts)]
    if not parts:
        raise UsageError(f"no part files in {root} (expected CSV or Parquet parts of one submission)")
    return sorted(parts, key=lambda path: path.relative_to(root).as_posix())


def is_parquet(path: str | Path) -> bool:
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def parquet_to_csv(source: str | Path, target: str | Path, columns: tuple[str, ...] = COLUMNS, *, untrusted: bool = False) -> None:
    """Write the Parquet part as CSV text with a header line, batch by batch (memory: one batch).

    Each row becomes its values joined with "," and nothing else: no quoting, a null is an empty
    field, a list column (labels as list<int>) is joined with single spaces; the text is what the
    same rows in a CSV part would be, so the engine judges both alike. With both `columns` present
    only they are written, in that order (index or partition columns are dropped); otherwise all
    columns are, and the engine reports the header as wrong. The part is opened once, as a submission
    is (scorer.engine.reader.open_regular: a regular file; `untrusted`, no link), and pyarrow reads that
    descriptor. Raises SubmissionError, OSError or pyarrow errors.
    """
    import pyarrow.parquet as pq

    fd, _ = open_regular(Path(source), untrusted=untrusted)
    with open(fd, "rb") as opened:
        _write_csv(pq.ParquetFile(opened), target, columns)


def _write_csv(handle, target: str | Path, columns: tuple[str, ...]) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    names = list(handle.schema_arrow.names)
    chosen = list(columns) if all(name in names for name in columns) else names

    def as_text(column: pa.Array) -> pa.Array:
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            column = pc.binary_join(pc.cast(column, pa.list_(pa.string())), " ")
        return pc.fill_null(pc.cast(column, pa.large_string()), "")

    with open(target, "wb") as out:
        out.write((",".join(chosen) + "\n").encode())
        for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=chosen):
            if batch.num_rows == 0:
                continue
            fields = [as_text(batch.column(i)) for i in range(len(chosen))]
            lines = pc.binary_join_element_wise(*fields, pa.scalar(",", pa.large_string())) if len(fields) > 1 else fields[0]
            lines = pc.binary_join_element_wise(lines, pa.scalar("\n", pa.large_string()), pa.scalar("", pa.large_string()))
            offsets = np.frombuffer(lines.buffers()[1], np.int64, len(lines) + 1, lines.offset * 8)
            out.write(memoryview(lines.buffers()[2])[offsets[0] : offsets[-1]])
