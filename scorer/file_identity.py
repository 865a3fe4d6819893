"""Whether two paths name one file, however they are spelled: the same path once made absolute and resolved (`.`, `..`,
symbolic links), or, where the file exists, the same file on disk (a hard link, a bind mount, a case-insensitive file
system). What a command reads and writes, and the files a teams file or a grade record names, are compared so."""

from __future__ import annotations

import os


def resolved(path) -> str:
    """The path made absolute, with `.`, `..` and symbolic links resolved as far as it exists."""
    absolute = os.path.abspath(os.fspath(path))
    try:
        return os.path.realpath(absolute)
    except (OSError, ValueError):  # a NUL byte, a loop of links
        return os.path.normpath(absolute)


def identity(path) -> tuple:
    """A key equal for two paths exactly when they name one file: (device, inode) of a file that exists, else its
    resolved path (a file that does not exist yet has no other name)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return ("path", resolved(path))
    return ("file", found.st_dev, found.st_ino)


def same_file(a, b) -> bool:
    return identity(a) == identity(b)


def distinct(paths) -> list:
    """The paths in their order, each file once (under its first spelling)."""
    seen: set[tuple] = set()
    out = []
    for path in paths:
        key = identity(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out
