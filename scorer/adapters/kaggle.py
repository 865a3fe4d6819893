"""Kaggle metric: ``score(solution, submission, row_id_column_name) -> float``, as a metric notebook defines it.

Kaggle passes every column but ``Usage`` and calls ``score`` once per Usage split (Public, Private)
with that split's solution rows. The solution holds the row id (``session_type``) and the truth
``labels`` (space-separated items, empty when none). Every row of the submission is first judged on its
own (format, repeats, limits), the same way in every split, so a message never depends on the split.
Then rows whose id names a session outside the split are ignored for that split and the rest is scored;
rows missing from the split get one sentence that names neither ids nor a count (either would tell
which sessions are in the split). A bad submission raises ``ParticipantVisibleError`` (at most 280
characters), whatever goes wrong while reading it; a bad solution or set-up raises ``HostVisibleError``.
"""

from __future__ import annotations

import math
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from scorer.adapters.kaggle_frame import (
    CHUNK_ROWS,
    ColumnText,
    column_text,
    gaps_of,
    judge_rows,
    lines_data,
    row_numbers,
    strings,
)
from scorer.adapters.message import participant_message
from scorer.api import resolve_competition, validate
from scorer.api import score as score_file
from scorer.engine.problems import ERROR, Code
from scorer.errors import ScorerError
from scorer.kernels import door
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.spec.competition import Competition, id_literals
from scorer.truth.ids import Truth, check_label_count, from_long

MAX_MESSAGE = 280
USAGE = "Usage"


def _text(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.large_string())


class ParticipantVisibleError(Exception):
    """A problem with the submission: Kaggle shows this message to the participant."""


class HostVisibleError(Exception):
    """A problem with the solution or the set-up: only the host sees it."""


SPLIT_DEPENDENT = {Code.MISSING_ROWS.code, Code.UNKNOWN_SESSIONS.code}  # rows missing from the split, sessions not in it: they tell the split apart
MISSING_ROWS = ("Submission rejected: S011: rows are missing: the submission needs one row for every id of the "
                "sample submission (each session and type).")
UNREADABLE = ("Submission rejected: the submission could not be read or scored; check it with "
              "`scorer validate` before uploading (the host has the details).")


def score(solution: pd.DataFrame, submission: pd.DataFrame, row_id_column_name: str,
          competition: str = "otto", config: str = "") -> float:
    """The competition's weighted score of `submission` on the `solution` rows (one Usage split).

    `competition` names a bundled config; `config` (a TOML path) overrides it when not empty.
    Only ParticipantVisibleError (the submission) or HostVisibleError (the solution or set-up) leave it.
    """
    try:
        comp = resolve_competition(competition, config or None)
        if getattr(comp, "shape", "id_type") != "id_type":
            raise HostVisibleError(f"this Kaggle metric reads submissions of shape 'id_type' (ids like {comp.id_pattern!r}), "
                                   f"not {comp.shape!r}; Codabench and EvalAI adapters take every shape")
        truth = truth_from_solution(solution, row_id_column_name, comp)
    except HostVisibleError:
        raise
    except ScorerError as error:
        raise HostVisibleError(str(error)) from None
    except Exception as error:  # a bug of ours or an odd solution frame: the host's to see, with the cause chained
        raise HostVisibleError(f"the solution could not be read ({type(error).__name__}: {error})") from error
    try:
        value = _score_submission(submission, row_id_column_name, comp, truth)
    except (ParticipantVisibleError, HostVisibleError):
        raise
    except Exception as error:  # never a KeyError or a traceback for the participant; the cause is chained for the host
        raise ParticipantVisibleError(UNREADABLE) from error
    if not math.isfinite(value):
        raise HostVisibleError(f"the score is not finite: {value}")
    return value


def _score_submission(submission: pd.DataFrame, row_id: str, comp: Competition, truth: Truth) -> float:
    """Judge every row (the same whatever the split), then score the split's rows."""
    if list(map(str, submission.columns)) == list(comp.header) and row_id == comp.header[0]:
        result = judge_rows(submission, comp, truth)
    else:  # odd columns: the CSV they make tells the header's problem
        result = _judge_as_csv(submission, row_id, comp, truth)
    errors = {problem.code for problem in result.problems if problem.severity == ERROR}
    if errors and errors <= SPLIT_DEPENDENT:
        raise ParticipantVisibleError(MISSING_ROWS)
    if result.score is None or errors:
        for table in (result.report.kept, result.report.counts, result.report.covered):
            for code in SPLIT_DEPENDENT:  # the rows' own problems are the same in every split; these are not
                table.pop(code, None)
        raise ParticipantVisibleError(participant_message(result, MAX_MESSAGE))
    return float(result.score)


def _judge_as_csv(submission: pd.DataFrame, row_id: str, comp: Competition, truth: Truth):
    """The slow way, for frames whose columns are not the submission's header: the whole CSV validated, then the
    split's rows scored (the others blank)."""
    frame = FrameText.of(submission)
    with _written(frame.csv()) as path:
        judged = validate(path, None, comp, strict=True)
    if not judged.valid:
        return judged
    with _written(frame.csv(frame.other_split(row_id, comp, truth))) as path:
        return score_file(path, truth, comp, strict=True)


@contextmanager
def _written(body: bytes):
    """A temporary file holding body, removed afterwards."""
    handle, path = tempfile.mkstemp(suffix=".csv", prefix="kaggle-submission-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(body)
        yield path
    finally:
        os.unlink(path)


# -- ids ------------------------------------------------------------------------------------------
def _id_regex(comp: Competition) -> str:
    import re

    prefix, middle, suffix = (re.escape(part) for part in id_literals(comp.id_pattern))
    session = r"(?P<session>\d{1,19})"
    types = "(?P<type>" + "|".join(re.escape(name) for name in comp.types) + ")"
    if "{type}" not in comp.id_pattern:
        return f"^{prefix}{session}{suffix}$"
    first, second = (session, types) if comp.session_first else (types, session)
    return f"^{prefix}{first}{middle}{second}{suffix}$"


def parse_ids(ids: pa.Array, comp: Competition) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(well_formed, session, type index) of each id; session and type are 0 where not well formed."""
    quick = _kernel_ids(ids, comp)
    if quick is None:
        quick = _parse_good_ids(ids, comp)
    if quick is not None:
        return quick
    found = pc.extract_regex(ids, _id_regex(comp))
    ok = pc.is_valid(found).to_numpy(zero_copy_only=False)
    session = np.zeros(len(ids), np.int64)
    kinds = np.zeros(len(ids), np.int64)
    if ok.any():
        picked = pc.filter(found, pa.array(ok))
        digits = picked.field("session")
        # 19 digits may overflow: of equal length, digit strings compare as their numbers (2^63-1 itself fits)
        fits = pc.or_(pc.less(pc.utf8_length(digits), 19), pc.less_equal(digits, _text(str(2**63 - 1)).cast(digits.type)))
        fits = fits.to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(ok)
        ok[rows[~fits]] = False
        session[rows[fits]] = pc.cast(pc.filter(digits, pa.array(fits)), pa.int64()).to_numpy()
        if "{type}" in comp.id_pattern:
            kinds[rows] = pc.index_in(picked.field("type"), pa.array(list(comp.types))).to_numpy(zero_copy_only=False)
    return ok, session, kinds


def _parse_good_ids(ids: pa.Array, comp: Competition):
    """parse_ids without a regular expression, for ids such as OTTO's ("{session}_{type}") when every one is well
    formed (split at the first middle literal); None otherwise."""
    prefix, middle, suffix = id_literals(comp.id_pattern)
    if prefix or suffix or not middle or "{type}" not in comp.id_pattern or not comp.session_first or len(ids) == 0:
        return None
    parts = pc.split_pattern(ids, middle, max_splits=1)
    if ids.null_count or pc.min(pc.list_value_length(parts)).as_py() != 2:
        return None
    digits, names = pc.list_element(parts, 0), pc.list_element(parts, 1)
    kinds = pc.index_in(names, pa.array(list(comp.types), names.type))
    length = pc.binary_length(digits)
    if (kinds.null_count or not pc.all(pc.string_is_ascii(digits)).as_py() or not pc.all(pc.utf8_is_digit(digits)).as_py()
            or pc.min(length).as_py() < 1 or pc.max(length).as_py() > 18):  # 18 digits always fit in an int64
        return None
    return np.ones(len(ids), np.bool_), pc.cast(digits, pa.int64()).to_numpy(), kinds.to_numpy(zero_copy_only=False).astype(np.int64)


# -- frames as text (the slow way, for odd columns) ----------------------------------------------
@dataclass
class FrameText:
    """The submission frame as the CSV a participant's file holds: line n+2 for the row at position n (or index label n)."""

    header: bytes
    lines: pa.Array | None  # one CSV line per row (None: a frame without columns)
    names: list  # the column names, in order (they may repeat)
    columns: list  # each column's text
    line_of: np.ndarray  # 0-based row number (line - 2) of each row

    @classmethod
    def of(cls, submission: pd.DataFrame) -> "FrameText":
        columns = [column_text(submission.iloc[:, i]) for i in range(submission.shape[1])]  # by position: names may repeat
        header = ",".join(str(name) for name in submission.columns).encode()
        line_of = row_numbers(submission.index)
        if not columns:
            return cls(header, None, [], [], line_of)
        lines = pc.binary_join_element_wise(*columns, _text(",")) if len(columns) > 1 else columns[0]
        return cls(header, lines, list(submission.columns), columns, line_of)

    def other_split(self, row_id: str, comp: Competition, truth: Truth) -> np.ndarray | None:
        """Rows whose id is well formed and names a session outside the split; the ids are the row id column, else
        the first one (a header the engine accepts, such as ' session_type' or a byte-order mark's; None without columns)."""
        if not self.columns:
            return None
        well_formed, session, _ = parse_ids(self.columns[self.names.index(row_id) if row_id in self.names else 0], comp)
        return well_formed & ~np.isin(session, truth.sessions)

    def csv(self, blank: np.ndarray | None = None) -> bytes:
        """The CSV bytes; rows flagged in `blank` become blank lines, so line numbers still match the file."""
        if self.lines is None:
            return b""  # the engine reports an empty file
        lines = self.lines if blank is None else pc.if_else(pa.array(blank), _text(""), self.lines)
        buffer, size = lines_data(lines, gaps_of(self.line_of))
        return self.header + b"\n" + bytes(memoryview(buffer)[:size])


# -- the solution ---------------------------------------------------------------------------------
def truth_from_solution(solution: pd.DataFrame, row_id: str, comp: Competition) -> Truth:
    """The split's truth: a session per well-formed id, its labels as the items of that type."""
    if row_id not in solution.columns:
        raise HostVisibleError(f"the solution has no column {row_id!r} (columns: {', '.join(map(str, solution.columns))})")
    others = [name for name in solution.columns if name not in (row_id, USAGE)]
    label_column = comp.header[1] if comp.header[1] in others else (others[0] if len(others) == 1 else None)
    if label_column is None:
        raise HostVisibleError(f"the solution needs one label column besides {row_id!r}; it has {others}")
    if len(solution) == 0:
        raise HostVisibleError("the solution split has no rows")
    quick = _read_by_chunks(solution[row_id], solution[label_column], comp)
    if quick is not None:
        session, kinds, items, row_items, increasing = quick
    else:
        session, kinds, items, parents = _read_whole(solution, row_id, label_column, comp)
        same_row = parents[1:] == parents[:-1]
        increasing = bool(np.all(items[1:][same_row] > items[:-1][same_row]))
        row_items = np.bincount(parents, minlength=len(session))
    truth = _sorted_truth(session, kinds, items, row_items, comp.types) if increasing else None
    if truth is not None:
        return truth
    _refuse_repeated_ids(session, kinds, comp)
    parents = np.repeat(np.arange(len(session)), row_items)  # the row of each item (items come in row order)
    kinds = kinds.astype(np.int64, copy=False)
    all_session = np.concatenate([session, session[parents]])
    all_kind = np.concatenate([kinds, kinds[parents]])
    all_item = np.concatenate([np.full(len(session), -1, np.int64), items])
    return from_long(all_session, all_kind, all_item, comp.types, source="kaggle solution")


def _refuse_repeated_ids(session: np.ndarray, kinds: np.ndarray, comp: Competition) -> None:
    """A row id the solution holds twice is the host's error (its labels would silently be merged into one set)."""
    n_types = len(comp.types)
    if session.max() < (2**63 - 1) // n_types - n_types:  # one int64 key a row: a flat sort (lexsort is 2-3 times slower)
        keys = session * n_types + kinds
        ordered = np.sort(keys)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        rows = np.flatnonzero(keys == repeated[0])[:2] if len(repeated) else []
    else:
        order = np.lexsort((kinds, session))
        same = np.flatnonzero((session[order][1:] == session[order][:-1]) & (kinds[order][1:] == kinds[order][:-1]))
        rows = np.sort(order[same[0] : same[0] + 2]) if len(same) else []
    if len(rows):
        first, again = (int(row) for row in rows)
        row_id = comp.id_pattern.format(session=int(session[first]), type=comp.types[int(kinds[first])])
        raise HostVisibleError(f"solution rows {first + 1} and {again + 1} have the same id {row_id!r}: each id must appear once")


def _read_whole(solution: pd.DataFrame, row_id: str, label_column: str, comp: Competition):
    """(session, type index, items, row of each item) of the whole columns at once (Arrow compute where the kernels
    give up), or the host's error naming the first bad row."""
    ids = strings(solution[row_id])
    well_formed, session, kinds = parse_ids(ids, comp)
    if not well_formed.all():
        row = int(np.flatnonzero(~well_formed)[0])
        raise HostVisibleError(f"solution row {row + 1}: id {ids[row].as_py()!r} does not have the form {comp.id_pattern!r}")
    labels = strings(solution[label_column])
    ok, items, parents = door.kernel("label_items")(*_buffers(labels))
    if not ok:
        items, parents = _label_items(labels, label_column)
    if (items < 0).any():
        raise HostVisibleError(f"the solution's {label_column!r} column holds a negative item id")
    return session, kinds, items, parents


def _read_by_chunks(ids: pd.Series, labels: pd.Series, comp: Competition):
    """(session, type index, items, items per row, whether each row's items increase) of a solution whose ids are
    well formed and labels digits and spaces, read CHUNK_ROWS rows at a time (Arrow's buffers stay small: no fresh
    memory for the whole columns' text); None when a chunk is anything else (_read_whole then names the bad row)."""
    n_rows = len(ids)
    id_text, label_text = ColumnText(ids), ColumnText(labels)
    session = np.empty(n_rows, np.int64)
    kinds = np.empty(n_rows, np.int8 if len(comp.types) < 128 else np.int64)  # small: every page of these is a fresh one
    row_items = np.empty(n_rows, np.int32)  # a row's items fit in its chunk's text
    items, increasing = [], True
    for start in range(0, n_rows, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, n_rows)
        well_formed, session[start:stop], kinds[start:stop] = parse_ids(id_text.chunk(start, stop), comp)
        if not well_formed.all():
            return None
        ok, chunk_items, rows = door.kernel("label_items")(*_buffers(label_text.chunk(start, stop)))
        if not ok:
            return None
        row_items[start:stop] = np.bincount(rows, minlength=stop - start)
        same_row = rows[1:] == rows[:-1]
        increasing = increasing and bool(np.all(chunk_items[1:][same_row] > chunk_items[:-1][same_row]))
        items.append(chunk_items)
    return session, kinds, np.concatenate(items), row_items, increasing


def _buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, int64 offsets) of a large_string array without nulls, as the solution kernels read them."""
    offsets = np.frombuffer(strings.buffers()[1], np.int64)[strings.offset : strings.offset + len(strings) + 1]
    data = strings.buffers()[2]
    return (np.frombuffer(data, np.uint8) if data is not None else np.zeros(1, np.uint8)), offsets


def _kernel_ids(ids: pa.Array, comp: Competition):
    """parse_ids by one kernel pass for plain ids (`{session}{middle}{type}`, one middle byte) all well formed; None
    otherwise (parse_ids then reads them and finds the bad one)."""
    prefix, middle, suffix = id_literals(comp.id_pattern)
    if prefix or suffix or len(middle.encode()) != 1 or middle.isdigit() or "{type}" not in comp.id_pattern or not comp.session_first or len(ids) == 0:
        return None
    if ids.null_count or ids.type != pa.large_string():
        return None
    names = [name.encode() for name in comp.types]
    type_names = np.frombuffer(b"".join(names), np.uint8) if any(names) else np.zeros(0, np.uint8)
    type_offsets = np.cumsum([0] + [len(name) for name in names]).astype(np.int64)
    session, kinds = np.empty(len(ids), np.int64), np.empty(len(ids), np.int64)
    if not door.kernel("plain_ids")(*_buffers(ids), np.uint8(middle.encode()[0]), type_names, type_offsets, session, kinds):
        return None
    return np.ones(len(ids), np.bool_), session, kinds


def _label_items(labels: pa.Array, label_column: str) -> tuple[np.ndarray, np.ndarray]:
    """(item, row) of every label: the labels split at single spaces, or at any whitespace when that fails."""
    try:
        return _split_items(pc.split_pattern(labels, " "))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:
        return _split_items(pc.utf8_split_whitespace(labels))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise HostVisibleError(f"the solution's {label_column!r} column holds a value that is not an integer item id: {error}") from None


def _split_items(words: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    tokens = pc.list_flatten(words)
    parents = pc.list_parent_indices(words).to_numpy()
    keep = pc.not_equal(tokens, _text("")).to_numpy(zero_copy_only=False)
    if not keep.all():
        tokens, parents = pc.filter(tokens, pa.array(keep)), parents[keep]
    return pc.cast(tokens, pa.int64()).to_numpy(), parents


def _sorted_truth(session: np.ndarray, kinds: np.ndarray, items: np.ndarray, row_items: np.ndarray, types: tuple) -> Truth | None:
    """The Truth built straight from rows sorted by (session, type), each row's items increasing (as an exported
    solution holds them), given the number of items of each row: no sort, no search; None when the rows are not
    so (from_long then sorts them). Chunk by chunk where it can: no temporary as large as the solution."""
    n_types = len(types)
    if len(session) == 0 or session.max() >= (2**63 - 1) // n_types - n_types:
        return None
    last = -1
    for start in range(0, len(session), CHUNK_ROWS):  # a chunk at a time: the temporaries stay small
        key = session[start : start + CHUNK_ROWS] * n_types
        key += kinds[start : start + CHUNK_ROWS]
        if (start and key[0] <= last) or not np.all(key[1:] > key[:-1]):
            return None
        last = int(key[-1])
    first = np.empty(len(session), np.bool_)
    first[0] = True
    np.not_equal(session[1:], session[:-1], out=first[1:])
    sessions = session[first]
    check_label_count(len(items), "kaggle solution")  # then no row nor running sum passes INDPTR_DTYPE
    indptr = np.zeros(len(sessions) * n_types + 1, INDPTR_DTYPE)
    sessions_before = 0
    for start in range(0, len(session), CHUNK_ROWS):  # each row's slot: session index * n_types + type
        starts = first[start : start + CHUNK_ROWS]
        slot = np.cumsum(starts, dtype=np.int64)
        slot += sessions_before - 1
        slot *= n_types
        slot += kinds[start : start + CHUNK_ROWS]
        indptr[1:][slot] = row_items[start : start + CHUNK_ROWS]
        sessions_before += int(np.count_nonzero(starts))
    np.cumsum(indptr[1:], dtype=INDPTR_DTYPE, out=indptr[1:])
    return Truth(tuple(types), sessions, indptr, np.ascontiguousarray(items, np.int64), "kaggle solution")
