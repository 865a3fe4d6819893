"""A Parquet submission read by the table reader, as its participants wrote it with pandas (Amazon KDD Cup 2023): each
row becomes a line `position,column,...` of the config's columns, a list column's items joined by the item separator,
record batch by record batch, so the table reader's kernel parses and scores it as it does a CSV's lines.

A row's position (the key part `__index__`) is the frame's pandas index where the file stores one (a RangeIndex in its
pandas metadata, or an index column), else its place in the file (0-based). The lines have no header: line N is row
N - 1, and name_rows turns the problems' lines into rows and columns, as a data frame's problems are named. Limits hold
as for a CSV: the file's size, the lines' bytes (max_decompressed_bytes), each line's length, the time.

Memory stays bounded by the limits, whatever the file's few bytes say: a row group whose declared size means a row over the
line limit is not read (a 10 KB file can hold a value of 300 MB); a text column whose dictionary could repeat a long value
past what its rows hold within the limit is read as a dictionary, never expanded (a 1 KB file can name an 8 KB value
200,000 times); and each value, and each list, is cut just past the line limit before any line is made (cut_long), so a
row over the limit is still over it, and scores as such (S022), while no batch's lines hold much more than the limit a row.
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

BATCH_ROWS, BATCH_BYTES = 8192, 16 << 20  # rows made into lines at a time: at most this many, and no more lines at the limit than fit
READ_ERRORS = (OSError, ValueError, TypeError, KeyError, IndexError)  # pyarrow's errors derive from these
PARQUET_PER_BYTE, PARQUET_PER_ROW = 8, 1024  # a row's Parquet bytes (uncompressed, plain) are at most this times its line's, and this more
MAX_PANDAS_METADATA = 1 << 20  # a frame's pandas metadata longer than this is no pandas frame's


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
                for name in columns:
                    check_column(parquet.schema_arrow.field(name).type, name)
                index = _index(parquet, self.name)
                stored = [index] if isinstance(index, str) else []
                held = self._dictionaries(parquet, raw, columns + stored)
                if held:
                    parquet = pq.ParquetFile(raw, read_dictionary=held)
                start = 0
                rows = max(16, min(BATCH_ROWS, BATCH_BYTES // self.competition.limits.max_line_bytes))
                for batch in parquet.iter_batches(batch_size=rows, columns=columns + stored):
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

    def _dictionaries(self, parquet, raw, columns: list[str]) -> list[str]:
        """Check each row group's declared sizes before it is read (see the module docstring), and return the text leaves
        to read as dictionaries: those whose dictionary's longest value, repeated as often as the leaf has values, could
        decode to more text than the rows hold within the line limit (a few bytes of file can name a long value a million
        times). An honest file has none, and is read as pyarrow decodes it (a dictionary read costs a hash per value)."""
        import pyarrow.parquet as pq

        limit, metadata = self.competition.limits.max_line_bytes, parquet.metadata
        leaves = {parquet.schema.column(at).path: at for at in range(len(parquet.schema))
                  if parquet.schema.column(at).path.split(".")[0] in columns}
        held, first, values = set(), 0, dict.fromkeys(leaves, 0)
        for group in range(metadata.num_row_groups):
            self.deadline.check(0)
            chunks = metadata.row_group(group)
            rows = chunks.num_rows
            room = rows * (PARQUET_PER_BYTE * limit + PARQUET_PER_ROW) + (1 << 20)  # the most honest rows can take
            for at in range(chunks.num_columns):
                chunk = chunks.column(at)
                if chunk.path_in_schema not in leaves:
                    continue
                values[chunk.path_in_schema] += chunk.num_values
                over = (f"{chunk.total_uncompressed_size:,} bytes" if chunk.total_uncompressed_size > room else
                        f"{chunk.num_values:,} values" if chunk.num_values > rows * (limit + 1) + 1024 else None)
                if over:
                    raise LimitExceeded(Code.LINE_TOO_LONG, f"more than {limit:,}", line=first + 1, max_line_bytes=limit,
                                        ending=f" (row group {group + 1} holds {over} in column {chunk.path_in_schema.split('.')[0]!r} for "
                                               f"its {rows:,} row(s))")
                if chunk.has_dictionary_page and chunk.path_in_schema not in held:
                    probe = pq.ParquetFile(raw, metadata=metadata, read_dictionary=[chunk.path_in_schema], pre_buffer=False,
                                           buffer_size=1 << 16)  # the footer read once; of the chunk, only the pages one row needs
                    if chunk.num_values * _longest_value(probe, group, chunk.path_in_schema) > rows * (limit + 1):
                        held.add(chunk.path_in_schema)
            first += rows
        most = max(values.values(), default=0)
        if most > self.max_decompressed_bytes:  # a value takes a byte of its line at least (its separator)
            raise LimitExceeded(Code.DECOMPRESSED_TOO_LARGE, f"a column holds {most:,} values, more than the limit of "
                                                             f"{self.max_decompressed_bytes:,} bytes of rows could")
        return sorted(held)


def _longest_value(probe, group: int, path: str) -> int:
    """The byte length of the longest value of a leaf's dictionary in a row group (one row read by `probe`, a ParquetFile
    reading the leaf as a dictionary)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    name = path.split(".")[0]
    for batch in probe.iter_batches(batch_size=1, row_groups=[group], columns=[name]):
        column = batch.column(0)
        while not pa.types.is_dictionary(column.type) and hasattr(column, "values"):
            column = column.values
        if pa.types.is_dictionary(column.type):
            return int(pc.max(pc.binary_length(column.dictionary)).as_py() or 0)
        break
    return 0


def check_column(kind, name: str) -> None:
    """A column the table reader can write as text: numbers, text or a list of them; SubmissionError naming it otherwise."""
    from scorer import frames

    inner = kind.value_type if frames.is_list(kind) or _is_fixed_list(kind) else kind
    if not _scalar(inner):
        raise SubmissionError(f"column {name!r} holds {kind}: expected text or numbers"
                              f"{', or a list of them' if frames.is_list(kind) or _is_fixed_list(kind) else ''}")


def _scalar(kind) -> bool:
    import pyarrow as pa

    kind = kind.value_type if pa.types.is_dictionary(kind) else kind
    return (_text_kind(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)
            or pa.types.is_null(kind) or pa.types.is_decimal(kind))


def _text_kind(kind, views: bool = True) -> bool:
    """Is it text or bytes (string, binary, their large forms; with views, their view forms)?"""
    import pyarrow as pa

    view = views and (getattr(pa.types, "is_string_view", lambda _: False)(kind) or getattr(pa.types, "is_binary_view", lambda _: False)(kind))
    return view or pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _is_fixed_list(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_fixed_size_list(kind)


def _lengths(values) -> np.ndarray:
    """Each value's bytes written as text (0 for a null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(values.type):  # the dictionary's lengths, taken: never decoded
        indices = values.indices.to_numpy(zero_copy_only=False)  # a null index: a float NaN (and for unsigned indices)
        taken = np.where(np.isnan(indices), -1, indices).astype(np.int64) if indices.dtype.kind == "f" else indices.astype(np.int64)
        return np.append(_lengths(values.dictionary), 0)[taken]
    return pc.fill_null(pc.binary_length(_as_bytes(values)), 0).to_numpy(zero_copy_only=False).astype(np.int64)


NUMBER_BYTES = 24  # the most a number takes written as text ('-9223372036854775808', '-1.2345678901234567e-308')


def _fits(column, limit: int) -> bool:
    """Does every value (a list: its items joined) take at most limit bytes as text? Worked out from the offsets alone (for
    numbers, from their count): the honest file's answer, at a cost per row, not per item. False where it cannot tell."""
    import pyarrow as pa

    from scorer import frames

    def ends(array) -> np.ndarray | None:
        """Where each text value ends (its offsets, as numpy, no copy); None for another type."""
        kind = array.type
        large = pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
        if not _text_kind(kind, views=False):
            return None
        return np.frombuffer(array.buffers()[1], np.int64 if large else np.int32, len(array) + 1, array.offset * (8 if large else 4))

    kind = column.type
    number = pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean
    if frames.is_list(kind) and not getattr(pa.types, "is_list_view", lambda _: False)(kind):
        lists = column.offsets.to_numpy()
        counts = lists[1:] - lists[:-1]
        separators = np.maximum(counts, 1) - 1
        if any(test(kind.value_type) for test in number):
            return bool((counts * NUMBER_BYTES + separators).max(initial=0) <= limit)
        items = ends(column.values)
        return items is not None and bool((items[lists[1:]] - items[lists[:-1]] + separators).max(initial=0) <= limit)
    if any(test(kind) for test in number):
        return NUMBER_BYTES <= limit
    values = None if frames.is_list(kind) or _is_fixed_list(kind) else ends(column)
    return values is not None and bool((values[1:] - values[:-1]).max(initial=0) <= limit)


def cut_long(column, limit: int):
    """The column with each text value cut to limit + 1 characters and each list to its items up to the one whose end
    (joined) reaches past limit bytes: a line within the limit is unchanged, one over it stays over it, and none is much
    longer. A column with nothing to cut is returned as it is; a dictionary is cut in its values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scorer import frames

    kind = column.type
    if _fits(column, limit):
        return column
    if frames.is_list(kind) or _is_fixed_list(kind):
        lists, offsets, whole = _large_lists(column)
        items = cut_long(whole, limit)
        reach = np.concatenate([[0], np.cumsum(_lengths(items) + 1)])
        kept = np.minimum(np.searchsorted(reach, reach[offsets[:-1]] + limit + 1, side="right"), offsets[1:])
        cut = np.flatnonzero(kept < offsets[1:])
        if not len(cut) and items is whole:
            return column
        if len(cut):
            keep = np.ones(len(items), np.bool_)
            for row in cut:
                keep[kept[row] : offsets[row + 1]] = False
            items = items.filter(pa.array(keep))
            offsets = np.concatenate([[0], np.cumsum(kept - offsets[:-1])])
        return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), items, mask=lists.is_null())
    if pa.types.is_dictionary(kind):
        dictionary = column.dictionary
        values = cut_long(dictionary, limit)
        return column if values is dictionary else values.take(column.indices)
    if not _text_kind(kind) or _lengths(column).max(initial=0) <= limit + 1:
        return column
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or getattr(pa.types, "is_string_view", lambda _: False)(kind):
        return pc.utf8_slice_codeunits(column.cast(pa.large_string()), 0, limit + 1)  # whole characters: no S016 made by the cut
    return pc.binary_slice(_as_bytes(column), 0, limit + 1)


def _large_lists(column):
    """A list column as large lists: (the lists, their offsets counted from 0, the items they hold)."""
    import pyarrow as pa

    lists = column.cast(pa.large_list(column.type.value_type))
    base = lists.offsets[0].as_py()
    offsets = lists.offsets.to_numpy() - base
    return lists, offsets, lists.values.slice(base, int(offsets[-1]))


def _as_bytes(column):
    """The column's values as their text's bytes (large_binary): text as it is (bytes that are not UTF-8 too, which the
    kernel then locates, S016, as in a CSV), numbers as pyarrow writes them, a dictionary's values taken."""
    import pyarrow as pa

    if pa.types.is_dictionary(column.type):
        return _as_bytes(column.dictionary).take(column.indices)
    return column.cast(pa.large_binary()) if _text_kind(column.type) else column.cast(pa.large_string()).cast(pa.large_binary())


def lines_of(batch, competition: Competition, positions) -> tuple[bytearray, int]:
    """A record batch's rows as lines `position,field,...` (the position only where the key holds it; a list column's
    items joined by the item separator), then SLACK zero bytes: (the buffer, the lines' size). Each column is cut just past
    the line limit first (cut_long)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scorer import frames

    text = lambda value: pa.scalar(value.encode(), pa.large_binary())  # noqa: E731
    fields = [pa.array(positions, pa.large_string()).cast(pa.large_binary())] if ROW_INDEX in competition.key else []
    for name in competition.header:
        column = batch.column(name)
        check_column(column.type, name)
        column = cut_long(column, competition.limits.max_line_bytes)
        if frames.is_list(column.type) or _is_fixed_list(column.type):
            lists, offsets, values = _large_lists(column)
            items = pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), _as_bytes(values), mask=lists.is_null())
            fields.append(pc.binary_join(items, text(competition.item_separator)))
        else:
            fields.append(_as_bytes(column))
    lines = pc.binary_join_element_wise(*fields, text(competition.field_separator), null_handling="replace")
    joined = pc.binary_join_element_wise(lines, text(""), text("\n"), null_handling="replace")
    values = joined.buffers()[2]
    offsets = np.frombuffer(joined.buffers()[1], np.int64, count=len(joined) + 1)[joined.offset :]
    first, size = int(offsets[0]), int(offsets[-1] - offsets[0])
    data = bytearray(size + SLACK)
    if size:
        data[:size] = memoryview(values)[first : first + size]
    return data, size


def _index(parquet, name: str):
    """The pandas index pandas stored with the frame: the name of its column, a (start, step) RangeIndex, or None. The
    metadata is the participant's: a part that is not as pandas writes it is a SubmissionError naming it."""
    meta = parquet.schema_arrow.metadata or {}
    text = meta.get(b"pandas", b"{}")
    if len(text) > MAX_PANDAS_METADATA:
        raise SubmissionError(f"the Parquet file {name} has pandas metadata of {len(text):,} bytes, over the {MAX_PANDAS_METADATA:,} a "
                              "frame's may have")
    try:
        pandas = json.loads(text)
        index = (pandas.get("index_columns") or [None])[0]
    except (ValueError, AttributeError, TypeError, IndexError, KeyError, RecursionError):
        return None
    if isinstance(index, str) and index in parquet.schema_arrow.names:
        check_column(parquet.schema_arrow.field(index).type, index)
        return index
    if isinstance(index, dict) and index.get("kind") == "range":
        start, step = index.get("start", 0), index.get("step", 1)
        if not all(isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 63 for value in (start, step)):
            raise SubmissionError(f"the Parquet file {name}'s pandas metadata has a RangeIndex of start {start!r} and step {step!r}: "
                                  "expected whole numbers")
        return start, step
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
