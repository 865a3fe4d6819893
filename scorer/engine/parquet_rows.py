"""A Parquet submission read by the table reader, as its participants wrote it with pandas (Amazon KDD Cup 2023): each
row becomes a line `position,column,...` of the config's columns, a list column's items joined by the item separator,
record batch by record batch, so the table reader's kernel parses and scores it as it does a CSV's lines.

A row's position (the key part `__index__`) is the frame's pandas index where the file stores one (a RangeIndex in its
pandas metadata, or an index column), else its place in the file (0-based). The lines have no header: line N is row
N - 1, and name_rows turns the problems' lines into rows and columns, as a data frame's problems are named. Limits hold
as for a CSV: the file's size, the lines' bytes (max_decompressed_bytes), each line's length, the time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from scorer.engine.problems import Code
from scorer.engine.reader import Block, Deadline, LimitExceeded, open_regular, shown_name
from scorer.errors import SubmissionError
from scorer.kernels.rows import SLACK
from scorer.spec.competition import ROW_INDEX, Competition

BATCH_ROWS = 8192  # rows made into lines at a time: a few MB of text for lists of 100 items
READ_ERRORS = (OSError, ValueError, TypeError, KeyError, IndexError)  # pyarrow's errors derive from these


def is_parquet_file(path) -> bool:
    """Does the file start with Parquet's magic bytes? Not a regular file (a FIFO would block the read) or unreadable: no,
    its reader says why."""
    from scorer.file_formats import not_a_regular_file

    if not isinstance(path, (str, Path)) or not_a_regular_file(path) is not None:
        return False
    try:
        with open(path, "rb", buffering=0) as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


class ParquetBlocks:
    """Blocks of the lines of a Parquet submission's rows (see the module docstring); the reader's interface."""

    def __init__(self, path, competition: Competition, max_file_bytes: int, max_decompressed_bytes: int, deadline: Deadline | None = None,
                 untrusted: bool = False):
        self.path, self.competition = Path(path), competition
        self.name = shown_name(self.path, untrusted)
        self.untrusted = untrusted
        self.max_file_bytes, self.max_decompressed_bytes = max_file_bytes, max_decompressed_bytes
        self.deadline = deadline or Deadline()
        self.file_bytes = 0
        self.bytes_read = 0

    def release(self, block: Block) -> None:
        """Nothing to give back: each block's buffer is made for it."""

    def __iter__(self):
        import pyarrow.parquet as pq

        fd, status = open_regular(self.path, untrusted=self.untrusted)
        self.file_bytes = status.st_size
        with open(fd, "rb") as raw:
            if self.file_bytes > self.max_file_bytes:
                raise LimitExceeded(Code.FILE_TOO_LARGE, f"the file is {self.file_bytes:,} bytes, over the limit of {self.max_file_bytes:,}")
            try:
                parquet = pq.ParquetFile(raw)
                columns = [name for name in self.competition.header]
                missing = [name for name in columns if name not in parquet.schema_arrow.names]
                if missing:
                    raise SubmissionError(f"the Parquet file {self.name} has no column {missing[0]!r} (its columns: "
                                          f"{', '.join(parquet.schema_arrow.names[:12])}); expected {', '.join(columns)}")
                index = _index(parquet)
                stored = [index] if isinstance(index, str) else []
                start = 0
                for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns + stored):
                    self.deadline.check(self.bytes_read)
                    positions = _positions(batch, index, start)
                    start += batch.num_rows
                    data, size = lines_of(batch, self.competition, positions)
                    self.bytes_read += size
                    if self.bytes_read > self.max_decompressed_bytes:
                        raise LimitExceeded(Code.DECOMPRESSED_TOO_LARGE, f"the rows' content is over the limit of "
                                                                         f"{self.max_decompressed_bytes:,} bytes: reading stopped after "
                                                                         f"{self.bytes_read:,} bytes")
                    yield Block(data, size, raw.tell() if not raw.closed else self.file_bytes)
            except SubmissionError:
                raise
            except READ_ERRORS as error:
                raise SubmissionError(f"the Parquet file {self.name} cannot be read: {error}") from None

def lines_of(batch, competition: Competition, positions) -> tuple[bytearray, int]:
    """A record batch's rows as lines `position,field,...` (the position only where the key holds it; a list column's
    items joined by the item separator), then SLACK zero bytes: (the buffer, the lines' size)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scorer import frames

    text = lambda value: pa.scalar(value, pa.large_string())  # noqa: E731
    fields = [pa.array(positions, pa.large_string())] if ROW_INDEX in competition.key else []
    for name in competition.header:
        column = batch.column(name)
        if frames.is_list(column.type):
            items = column.cast(pa.large_list(pa.large_string()))
            fields.append(pc.binary_join(items, text(competition.item_separator)))
        else:
            fields.append(column.cast(pa.large_string()))
    lines = pc.binary_join_element_wise(*fields, text(competition.field_separator), null_handling="replace")
    joined = pc.binary_join_element_wise(lines, text(""), text("\n"), null_handling="replace")
    values = joined.buffers()[2]
    offsets = np.frombuffer(joined.buffers()[1], np.int64, count=len(joined) + 1)[joined.offset :]
    first, size = int(offsets[0]), int(offsets[-1] - offsets[0])
    data = bytearray(size + SLACK)
    if size:
        data[:size] = memoryview(values)[first : first + size]
    return data, size


def _index(parquet):
    """The pandas index pandas stored with the frame: the name of its column, a (start, step) RangeIndex, or None."""
    meta = parquet.schema_arrow.metadata or {}
    try:
        pandas = json.loads(meta.get(b"pandas", b"{}"))
        index = (pandas.get("index_columns") or [None])[0]
    except (ValueError, AttributeError):
        return None
    if isinstance(index, str) and index in parquet.schema_arrow.names:
        return index
    if isinstance(index, dict) and index.get("kind") == "range":
        return int(index.get("start", 0)), int(index.get("step", 1))
    return None


def _positions(batch, index, start: int) -> list[str]:
    """Each row's position as text: its stored index value, or its place (after a RangeIndex's start and step)."""
    if isinstance(index, str):
        return [("" if value is None else str(value)) for value in batch.column(index).to_pylist()]
    first, step = index if isinstance(index, tuple) else (0, 1)
    return [str(first + step * row) for row in range(start, start + batch.num_rows)]


def name_rows(report, competition: Competition) -> None:
    """A Parquet file's problems name rows and columns: line N is row N - 1 (0-based), as a frame's problems are named."""
    from scorer import frames

    key = ", ".join(competition.key)
    for kept in report.kept.values():
        for problem in kept:
            if problem.line is None:
                continue
            problem.row, problem.line, problem.column = frames.row_of(problem.line), None, None
            problem.field = problem.field or (key if problem.code in ("S004", "S010", "S012") else competition.prediction)
            problem.context = problem.caret = None
            problem.message = re.sub(r"\bline (\d+)", lambda match: f"row {frames.row_of(int(match.group(1)))}", problem.message)
