"""A data file's format by its name: the one place the suffixes are spelled (case-insensitive); and whether a path
names a regular file at all (a FIFO or a device would block or never end a read).

A submission's compression is told by its first bytes instead (scorer.engine.reader.sniff_head).
"""

from __future__ import annotations

import os
import stat
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


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_a_regular_file(path: str | Path) -> str | None:
    """What path is when it is no regular file to read ("not found", "a FIFO (named pipe)", "a folder", ...), None for a
    regular file. Links are followed; stat never blocks, as opening a FIFO would until a writer comes."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as error:
        return f"not readable ({error.strerror or type(error).__name__})"
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")
