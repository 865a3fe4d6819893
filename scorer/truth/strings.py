"""Ground truth for the string shapes (list, long, value): ids and items kept exactly as written.

A CSV (plain or .gz) or Parquet file with a header and either two columns — the id and its items
separated by spaces (the submission's own form; an empty field = nothing to predict) or, for shape
'value', the id and its number — or three columns: id, item, grade (one row per truth item, graded
relevance). Rows of the same id are merged. Ids become session indices 0..n-1 in order of first
appearance, items become codes 0..m-1; both get a hash table (scorer.kernels.strings) so the kernel
maps the bytes of a submission to the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from scorer.errors import TruthError
from scorer.file_formats import format_of, is_parquet, not_text
from scorer.kernels import door
from scorer.kernels.rows import INDPTR_DTYPE
from scorer.kernels.string_table import table_size
from scorer.truth.cache import cache_path, cached_copy, save_to_cache
from scorer.truth.compiled import check_compiled, open_compiled
from scorer.truth.ids import Truth, check_label_count, offsets
from scorer.truth.load import check_truth_path, read_errors
from scorer.truth.npz import CACHE_VERSION, write_npz

STRINGS_SUFFIX = ".strings.npz"


@dataclass(frozen=True)
class StringTable:
    """Distinct strings: string i is keys[starts[i]:ends[i]] (keys: uint8 with 8 readable bytes after the
    last), and a hash table (scorer.kernels.strings) mapping bytes to i."""

    keys: np.ndarray
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    table: np.ndarray  # int64, power-of-two size, -1 = empty

    @classmethod
    def of(cls, names) -> "StringTable":
        encoded = [str(name).encode("utf-8") for name in names]
        offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(raw) for raw in encoded], out=offsets[1:])
        keys = np.frombuffer(b"".join(encoded) + bytes(8), np.uint8).copy()
        table = np.full(table_size(len(encoded)), -1, np.int64)
        starts, ends = offsets[:-1].copy(), offsets[1:].copy()
        door.kernel("fill_table")(keys, starts, ends, table)
        return cls(keys, starts, ends, table)

    @property
    def size(self) -> int:
        return len(self.starts)

    def name(self, index: int) -> str:
        return self.keys[self.starts[index] : self.ends[index]].tobytes().decode("utf-8", "replace")

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.keys, self.starts, self.ends, self.table


@dataclass(frozen=True, eq=False)
class StringTruth(Truth):
    """A Truth (one type; session index = id code) with the string tables and optional grades."""

    grades: np.ndarray | None = None  # float64 parallel to items: graded relevance, or the true value (shape 'value')
    ids: StringTable = field(kw_only=True)
    item_names: StringTable = field(kw_only=True)
    multiset: bool = field(default=False, kw_only=True)  # rules.truth = "multiset": an item repeated for an id is kept each time

    @cached_property
    def sorted_grades(self) -> np.ndarray:
        """Each CSR row's grades from best to worst (for the IDCG), or empty without grades."""
        if self.grades is None:
            return np.empty(0, np.float64)
        row = np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))
        return np.ascontiguousarray(self.grades[np.lexsort((-self.grades, row))])

    def name(self, index: int) -> str:
        return self.ids.name(index)

    def save(self, path: str | Path, folder: int | None = None) -> None:
        """Write the compiled form: the arrays, hash tables included, so a load rebuilds nothing (with folder:
        into that private folder, see scorer.truth.npz.write_npz)."""
        shared = self.item_names.keys is self.ids.keys  # the fast reader keeps both in the file's bytes
        extra = {} if self.grades is None else {"grades": self.grades}
        if not shared:
            extra["item_keys"] = self.item_names.keys
        meta = {"version": CACHE_VERSION, "kind": "strings", "types": list(self.types), "source": self.source}
        if self.multiset:
            meta["multiset"] = True
        write_npz(path, meta, folder=folder,
                  sessions=self.sessions, indptr=self.indptr, items=self.items, id_keys=self.ids.keys, id_starts=self.ids.starts,
                  id_ends=self.ids.ends, id_table=self.ids.table, item_starts=self.item_names.starts, item_ends=self.item_names.ends,
                  item_table=self.item_names.table, **extra)


def read_compiled_strings(path: Path, shape: str | None = None, source: str | None = None, opened=None,
                          use_memo: bool = True, multiset: bool | None = None) -> StringTruth:
    """A StringTruth written by save(), its arrays checked (scorer.truth.checks) before a kernel sees them;
    TruthError if the file is damaged, crafted, from another version or (shape 'value') has no values.

    `opened`: the file at path, opened from the private cache folder (scorer.truth.cache.cached_copy). Only this user
    can have written such an entry, so its hash tables get the checks that keep the kernels safe and a spot
    check, not the full one; a compiled file given as truth (it may come from anyone) gets the full one, unless
    its exact bytes passed it before (use_memo: see scorer.truth.compiled.check_compiled). multiset: how the competition
    reads the truth (rules.truth), where it must agree with the file (refused before the arrays are checked)."""
    from scorer.truth.checks import check_string_truth, declared_strings

    try:
        mapped, data, meta = open_compiled(path, opened, declared_strings, "strings")
        id_keys = data["id_keys"]
        truth = StringTruth(tuple(meta["types"]), data["sessions"], data["indptr"], data["items"], source or str(meta["source"]),
                            grades=data.get("grades"), ids=StringTable(id_keys, data["id_starts"], data["id_ends"], data["id_table"]),
                            item_names=StringTable(data.get("item_keys", id_keys), data["item_starts"], data["item_ends"], data["item_table"]),
                            multiset=meta.get("multiset") is True)
    except Exception as error:
        raise TruthError(f"cannot read compiled truth {path}: {error}") from None
    if multiset is not None and truth.multiset != multiset and shape != "value":
        raise TruthError(f"compiled truth {path} holds the truth as a {'multiset' if truth.multiset else 'set'}, the competition "
                         f"reads it as a {'multiset' if multiset else 'set'} (rules.truth): compile it again with its config")
    check_compiled(mapped, "strings", lambda full: check_string_truth(truth, path, full=full), vouched=opened is not None, use_memo=use_memo)
    if shape == "value" and (truth.grades is None or (np.diff(truth.indptr) != 1).any()):
        raise TruthError(f"compiled truth {path} does not hold one value per id (compiled for another shape than 'value'?)")
    return truth


def _read_frame(path: Path):
    import pandas as pd

    try:
        if is_parquet(path):
            frame = pd.read_parquet(path)
            return frame.astype(str) if len(frame.columns) else frame
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except Exception as error:  # pandas and pyarrow raise many kinds; the message is what matters
        raise TruthError(f"cannot read truth file {path}: {error}") from None


def _read_plain_rows(path: Path, type_name: str, multiset: bool = False) -> StringTruth | None:
    """The two-column form of a plain CSV read by a numba kernel straight from the file's bytes (ids and
    items stay in that buffer: no Python strings); None when the file needs the general reader."""
    if format_of(path) != "csv":
        return None
    size = path.stat().st_size
    buf = np.zeros(size + 8, np.uint8)  # the keys stay in this buffer; 8 zero bytes for 8-byte loads
    with open(path, "rb") as handle:
        if handle.readinto(buf.data[:size]) != size:
            return None
    if bytes(buf[:2]) == b"\x1f\x8b":
        return None
    header = bytes(buf[: min(size, 65536)]).split(b"\n", 1)[0]
    header_end = len(header)
    if header.count(b",") != 1 or b'"' in header:
        return None
    n_lines = door.kernel("count_byte")(buf, size, 10) + 1
    n_tokens = door.kernel("count_byte")(buf, size, 32) + n_lines
    id_starts, id_ends = np.empty(n_lines, np.int64), np.empty(n_lines, np.int64)
    item_starts, item_ends = np.empty(n_tokens, np.int64), np.empty(n_tokens, np.int64)
    id_table, item_table = np.full(table_size(n_lines), -1, np.int64), np.full(table_size(n_tokens), -1, np.int64)
    pair_row, pair_item = np.empty(n_tokens, np.int64), np.empty(n_tokens, np.int64)
    n_ids, n_items, n_pairs, bad = door.kernel("read_rows")(buf, header_end + 1, len(buf) - 8, id_starts, id_ends, id_table,
                                                       item_starts, item_ends, item_table, pair_row, pair_item)
    if bad:
        return None
    key = pair_row[:n_pairs] * max(n_items, 1) + pair_item[:n_pairs]
    key = np.sort(key) if multiset else np.unique(key)  # a multiset keeps an item given twice for an id twice
    del pair_row, pair_item
    item_starts, item_ends = item_starts[:n_items].copy(), item_ends[:n_items].copy()
    item_table = np.full(table_size(n_items), -1, np.int64)  # sized for the items found, not the bound
    door.kernel("fill_table")(buf, item_starts, item_ends, item_table)
    rows, items = key // max(n_items, 1), key % max(n_items, 1)
    indptr = offsets(np.bincount(rows, minlength=n_ids), str(path))
    return StringTruth((type_name,), np.arange(n_ids, dtype=np.int64), indptr, items.astype(np.int64), str(path),
                       ids=StringTable(buf, id_starts[:n_ids].copy(), id_ends[:n_ids].copy(), id_table),
                       item_names=StringTable(buf, item_starts, item_ends, item_table), multiset=multiset)


def read_string_truth(path: str | Path, shape: str, type_name: str = "all", use_cache: bool = True, competition=None) -> StringTruth:
    """Read a truth file for shape 'list', 'long' or 'value' (see the module docstring), through the
    compiled cache (see scorer.truth.load.load_truth): the second load of the same file reads arrays only.
    competition: its [truth] section reads the competition's published truth (scorer.truth.published), its rules.truth
    keeps repeated items (multiset)."""
    path = Path(path)
    check_truth_path(path)
    spec = getattr(competition, "truth_spec", None)
    multiset = competition is not None and competition.rules.truth == "multiset"
    with read_errors(path):
        if path.name.endswith(STRINGS_SUFFIX):  # compiled by `scorer compile-truth`
            return read_compiled_strings(path, shape, use_memo=use_cache, multiset=multiset)
        what = ["strings", shape, type_name] + (["multiset"] if multiset else [])
        if spec is not None:
            what += ["published", competition.field_separator, competition.item_type, *spec.describe()]
            if any(competition.integer_keys):  # the keys as int() prints them (named only where set: other entries keep their keys)
                what += ["key_types", *competition.key_types]
        cached = cache_path(path, what, STRINGS_SUFFIX) if use_cache else None
        hit = cached_copy(cached, read_compiled_strings, shape, source=str(path))
        if hit is not None:
            return hit
        if spec is not None:
            from scorer.truth.published import read_published_rows

            rows = read_published_rows(path, competition)
            if rows.values is not None:
                truth = truth_of_values(path, type_name, rows.ids, rows.values)
            else:
                assert rows.rows is not None and rows.items is not None  # a published truth's pairs, where it has no values
                truth = truth_of_pairs(path, type_name, rows.ids, rows.rows, rows.items, rows.grades, multiset)
        else:
            truth = _read_strings(path, shape, type_name, multiset=multiset)
        save_to_cache(truth, cached, path, what, STRINGS_SUFFIX)
        return truth


def _read_strings(path: Path, shape: str, type_name: str, frame=None, multiset: bool = False) -> StringTruth:
    """The truth of a file, or of a pandas frame of strings read from elsewhere (frame given; path names it)."""
    if frame is None and format_of(path) == "csv" and (found := not_text(path)):
        raise TruthError(f"truth file {path} is {found}")
    if shape != "value" and frame is None:
        fast = _read_plain_rows(path, type_name, multiset)
        if fast is not None:
            return fast
    import pandas as pd
    frame = _read_frame(path) if frame is None else frame
    columns = list(frame.columns)
    if len(columns) not in (2, 3) or (shape == "value" and len(columns) != 2):
        expected = "id,value" if shape == "value" else "id,items (space-separated) or id,item,grade"
        raise TruthError(f"truth file {path}: expected the columns {expected}, found {columns}")
    ids = frame[columns[0]].astype(str).to_numpy(dtype=object)
    empty_id = np.flatnonzero(ids == "")
    if len(empty_id):
        raise TruthError(f"truth file {path}, row {int(empty_id[0]) + 2}: the id is empty")
    id_index, id_names = pd.factorize(ids)
    n = len(id_names)
    if shape == "value":
        values = pd.to_numeric(frame[columns[1]].str.strip(), errors="coerce").to_numpy(np.float64)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise TruthError(f"truth file {path}, row {int(bad[0]) + 2}: value {frame[columns[1]].iloc[bad[0]]!r} is not a number")
        if n != len(ids):
            seen = pd.Series(ids).duplicated().to_numpy()
            raise TruthError(f"truth file {path}, row {int(np.flatnonzero(seen)[0]) + 2}: id {ids[np.flatnonzero(seen)[0]]!r} is given twice")
        return truth_of_values(path, type_name, id_names, values[np.argsort(id_index, kind="stable")])
    if len(columns) == 2:
        tokens = frame[columns[1]].str.split()
        lengths = tokens.str.len().to_numpy(np.int64)
        row = np.repeat(id_index, lengths)
        items = np.array([token for parts in tokens for token in parts], dtype=object)
        grades = None
    else:
        items = frame[columns[1]].astype(str).str.strip().to_numpy(dtype=object)
        grades = pd.to_numeric(frame[columns[2]].str.strip(), errors="coerce").to_numpy(np.float64)
        bad = np.flatnonzero(~np.isfinite(grades) | (grades < 0))
        if len(bad):
            raise TruthError(f"truth file {path}, row {int(bad[0]) + 2}: grade {frame[columns[2]].iloc[bad[0]]!r} is not a number >= 0")
        keep = items != ""  # an id with an empty item: in the truth, with nothing to predict
        row, items, grades = id_index[keep], items[keep], grades[keep]
    return truth_of_pairs(path, type_name, id_names, row, items, grades, multiset)


def truth_of_values(path, type_name: str, id_names, values: np.ndarray) -> StringTruth:
    """The value shape's StringTruth of distinct ids and the value of each, in the same order."""
    n = len(id_names)
    check_label_count(n, str(path))
    return StringTruth((type_name,), np.arange(n, dtype=np.int64), np.arange(n + 1, dtype=INDPTR_DTYPE), np.zeros(n, np.int64),
                       str(path), grades=np.asarray(values, np.float64), ids=StringTable.of(np.asarray(id_names, dtype=object)),
                       item_names=StringTable.of(np.empty(0, dtype=object)))


def truth_of_pairs(path, type_name: str, id_names, row: np.ndarray, items: np.ndarray, grades: np.ndarray | None,
                   multiset: bool = False) -> StringTruth:
    """The StringTruth of ids (id_names, in their order) and (row, item) pairs, a grade each or none (binary truth): an
    item given twice for an id is kept once at its best grade, or each time (multiset)."""
    import pandas as pd

    n = len(id_names)
    item_index, item_names = pd.factorize(items) if len(items) else (np.empty(0, np.int64), np.empty(0, dtype=object))
    pairs = pd.DataFrame({"row": np.asarray(row, np.int64), "item": np.asarray(item_index, np.int64),
                          "grade": grades if grades is not None else np.ones(len(row))})
    if multiset:
        merged = pairs.sort_values(["row", "item"], kind="stable")
        slot, item_codes, graded = merged["row"].to_numpy(np.int64), merged["item"].to_numpy(np.int64), merged["grade"]
    else:
        merged = pairs.groupby(["row", "item"], sort=True)["grade"].max()
        slot, item_codes, graded = merged.index.get_level_values(0).to_numpy(np.int64), merged.index.get_level_values(1).to_numpy(np.int64), merged
    indptr = offsets(np.bincount(slot, minlength=n), str(path))
    return StringTruth((type_name,), np.arange(n, dtype=np.int64), indptr, np.ascontiguousarray(item_codes), str(path),
                       grades=None if grades is None else graded.to_numpy(np.float64),
                       ids=StringTable.of(np.asarray(id_names, dtype=object)), item_names=StringTable.of(np.asarray(item_names, dtype=object)),
                       multiset=multiset)


def empty_string_truth(type_name: str = "all") -> StringTruth:
    """No ids: validation without truth."""
    empty = StringTable.of(np.empty(0, dtype=object))
    return StringTruth((type_name,), np.empty(0, np.int64), np.zeros(1, INDPTR_DTYPE), np.empty(0, np.int64), "", ids=empty, item_names=empty)
