"""Ground truth of the impression shape: one label list per impression, in order, aligned with the submission's lines
by position (MIND's truth.txt; EB-NeRD's behaviors.parquet compiled).

- `ImpId [l1,l2,...]` lines (plain or .gz), labels 0 or 1 in the order the candidates were shown; an empty list masks
  the impression (the evaluators skip it). A list of only 0s or only 1s is refused: scikit-learn's roc_auc_score, which
  both evaluators call on every impression, stops there.
- A behaviors.parquet with impression_id, article_ids_inview and article_ids_clicked (EB-NeRD): a candidate's label
  is whether it was clicked; a beyond-accuracy row (is_beyond_accuracy, or impression id 0 with no click) is masked.

Ids are whole numbers (both datasets' are); the impressions are kept in the file's order, repeats allowed (EB-NeRD's
beyond-accuracy rows all have id 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorer.errors import TruthError
from scorer.file_formats import is_parquet, not_text
from scorer.kernels import door
from scorer.kernels.impression_layout import TRUTH_FIELDS, TRUTH_ID, TRUTH_LABELS, TRUTH_ONE_CLASS
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.truth.cache import cache_path, cached_copy, save_to_cache
from scorer.truth.compiled import check_compiled, open_compiled
from scorer.truth.ids import Truth, check_label_count
from scorer.truth.load import check_truth_path, gunzipped, read_errors
from scorer.truth.npz import CACHE_VERSION, write_npz

IMPRESSIONS_SUFFIX = ".impressions.npz"
TYPE = "all"
TRUTH_PROBLEMS = {
    TRUTH_FIELDS: "expected two fields separated by whitespace, the impression id and its labels such as [0,1,0]",
    TRUTH_ID: "the impression id is not a whole number (no sign, no leading zero, at most 18 digits)",
    TRUTH_LABELS: "the labels are not a list of 0s and 1s such as [0,1,0]",
    TRUTH_ONE_CLASS: "the labels are all 0 or all 1: AUC is not defined there (roc_auc_score stops; mask the impression "
                     "with an empty list [] to skip it)",
}


@dataclass(frozen=True, eq=False)
class ImpressionTruth(Truth):
    """A Truth whose sessions are the impressions in order (sessions: their ids), items their labels (the candidates
    in the order shown) packed 8 to a byte (np.packbits, bitorder little: at EB-NeRD's size 24 MB, not 190), one type.
    indptr counts labels, not bytes."""

    @property
    def bits(self) -> np.ndarray:
        return self.items

    @property
    def label_bytes(self) -> np.ndarray:
        """The labels one to a byte (for tests and checks)."""
        return np.unpackbits(self.items, count=int(self.indptr[-1]), bitorder="little")

    @property
    def id_base(self) -> int:
        """The first id when the ids are it, it + 1, ... (MIND's 1..n: the kernel then reads no id array), else -1."""
        ids = self.sessions
        if len(ids) == 0:
            return 0
        first = int(ids[0])
        return first if int(ids[-1]) - first == len(ids) - 1 and bool((np.diff(ids) == 1).all()) else -1

    def name(self, index: int) -> str:
        return str(int(self.sessions[index]))

    def save(self, path: str | Path, folder: int | None = None) -> None:
        write_npz(path, {"version": CACHE_VERSION, "kind": "impressions", "types": list(self.types), "source": self.source},
                  folder=folder, sessions=self.sessions, indptr=self.indptr, items=self.items)


def declared_impressions(shapes: dict[str, tuple[int, ...]]) -> None:
    """An .impressions.npz's declared lengths: one row of offsets per impression."""
    if len(shapes.get("indptr", ())) != 1 or len(shapes.get("sessions", ())) != 1 or len(shapes.get("items", ())) != 1:
        raise ValueError("sessions, indptr and items must be one-dimensional arrays")
    if shapes["indptr"][0] != shapes["sessions"][0] + 1:
        raise ValueError(f"indptr declares {shapes['indptr'][0]:,} entries for {shapes['sessions'][0]:,} impressions")


def check_impressions(truth: ImpressionTruth, path, full: bool = True) -> None:
    """The arrays a kernel reads: dtypes, offsets from 0 to the labels' count never decreasing; with full, labels 0 or
    1, ids not negative, and no impression of one class."""
    def require(ok, what):
        if not ok:
            raise TruthError(f"compiled truth {path} is damaged or crafted: {what}")

    require(truth.sessions.dtype == np.int64 and truth.indptr.dtype == INDPTR_DTYPE and truth.items.dtype == np.uint8, "array types")
    indptr = truth.indptr
    require(len(indptr) == len(truth.sessions) + 1 and indptr[0] == 0 and (int(indptr[-1]) + 7) // 8 == len(truth.items),
            "offsets out of range")
    require(not (indptr[1:] < indptr[:-1]).any(), "offsets decrease")
    if full:
        require(not len(truth.sessions) or truth.sessions.min() >= 0, "an impression id is negative")
        require(not one_class(truth.label_bytes, indptr).size, "an impression's labels are all 0 or all 1")


def one_class(labels: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """The impressions with labels that are all 0 or all 1 (labels one to a byte)."""
    sizes = np.diff(indptr)
    listed = np.flatnonzero(sizes > 0)
    clicked = np.add.reduceat(labels.astype(np.int64), indptr[:-1][listed]) if len(listed) else np.empty(0, np.int64)
    return listed[(clicked == 0) | (clicked == sizes[listed])]


def read_compiled_impressions(path: Path, shape: str | None = None, source: str | None = None, opened=None,
                              use_memo: bool = True) -> ImpressionTruth:
    """An ImpressionTruth written by save(), checked before a kernel sees it (see scorer.truth.compiled.check_compiled)."""
    try:
        mapped, data, meta = open_compiled(path, opened, declared_impressions, "impressions")
        truth = ImpressionTruth(tuple(meta["types"]), data["sessions"], data["indptr"], data["items"], source or str(meta["source"]))
    except Exception as error:
        raise TruthError(f"cannot read compiled truth {path}: {error}") from None
    check_compiled(mapped, "impressions", lambda full: check_impressions(truth, path, full=full), vouched=opened is not None,
                   use_memo=use_memo)
    return truth


def read_impression_truth(path: str | Path, use_cache: bool = True) -> ImpressionTruth:
    """The truth of a `ImpId [labels]` text file, a behaviors.parquet or a compiled .impressions.npz, through the
    compiled cache (a second load of the same bytes maps arrays only)."""
    path = Path(path)
    check_truth_path(path)
    with read_errors(path):
        if path.name.endswith(IMPRESSIONS_SUFFIX):
            return read_compiled_impressions(path, use_memo=use_cache)
        what = ["impressions", "bits"]
        cached = cache_path(path, what, IMPRESSIONS_SUFFIX) if use_cache else None
        hit = cached_copy(cached, read_compiled_impressions, None, source=str(path))
        if hit is not None:
            return hit
        truth = read_behaviors(path) if is_parquet(path) else read_lines(path)
        save_to_cache(truth, cached, path, what, IMPRESSIONS_SUFFIX)
        return truth


def read_lines(path: Path) -> ImpressionTruth:
    """`ImpId [l1,...]` lines (MIND's truth.txt), plain or gzip, read by one kernel call."""
    if found := not_text(path, gzip_ok=True):
        raise TruthError(f"truth file {path} is {found}")
    data = _file_bytes(path)
    size = len(data) - 8
    lines = door.kernel("count_byte")(data, size, 10) + 1
    labels = door.kernel("count_byte")(data, size, 44) + lines
    ids, indptr, items = np.empty(lines, np.int64), np.empty(lines + 1, np.int64), np.zeros((labels + 7) // 8, np.uint8)
    rows, total, error, line, column = door.kernel("read_impression_truth")(data, size, ids, indptr, items, np.zeros(6, np.int64))
    if error:
        raise TruthError(f"truth file {path}, line {line}, column {column}: {TRUTH_PROBLEMS[error]}")
    check_label_count(total, str(path))
    return ImpressionTruth((TYPE,), ids[:rows].copy(), indptr[: rows + 1].astype(INDPTR_DTYPE), items[: (total + 7) // 8].copy(), str(path))


def _file_bytes(path: Path) -> np.ndarray:
    """The file's bytes (gunzipped if it is gzip, at most MAX_INFLATION times its size), with 8 zero bytes after them."""
    with open(path, "rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
        handle.seek(0)
        if gzipped:
            raw = gunzipped(path, "truth.txt", handle)
            out = np.zeros(len(raw) + 8, np.uint8)
            out[: len(raw)] = np.frombuffer(raw, np.uint8)
            return out
        size = path.stat().st_size
        out = np.zeros(size + 8, np.uint8)
        if handle.readinto(out.data[:size]) != size:
            raise TruthError(f"truth file {path} changed while it was read")
        return out


BEHAVIOR_COLUMNS = ("impression_id", "article_ids_inview", "article_ids_clicked")


def read_behaviors(path: Path) -> ImpressionTruth:
    """EB-NeRD's behaviors.parquet: a row per impression, in the file's order; labels = inview ∈ clicked. A
    beyond-accuracy row (is_beyond_accuracy true, or id 0 and no click) is masked (empty labels)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
        missing = [name for name in BEHAVIOR_COLUMNS if name not in schema.names]
        if missing:
            raise TruthError(f"truth file {path}: a behaviors.parquet needs the columns {', '.join(BEHAVIOR_COLUMNS)}; "
                             f"missing {', '.join(missing)}")
        extra = ["is_beyond_accuracy"] if "is_beyond_accuracy" in schema.names else []
        table = pq.read_table(path, columns=[*BEHAVIOR_COLUMNS, *extra])
    except TruthError:
        raise
    except Exception as error:  # pyarrow raises many kinds; the message is what matters
        raise TruthError(f"cannot read truth file {path}: {error}") from None
    _check_behavior_columns(table.schema, path)
    ids = table["impression_id"].to_numpy(zero_copy_only=False)
    if ids.dtype.kind not in "iu" or (len(ids) and ids.min() < 0):
        raise TruthError(f"truth file {path}: impression_id must hold whole numbers of at least 0")
    if len(ids) and int(ids.max()) > np.iinfo(np.int64).max:
        raise TruthError(f"truth file {path}, row {int(np.argmax(ids)):,}: impression_id {int(ids.max())} is past the largest id, 2^63 - 1")
    inview = table["article_ids_inview"].combine_chunks()
    clicked = table["article_ids_clicked"].combine_chunks()
    if inview.null_count or clicked.null_count:
        raise TruthError(f"truth file {path}: article_ids_inview and article_ids_clicked must have a list in every row")
    masked = np.zeros(len(ids), np.bool_)
    if extra:
        masked |= table["is_beyond_accuracy"].to_numpy(zero_copy_only=False).astype(np.bool_)
    sizes = pc.list_value_length(inview).to_numpy(zero_copy_only=False).astype(np.int64)
    clicks = pc.list_value_length(clicked).to_numpy(zero_copy_only=False).astype(np.int64)
    masked |= (ids == 0) & (clicks == 0)
    labels = _clicked_labels(inview, clicked, sizes, clicks)
    labels = labels[~np.repeat(masked, sizes)]
    sizes = np.where(masked, 0, sizes)
    indptr = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(sizes, out=indptr[1:])
    check_label_count(int(indptr[-1]), str(path))
    single = one_class(labels, indptr)
    if len(single):
        row = int(single[0])
        raise TruthError(f"truth file {path}, row {row:,} (impression_id {int(ids[row])}): {TRUTH_PROBLEMS[TRUTH_ONE_CLASS]}")
    return ImpressionTruth((TYPE,), ids.astype(np.int64), indptr.astype(INDPTR_DTYPE), np.packbits(labels, bitorder="little"), str(path))


def _check_behavior_columns(schema, path: Path) -> None:
    """The columns' types, before they are read as lists: the two article columns lists of ids of one kind (whole numbers
    or text), is_beyond_accuracy true or false."""
    import pyarrow as pa

    from scorer.frames import is_list

    kinds = []
    for name in BEHAVIOR_COLUMNS[1:]:
        kind = schema.field(name).type
        inner = kind.value_type if is_list(kind) else None
        if inner is None or not (pa.types.is_integer(inner) or pa.types.is_string(inner) or pa.types.is_large_string(inner)):
            raise TruthError(f"truth file {path}: column {name!r} holds {kind}: expected a list of article ids per impression")
        kinds.append(pa.types.is_integer(inner))
    if kinds[0] != kinds[1]:
        raise TruthError(f"truth file {path}: {BEHAVIOR_COLUMNS[1]!r} and {BEHAVIOR_COLUMNS[2]!r} hold ids of different kinds "
                         f"({schema.field(BEHAVIOR_COLUMNS[1]).type} and {schema.field(BEHAVIOR_COLUMNS[2]).type})")
    if "is_beyond_accuracy" in schema.names and not pa.types.is_boolean(schema.field("is_beyond_accuracy").type):
        raise TruthError(f"truth file {path}: column 'is_beyond_accuracy' holds {schema.field('is_beyond_accuracy').type}: expected "
                         "true or false")


ROWS_AT_ONCE = 1 << 20  # rows of a behaviors table labelled at a time: the temporary arrays stay small


def _clicked_labels(inview, clicked, sizes: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """Per candidate (the inview lists flattened), 1 when its row's clicked list holds it (as ebrec's
    create_binary_labels_column: `is_in`), a piece of rows at a time and one click position at a time."""
    candidates = inview.flatten().to_numpy(zero_copy_only=False)
    click_values = clicked.flatten().to_numpy(zero_copy_only=False)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    click_starts = np.concatenate([[0], np.cumsum(clicks)])
    labels = np.zeros(len(candidates), np.uint8)
    for first in range(0, len(sizes), ROWS_AT_ONCE):
        rows = slice(first, min(first + ROWS_AT_ONCE, len(sizes)))
        part = slice(int(starts[rows.start]), int(starts[rows.stop]))
        for j in range(int(clicks[rows].max(initial=0))):
            has = clicks[rows] > j
            value = np.where(has, click_values[np.minimum(click_starts[rows] + j, max(len(click_values) - 1, 0))], -1)
            labels[part] |= candidates[part] == np.repeat(value, sizes[rows])
    return labels


def empty_impression_truth() -> ImpressionTruth:
    """No impressions: validation without truth."""
    return ImpressionTruth((TYPE,), np.empty(0, np.int64), np.zeros(1, INDPTR_DTYPE), np.empty(0, np.uint8), "")
