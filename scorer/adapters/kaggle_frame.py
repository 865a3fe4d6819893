"""The Kaggle metric's way through a submission frame: its rows as the lines of the participant's CSV file.

A frame with the header's two columns is cut into batches of rows; each batch becomes the file's lines (Arrow
compute; blank lines where the frame's index skips rows, so line numbers stay the file's: index + 2) and is
parsed by the engine's kernel against the split's truth. Per-row problems do not depend on the truth and
repeated rows are judged over the whole submission, so every row is judged the same in every split; rows of
sessions outside the split are then ignored (their S012 is dropped). Memory: PARSE_THREADS + 1 batches of text at a time,
plus an int64 per row for the repeated-rows check. Pages the process never had are costly (on a VM each first touch
is a host fault: about 2 ms a MiB here, paid by the first call of a process), so the text is made CHUNK_ROWS rows at a
time in Arrow arrays the pool reuses, into batch buffers that are reused.
"""

from __future__ import annotations

import math
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from scorer.api import result_from
from scorer.engine.file_pass import Pass
from scorer.engine.problems import Code, Report
from scorer.engine.reader import Deadline, LimitExceeded
from scorer.engine.result import Result
from scorer.kernels import codes
from scorer.kernels.rows import SLACK
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth

BATCH_ROWS = 1 << 16  # rows per batch of text (about 10 MB at OTTO's 20 items a row: fewer fresh pages than larger ones)
CHUNK_ROWS = 1 << 13  # rows turned into Arrow strings and joined at once (about 1 MB of text: cache-sized, reused)
PARSE_THREADS = 2  # batches parsed at once (the kernel's spare row arrays are shared safely, as in Pass)
SPECIAL = '[,"\r\n]'  # bytes a CSV writer quotes


def _text(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.large_string())


# -- columns as text ------------------------------------------------------------------------------
def strings(column: pd.Series) -> pa.Array:
    """A column as the strings a CSV file would hold, unquoted: integral floats without '.0', missing values empty."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.cat.remove_unused_categories()  # a category no row holds is no text of the file (it may not encode)
    if pd.api.types.is_string_dtype(column.dtype) or pd.api.types.is_object_dtype(column.dtype):
        try:  # str objects or Arrow-backed strings: no Python loop (objects through numpy: a filtered Series is slower)
            source = column.to_numpy() if pd.api.types.is_object_dtype(column.dtype) else column
            return _filled(pa.array(source, type=pa.large_string(), from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass  # other objects among the strings
    if pd.api.types.is_bool_dtype(column.dtype):
        column = column.astype("string")
    elif pd.api.types.is_float_dtype(column.dtype):
        values = column.to_numpy(np.float64, na_value=np.nan)
        integral = np.isfinite(values) & (np.floor(values) == values) & (np.abs(values) < 2.0**63)
        text = column.astype("string")
        text[integral] = pd.Series(values[integral].astype(np.int64), index=column.index[integral]).astype("string")
        column = text
    elif not (pd.api.types.is_string_dtype(column.dtype) or pd.api.types.is_integer_dtype(column.dtype)):
        column = column.map(lambda value: "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value))
    return _filled(pa.array(column.astype("string"), type=pa.large_string(), from_pandas=True))


def _filled(array) -> pa.Array:
    """Missing values as empty strings (no copy when there are none)."""
    array = _combined(array)
    return pc.fill_null(array, _text("")) if array.null_count else array


def quoted(array: pa.Array) -> pa.Array:
    """Fields holding a comma, quote or line end quoted as a CSV writer does, so the engine sees one field."""
    special = pc.match_substring_regex(array, SPECIAL)
    if not pc.any(special).as_py():
        return array
    quotes = pc.binary_join_element_wise(_text('"'), pc.replace_substring(array, '"', '""'), _text('"'), _text(""))
    return _combined(pc.if_else(special, quotes, array))


def column_text(column: pd.Series) -> pa.Array:
    """A column as a CSV file's fields (see strings and quoted)."""
    return quoted(strings(column))


def _combined(array) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):  # pandas' Arrow-backed columns may come in several chunks
        array = array.combine_chunks()
    return array if array.type == pa.large_string() else array.cast(pa.large_string())


# -- line numbers ---------------------------------------------------------------------------------
def row_numbers(index: pd.Index) -> np.ndarray:
    """0-based row number in the file (line - 2) of each row: the frame's index when it can be one (Kaggle may
    filter the frame by the solution's ids and keep the labels), else the position."""
    if (len(index) and pd.api.types.is_integer_dtype(index.dtype) and index.is_monotonic_increasing and index.is_unique
            and index[0] >= 0 and index[-1] < 4 * len(index) + 1024):
        return index.to_numpy(np.int64)
    return np.arange(len(index), dtype=np.int64)


def index_gaps(index: pd.Index) -> np.ndarray:
    """gaps_of(row_numbers(index)), without an array per row for the plain index 0, 1, 2, ..."""
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return np.empty(0, np.int64)
    return gaps_of(row_numbers(index))


def gaps_of(row_number: np.ndarray) -> np.ndarray:
    """Blank lines to put before each row so that it lands on its line; empty when there are none."""
    gaps = np.diff(row_number, prepend=-1) - 1
    return gaps if gaps.any() else np.empty(0, np.int64)


def lines_data(lines: pa.Array, gaps: np.ndarray | None = None) -> tuple[bytearray, int]:
    """(buffer, size): the lines, each ended by a newline and preceded by its gap's blank lines, then SLACK zero
    bytes (as the kernel reads them)."""
    return ended_lines_data(pc.binary_join_element_wise(lines, _text("\n"), _text("")), gaps)


def ended_lines_data(ended: pa.Array, gaps: np.ndarray | None = None, spare: list | None = None) -> tuple[bytearray, int]:
    """lines_data of lines that end in their newline already: their bytes copied once, after the gaps' blank lines,
    into a buffer taken from `spare` when one there is large enough (its pages are mapped already)."""
    if gaps is not None and len(gaps):
        ended = pc.binary_join_element_wise(pc.binary_repeat(_text("\n"), pa.array(gaps)), ended, _text(""))
    ended = _filled(ended)
    if len(ended) == 0:
        return bytearray(SLACK), 0
    offsets = np.frombuffer(ended.buffers()[1], np.int64)[ended.offset : ended.offset + len(ended) + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    buffer = _buffer_of(end - start + SLACK, spare)
    view = np.frombuffer(buffer, np.uint8)
    if end > start:
        view[: end - start] = np.frombuffer(ended.buffers()[2], np.uint8)[start:end]
    view[end - start : end - start + SLACK] = 0
    return buffer, end - start


def _buffer_of(size: int, spare: list | None) -> bytearray:
    """A buffer of at least size bytes: a spare one if large enough, else a new one with room for a somewhat larger
    batch (a spare too small is dropped: its pages are fresh ones again in the next buffer)."""
    while spare:
        try:
            buffer = spare.pop()
        except IndexError:  # another thread took the last one
            break
        if len(buffer) >= size:
            return buffer
    return bytearray(size + size // 8)


# -- the pass -------------------------------------------------------------------------------------
class _SplitPass(Pass):
    """The engine's pass on the split's truth, fed with lines; repeated rows found over every row it reads."""

    def __init__(self, competition: Competition, truth: Truth, report: Report):
        super().__init__(competition, truth, report, threads=1, progress=False)
        self.keep_row_keys = True  # every row's key, also of sessions outside the split
        self.spare_buffers: list[bytearray] = []  # buffers of lines absorbed already (the report copies what it quotes)

    def _finish(self):
        self.n_duplicates = 0  # the slots hold the split's sessions only: repeats are judged below, over all rows
        outcome = super()._finish()
        self._repeated_rows_by_key()
        return outcome


def judge_rows(submission: pd.DataFrame, competition: Competition, truth: Truth, batch_rows: int = BATCH_ROWS) -> Result:
    """The strict Result of a frame whose columns are the header's, on the split's truth, rows of other sessions
    ignored; problems name the file's lines. The file's size and time limits hold as for a file."""
    started = time.monotonic()
    report = Report(strict=True)
    try:
        outcome = _run(submission, competition, truth, report, batch_rows, Deadline(competition.limits.max_seconds, started))
        for table in (report.kept, report.counts, report.covered):
            table.pop(Code.UNKNOWN_SESSIONS.code, None)  # rows of sessions outside the split: ignored
    except LimitExceeded as error:
        report.add(error.number, str(error), error.line, error.column, **error.words)
        report.fatal, outcome = True, None
    return result_from(competition, truth, report, outcome, f"<pandas DataFrame: {len(submission):,} rows>", True,
                       time.monotonic() - started)


def _run(submission: pd.DataFrame, competition: Competition, truth: Truth, report: Report, batch_rows: int, deadline: Deadline):
    """A batch's columns become strings and its lines on this thread (a chunk at a time: the worker threads need the
    GIL rarely) while PARSE_THREADS others parse the batches before; batches are absorbed in order."""
    run = _SplitPass(competition, truth, report)
    gaps = index_gaps(submission.index)
    columns = [ColumnText(submission.iloc[:, 0]), ColumnText(submission.iloc[:, 1])]
    file_bytes, lines_before = len(",".join(competition.header)) + 1, 1  # the header
    pending: deque = deque()

    def batch(first: int, stop: int) -> list:
        """The rows' fields, a pair of arrays per chunk; holds the GIL (Python objects)."""
        return list(zip(*(column.chunks(first, stop) for column in columns)))

    def absorb(first: int, stop: int, part_gaps, expected: int, parsing) -> None:
        nonlocal lines_before
        parsed, buffer = parsing.result()
        if _needs_quotes(parsed, buffer, expected):  # rare: the fields are made again rather than kept meanwhile
            run.kernel.release(parsed)
            run.spare_buffers.append(buffer)
            parsed, buffer = _lines_parsed(run, [[quoted(field) for field in fields] for fields in batch(first, stop)], part_gaps)
        run._absorb(parsed, lines_before)
        lines_before += parsed.last_line
        run.spare_buffers.append(buffer)

    with ThreadPoolExecutor(PARSE_THREADS) as pool:
        try:
            for first in range(0, len(submission), batch_rows):
                stop = min(first + batch_rows, len(submission))
                part_gaps = gaps[first:stop] if len(gaps) else None
                chunks = batch(first, stop)
                blank_lines = int(part_gaps.sum()) if part_gaps is not None else 0
                file_bytes += sum(_byte_size(field) for fields in chunks for field in fields) + 2 * (stop - first) + blank_lines
                if file_bytes > competition.limits.max_file_bytes:
                    file_bytes += _bytes_from(submission, first + batch_rows, batch_rows, gaps)
                    raise LimitExceeded(Code.FILE_TOO_LARGE, f"the file is {file_bytes:,} bytes, over the limit of {competition.limits.max_file_bytes:,}")
                pending.append((first, stop, part_gaps, stop - first + blank_lines, pool.submit(_parsed, run, *_lines(run, chunks, part_gaps))))
                del chunks
                while len(pending) > PARSE_THREADS:
                    absorb(*pending.popleft())
                deadline.check(file_bytes)
            while pending:
                absorb(*pending.popleft())
        finally:
            for *_, parsing in pending:
                parsing.cancel()
    return run._finish()


class ColumnText:
    """A frame column's strings (see strings), a slice of rows at a time, in chunks of CHUNK_ROWS rows: pandas' str
    objects become Arrow chunk by chunk, so Arrow's memory pool reuses a few small buffers instead of growing to the
    size of a batch or a column (the first call of a process would pay for its fresh pages)."""

    def __init__(self, column: pd.Series):
        self.column = column
        self.objects = column.to_numpy() if pd.api.types.is_object_dtype(column.dtype) else None

    def chunks(self, start: int, stop: int) -> list[pa.Array]:
        """The rows [start, stop) as strings, cut at start + CHUNK_ROWS, start + 2 * CHUNK_ROWS, ..."""
        if self.objects is None:  # no Python objects: one conversion, sliced without a copy
            whole = self.chunk(start, stop)
            return [whole.slice(first - start, CHUNK_ROWS) for first in range(start, stop, CHUNK_ROWS)]
        return [self.chunk(first, min(first + CHUNK_ROWS, stop)) for first in range(start, stop, CHUNK_ROWS)]

    def chunk(self, start: int, stop: int) -> pa.Array:
        """The rows [start, stop) as strings, in one array."""
        if self.objects is not None:
            try:
                return _filled(pa.array(self.objects[start:stop], type=pa.large_string(), from_pandas=True))
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                pass  # other objects among the strings
        return strings(self.column.iloc[start:stop])


def _byte_size(array: pa.Array) -> int:
    """Bytes of a large_string array's values (its offsets' span)."""
    offsets = np.frombuffer(array.buffers()[1], np.int64, len(array) + 1, array.offset * 8) if len(array) else np.zeros(1, np.int64)
    return int(offsets[-1] - offsets[0])


def _bytes_from(frame: pd.DataFrame, first: int, batch_rows: int, gaps: np.ndarray) -> int:
    """Bytes of the file's lines from row `first` on (the size limit's message names the whole file's size)."""
    total = int(gaps[first:].sum()) if len(gaps) else 0
    for start in range(first, len(frame), batch_rows):
        part = frame.iloc[start : start + batch_rows]
        total += 2 * len(part) + sum(pc.sum(pc.binary_length(column_text(column))).as_py() or 0 for _, column in part.items())
    return total


def _lines_parsed(run: _SplitPass, chunks: list, gaps: np.ndarray | None):
    """(the kernel's parse of the lines of the chunks' fields, their buffer)."""
    return _parsed(run, *_lines(run, chunks, gaps))


def _parsed(run: _SplitPass, buffer: bytearray, size: int):
    """(the kernel's parse of the buffer's lines, the buffer); the kernel releases the GIL."""
    return run.kernel.parse(np.frombuffer(buffer, np.uint8), 0, size, 1), buffer


def _lines(run: _SplitPass, chunks: list, gaps: np.ndarray | None) -> tuple[bytearray, int]:
    """(buffer, size): the lines of the chunks' fields, after their gaps' blank lines, then SLACK zero bytes, in a
    buffer taken from run.spare_buffers when one is large enough. Each chunk's lines are joined and copied in turn
    (small arrays, reused by the pool, still in the cache)."""
    lines = [len(fields[0]) for fields in chunks]
    size = sum(_byte_size(field) for fields in chunks for field in fields) + 2 * sum(lines)
    size += int(gaps.sum()) if gaps is not None else 0
    buffer = _buffer_of(size + SLACK, run.spare_buffers)
    view = np.frombuffer(buffer, np.uint8)
    end, first = 0, 0
    for (ids, labels), n_lines in zip(chunks, lines):
        ended = pc.binary_join_element_wise(ids, _text(","), labels, _text("\n"), _text(""))
        if gaps is not None and gaps[first : first + n_lines].any():
            ended = pc.binary_join_element_wise(pc.binary_repeat(_text("\n"), pa.array(gaps[first : first + n_lines])), ended, _text(""))
        first += n_lines
        n_bytes = _byte_size(ended)
        if n_bytes:
            start = np.frombuffer(ended.buffers()[1], np.int64, 1, ended.offset * 8)[0]
            view[end : end + n_bytes] = np.frombuffer(ended.buffers()[2], np.uint8, n_bytes, int(start))
        end += n_bytes
    view[end : end + SLACK] = 0
    return buffer, end


def _needs_quotes(parsed, buffer: bytearray, expected_lines: int) -> bool:
    """Did a field hold a comma, quote or line end (the lines then differ from a CSV writer's)?"""
    size = len(parsed.data)
    return (parsed.last_line != expected_lines or parsed.counts[codes.WRONG_FIELD_COUNT] > 0
            or buffer.find(b'"', 0, size) >= 0 or buffer.find(b"\r", 0, size) >= 0)
