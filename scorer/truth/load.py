"""load_truth: an id truth from its file, through the compiled cache."""

from __future__ import annotations

from pathlib import Path

from scorer.errors import TruthError
from scorer.file_formats import format_of
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
    if not path.is_file():
        raise TruthError(f"truth file not found: {path}")
    if path.name.endswith(COMPILED_SUFFIX):
        return read_compiled(path, types, use_memo=use_cache)
    cached = cache_path(path, list(types)) if use_cache else None
    hit = cached_copy(cached, read_compiled, types, source=str(path))
    if hit is not None:
        return hit
    suffix, kind = "".join(path.suffixes[-1:]).lower(), format_of(path)
    if kind == "jsonl":
        truth = read_jsonl(path, types)
    elif kind in ("parquet", "csv"):
        truth = read_table(path, types)
    else:
        raise TruthError(f"truth file {path}: unknown format {suffix!r} (use .jsonl, .parquet, .csv or {COMPILED_SUFFIX})")
    save_to_cache(truth, cached, path, list(types))
    return truth
