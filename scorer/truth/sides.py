"""The table reader's side inputs of a list row (scorer.kernels.table_rows.parse_table_block): the seeds each row was
given, which it may not list (the config's [seeds]: the MPD's challenge_set.json, whose playlists' tracks are their
seeds; verify_submission.py's check, S042), and each item's artist, which R-precision's artist credit reads (the
config's [artists]: the MPD's own files, its slices and challenge set, each track with its `artist_uri`).

Both are read as their dataset published them, by the config's sections (scorer.spec.competition); a file that cannot be
read is a TruthError naming it (exit 2), as a truth is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorer.errors import ConfigError, TruthError, UsageError
from scorer.file_formats import not_a_regular_file
from scorer.kernels.kinds import ROW_RPREC_ARTIST
from scorer.spec.competition import ArtistSpec, Competition, TruthSpec
from scorer.truth.strings import StringTable, StringTruth, truth_of_pairs

ARTIST_SUFFIXES = {"playlists": (".json",), "table": (".csv", ".csv.gz", ".tsv", ".txt", ".parquet")}  # a folder's files read


@dataclass(frozen=True)
class Seeds:
    """Each truth row's seeds: items[indptr[i]:indptr[i + 1]] (codes of names, sorted, distinct), names' hashes."""

    indptr: np.ndarray
    items: np.ndarray
    names: StringTable
    hashes: np.ndarray


@dataclass(frozen=True)
class Artists:
    """The items whose artist is one of the truth's, each with its artist's code (artist_of), and the artist of each
    truth item (truth_artist, by item code; -1 where the table has none)."""

    names: StringTable
    artist_of: np.ndarray
    truth_artist: np.ndarray


@dataclass(frozen=True)
class TableSide:
    seeds: Seeds | None = None
    artists: Artists | None = None

    def arrays(self) -> tuple[np.ndarray, ...]:
        """As parse_table_block takes them: the seeds' (indptr, items, keys, starts, ends, hashes), then the artists' (keys,
        starts, ends, table, artist_of, truth_artist); empty arrays of the same types where there are none."""
        none = np.empty(0, np.int64)
        seeds, artists = self.seeds, self.artists
        seed_arrays = ((seeds.indptr, seeds.items, *seeds.names.arrays()[:3], seeds.hashes) if seeds is not None else
                       (none, none, np.zeros(8, np.uint8), none, none, np.empty(0, np.uint64)))
        artist_arrays = ((*artists.names.arrays(), artists.artist_of, artists.truth_artist) if artists is not None else
                         (np.zeros(8, np.uint8), none, none, np.full(16, -1, np.int64), none, none))
        return (*seed_arrays, *artist_arrays)


def check_side(competition: Competition, has_artists: bool) -> None:
    """A metric that credits artists needs shape 'list', the config's [artists] and the table given (has_artists;
    UsageError, else). Checked before the truth is read (api.score) and where the kernel is made."""
    for metric in competition.metrics:
        if metric.row_kind != ROW_RPREC_ARTIST:
            continue
        if competition.shape != "list" or competition.artists_spec is None:
            raise ConfigError(f"metric {metric} needs shape 'list' and an [artists] section in the config (how the table of each "
                              f"item's artist is read); {competition.name!r} has {'none' if competition.shape == 'list' else 'shape ' + repr(competition.shape)}")
        if not has_artists:
            raise UsageError(f"metric {metric} needs the table of each item's artist: give its files (--artists FILE_OR_FOLDER ..., "
                             "or artists=[...] in Python), the truth's file among them")


def read_side(competition: Competition, truth: StringTruth, seeds=None, artists=None) -> TableSide | None:
    """The side inputs given (seeds: a file, or the Seeds seeds_truth read with this truth; artists: files or folders),
    read for this truth; None without either."""
    if seeds is None and not artists:
        return None
    if seeds is not None and competition.seeds_spec is None:
        raise UsageError(f"competition {competition.name!r} has no [seeds] section: it names no seed items a row may not list")
    if artists and not any(metric.row_kind == ROW_RPREC_ARTIST for metric in competition.metrics):
        raise UsageError("the artist table is read for r_precision(credit=artist), which this run does not compute (add it with "
                         "--metrics)")
    artists_spec = competition.artists_spec
    if artists and artists_spec is None:
        raise UsageError(f"competition {competition.name!r} has no [artists] section: it does not say how an artist table is read")
    if isinstance(seeds, Seeds) and len(seeds.indptr) != truth.ids.size + 1:
        raise UsageError("the seeds given were read with another truth: give the seeds file")
    read = seeds if isinstance(seeds, Seeds) or seeds is None else read_seeds(Path(seeds), competition, truth)
    return TableSide(seeds=read,
                     artists=read_artists(artists, artists_spec, truth, competition.item_type) if artists and artists_spec else None)


@contextmanager
def _named(what: str, path: Path) -> Iterator[None]:
    """A file's errors, found by the published truth's reader, name it as what it is (a seeds or artists file)."""
    kind = not_a_regular_file(path)
    if kind is not None:
        raise TruthError(f"{what} {path} is {kind}: give a regular file")
    try:
        yield
    except TruthError as error:
        raise TruthError(str(error).replace(f"truth file {path}", f"{what} {path}")) from None
    except OSError as error:
        raise TruthError(f"cannot read {what} {path}: {error.strerror or error}") from None


def _seed_rows(path: Path, competition: Competition):
    from scorer.truth.published import read_published_rows

    with _named("seeds file", path):
        return read_published_rows(path, competition, competition.seeds_spec)


def read_seeds(path: Path, competition: Competition, truth: StringTruth, rows=None) -> Seeds:
    """The seeds of each row of the truth (a row the seeds file does not name has none; one the truth lacks is left out);
    rows: the file's rows, where they were read already."""
    import pandas as pd

    from scorer.truth.checks import hash_keys

    rows = _seed_rows(path, competition) if rows is None else rows
    place = {name: i for i, name in enumerate(_names(truth.ids))}
    slot = np.array([place.get(name, -1) for name in rows.ids], np.int64)[rows.rows] if len(rows.rows) else np.empty(0, np.int64)
    known = slot >= 0
    codes, names = pd.factorize(rows.items[known]) if known.any() else (np.empty(0, np.int64), np.empty(0, dtype=object))
    width = max(len(names), 1)
    pairs = np.unique(slot[known] * width + np.asarray(codes, np.int64))  # by row, then item; each pair once
    indptr = np.zeros(truth.ids.size + 1, np.int64)
    np.cumsum(np.bincount(pairs // width, minlength=truth.ids.size), out=indptr[1:])
    table = StringTable.of(np.asarray(names, dtype=object))
    return Seeds(indptr, pairs % width, table, hash_keys(table.keys, table.starts, table.ends))


def seeds_truth(path, competition: Competition) -> tuple[StringTruth, Seeds]:
    """The rows the seeds file names, each with nothing to predict: the truth `scorer validate --seeds` checks a file's ids
    against where no truth is given (verify_submission.py's pids of the challenge set); and their seeds, from the same
    read of the file."""
    path = Path(path)
    rows = _seed_rows(path, competition)
    none = np.empty(0, np.int64)
    truth = truth_of_pairs(path, competition.types[0], rows.ids, none, np.empty(0, dtype=object), None)
    return truth, read_seeds(path, competition, truth, rows)


def read_artists(sources, spec: ArtistSpec, truth: StringTruth, item_type: str = "text") -> Artists:
    """The artist table of the files (and folders' files) given, as [artists] reads them: the first artist given for an
    item stands; only the items whose artist is an artist of one of the truth's items are kept."""
    from scorer.truth.published import WHOLE_NUMBER, whole_number_text

    artist_code: dict[str, int] = {}
    item_artist: dict[str, int] = {}
    for path in _artist_files(sources, spec):
        for item, artist in _pairs(path, spec):
            if item_type == "integer" and WHOLE_NUMBER.fullmatch(item):
                item = whole_number_text(item)  # as the kernel reads an integer item
            if item not in item_artist:
                item_artist[item] = artist_code.setdefault(artist, len(artist_code))
    truth_artist = np.array([item_artist.get(name, -1) for name in _names(truth.item_names)], np.int64)
    recode = np.full(len(artist_code), -1, np.int64)  # the truth's artists numbered from 0, the others dropped
    wanted = np.unique(truth_artist[truth_artist >= 0])
    recode[wanted] = np.arange(len(wanted))
    del artist_code
    kept = [(item, int(recode[artist])) for item, artist in item_artist.items() if recode[artist] >= 0]
    del item_artist
    known = truth_artist >= 0
    truth_artist[known] = recode[truth_artist[known]]
    return Artists(StringTable.of(np.array([item for item, _ in kept], dtype=object)), np.array([a for _, a in kept], np.int64),
                   truth_artist)


def _names(table: StringTable) -> list[str]:
    """Every string of a table, decoded at once (a name at a time costs ten times as much)."""
    raw = table.keys.tobytes()
    return [raw[start:end].decode("utf-8", "replace") for start, end in zip(table.starts.tolist(), table.ends.tolist())]


def _artist_files(sources, spec: ArtistSpec) -> list[Path]:
    """The files given, a folder standing for its files of the format's suffixes (in name order)."""
    files = []
    for source in [sources] if isinstance(sources, (str, Path)) else list(sources):
        path = Path(source)
        if path.is_dir():
            found = sorted(entry for entry in path.iterdir() if entry.name.lower().endswith(ARTIST_SUFFIXES[spec.format]))
            if not found:
                raise TruthError(f"artists folder {path} holds no {' or '.join(ARTIST_SUFFIXES[spec.format])} file")
            files += found
        else:
            files.append(path)
    return files


def _pairs(path: Path, spec: ArtistSpec) -> list[tuple[str, str]]:
    """(item, artist) of every track of a playlists file, or of every row of a table."""
    with _named("artists file", path):
        if spec.format == "table":
            from scorer.truth.published import _table

            frame = _table(path, TruthSpec(first_line=spec.first_line, columns=spec.columns, field_separator=spec.field_separator,
                                           key=(spec.item,), item=spec.artist))
            pairs = zip(frame[spec.item].str.strip(), frame[spec.artist].str.strip())
            return [(item, artist) for item, artist in pairs if item and artist]
        return _track_pairs(path, spec)


def _track_pairs(path: Path, spec: ArtistSpec) -> list[tuple[str, str]]:
    """Every track's (item, artist) fields of a file of the MPD's JSON form (`{"playlists": [{"tracks": [...]}, ...]}`)."""
    from scorer.truth.published import load_playlists

    out = []
    for at, playlist in enumerate(load_playlists(path)):
        tracks = playlist.get("tracks") if isinstance(playlist, dict) else None
        if not isinstance(tracks, list):
            raise TruthError(f"truth file {path}, playlist {at}: expected an object with a list \"tracks\"")
        for track in tracks:
            item, artist = (track.get(spec.item), track.get(spec.artist)) if type(track) is dict else (None, None)
            if type(item) is not str or type(artist) is not str or not item or not artist:
                raise TruthError(f"truth file {path}, playlist {at}: a track without a text {spec.item!r} and {spec.artist!r}")
            out.append((item, artist))
    return out
