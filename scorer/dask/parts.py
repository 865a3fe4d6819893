"""The part files of a partitioned submission, and Parquet parts streamed as CSV text for the engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.engine.problems import Code
from scorer.engine.reader import Deadline, LimitExceeded, open_regular
from scorer.errors import UsageError
from scorer.file_formats import PARQUET_SUFFIXES, FolderTooDeep, entries_below
from scorer.spec.competition import Limits

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


def parquet_to_csv(source: str | Path, target: str | Path, columns: tuple[str, ...] = COLUMNS, *, untrusted: bool = False,
                   limits: Limits | None = None, deadline: Deadline | None = None) -> None:
    """Write the Parquet part as CSV text with a header line, batch by batch (memory: one batch).

    Each row becomes its values joined with "," and nothing else: no quoting, a null is an empty
    field, a list column (labels as list<int>) is joined with single spaces; the text is what the
    same rows in a CSV part would be, so the engine judges both alike. With both `columns` present
    only they are written, in that order (index or partition columns are dropped); otherwise all
    columns are, and the engine reports the header as wrong. The part is opened once, as a submission
    is (scorer.engine.reader.open_regular: a regular file; `untrusted`, no link), and pyarrow reads that
    descriptor.

    The config's `limits` hold while converting, before the engine reads the text (LimitExceeded, as the
    engine's own): the file's size (S023) before anything is read; a value longer than a line may be (S022),
    from the row groups' sizes before they are read (a column chunk larger than its rows' lines may be all
    together holds one), else from each batch's offsets before its text is built; the text written (S024);
    and the `deadline` (S028, shared by every part of a submission), between batches.
    Raises LimitExceeded, SubmissionError, OSError or pyarrow errors.
    """
    import pyarrow.parquet as pq

    limits = limits or Limits(max_file_bytes=1 << 62, max_decompressed_bytes=1 << 62, max_line_bytes=1 << 62)
    fd, status = open_regular(Path(source), untrusted=untrusted)
    with open(fd, "rb") as opened:
        if status.st_size > limits.max_file_bytes:
            raise LimitExceeded(Code.FILE_TOO_LARGE, f"the file is {status.st_size:,} bytes, over the limit of {limits.max_file_bytes:,}")
        _write_csv(pq.ParquetFile(opened), target, columns, limits, deadline or Deadline())


def _is_text(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _is_list(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_list(kind) or pa.types.is_large_list(kind)


def _check_row_groups(handle, chosen: list[str], max_line_bytes: int) -> None:
    """S022 before a row group is read when one of its text column chunks is, uncompressed, larger than all its rows'
    values may be together (each at most a line, and 4 bytes of length): one of them alone is then over the line
    limit, and decoding it could take gigabytes."""
    names = list(handle.schema_arrow.names)
    text = [name for name in chosen if _is_text(handle.schema_arrow.field(name).type)]
    line = 2  # the header is line 1
    for group in range(handle.metadata.num_row_groups):
        row_group = handle.metadata.row_group(group)
        for name in text:
            chunk = row_group.column(names.index(name))
            if chunk.total_uncompressed_size > row_group.num_rows * (max_line_bytes + 8) + 65_536:  # + page headers
                raise LimitExceeded(Code.LINE_TOO_LONG, f"over {max_line_bytes:,}", line=line, column=1, max_line_bytes=max_line_bytes,
                                    ending=f" (a value of column {name!r} in row group {group + 1}, found before reading it)")
        line += row_group.num_rows


def _check_lengths(batch, chosen: list[str], first_line: int, max_line_bytes: int) -> None:
    """S022 when a row's value makes a line longer than the limit (a list of n items is at least 2n - 1 bytes of
    text), from the offsets alone, before any text is built."""
    import pyarrow as pa

    for i, name in enumerate(chosen):
        column = batch.column(i)
        if not (_is_text(column.type) or _is_list(column.type)):
            continue
        wide = column.type.id in (pa.large_string().id, pa.large_binary().id, pa.large_list(pa.int8()).id)
        offsets = np.frombuffer(column.buffers()[1], np.int64 if wide else np.int32, len(column) + 1, column.offset * (8 if wide else 4))
        sizes = np.diff(offsets.astype(np.int64))
        if _is_list(column.type):
            sizes = 2 * sizes - 1
        if len(sizes) and sizes.max() > max_line_bytes:
            row = int(np.argmax(sizes))
            raise LimitExceeded(Code.LINE_TOO_LONG, f"at least {int(sizes[row]):,}", line=first_line + row, column=1,
                                max_line_bytes=max_line_bytes, ending=f" (the value of column {name!r})")


def _write_csv(handle, target: str | Path, columns: tuple[str, ...], limits: Limits, deadline: Deadline) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    names = list(handle.schema_arrow.names)
    chosen = list(columns) if all(name in names for name in columns) else names
    _check_row_groups(handle, chosen, limits.max_line_bytes)

    def as_text(column: pa.Array) -> pa.Array:
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            column = pc.binary_join(pc.cast(column, pa.list_(pa.string())), " ")
        return pc.fill_null(pc.cast(column, pa.large_string()), "")

    with open(target, "wb") as out:
        out.write((",".join(chosen) + "\n").encode())
        written, line = 0, 2
        for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=chosen):
            deadline.check(written)
            if batch.num_rows == 0:
                continue
            _check_lengths(batch, chosen, line, limits.max_line_bytes)
            fields = [as_text(batch.column(i)) for i in range(len(chosen))]
            lines = pc.binary_join_element_wise(*fields, pa.scalar(",", pa.large_string())) if len(fields) > 1 else fields[0]
            lines = pc.binary_join_element_wise(lines, pa.scalar("\n", pa.large_string()), pa.scalar("", pa.large_string()))
            offsets = np.frombuffer(lines.buffers()[1], np.int64, len(lines) + 1, lines.offset * 8)
            written += int(offsets[-1] - offsets[0])
            if written > limits.max_decompressed_bytes:
                raise LimitExceeded(Code.DECOMPRESSED_TOO_LARGE, f"the Parquet part's text is over the limit of {limits.max_decompressed_bytes:,} "
                                    f"bytes: reading stopped after {written:,} bytes")
            out.write(memoryview(lines.buffers()[2])[offsets[0] : offsets[-1]])
            line += batch.num_rows
        deadline.check(written)
