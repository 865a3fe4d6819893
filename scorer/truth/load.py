"""load_truth: an id truth from its file, through the compiled cache."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scorer.errors import TruthError
from scorer.file_formats import format_of, not_a_regular_file, not_text
from scorer.truth.cache import cache_path, cached_copy, save_to_cache
from scorer.truth.compiled import read_compiled
from scorer.truth.ids import Truth, read_jsonl, read_table
from scorer.truth.npz import COMPILED_SUFFIX


def load_truth(path: str | Path, types: tuple[str, ...] | list[str], use_cache: bool = True) -> Truth:
    """Load ground truth from JSONL, Parquet, CSV or a compiled .truth.npz, using the compiled cache.

    The cache entry is keyed by the file's content (cache_path); an entry that fails its checks is
    rebuilt from the file, while a compiled .truth.npz given directly that fails them is a TruthError.
    """
    path, types = Path(path), tuple(types)
    check_truth_path(path)
    with read_errors(path):
        return _load(path, types, use_cache)


def _load(path: Path, types: tuple[str, ...], use_cache: bool) -> Truth:
    if path.name.endswith(COMPILED_SUFFIX):
        return read_compiled(path, types, use_memo=use_cache)
    cached = cache_path(path, list(types)) if use_cache else None
    hit = cached_copy(cached, read_compiled, types, source=str(path))
    if hit is not None:
        return hit
    suffix, kind = "".join(path.suffixes[-1:]).lower(), format_of(path)
    if kind in ("jsonl", "csv") and (found := not_text(path)):
        raise TruthError(f"truth file {path} is {found}")
    if kind == "jsonl":
        truth = read_jsonl(path, types)
    elif kind in ("parquet", "csv"):
        truth = read_table(path, types)
    else:
        raise TruthError(f"truth file {path}: unknown format {suffix!r} (use .jsonl, .parquet, .csv or {COMPILED_SUFFIX})")
    save_to_cache(truth, cached, path, list(types))
    return truth


def check_truth_path(path: Path) -> None:
    """A truth path must name a regular file: a FIFO would block the read, a device never end it."""
    kind = not_a_regular_file(path)
    if kind == "not found":
        raise TruthError(f"truth file not found: {path}")
    if kind is not None:
        raise TruthError(f"truth file {path} is {kind}: give a regular file")


@contextmanager
def read_errors(path: Path) -> Iterator[None]:
    """An OS error while the truth is read (permission denied, an I/O error) is a truth error naming the file."""
    try:
        yield
    except OSError as error:
        raise TruthError(f"cannot read truth file {path}: {error.strerror or error}") from None


MAX_INFLATION = 100  # a gzip truth inflating more than this many times its size is refused (a bomb, not a truth)


def gunzipped(path: Path, what: str, handle=None) -> bytes:
    """A gzip truth's content, at most MAX_INFLATION times the file's size (`what` the file should be, for the message;
    handle: the file already open, read from its start)."""
    import gzip
    import zlib

    limit = MAX_INFLATION * max(path.stat().st_size, 1)
    try:
        with gzip.open(path if handle is None else handle, "rb") as content:
            raw = content.read(limit + 1)
    except (EOFError, OSError, zlib.error) as error:
        raise TruthError(f"truth file {path} is not a whole gzip file: {error}") from None
    if len(raw) > limit:
        raise TruthError(f"truth file {path} inflates to more than {MAX_INFLATION} times its size: not a gzipped {what}")
    return raw

