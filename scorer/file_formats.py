"""A data file's format by its name: the one place the suffixes are spelled (case-insensitive).

A submission's compression is told by its first bytes instead (scorer.engine.reader.sniff_head).
"""

from __future__ import annotations

from pathlib import Path

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv",)
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
GZIP_SUFFIX = ".gz"
FORMATS = {"parquet": PARQUET_SUFFIXES, "csv": CSV_SUFFIXES, "jsonl": JSONL_SUFFIXES}


def is_gzip(path: str | Path) -> bool:
    """Does the name end with .gz?"""
    return Path(path).name.lower().endswith(GZIP_SUFFIX)


def format_of(path: str | Path, *, through_gzip: bool = False) -> str | None:
    """"parquet", "csv" or "jsonl" by the name's ending, None for any other; through_gzip: name.jsonl.gz is jsonl."""
    name = Path(path).name.lower()
    if through_gzip:
        name = name.removesuffix(GZIP_SUFFIX)
    return next((kind for kind, suffixes in FORMATS.items() if name.endswith(suffixes)), None)


def is_parquet(path: str | Path) -> bool:
    return format_of(path) == "parquet"
