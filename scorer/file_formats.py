"""A data file's format by its name: the one place the suffixes are spelled (case-insensitive); whether a path
names a regular file at all (a FIFO or a device would block or never end a read); the entries of a folder tree.

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
    return None if stat.S_ISREG(mode) else kind_of(mode)


def unreadable(path: str | Path, what: str) -> str | None:
    """None for a regular file; else a sentence naming `what` and what the path is: "the item table x.csv is a FIFO
    (named pipe), not a regular file" (a FIFO would block the reader, a device never end it)."""
    kind = not_a_regular_file(path)
    if kind is None:
        return None
    if kind == "not found":
        return f"the {what} {path} was not found"
    return f"the {what} {path} is {kind}" + ("" if kind.startswith("not readable") else ", not a regular file")


def kind_of(mode: int) -> str:
    """What a file's mode says it is when it is no regular file: "a FIFO (named pipe)", "a folder", ..."""
    return next((kind for test, kind in _KINDS if test(mode)), "a special file")


MAX_FOLDER_DEPTH = 64  # an upload or a partitioned submission nests a few folders; 1000 is an attack


class FolderTooDeep(ValueError):
    """A folder tree nested deeper than MAX_FOLDER_DEPTH."""


def entries_below(root: str | Path, max_depth: int = MAX_FOLDER_DEPTH) -> list[Path]:
    """Every entry below root that is not a folder (files, links of any kind, special files), unsorted.

    Links are listed, never followed; a folder that cannot be listed is skipped (as os.walk does). The walk keeps
    its own stack: os.walk and Path.rglob recurse once per level (Python 3.11), so a tree 1000 folders deep was a
    RecursionError. A tree deeper than max_depth raises FolderTooDeep.
    """
    found: list[Path] = []
    stack = [(Path(root), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if depth >= max_depth:
                    raise FolderTooDeep(f"folders nested more than {max_depth} deep")
                stack.append((Path(entry.path), depth + 1))
            else:
                found.append(Path(entry.path))
    return found
