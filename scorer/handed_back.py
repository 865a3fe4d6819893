"""JSON files a user hands back to us (receipts, `scorer grade` results, a scoring program's scores.json), read as the
untrusted input they are: a regular file only (opened without blocking, so a FIFO is refused at once and a device is
never read), a bounded number of bytes (a whole document) or bytes per line (JSON lines, streamed), JSON nested at most
MAX_DEPTH deep (checked on the bytes, before the parser recurses), then a schema of its own (scorer.schema).

A refusal is a UsageError (exit 2) naming the file: "receipt r.json: field 'split' is 'half', expected an object or null".
"""

from __future__ import annotations

import json
import os
import re
import stat
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from scorer.errors import UsageError
from scorer.file_formats import kind_of
from scorer.private_files import READ_ANY
from scorer.schema import SchemaError, Spec

MAX_DEPTH = 64  # arrays and objects inside each other: our documents nest 6 deep; 100,000 is an attack
PIECE = 1 << 20  # bytes read at a time
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')  # a JSON string (no raw newline in one), escapes included


@contextmanager
def opened(path, what: str) -> Iterator[tuple[int, os.stat_result]]:
    """(descriptor, status) of `path` if it is a regular file; else UsageError saying what it is. Opening does not wait
    for a FIFO's writer (O_NONBLOCK); the check is made on the descriptor, so what is checked is what is read."""
    try:
        fd = os.open(path, READ_ANY)
    except OSError as error:
        raise UsageError(f"cannot read the {what} {path}: {error.strerror or error}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise UsageError(f"the {what} {path} is {kind_of(status.st_mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        yield fd, status
    finally:
        os.close(fd)


def read_bytes(path, what: str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (a file still growing is read no further)."""
    with opened(path, what) as (fd, status):
        if status.st_size > limit:
            raise _too_big(path, what, limit)
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(PIECE, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise _too_big(path, what, limit)
        return b"".join(chunks)


def _too_big(path, what: str, limit: int) -> UsageError:
    return UsageError(f"the {what} {path} is over {limit:,} bytes: not a {what}")


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Does the JSON text nest arrays and objects more than `limit` deep (brackets inside strings aside)?"""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    bare = np.frombuffer(_STRING.sub(b"", data), np.uint8)
    steps = np.isin(bare, np.frombuffer(b"[{", np.uint8)).astype(np.int64) - np.isin(bare, np.frombuffer(b"]}", np.uint8))
    return bool(np.cumsum(steps).max() > limit)


_NOT_BRACKETS = bytes(range(256)).translate(None, b"[]{}")  # bytes.translate deletes these: what is left is brackets
_STEP = np.zeros(256, np.int64)
_STEP[list(b"[{")], _STEP[list(b"]}")] = 1, -1


def nests_deeper(path, limit: int = MAX_DEPTH, piece: int = 16 << 20) -> bool:
    """Might the JSON text of a file (a document or JSON lines) nest more than `limit` deep? Brackets are counted, a
    piece at a time, strings and all (so the answer errs towards yes; about 3 ms a MB). Run before a parser that
    recurses in C: pyarrow's JSON reader crashes the process on 100,000 nested arrays."""
    depth = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(piece):
            brackets = chunk.translate(None, _NOT_BRACKETS)
            if not brackets:
                continue
            running = np.cumsum(_STEP[np.frombuffer(brackets, np.uint8)]) + depth
            if running.max() > limit:
                return True
            depth = int(running[-1])
    return False


class TooDeep(ValueError):
    """JSON nested deeper than the limit."""


def parse(data: bytes, limit: int = MAX_DEPTH) -> Any:
    """The JSON value of UTF-8 bytes; ValueError, its message a phrase ("is not JSON (...)"), when it is none, TooDeep
    when it nests deeper than `limit`."""
    if too_deep(data, limit):
        raise TooDeep(f"nests arrays and objects more than {limit} deep")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"is not JSON ({error.msg} at line {error.lineno} column {error.colno})") from None
    except (ValueError, RecursionError) as error:  # an integer of over 4,300 digits; the depth check makes recursion rare
        raise ValueError(f"is not JSON we can read ({error})") from None


def checked(value: Any, spec: Spec, path, what: str) -> Any:
    """value if the schema accepts it; else UsageError naming the file and the field."""
    try:
        spec.check(value)
    except SchemaError as error:
        raise UsageError(f"{what} {path}: {error}") from None
    return value


def read_json(path, what: str, spec: Spec, limit: int) -> Any:
    """The JSON document of a regular file of at most `limit` bytes, checked against its schema."""
    return parsed(read_bytes(path, what, limit), spec, lambda detail: UsageError(f"{what} {path}{detail}"))


def parsed(data: bytes, spec: Spec, fail: Callable[[str], Exception]) -> Any:
    """The JSON value of `data` checked against `spec`; else fail(detail) is raised, the detail " is not JSON (...)" or
    ": field ... is ...", to follow the name of what was read."""
    try:
        value = parse(data)
    except ValueError as error:
        raise fail(f" {error}") from None
    try:
        spec.check(value)
    except SchemaError as error:
        raise fail(f": {error}") from None
    return value


class Line(NamedTuple):
    number: int  # from 1
    offset: int  # of its first byte in the file
    data: bytes | None  # without its newline; None when it is longer than the limit
    ended: bool  # a newline follows it (the last line of a file cut short has none)


def json_lines(fd: int, longest: int, label: str) -> Iterator[tuple[Line, Any, ValueError | None]]:
    """(line, its JSON value, None) or (line, None, why it holds none) for each line of JSON lines that is not blank;
    UsageError naming `label` (e.g. "--results r.jsonl") and the line for one over `longest` bytes."""
    for line in lines(fd, longest):
        if line.data is None:
            raise UsageError(f"{label} line {line.number}: over {longest:,} bytes, not a grade record")
        if line.data.strip():
            try:
                yield line, parse(line.data), None
            except ValueError as error:
                yield line, None, error


def lines(fd: int, longest: int, start: int = 0) -> Iterator[Line]:
    """The lines of an open regular file, read PIECE bytes at a time from `start`: memory holds one line of at most
    `longest` bytes (a longer one is skipped, its data None), never the file."""
    pending: list[bytes] = []
    size, skipping, number, offset, at = 0, False, 0, start, start
    while chunk := os.pread(fd, PIECE, at):
        at += len(chunk)
        begin = 0
        while (end := chunk.find(b"\n", begin)) >= 0:
            number += 1
            data = None if skipping or size + end - begin > longest else b"".join([*pending, chunk[begin:end]])
            yield Line(number, offset, data, True)
            offset += size + end - begin + 1
            pending, size, skipping, begin = [], 0, False, end + 1
        rest = chunk[begin:]
        if not skipping and size + len(rest) > longest:
            pending, skipping = [], True
        elif not skipping:
            pending.append(rest)
        size += len(rest)
    if size:
        yield Line(number + 1, offset, None if skipping else b"".join(pending), False)
