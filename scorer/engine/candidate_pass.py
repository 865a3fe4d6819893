"""One pass over a long candidate table (session, aid, optional type and score): the hits of every list and the
length of every list, read by scorer.kernels.candidates from the Arrow buffers in place.

The table comes as record batches (a frame's, or a Parquet file's row group by row group, or a CSV's blocks), so a
file larger than memory is read in one pass. A batch is cut into pieces at session changes, which run on threads;
the run of rows a batch ends with is carried into the next batch (only those rows are copied). A session whose rows
are not together (a table concatenated type by type, say) is found after the pass: the table is then sorted by
session (stable, so row order within a session is kept) and read again, and a warning says so.

Problems name the 0-based row of the table and the column, as a frame's problems do (docs/frames.md).
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scorer import frames
from scorer.engine.id_kernel import truth_arrays as id_truth_arrays
from scorer.engine.problems import Code, Report
from scorer.errors import SubmissionError, UsageError
from scorer.kernels import codes, door
from scorer.kernels.rows import frozen
from scorer.wording import counted

PIECE_ROWS = 1 << 20  # rows per kernel job
HIT_CAPACITY = 1 << 16  # hits one kernel call writes before it returns for the caller to keep them
UNKNOWN_CAPACITY = 1 << 14
SESSION_NAMES = ("session",)
ITEM_NAMES = ("aid", "item", "article_id", "item_id")


@dataclass
class CandidateOutcome:
    """What the pass found: per slot (session index * n_types + type) the list's length; per hit its slot, its
    rank (0-based) and whether another candidate of its list has its score; the problems."""

    slot_candidates: np.ndarray
    hit_slot: np.ndarray
    hit_rank: np.ndarray
    hit_tied: np.ndarray
    session_runs: np.ndarray
    report: Report
    rows: int = 0
    unknown_rows: int = 0
    unknown_sessions: int = 0
    has_scores: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Columns:
    """A batch's columns as the kernel reads them (Arrow arrays), and the ones problems quote."""

    session: object  # integer array (codes for the string shapes)
    item: object
    type_code: object | None  # int8: -1 no type, -2 unknown, else the type's index
    score: object | None
    shown: dict  # field name -> the original column, for the values problems quote
    start: int  # the row of the table this batch starts at

    def __len__(self) -> int:
        return len(self.session)

    def slice(self, first: int, stop: int | None = None) -> _Columns:
        n = (stop if stop is not None else len(self)) - first
        cut = lambda array: None if array is None else array.slice(first, n)  # noqa: E731
        return _Columns(cut(self.session), cut(self.item), cut(self.type_code), cut(self.score),
                        {name: cut(array) for name, array in self.shown.items()}, self.start + first)

    @staticmethod
    def concat(parts: list[_Columns]) -> _Columns:
        import pyarrow as pa

        if len(parts) == 1:
            return parts[0]
        join = lambda arrays: None if arrays[0] is None else pa.concat_arrays(arrays)  # noqa: E731
        return _Columns(join([p.session for p in parts]), join([p.item for p in parts]), join([p.type_code for p in parts]),
                        join([p.score for p in parts]), {name: join([p.shown[name] for p in parts]) for name in parts[0].shown},
                        parts[0].start)


class CandidatePass:
    """Reads a candidate table against a truth (see the module docstring): run(source) -> CandidateOutcome."""

    def __init__(self, competition, truth, max_per_code: int = 20, threads: int = 2):
        self.competition, self.truth = competition, truth
        self.n_types = len(truth.types)
        self.max_per_code, self.threads = max_per_code, threads
        self.strings = competition.shape != "id_type"
        self.type_names = pa_strings(truth.types)

    # -- the columns ----------------------------------------------------------------------------------
    def names(self, columns: list[str]) -> dict[str, str | None]:
        """The table's session, item, type and score columns (type and score may be absent)."""
        session_names = SESSION_NAMES + ((self.competition.header[0],) if self.strings else ())
        session = next((name for name in session_names if name in columns), None)
        item = next((name for name in ITEM_NAMES if name in columns), None)
        if session is None or item is None:
            raise SubmissionError(f"the candidates have columns {columns}; expected {' or '.join(map(repr, session_names))}, "
                                  f"{' or '.join(map(repr, ITEM_NAMES))}, and optionally 'type' and 'score'")
        return {"session": session, "item": item, "type": "type" if "type" in columns and not self.strings else None,
                "score": "score" if "score" in columns else None}

    def _columns(self, batch, names: dict, start: int) -> _Columns:
        import pyarrow as pa

        def column(name):
            array = batch.column(name)
            return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array

        session, item = column(names["session"]), column(names["item"])
        shown = {names["session"]: session, names["item"]: item}
        if self.strings:
            session_codes = self._string_codes(session, names["session"], self.truth.ids)
            item_codes = self._string_codes(item, names["item"], self.truth.item_names)
        else:
            session_codes, item_codes = _integers(session, names["session"]), _integers(item, names["item"])
        type_code = None
        if names["type"]:
            shown["type"] = column("type")
            type_code = self._type_codes(shown["type"])
        score = None
        if names["score"]:
            score = _scores(column("score"))
            shown["score"] = score
        return _Columns(session_codes, item_codes, type_code, score, shown, start)

    def _type_codes(self, array):
        import pyarrow as pa
        import pyarrow.compute as pc

        if pa.types.is_dictionary(array.type):
            names = frames.strings(array.dictionary)
            if names is None:
                raise SubmissionError(f"column 'type' must hold the type names ({', '.join(self.truth.types)}), got {array.type}")
            mapping = pc.fill_null(pc.index_in(names, value_set=self.type_names), -2).to_numpy(zero_copy_only=False).astype(np.int8)
            indices = pc.fill_null(array.indices, 0).to_numpy(zero_copy_only=False)
            out = mapping[indices] if len(mapping) else np.full(len(array), -2, np.int8)
        else:
            names = frames.strings(array)
            if names is None:
                raise SubmissionError(f"column 'type' must hold the type names ({', '.join(self.truth.types)}), got {array.type}")
            out = pc.fill_null(pc.index_in(names, value_set=self.type_names), -2).to_numpy(zero_copy_only=False).astype(np.int8)
        if array.null_count:
            out[array.is_null().to_numpy(zero_copy_only=False)] = -1
        return pa.array(out)

    def _string_codes(self, array, name: str, table):
        import pyarrow as pa

        text = frames.strings(array)
        if text is None:
            raise SubmissionError(f"column {name!r} must hold strings, got {array.type}")
        offsets = frames.buffer_view(text, 1, np.int64, text.offset + len(text) + 1)[text.offset:]
        size = int(offsets[-1]) if len(offsets) else 0
        buf = np.zeros(size + 8, np.uint8)
        if size:
            buf[:size] = frames.buffer_view(text, 2, np.uint8, size)
        out = door.kernel("string_codes")(buf, np.ascontiguousarray(offsets), *table.arrays(), np.int64(table.size),
                                          np.empty(len(text), np.int64))
        return pa.array(out, mask=text.is_null().to_numpy(zero_copy_only=False) if text.null_count else None)

    # -- the pass -------------------------------------------------------------------------------------
    def run(self, source) -> CandidateOutcome:
        outcome, reopened = self._pass(source.batches(), source.names)
        if reopened is None:
            return outcome
        table, order = source.sorted_by(source.names["session"])
        outcome, _ = self._pass(((batch, start) for batch, start in _table_batches(table)), source.names, order)
        outcome.warnings.append(f"the candidates are not grouped by session (session {reopened} has rows apart from each other): "
                                "they were sorted by session first (row order kept within a session), which holds the table in memory")
        return outcome

    def _pass(self, batches, names: dict, order: np.ndarray | None = None):
        truth = self.truth
        n_slots = len(truth.indptr) - 1
        report = Report(strict=False, max_per_code=self.max_per_code)
        per_code = report.max_per_code  # 1 when 0 was asked for: the first of each code still carries its count
        slot_candidates = np.zeros(n_slots, np.int64)
        truth_arrays = id_truth_arrays(truth)
        session_truth = truth.indptr[self.n_types :: self.n_types] - truth.indptr[: -1 : self.n_types]
        most_truth = int(session_truth.max()) if len(session_truth) else 0  # a session's hits all fit in one call's arrays
        local = threading.local()
        states: list[dict] = []
        lock = threading.Lock()

        def state() -> dict:
            if not hasattr(local, "state"):
                local.state = worker_state(truth.n_sessions, self.n_types, most_truth)
                with lock:
                    states.append(local.state)
            return local.state

        def run(piece: _Columns):
            mine = state()
            views = _views(piece)
            kept = []
            counts = np.zeros(codes.N_CODES, np.int64)
            found = np.zeros((per_code * codes.N_CODES, 3), np.int64)
            hits, unknown = mine["hits"], mine["unknown"]
            out_hits, out_unknown = [], []
            row, stop = 0, len(piece)
            while True:
                hits[3][0] = 0
                unknown[1][:] = 0
                row, n_found = door.kernel("candidate_runs")(
                    row, stop, np.int64(piece.start), views, truth_arrays, np.int64(self.n_types), np.int64(per_code),
                    mine["tables"], mine["scratch"], slot_candidates, mine["runs"], hits, unknown, found, counts)
                kept.extend(map(tuple, found[:n_found].tolist()))
                n_hits = int(hits[3][0])
                out_hits.append((hits[0][:n_hits].copy(), hits[1][:n_hits].copy(), hits[2][:n_hits].copy()))
                n_unknown = int(unknown[1][0])
                rows = unknown[0][:n_unknown].copy()
                out_unknown.append((rows, _session_values(views)[rows - piece.start], int(unknown[1][1])))
                if row >= stop:
                    break
                counts_so_far = counts.copy()
                counts[:] = 0
                found[:] = 0
                kept.append(("counts", counts_so_far))
            return piece, kept, counts, out_hits, out_unknown

        results = {"hits": [], "unknown": [], "rows": 0}

        def absorb(done) -> None:
            piece, kept, counts, out_hits, out_unknown = done
            self._report(report, piece, kept, counts, order)
            results["hits"].extend(out_hits)
            results["unknown"].extend(out_unknown)
            results["rows"] += len(piece)

        pending: deque = deque()
        with ThreadPoolExecutor(self.threads) as pool:
            try:
                for piece in _pieces(self, batches, names):
                    pending.append(pool.submit(run, piece))
                    while len(pending) > self.threads:
                        absorb(pending.popleft().result())
                while pending:
                    absorb(pending.popleft().result())
            finally:
                for future in pending:
                    future.cancel()
        runs = np.zeros(truth.n_sessions, np.int64)
        for mine in states:
            runs += mine["runs"]
        if (runs > 1).any():
            first = int(np.flatnonzero(runs > 1)[0])
            return None, _session_name(truth, first)
        hit_parts = results["hits"]
        hit_slot = np.concatenate([part[0] for part in hit_parts]) if hit_parts else np.empty(0, np.int64)
        hit_rank = np.concatenate([part[1] for part in hit_parts]) if hit_parts else np.empty(0, np.int64)
        hit_tied = np.concatenate([part[2] for part in hit_parts]) if hit_parts else np.empty(0, np.bool_)
        outcome = CandidateOutcome(slot_candidates, hit_slot, hit_rank, hit_tied, runs, report, rows=results["rows"],
                                   has_scores=names["score"] is not None)
        self._unknown(outcome, results["unknown"], names, order)
        self._missing(outcome)
        return outcome, None

    # -- problems ---------------------------------------------------------------------------------------
    def _report(self, report: Report, piece: _Columns, kept: list, counts: np.ndarray, order) -> None:
        shown_count = np.zeros(codes.N_CODES, np.int64)
        total = np.zeros(codes.N_CODES, np.int64)
        session_name = next(iter(piece.shown))
        item_name = list(piece.shown)[1]
        for record in kept:
            if record[0] == "counts":
                total += record[1]
                continue
            code, row, value = record
            at = row - piece.start
            number = Code(code)
            words: dict = {}
            if number in (Code.SESSION_NOT_INTEGER, Code.SESSION_OUT_OF_RANGE):
                column = session_name
            elif number == Code.UNKNOWN_TYPE:
                column = "type"
                words["expected"] = ", ".join(self.truth.types)
            elif number == Code.VALUE_NOT_NUMBER:
                column = "score"
            else:
                column = item_name
                words["hint"] = ""
            shown = piece.shown[column][at].as_py()
            text = "null" if shown is None else repr(shown)
            if number == Code.DUPLICATE_ITEMS:
                text = f"{text} of session {piece.shown[session_name][at].as_py()!r}"
            report.add(number, text, row=_original(row, order), field=column, **words)
            shown_count[code] += 1
        total += counts
        for code in np.flatnonzero(total[: codes.ROWS_WITH_ERRORS] > shown_count[: codes.ROWS_WITH_ERRORS]):
            report.count_only(Code(int(code)), int(total[code] - shown_count[code]))

    def _unknown(self, outcome: CandidateOutcome, parts: list, names: dict, order) -> None:
        """S012: the candidates of sessions the truth lacks (left out), counted, the first five named."""
        if not parts:
            return
        rows = np.concatenate([p[0] for p in parts])
        keys = np.concatenate([p[1] for p in parts])
        outcome.unknown_rows = sum(p[2] for p in parts)
        if not len(rows):
            return
        outcome.unknown_sessions = len(np.unique(keys))
        examples = ", ".join(f"row {_original(int(row), order)}" for row in rows[:5])
        are = "is" if outcome.unknown_rows == 1 else "are"
        outcome.report.add(Code.UNKNOWN_SESSIONS, f"{counted(outcome.unknown_rows, 'candidate row')} of "
                           f"{counted(outcome.unknown_sessions, 'session')} the truth does not hold {are} left out "
                           f"(first rows: {examples})", field=names["session"],
                           count=outcome.unknown_rows)

    def _missing(self, outcome: CandidateOutcome) -> None:
        """S011: sessions of the truth (with truth for some type) that have no candidate row."""
        truth = self.truth
        labelled = truth.sizes.sum(axis=1) > 0 if truth.n_sessions else np.zeros(0, bool)
        missing = np.flatnonzero(labelled & (outcome.session_runs == 0))
        if len(missing):
            examples = ", ".join(repr(_session_name(truth, int(index))) for index in missing[:5])
            have = "has" if len(missing) == 1 else "have"
            outcome.report.add(Code.MISSING_ROWS, f"{counted(len(missing), 'session')} of the truth {have} no candidates (their truth "
                               f"counts as missed), e.g. {examples}", count=len(missing))


def _original(row: int, order) -> int:
    """The row of the table as given (the pass may read it sorted by session)."""
    return int(order[row]) if order is not None else int(row)


def _session_name(truth, index: int):
    return truth.name(index) if hasattr(truth, "ids") else int(truth.sessions[index])


def worker_state(n_sessions: int, n_types: int, most_truth: int) -> dict:
    size = 1 << 12
    hit_capacity = max(HIT_CAPACITY, most_truth)
    tables = tuple(np.zeros(size, np.int64) for _ in range(5))
    scratch = (np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros((size, n_types), np.int64),
               np.zeros((size, n_types), np.int64), np.zeros((size, n_types), np.bool_), np.zeros(size, np.int64), np.zeros(size))
    hits = (np.zeros(hit_capacity, np.int64), np.zeros(hit_capacity, np.int64), np.zeros(hit_capacity, np.bool_), np.zeros(1, np.int64))
    unknown = (np.zeros(max(UNKNOWN_CAPACITY, 1), np.int64), np.zeros(2, np.int64))
    return {"tables": tables, "scratch": scratch, "hits": hits, "unknown": unknown, "runs": np.zeros(n_sessions, np.uint8)}


def _views(piece: _Columns) -> tuple:
    """The kernel's columns tuple (see candidate_runs) of a piece: views of its Arrow buffers."""
    session_bits, session_bit = frames.validity(piece.session)
    item_bits, item_bit = frames.validity(piece.item)
    types = _values(piece.type_code, np.int8) if piece.type_code is not None else np.empty(0, np.int8)
    if piece.score is not None:
        score_bits, score_bit = frames.validity(piece.score)
        scores = _widths(_values(piece.score), np.float64, np.float32)
    else:
        score_bits, score_bit, scores = np.empty(0, np.uint8), 0, _widths(np.empty(0, np.float64), np.float64, np.float32)
    return kernel_columns(_widths(_values(piece.session)), session_bits, np.int64(session_bit), _widths(_values(piece.item)), item_bits,
                          np.int64(item_bit), types, scores, score_bits, np.int64(score_bit))


def kernel_columns(sessions: tuple, session_bits, session_bit, items: tuple, item_bits, item_bit, types, scores: tuple, score_bits,
                   score_bit) -> tuple:
    """candidate_runs' columns, read-only: each of sessions, items and scores a pair (wide, narrow) of which one is empty
    (_widths)."""
    held = (*sessions, session_bits, session_bit, *items, item_bits, item_bit, types, *scores, score_bits, score_bit)
    return tuple(frozen(part) if isinstance(part, np.ndarray) else part for part in held)


def _values(array, dtype=None) -> np.ndarray:
    """The values of an Arrow array without nulls' care: a view of its buffer."""
    dtype = dtype or array.type.to_pandas_dtype()
    return frames.buffer_view(array, 1, dtype, array.offset + len(array))[array.offset:]


def _widths(values: np.ndarray, wide=np.int64, narrow=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """(wide, narrow): the values in the one of the two types that holds them with no copy when they are of either (an
    integer column of another width is copied into the narrow type when it fits, else into the wide one); the other
    one empty, as candidate_runs takes them."""
    if values.dtype != wide and values.dtype != narrow:
        fits = np.can_cast(values.dtype, narrow)
        values = values.astype(narrow if fits else wide)
    if values.dtype == wide:
        return np.ascontiguousarray(values), np.empty(0, narrow)
    return np.empty(0, wide), np.ascontiguousarray(values)


def _session_values(views: tuple) -> np.ndarray:
    """The piece's session values (int64) from the kernel's columns."""
    return views[0] if len(views[0]) else views[1].astype(np.int64)


def _integers(array, name: str):
    """An integer id column as it is (any width; uint64 read as int64, so ids over 2^63 - 1 are out of range)."""
    import pyarrow as pa

    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    if pa.types.is_uint64(array.type):
        return array.view(pa.int64())
    if not pa.types.is_integer(array.type):
        raise SubmissionError(f"column {name!r} must hold integer ids, got {array.type}")
    return array


def _scores(array):
    import pyarrow as pa

    if pa.types.is_float64(array.type) or pa.types.is_float32(array.type):
        return array
    if pa.types.is_integer(array.type) or pa.types.is_floating(array.type) or pa.types.is_decimal(array.type) or pa.types.is_null(array.type):
        return array.cast(pa.float64())
    raise SubmissionError(f"column 'score' must hold numbers, got {array.type}")


def pa_strings(names):
    import pyarrow as pa

    return pa.array(list(names), pa.large_string())


def _first_change(keys: np.ndarray, start: int) -> int:
    """The first row after `start` whose session differs from the row before it, or len(keys)."""
    width = 1 << 12
    position = start + 1
    while position < len(keys):
        window = keys[position - 1 : position + width]
        change = np.flatnonzero(window[1:] != window[:-1])
        if len(change):
            return position + int(change[0])
        position += width
        width <<= 1
    return len(keys)


def _last_run(keys: np.ndarray) -> int:
    """The row the last run of rows starts at."""
    width = 1 << 12
    end = len(keys)
    while end > 1:
        first = max(end - width, 1)
        window = keys[first - 1 : end]
        change = np.flatnonzero(window[1:] != window[:-1])
        if len(change):
            return first + int(change[-1])
        end = first
        width <<= 1
    return 0


def _pieces(candidate_pass: CandidatePass, batches, names: dict):
    """Pieces of whole runs of rows, in table order (see the module docstring)."""
    carry: list[_Columns] = []
    for batch, start in batches:
        if batch.num_rows == 0:
            continue
        columns = candidate_pass._columns(batch, names, start)
        keys = _views(columns)[0]
        n = len(columns)
        head = _first_change(keys, 0) if carry else 0
        if carry:
            if head == n:
                carry.append(columns)
                continue
            yield _Columns.concat(carry + [columns.slice(0, head)])
            carry = []
        last = _last_run(keys)
        first = head
        while first < last:
            stop = _first_change(keys, first + PIECE_ROWS - 1) if first + PIECE_ROWS < last else last
            stop = min(stop, last)
            yield columns.slice(first, stop)
            first = stop
        carry = [columns.slice(max(last, head))]
    if carry:
        yield _Columns.concat(carry)


def _table_batches(table):
    start = 0
    for batch in table.to_batches():
        yield batch, start
        start += batch.num_rows


# -- sources -----------------------------------------------------------------------------------------------------
class FrameSource:
    """A frame (pandas, polars, pyarrow) as record batches."""

    def __init__(self, frame, candidate_pass: CandidatePass):
        self.table = frames.as_arrow(frame)
        self.description = frames.describe(frame, self.table)
        self.names = candidate_pass.names(self.table.column_names)

    def batches(self):
        return _table_batches(self.table)

    def sorted_by(self, name: str):
        import pyarrow.compute as pc

        order = pc.sort_indices(self.table, sort_keys=[(name, "ascending")]).to_numpy()  # a stable sort
        return self.table.take(order), order


class FileSource:
    """A Parquet file (read row group by row group) or a CSV file (read block by block) as record batches."""

    def __init__(self, path: str | Path, candidate_pass: CandidatePass):
        from scorer.file_formats import format_of, not_text, unreadable

        self.path = Path(path)
        self.description = str(path)
        why = unreadable(path, "candidates")
        if why:
            raise SubmissionError(why)
        self.kind = format_of(self.path)
        self.strings = candidate_pass.strings
        if self.kind == "parquet":
            import pyarrow.parquet as pq

            try:
                self.parquet = pq.ParquetFile(self.path, pre_buffer=False)  # pre-buffering holds whole row groups: 2-3x the memory
            except Exception as error:  # pyarrow raises several kinds for a file it cannot read
                raise SubmissionError(f"cannot read the candidates {path} as Parquet: {error}") from None
            columns = self.parquet.schema_arrow.names
        elif self.kind == "csv":
            import pyarrow.csv as pv

            if found := not_text(self.path):
                raise SubmissionError(f"the candidates {path} are {found}")

            try:
                with pv.open_csv(self.path) as reader:
                    columns = reader.schema.names
            except Exception as error:
                raise SubmissionError(f"cannot read the candidates {path} as CSV: {error}") from None
        else:
            raise UsageError(f"the candidates {path}: expected a Parquet or CSV file (or a data frame)")
        self.names = candidate_pass.names(columns)
        self.wanted = [name for name in self.names.values() if name]

    def batches(self):
        start = 0
        try:
            for batch in self._reader():
                yield batch, start
                start += batch.num_rows
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise SubmissionError(f"cannot read the candidates {self.path} at row {start:,} or after: {error}") from None

    def _reader(self):
        if self.kind == "parquet":
            return self.parquet.iter_batches(batch_size=PIECE_ROWS, columns=self.wanted)
        import pyarrow as pa
        import pyarrow.csv as pv

        types = {self.names["type"]: pa.string()} if self.names["type"] else {}
        if self.strings:
            types.update({self.names["session"]: pa.string(), self.names["item"]: pa.string()})
        options = pv.ConvertOptions(include_columns=self.wanted, column_types=types)
        return pv.open_csv(self.path, convert_options=options, read_options=pv.ReadOptions(block_size=1 << 24))

    def sorted_by(self, name: str):
        import pyarrow as pa
        import pyarrow.compute as pc

        table = pa.Table.from_batches([batch for batch, _ in self.batches()])
        order = pc.sort_indices(table, sort_keys=[(name, "ascending")]).to_numpy()
        return table.take(order), order
