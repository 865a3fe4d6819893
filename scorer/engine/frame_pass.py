"""One pass over a data frame: Arrow buffers → frame_rows kernel (chunks, threads) → Pass's merge and report.

Integer lists (OTTO's shape) go to scorer.kernels.frame_rows with no copy of their items. Text columns (labels
as a space-separated string, and the string shapes) are what the CSV kernels read: their lines are joined by
Arrow compute into one buffer, which the file's kernel parses. Either way the rows are merged, and the
missing, repeated and unknown ones reported, by scorer.engine.file_pass.Pass, so a frame scores as its CSV does.

Problems name the 0-based position of the row in the frame (`row`) and the column (`field`), not a line.
"""

from __future__ import annotations

import re
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from scorer import frames
from scorer.engine.file_pass import Pass, PassResult, _text
from scorer.engine.problems import CATALOGUE, Code
from scorer.errors import UsageError
from scorer.kernels import codes, door
from scorer.kernels.rows import frozen
from scorer.spec.competition import other_competition_hint

ID_CODES = {Code.WRONG_FIELD_COUNT, Code.MALFORMED_ID, Code.UNKNOWN_TYPE, Code.SESSION_NOT_INTEGER, Code.SESSION_OUT_OF_RANGE}  # about the id column
ITEM_FIELD = 2
ROW_CODES = {Code.DUPLICATE_ROW, Code.UNKNOWN_SESSIONS}  # the engine's messages about whole rows, which speak of lines
CHUNK_ROWS = 1 << 16  # rows per kernel job (a record batch is cut into pieces of this many): one row array each
TEXT_ROWS = 1 << 16  # rows of text columns joined into one buffer for the file's kernel


@dataclass
class _Job:
    """The kernel's arrays for n rows of the frame (see frame_rows), the first of them at row `start`."""

    ids: tuple
    keys: tuple
    lists: tuple
    n: int
    start: int
    columns: tuple  # the session and type columns, for the values problems quote (keys form)
    row_index: np.ndarray | None = None  # long form: the frame row of each list's first item

    def __post_init__(self):
        self.ids = (frozen(self.ids[0], np.uint8), frozen(self.ids[1], np.int64), frozen(self.ids[2], np.uint8), np.int64(self.ids[3]))
        self.keys = tuple(frozen(array, np.int64) for array in self.keys)
        offsets, list_valid, list_bit, values, value_valid, value_bit, value_line = self.lists  # int32 offsets are copied
        self.lists = (frozen(offsets, np.int64), frozen(list_valid, np.uint8), np.int64(list_bit), frozen(values, np.int64),
                      frozen(value_valid, np.uint8), np.int64(value_bit), frozen(value_line, np.int64))


class FramePass(Pass):
    """Pass over a frame (see the module docstring); run_frame takes its rows as scorer.frames.Batches. The wide forms
    are read a record batch at a time (a stream is never held whole); the long form and the impression shape, whose
    rows are grouped or aligned across the frame, read every batch first."""

    def run_frame(self, rows: frames.Batches) -> PassResult:
        if self.competition.shape == "impression":
            self._run_impressions(rows.read_all())
            return self._finish()
        if self.competition.table_reader:
            self._run_table(rows)
            outcome = self._finish()
            from scorer.engine.parquet_rows import name_rows

            name_rows(self.report, self.competition)
            return outcome
        try:
            form = frames.pick_form(rows.column_names, self.competition)
        except UsageError as error:
            raise UsageError(f"{error}{other_competition_hint(rows.column_names, self.competition)}") from None
        self.fields = self._field_names(form)
        labels = rows.schema.field(self.fields[2])
        if self.competition.shape != "id_type" or (form == "id_labels" and not frames.is_list(labels.type)):
            self._run_text(rows, form)
        else:
            self._run_lists(rows, form)
        outcome = self._finish()
        self._name_rows()
        return outcome

    def _field_names(self, form: str) -> tuple[str, str, str]:
        """The columns of the id (or session), the type and the labels (or item), as problems name them."""
        id_name, labels_name = self.competition.header
        return {"id_labels": (id_name, id_name, labels_name), "session_type_labels": ("session", "type", "labels"),
                "long": ("session", "type", "aid")}[form]

    # -- the table reader: each batch's rows made lines, as a Parquet file's are ------------------
    def _run_table(self, rows: frames.Batches) -> None:
        """The config's columns of each batch written as lines `position,field,...` (a list column's items joined; the
        position, 0-based, where the key holds `__index__`), parsed by the table reader's kernel in row order."""
        from scorer.engine.parquet_rows import lines_of

        missing = [name for name in self.competition.header if name not in rows.column_names]
        if missing:
            raise UsageError(f"the frame has columns {rows.column_names}; expected {', '.join(self.competition.header)} "
                             f"({missing[0]!r} is not there)")
        lines_before = 0
        for batch in rows:
            data, size = lines_of(batch, self.competition, [str(row) for row in range(rows.rows - batch.num_rows, rows.rows)])
            parsed = self.kernel.parse(np.frombuffer(data, np.uint8), 0, size, 1)
            self._absorb(parsed, lines_before)
            lines_before += parsed.last_line

    # -- the impression shape: a row per impression, in the truth's order ----------------------
    def _run_impressions(self, table) -> None:
        """Row i is impression i: its id, and a list of ranks (the config's column, or `ranks`) or of scores (`scores`,
        higher first, as ebrec's predictions are held), read as float64 by impression_frame_rows."""
        from scorer.kernels.kinds import VALUES_RANK, VALUES_SCORE

        id_name, list_name = self.competition.header
        names = table.column_names
        column = next((name for name in (list_name, "ranks", "scores") if name in names), None)
        if id_name not in names or column is None:
            raise UsageError(f"the frame has columns {names}; expected {id_name!r} and a list column {list_name!r}, 'ranks' or "
                             "'scores' (higher first)")
        kind = VALUES_SCORE if column == "scores" or (column == list_name and self.competition.values == "score") else VALUES_RANK
        ids, offsets, values = _impression_columns(table, id_name, column)
        kernel = self.kernel
        metric = (*kernel.metric[:3], np.int64(kind), *kernel.metric[4:])
        counts = np.zeros(codes.N_CODES, np.int64)
        found = np.zeros((kernel.max_per_code * codes.N_CODES, 5), np.int64)
        n_problems = door.kernel("impression_frame_rows")(0, len(ids), ids, offsets, values, kernel.truth_arrays, metric, kernel.scratch(),
                                                         self.slot_line, self.slot_values, counts, found, 0, np.int64(kernel.max_per_code))
        self.rows_read += len(ids)
        kept = np.zeros(codes.N_CODES, np.int64)
        what, expected = ("score", "a finite number") if kind == VALUES_SCORE else ("rank", "a number of at least 1 (1 is the first place)")
        for code, line, at, _, field in found[:n_problems].tolist():
            kept[code] += 1
            words = dict(self.format_keys, what=what, expected=expected)
            row = frames.row_of(line)
            if code == codes.IMPRESSION_ID_MISMATCH:
                words.update(value=repr(int(ids[row])) if ids[row] >= 0 else "null", expected=kernel.truth.name(row))
            elif code == codes.RANK_COUNT:
                words.update(value=f"{int(offsets[row + 1] - offsets[row]):,}", expected=f"{kernel.size_of(row):,}")
            elif code == codes.BAD_RANK:
                words.update(value=repr(float(values[at])))
            elif code == codes.EXTRA_LINES:
                words.update(expected=f"last impression (row {kernel.truth.n_sessions - 1:,})")
            self.report.add(code, row=row, field=column if field == ITEM_FIELD else id_name, **words)
        self.rows_with_errors += int(counts[codes.ROWS_WITH_ERRORS])
        for code in np.flatnonzero(counts[: codes.ROWS_WITH_ERRORS]):
            self.report.count_only(int(code), int(counts[code] - kept[code]))

    # -- integer lists: the frame kernel ------------------------------------------------------
    def _run_lists(self, rows: frames.Batches, form: str) -> None:
        from scorer.kernels.rows import scratch_for

        frame_rows = door.kernel("frame_rows")
        kernel = self.kernel
        # made as they are submitted, so the first pieces run while later batches are still being read
        jobs = iter([self._long_job(rows.read_all())]) if form == "long" else (self._wide_job(batch, form, start) for batch, start in _batches(rows))

        def run(piece):
            job, first, last = piece
            counts = np.zeros(codes.N_CODES, np.int64)
            found = np.zeros((kernel.max_per_code * codes.N_CODES, 5), np.int64)
            scratch = scratch_for(kernel.kmax)[:3]
            chunks, row, n_problems = [], first, 0
            while row < last:
                row_ints, row_values = kernel.rows()
                row, n_rows, n_problems = frame_rows(row, last, job.start, job.ids, job.keys, job.lists, kernel.idspec, kernel.truth,
                                                     kernel.metric, kernel.max_per_code, scratch, row_ints, row_values, counts, found,
                                                     n_problems)
                chunks.append((row_ints, row_values, n_rows))
            return job, chunks, counts, found[:n_problems]

        pieces = ((job, first, min(first + CHUNK_ROWS, job.n)) for job in jobs for first in range(0, job.n, CHUNK_ROWS))
        if self.threads == 1:
            for piece in pieces:
                self._absorb_piece(*run(piece))
            return
        pending: deque = deque()
        with ThreadPoolExecutor(self.threads) as pool:
            try:
                for piece in pieces:  # at most `threads` pieces in flight; they merge in frame order
                    pending.append(pool.submit(run, piece))
                    while len(pending) > self.threads:
                        self._absorb_piece(*pending.popleft().result())
                while pending:
                    self._absorb_piece(*pending.popleft().result())
            finally:
                for future in pending:
                    future.cancel()

    def _absorb_piece(self, job, chunks, counts, found) -> None:
        self._merge(chunks, 0)
        self.kernel.spare.extend((row_ints, row_values) for row_ints, row_values, _ in chunks)
        self._report_found(job, counts, found)

    def _report_found(self, job, counts: np.ndarray, found: np.ndarray) -> None:
        """The kernel's problem records as problems naming a row and a column, with the bad value."""
        if not len(found) and not counts.any():
            return
        id_bytes = job.ids[0]
        values = job.lists[3]
        kept = np.zeros(codes.N_CODES, np.int64)
        for code, line, start, end, field in found.tolist():
            kept[code] += 1
            words = dict(self.format_keys)
            if field == ITEM_FIELD:
                words["value"] = "null" if code == codes.ITEM_NOT_INTEGER else repr(int(values[start]))
                if code == codes.TOO_MANY_ITEMS:
                    cut = end - start  # the items from the first one past K, as the file's message counts them
                    words["value"], words["cut"] = f"{self.kmax_items + cut:,}", f"{cut:,}"
            elif len(id_bytes) or len(job.ids[1]):
                words["value"] = _text(id_bytes[start:end].tobytes())
            else:
                at = int(job.row_index[start]) if job.row_index is not None else start
                words["value"] = repr(job.columns[field][at].as_py())
            if code == codes.MALFORMED_ID:
                words["expected"] = repr(self.competition.id_pattern)
            elif code == codes.UNKNOWN_TYPE:
                words["expected"] = ", ".join(self.competition.types)
            self.report.add(code, row=frames.row_of(line), field=self.fields[field], **words)
        self.rows_with_errors += int(counts[codes.ROWS_WITH_ERRORS])
        for code in np.flatnonzero(counts[: codes.ROWS_WITH_ERRORS]):
            self.report.count_only(int(code), int(counts[code] - kept[code]))

    def _wide_job(self, batch, form: str, start: int) -> _Job:
        """The kernel's arrays of one record batch in the wide forms (views of its buffers)."""
        empty8, empty64 = np.empty(0, np.uint8), np.empty(0, np.int64)
        lists = _lists(batch.column(self.fields[2]), self.fields[2])
        if form == "id_labels":
            column = frames.strings(batch.column(self.fields[0]))
            if column is None:
                raise UsageError(f"column {self.fields[0]!r} must hold strings such as {self.competition.id_pattern!r}, "
                                 f"got {batch.column(self.fields[0]).type}")
            bitmap, bit = frames.validity(column)
            ids = (frames.buffer_view(column, 2, np.uint8, _data_size(column)), _offsets(column), bitmap, bit)
            return _Job(ids, (empty64, empty64, empty64), lists, batch.num_rows, start, ())
        session, kind = batch.column("session"), batch.column("type")
        keys = (_session_codes(session), self._type_indexes(kind), empty64)
        return _Job((empty8, empty64, empty8, 0), keys, lists, batch.num_rows, start, (session, kind))

    def _type_indexes(self, column) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        names = frames.strings(column)
        if names is None:
            raise UsageError(f"column 'type' must hold the type names ({', '.join(self.competition.types)}), got {column.type}")
        index = pc.index_in(names, value_set=pa.array(self.competition.types, pa.large_string()))
        return pc.fill_null(index, -1).to_numpy(zero_copy_only=False).astype(np.int64)

    def _long_job(self, table) -> _Job:
        """The long form (a row per item) as one list per (session, type), its items by rank, then row order (rows
        without a rank last); a row with a bad session or type is a list of its own, so that its problems are named.
        A list's line is its first row's."""
        import pyarrow as pa
        import pyarrow.compute as pc

        table = table.combine_chunks()
        n = table.num_rows
        type_column = table.column("type").combine_chunks()
        session = _session_codes(table.column("session"))
        kind = self._type_indexes(type_column)
        values, valid = _int64(table.column("aid").combine_chunks(), "aid")
        row = np.arange(n, dtype=np.int64)
        if "rank" in table.column_names:
            rank = table.column("rank").combine_chunks()
            if not (pa.types.is_integer(rank.type) or pa.types.is_floating(rank.type) or pa.types.is_null(rank.type)):
                raise UsageError(f"column 'rank' must hold numbers, got {rank.type}")
            unranked = rank.is_null().to_numpy(zero_copy_only=False)
            rank = pc.fill_null(rank.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
            order = np.lexsort((row, rank, unranked, kind, session))
        else:
            order = np.lexsort((row, kind, session))
        good = (session[order] >= 0) & (kind[order] >= 0)
        same = np.zeros(n, np.bool_)
        same[1:] = good[1:] & good[:-1] & (session[order][1:] == session[order][:-1]) & (kind[order][1:] == kind[order][:-1])
        group = np.cumsum(~same) - 1  # per sorted row: its (session, type) list
        n_groups = int(group[-1]) + 1 if n else 0
        first_row = np.minimum.reduceat(order, np.flatnonzero(~same)) if n else row
        by_first = np.argsort(first_row, kind="stable")  # lists in the order of their first rows
        place = np.empty(n_groups, np.int64)
        place[by_first] = np.arange(n_groups)
        final = order[np.argsort(place[group], kind="stable")]  # rows list by list, in list order
        offsets = np.zeros(n_groups + 1, np.int64)
        np.cumsum(np.bincount(place[group], minlength=n_groups), out=offsets[1:])
        heads = final[offsets[:-1]]
        bitmap = np.packbits(valid[final], bitorder="little") if valid is not None else np.empty(0, np.uint8)
        lists = (offsets, np.empty(0, np.uint8), 0, np.ascontiguousarray(values[final]), bitmap, 0, final + 1)
        keys = (session[heads], kind[heads], first_row[by_first] + 1)
        empty8, empty64 = np.empty(0, np.uint8), np.empty(0, np.int64)
        return _Job((empty8, empty64, empty8, 0), keys, lists, n_groups, 0,
                    (table.column("session").combine_chunks(), type_column), row_index=heads)

    # -- text columns: the file's kernel ------------------------------------------------------
    def _run_text(self, rows: frames.Batches, form: str) -> None:
        """Text columns, TEXT_ROWS rows at a time: their lines joined by Arrow compute into one zero-padded buffer,
        parsed by the file's kernel on the pass's threads and absorbed in row order (memory: the pieces in flight)."""
        import pyarrow as pa

        if form != "id_labels":
            raise UsageError(f"the labels of the form {', '.join(self.fields)} must be a list column")
        id_name, labels_name = self.competition.header
        for name in (id_name, labels_name):  # refused before any piece is made
            kind = rows.schema.field(name).type
            if not pa.types.is_dictionary(kind):  # a Categorical's strings are read from its dictionary (frames.strings)
                _as_text(pa.array([], kind), name)
        pieces = (self._text_piece(piece.column(id_name), piece.column(labels_name), id_name, labels_name)
                  for piece in _pieces(rows, TEXT_ROWS))
        lines_before = 0
        pending: deque = deque()
        with ThreadPoolExecutor(self.threads) as pool:
            try:
                for data, size in pieces:  # at most `threads` pieces parsed at once; absorbed in order
                    pending.append(pool.submit(self.kernel.parse, data, 0, size, 1))
                    while len(pending) > self.threads:
                        parsed = pending.popleft().result()
                        self._absorb(parsed, lines_before)
                        lines_before += parsed.last_line
                while pending:
                    parsed = pending.popleft().result()
                    self._absorb(parsed, lines_before)
                    lines_before += parsed.last_line
            finally:
                for future in pending:
                    future.cancel()

    @staticmethod
    def _text_piece(ids, labels, id_name: str, labels_name: str) -> tuple[np.ndarray, int]:
        """Rows as the CSV's lines (`id,labels\n`) in a buffer followed by SLACK zero bytes, and their size."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from scorer.kernels.rows import SLACK

        ids = _as_text(ids.combine_chunks(), id_name)
        labels = labels.combine_chunks()
        if frames.is_list(labels.type):
            labels = pc.binary_join(_as_text(labels, labels_name), pa.scalar(" ", pa.large_string()))
        else:
            labels = _as_text(labels, labels_name)
        text = lambda value: pa.scalar(value, pa.large_string())  # noqa: E731
        ended = pc.binary_join_element_wise(labels, text(""), text("\n"), null_handling="replace")
        lines = pc.binary_join_element_wise(ids, ended, text(","), null_handling="replace")
        offsets = _offsets(lines)
        first, size = (int(offsets[0]), int(offsets[-1] - offsets[0])) if len(offsets) else (0, 0)
        data = np.zeros(size + SLACK, np.uint8)
        if size:
            data[:size] = frames.buffer_view(lines, 2, np.uint8, first + size)[first:]
        return data, size

    # -- problems as rows ---------------------------------------------------------------------
    def _name_rows(self) -> None:
        """Problems of lines become problems of rows: line N is row N - 1; the column follows from the code."""
        for code, kept in self.report.kept.items():
            number = int(code[1:])
            for problem in kept:
                if problem.line is None:
                    continue
                problem.row, problem.line, problem.column = frames.row_of(problem.line), None, None
                if problem.field is None and number not in ROW_CODES and number in CATALOGUE:
                    problem.field = self.fields[0] if number in ID_CODES else self.fields[2]
                if number in ROW_CODES:
                    problem.message = re.sub(r"\bline (\d+)", lambda m: f"row {frames.row_of(int(m.group(1)))}", problem.message)


def write_csv(frame, competition, handle) -> str:
    """The frame's rows as the competition's CSV file would hold them (its header, then `id,labels` a row), written to
    the binary `handle` TEXT_ROWS rows at a time, for what reads a submission's bytes (explain's second pass, similar's
    sketch). The forms with the file's two columns, or session, type and labels where ids are `{session}_{type}`; a
    line N of the CSV is the frame's row N - 2. Returns the frame's description (scorer.frames.describe)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = frames.Batches(frame)
    form = frames.pick_form(rows.column_names, competition)
    id_name, labels_name = competition.header
    if form == "long" or (form == "session_type_labels" and competition.id_pattern != "{session}_{type}"):
        raise UsageError(f"this needs the submission's own columns ({id_name!r} and {labels_name!r}, or 'session', 'type' and "
                         "'labels'): give the file, or the frame in that form")
    handle.write(f"{id_name},{labels_name}\n".encode())
    for piece in _pieces(rows, TEXT_ROWS):
        if form == "id_labels":
            ids, labels = piece.column(id_name), piece.column(labels_name)
        else:
            session, kind = (_as_text(piece.column(name).combine_chunks(), name) for name in ("session", "type"))
            ids = pa.chunked_array([pc.binary_join_element_wise(session, kind, pa.scalar("_", pa.large_string()), null_handling="replace")])
            labels = piece.column("labels")
        data, size = FramePass._text_piece(ids, labels, id_name, labels_name)
        handle.write(memoryview(data)[:size])
    return frames.describe(frame, rows)


def _impression_columns(table, id_name: str, list_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The impression shape's columns as the kernel reads them: ids (int64, -1 for a null), the lists' offsets (a null
    list: empty) and their values (float64, NaN for a null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    id_column, lists = table.column(id_name), table.column(list_name)
    if not pa.types.is_integer(id_column.type):
        raise UsageError(f"column {id_name!r} holds {id_column.type}: impression ids are whole numbers")
    if not frames.is_list(lists.type) or not (pa.types.is_integer(lists.type.value_type) or pa.types.is_floating(lists.type.value_type)):
        raise UsageError(f"column {list_name!r} holds {lists.type}: it must be a list of numbers, one per candidate")
    if pa.types.is_unsigned_integer(id_column.type) and len(id_column) and (pc.max(id_column).as_py() or 0) > np.iinfo(np.int64).max:
        row = pc.index(pc.greater(id_column, pa.scalar(np.iinfo(np.int64).max, id_column.type)), True).as_py()
        raise UsageError(f"column {id_name!r}, row {row:,}: {id_column[row].as_py()} is past the largest impression id, 2^63 - 1")
    ids = pc.fill_null(pc.cast(id_column, pa.int64()), -1).to_numpy()
    lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # whole numbers past 2^53 are read as the nearest float64, as a file's ranks are (safe=False: pyarrow refuses otherwise)
    values = pc.fill_null(pc.cast(lists.flatten(), pa.float64(), safe=False), float("nan")).to_numpy(zero_copy_only=False)
    return frozen(ids), frozen(offsets), frozen(values)


def _batches(rows: frames.Batches):
    """(record batch, its first row) of each batch, in order."""
    start = 0
    for batch in rows:
        yield batch, start
        start += batch.num_rows


def _pieces(rows: frames.Batches, size: int):
    """The rows as Tables of `size` rows (the last one shorter), cut from and joined across the batches as they come."""
    import pyarrow as pa

    held, count = [], 0
    for batch in rows:
        while batch.num_rows:
            take = min(size - count, batch.num_rows)
            held.append(batch.slice(0, take))
            count += take
            batch = batch.slice(take)
            if count == size:
                yield pa.Table.from_batches(held)
                held, count = [], 0
    if held:
        yield pa.Table.from_batches(held)


def _offsets(array) -> np.ndarray:
    """The n + 1 offsets of a string or list array (int32 or int64, as stored; no copy)."""
    import pyarrow as pa

    wide = pa.types.is_large_string(array.type) or pa.types.is_large_list(array.type)
    return frames.buffer_view(array, 1, np.int64 if wide else np.int32, array.offset + len(array) + 1)[array.offset :]


def _data_size(array) -> int:
    offsets = _offsets(array)
    return int(offsets[-1]) if len(offsets) else 0


def _session_codes(column) -> np.ndarray:
    """Session ids as int64, null as NULL_SESSION and negative ones as NEGATIVE_SESSION."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from scorer.kernels.rows import NEGATIVE_SESSION, NULL_SESSION

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_integer(column.type):
        raise UsageError(f"column 'session' must hold integers, got {column.type}")
    if pa.types.is_uint64(column.type) and len(column) and pc.max(column).as_py() >= 2**63:
        raise UsageError("column 'session' holds ids over 2^63 - 1")
    values = pc.fill_null(column.cast(pa.int64()), NULL_SESSION).to_numpy()
    if column.null_count == 0 and (len(values) == 0 or values.min() >= 0):
        return values
    values = values.copy()
    values[values < 0] = NEGATIVE_SESSION
    if column.null_count:
        values[column.is_null().to_numpy(zero_copy_only=False)] = NULL_SESSION
    return values


def _int64(column, name: str):
    """(values, validity as bool or None) of an integer column."""
    import pyarrow as pa

    if not pa.types.is_integer(column.type):
        raise UsageError(f"column {name!r} must hold integers, got {column.type}")
    try:
        cast = column.cast(pa.int64())
    except pa.ArrowInvalid:
        raise UsageError(f"column {name!r} holds ids over 2^63 - 1") from None
    import pyarrow.compute as pc

    valid = cast.is_valid().to_numpy(zero_copy_only=False) if cast.null_count else None
    return pc.fill_null(cast, 0).to_numpy(), valid


def _lists(column, name: str):
    """The kernel's view of a list column: offsets, validity, values (int64), their validity; no copy when the
    values are int64 already."""
    import pyarrow as pa

    if not frames.is_list(column.type):
        raise UsageError(f"column {name!r} must be a list of integers, got {column.type}")
    if getattr(pa.types, "is_list_view", lambda _: False)(column.type):
        column = column.cast(pa.large_list(column.type.value_type))
    values = column.values
    if not pa.types.is_int64(values.type):
        if not (pa.types.is_integer(values.type) or pa.types.is_null(values.type)):  # null: lists of nulls only
            raise UsageError(f"column {name!r} must be a list of integers, got {column.type}")
        try:
            values = values.cast(pa.int64())
        except pa.ArrowInvalid:
            raise UsageError(f"column {name!r} holds item ids over 2^63 - 1") from None
    data = frames.buffer_view(values, 1, np.int64, values.offset + len(values))[values.offset :]
    list_bitmap, list_bit = frames.validity(column)
    value_bitmap, value_bit = frames.validity(values)
    offsets = _offsets(column)
    return offsets, list_bitmap, list_bit, data, value_bitmap, value_bit, np.empty(0, np.int64)


def _as_text(column, name: str):
    """A column (or a list column's items) as strings, as the CSV would hold them."""
    import pyarrow as pa

    if pa.types.is_dictionary(column.type):  # a Categorical or Enum column
        text = frames.strings(column)
        if text is not None:
            return text
    target = pa.large_list(pa.large_string()) if frames.is_list(column.type) else pa.large_string()
    try:
        return column.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise UsageError(f"column {name!r} of type {column.type} cannot be read as text") from None
