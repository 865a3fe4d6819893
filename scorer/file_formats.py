"""A data file's format by its name: the one place the suffixes are spelled (case-insensitive); by its first bytes: the
one place the magic numbers of the compressions and binary formats we recognise are written; whether a path names a
regular file at all (a FIFO or a device would block or never end a read); the entries of a folder tree.

A submission's compression is told by its first bytes (compression_of), not by its name.
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


COMPRESSIONS = {  # first bytes -> the compression or archive (gzip and zip are read; the others are named and refused)
    b"\x1f\x8b": "gzip",
    b"PK\x03\x04": "zip",
    b"PK\x05\x06": "zip",  # an empty archive
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"7z\xbc\xaf\x27\x1c": "7z",
    b"\x04\x22\x4d\x18": "lz4",
}
TAR_MAGIC_AT = 257  # a tar header's "ustar" (POSIX and GNU tar)

BINARY_FORMATS = {  # first bytes -> what a file of a binary (not text) format is
    b"PAR1": "a Parquet file",
    b"ARROW1": "an Arrow IPC (Feather v2) file",
    b"\xff\xff\xff\xff": "an Arrow IPC stream",
    b"FEA1": "a Feather (v1) file",
    b"Obj\x01": "an Avro file",
    b"\x93NUMPY": "a NumPy .npy array",
    b"\x80\x02": "a Python pickle",
    b"\x80\x03": "a Python pickle",
    b"\x80\x04": "a Python pickle",
    b"\x80\x05": "a Python pickle",
    b"\x89HDF\r\n\x1a\n": "an HDF5 file",
    b"SQLite format 3\x00": "an SQLite database",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1": "an Excel 97-2003 workbook (.xls) or another OLE2 document",
    b"%PDF-": "a PDF document",
    b"\x89PNG\r\n\x1a\n": "a PNG image",
}
ORC_MAGIC = b"ORC"  # three letters a text may start with: an ORC file only when a byte that is no text follows


def compression_of(head: bytes) -> str:
    """"gzip", "zip", "bzip2", "xz", "zstd", "7z", "lz4" or "plain", by the first bytes."""
    return next((name for magic, name in COMPRESSIONS.items() if head.startswith(magic)), "plain")


def binary_format(head: bytes) -> str | None:
    """What content starting with `head` is when it is a binary format we recognise ("a Parquet file", "a tar archive",
    ...), else None."""
    found = next((name for magic, name in BINARY_FORMATS.items() if head.startswith(magic)), None)
    if found is None and head.startswith(ORC_MAGIC) and any(byte < 9 or byte >= 0x80 for byte in head[3:16]):
        found = "an ORC file"
    if found is None and head[TAR_MAGIC_AT : TAR_MAGIC_AT + 5] == b"ustar":
        found = "a tar archive"
    return found


def not_text(path: str | Path, *, gzip_ok: bool = False) -> str | None:
    """What a file that should hold text is instead, from its first bytes ("a Parquet file, not text (name it .parquet)",
    "compressed with bzip2, not text"; gzip_ok: gzip is read), None for anything else or for a file that cannot be opened
    (its reader says why)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(TAR_MAGIC_AT + 5)
    except OSError:
        return None
    compression = compression_of(head)
    if compression != "plain" and not (gzip_ok and compression == "gzip"):
        return f"compressed with {compression}, not text (decompress it first)"
    found = binary_format(head)
    if found is None:
        return None
    return f"{found}, not text" + (" (name it .parquet to read it as Parquet)" if found == "a Parquet file" else "")


def zip_kind(names: list[str]) -> str | None:
    """What a zip archive of several members is when its members' names tell (an Excel workbook, a NumPy .npz)."""
    if "[Content_Types].xml" in names:
        word = next((kind for folder, kind in (("xl/", "an Excel workbook (.xlsx)"), ("word/", "a Word document (.docx)"),
                                                ("ppt/", "a PowerPoint file (.pptx)")) if any(n.startswith(folder) for n in names)), None)
        return word or "an Office Open XML document"
    if "mimetype" in names and "content.xml" in names:
        return "an OpenDocument file (.ods, .odt)"
    if names and all(name.endswith(".npy") for name in names):
        return "a NumPy .npz archive"
    return None


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
