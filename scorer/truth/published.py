"""A competition's truth in the form its dataset was published, read as its config's [truth] section says
(scorer.spec.competition.TruthSpec): the columns that name a row, the column of its items, grade or value, the rows kept.

Two forms: a table (CSV or other delimited text, plain or gzip, with a header line or the config's column names; or
Parquet), read column by column by name (other columns are read past), and the Million Playlist Dataset's JSON of
playlists (`{"playlists": [{"pid": ..., "tracks": [{"track_uri": ...}, ...]}, ...]}`). A key of several columns is written
as its fields joined by the submission's field separator, as the table reader looks it up (scorer.kernels.table_rows);
the key part `__index__` is the row's position in the file (0-based, before any row is left out), as a pandas index
names the rows of a frame read from it. Every key of the kept rows is in the truth, with nothing to predict where its
rows hold no relevant item (a grade of 0, an empty field), so the rules of empty rows apply to it.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scorer.errors import TruthError
from scorer.file_formats import compression_of, not_text
from scorer.spec.competition import ROW_INDEX, Competition, TruthSpec
from scorer.truth.load import gunzipped

MAX_JSON_BYTES = 1 << 30  # a playlists file larger than this is refused: json.load holds it several times over


@dataclass(frozen=True)
class PublishedRows:
    """A published truth's rows as scorer.truth.strings builds a StringTruth of them: the keys (distinct, in the file's
    order) and either each key's value (value shape) or (key index, item, grade or None) pairs."""

    ids: np.ndarray
    values: np.ndarray | None = None
    rows: np.ndarray | None = None
    items: np.ndarray | None = None
    grades: np.ndarray | None = None


def read_published_rows(path: Path, competition: Competition, spec: TruthSpec | None = None) -> PublishedRows:
    """The rows of `path` as the competition's [truth] section (or `spec`, its [seeds]) reads them; TruthError naming the
    file, the row and the column where they cannot be."""
    spec = spec or competition.truth_spec
    if spec is None:
        raise TruthError(f"competition {competition.name!r} has no [truth] section: truth file {path} is read as a plain table")
    frame = _playlists(path, spec) if spec.format == "playlists" else _table(path, spec)
    for column, wanted in spec.where:
        frame = frame[frame[column] == wanted]
    keys = _keys(frame, spec, competition.field_separator, path, competition.integer_keys)
    import pandas as pd

    id_index, id_names = pd.factorize(keys)
    if competition.shape == "value":
        values = pd.to_numeric(frame[spec.value].str.strip(), errors="coerce").to_numpy(np.float64)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise TruthError(f"truth file {path}, {_row(frame, bad[0])}, column {spec.value!r}: {frame[spec.value].iloc[bad[0]]!r} "
                             "is not a number")
        if len(id_names) != len(keys):
            twice = int(np.flatnonzero(pd.Series(keys).duplicated().to_numpy())[0])
            raise TruthError(f"truth file {path}, {_row(frame, twice)}: the key {keys[twice]!r} is given twice")
        return PublishedRows(np.asarray(id_names, dtype=object), values=values)
    grades = None
    if spec.grade:
        grades = np.zeros(len(frame), np.float64)
        for column, weight in spec.grade:
            grades = np.maximum(grades, np.where(frame[column].str.strip().to_numpy(dtype=object) == "1", weight, 0.0))
    items = frame[spec.item].to_numpy(dtype=object)
    rows = id_index
    if spec.item_separator:
        parts = [[part.strip() for part in field.split(spec.item_separator)] for field in items]
        lengths = [len(part) for part in parts]
        rows, grades = np.repeat(id_index, lengths), None if grades is None else np.repeat(grades, lengths)
        items = np.array([part for fields in parts for part in fields], dtype=object)
    else:
        items = np.array([field.strip() for field in items], dtype=object)
    if competition.item_type == "integer":
        items = _integers(items, None, spec.item, path)
    keep = items != ""
    if grades is not None:
        keep &= grades > 0  # a row of grade 0 is not relevant: its key stays in the truth with nothing to predict
    return PublishedRows(np.asarray(id_names, dtype=object), rows=rows[keep], items=items[keep],
                         grades=None if grades is None else grades[keep])


WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")  # ASCII digits, as the kernel reads them (int() also takes other scripts)
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def whole_number_text(item: str) -> str:
    """A whole number (WHOLE_NUMBER) as int() prints it ('+007' is '7', '-0' is '0'), worked out on the text: int() refuses
    more than 4,300 digits, and the kernel reads any number of them."""
    digits = (item[1:] if item[0] in "+-" else item).lstrip("0") or "0"
    return "-" + digits if item[0] == "-" and digits != "0" else digits


def _integers(items: np.ndarray, place, column: str, path: Path, what: str = "items") -> np.ndarray:
    """The truth's items (or a key column's fields) as int() prints them (the config's item_type or key_types "integer");
    one that is no whole number is a truth error (place(at): where the message says it is, or None). A key may also be a
    whole number written as a float (100.0: pandas reads such a column as floats, which join integers)."""
    out = np.empty(len(items), dtype=object)
    for at, item in enumerate(items):
        if not item or WHOLE_NUMBER.fullmatch(item):
            out[at] = whole_number_text(item) if item else item
        elif what == "key columns" and DECIMAL.fullmatch(item) and float(item).is_integer() and abs(float(item)) < 2.0**53:
            out[at] = str(int(float(item)))
        else:
            where = f", {place(at)}" if place else ""
            raise TruthError(f"truth file {path}{where}, column {column!r}: {item!r} is not a whole number (the config's {what} are "
                             "integers)")
    return out


def _row(frame, at: int) -> str:
    """How a message names row `at` of the kept rows: its place among the file's rows of data (1 is the first)."""
    return f"data row {int(frame.index[at]) + 1:,}"


def _keys(frame, spec: TruthSpec, separator: str, path: Path, integer_keys: tuple[bool, ...]) -> np.ndarray:
    """Each row's key: its key columns' fields joined by the separator (ROW_INDEX: the row's position in the file; a column
    of integers as int() prints its fields)."""
    import pandas as pd

    parts = []
    for column, integer in zip(spec.key, integer_keys):
        values = frame.index.astype(str).to_series(index=frame.index) if column == ROW_INDEX else frame[column].str.strip()
        empty = np.flatnonzero((values == "").to_numpy())
        if len(empty):
            raise TruthError(f"truth file {path}, {_row(frame, empty[0])}: the key column {column!r} is empty")
        if integer and column != ROW_INDEX:
            values = pd.Series(_integers(values.to_numpy(dtype=object), lambda at: _row(frame, at), column, path, "key columns"), index=frame.index)
        parts.append(values)
    joined = parts[0] if len(parts) == 1 else parts[0].str.cat(parts[1:], sep=separator)
    return joined.to_numpy(dtype=object)


def _needed(spec: TruthSpec) -> list[str]:
    """The columns the spec reads, each once, in its order."""
    named = [*spec.key, spec.item, spec.value, *(column for column, _ in spec.grade), *(column for column, _ in spec.where)]
    return list(dict.fromkeys(name for name in named if name and name != ROW_INDEX))


def _table(path: Path, spec: TruthSpec):
    """The spec's columns of a CSV (any separator; plain or gzip) or Parquet file, as text, its rows indexed by their
    position in the file."""
    import pandas as pd

    needed = _needed(spec)
    with open(path, "rb") as handle:
        head = handle.read(8)
    try:
        if head.startswith(b"PAR1"):
            import pyarrow.parquet as pq

            names = pq.ParquetFile(path).schema_arrow.names
            _require_columns(names, needed, path)
            frame = pq.read_table(path, columns=needed).to_pandas()
            return frame.astype(str).where(frame.notna(), "") if len(frame.columns) else frame
        compression = compression_of(head)
        if compression not in ("plain", "gzip") or (compression == "plain" and (found := not_text(path))):
            raise TruthError(f"truth file {path} is {found if compression == 'plain' else 'compressed with ' + compression}: give a "
                             "CSV (plain or gzip) or Parquet file")
        content = gunzipped(path, "table") if compression == "gzip" else None
        source = (lambda: path) if content is None else (lambda: io.BytesIO(content))
        options = dict(sep=spec.field_separator, dtype=str, keep_default_na=False, na_filter=False, compression=None)
        if spec.first_line == "row":
            _require_columns(spec.columns, needed, path)
            return pd.read_csv(source(), header=None, names=list(spec.columns), usecols=needed, **options)
        names = _header(source(), spec.field_separator, path)
        _require_columns(names, needed, path)
        frame = pd.read_csv(source(), usecols=[names.index(name) for name in needed], **options)
        return frame.rename(columns=str.strip)
    except TruthError:
        raise
    except Exception as error:  # pandas and pyarrow raise many kinds; the message is what matters
        raise TruthError(f"cannot read truth file {path}: {error}") from None


MAX_HEADER_BYTES, MAX_COLUMNS = 1 << 20, 4096  # a truth's header line: longer, or of more columns, is no table's header


def _header(source, separator: str, path: Path) -> list[str]:
    """The names of the header line (quotes and spaces around them left out), read before pandas reads the table: a line of
    100,000 columns would keep pandas busy for minutes."""
    with (open(source, "rb") if isinstance(source, Path) else source) as handle:
        line = handle.readline(MAX_HEADER_BYTES + 1)
    if len(line) > MAX_HEADER_BYTES:
        raise TruthError(f"truth file {path}: line 1 is over {MAX_HEADER_BYTES:,} bytes, which is no header line")
    names = [name.strip().strip('"').strip() for name in line.decode("utf-8", "replace").rstrip("\r\n").split(separator)]
    if len(names) > MAX_COLUMNS:
        raise TruthError(f"truth file {path}: line 1 has {len(names):,} columns, over the {MAX_COLUMNS:,} a truth's header may have")
    return names


def _require_columns(names, needed: list[str], path: Path) -> None:
    missing = [name for name in needed if name not in names]
    if missing:
        shown = ", ".join(map(str, list(names)[:12])) + (", ..." if len(names) > 12 else "")
        raise TruthError(f"truth file {path} has no column {missing[0]!r} (its columns: {shown})")


def _playlists(path: Path, spec: TruthSpec):
    """The Million Playlist Dataset's JSON as a table: a row per (playlist, track), the key column the playlist's field
    (pid) and the item column the track's field (track_uri); a playlist without tracks is one row with an empty item."""
    import pandas as pd

    key, item = spec.key[0], spec.item
    keys, items = [], []
    for at, playlist in enumerate(load_playlists(path)):
        tracks = playlist.get("tracks", []) if isinstance(playlist, dict) else None
        name = playlist.get(key) if isinstance(playlist, dict) else None
        if not isinstance(tracks, list) or isinstance(name, (dict, list)) or name is None or isinstance(name, bool):
            raise TruthError(f"truth file {path}, playlist {at}: expected an object with {key!r} and a list \"tracks\"")
        found = [track.get(item) if isinstance(track, dict) else None for track in tracks]
        if not all(isinstance(value, str) and value for value in found):
            raise TruthError(f"truth file {path}, playlist {at} ({key} {name}): a track without a text {item!r}")
        keys += [str(name)] * max(len(found), 1)
        items += found or [""]
    return pd.DataFrame({key: keys, item: items}, dtype=object)


def load_playlists(path: Path) -> list[Any]:
    """The list "playlists" of a file of the MPD's JSON form (its slices, challenge_set.json), at most MAX_JSON_BYTES."""
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise TruthError(f"truth file {path} is {size:,} bytes, over the {MAX_JSON_BYTES:,} a playlists file may have")
    try:
        with open(path, "rb") as handle:
            document = json.loads(handle.read())
    except (UnicodeDecodeError, ValueError) as error:
        raise TruthError(f"truth file {path} is not JSON: {error}") from None
    except RecursionError:  # arrays nested some thousands deep: no playlists file, and json's decoder gives up
        raise TruthError(f"truth file {path} nests its JSON too deep: not the MPD's form of playlists") from None
    playlists = document.get("playlists") if isinstance(document, dict) else None
    if not isinstance(playlists, list):
        raise TruthError(f"truth file {path}: expected a JSON object with a list \"playlists\" (the MPD's challenge_set.json form)")
    return playlists
