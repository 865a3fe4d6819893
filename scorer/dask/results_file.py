"""The results file of `scorer grade -o`: JSON lines, appended one record at a time, read back to resume.

A record's status says whether its file is done. "scored" and "invalid" are final: the file was judged.
"failed" (the task raised, or killed its worker, on every attempt: a cluster's trouble, such as memory,
since a bad file is a result, not an exception) and "retryable" (the task was cancelled, or the scheduler
or every worker was lost before it finished) are not, and --resume grades that file again. A final record is matched to a submission by its absolute path and
the content key of its bytes (size and xxh3-128, as the compiled truth cache): a file changed since is
graded again.

Lines are never rewritten. Opening the file for a run takes an exclusive lock (one writer at a time)
and repairs what a killed run can leave: a last line cut short is removed (its submission has no final
record then, so it is graded again, once); a whole last record missing only its newline gets one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer at a time is then up to the grader
    fcntl = None  # type: ignore[assignment]

FINAL = ("scored", "invalid")


def status(record: dict) -> str:
    """scored, invalid, failed or retryable; records of an older scorer have no "status" and are read from their fields."""
    if record.get("status"):
        return record["status"]
    if record.get("error"):
        return "failed"
    return "scored" if record.get("score") is not None else "invalid"


def resume_key(record: dict) -> tuple[str, str | None] | None:
    """(absolute path, content key) of a final record; None for one that cannot be matched (not final, or no path)."""
    path = record.get("path")
    if status(record) not in FINAL or not path or "content_key" not in record:
        return None
    return path, record["content_key"]


@dataclass
class Opened:
    """The results file opened for appending: its descriptor (locked), what it held, what the repair did."""

    path: str
    fd: int
    records: list[dict] = field(default_factory=list)
    repaired: str = ""  # what was repaired, for a note on stderr; "" when nothing was
    unreadable_lines: list[int] = field(default_factory=list)  # whole lines that are not a JSON object (left as they are)

    def final(self) -> dict[tuple[str, str | None], dict]:
        """The last final record of each (path, content key)."""
        return {key: record for record in self.records if (key := resume_key(record)) is not None}

    def append(self, record: dict) -> None:
        """One line, written with one call to the end of the file (O_APPEND) and handed to the system at once."""
        data = (json.dumps(record) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]

    def close(self) -> None:
        try:
            os.fsync(self.fd)
        except OSError:
            pass
        os.close(self.fd)  # also drops the lock


class Busy(Exception):
    """Another process holds the file's lock."""


def open_results(path: str) -> Opened:
    """Open (create) `path` to append records: lock it, read its records, repair a torn last line.

    Raises Busy when another run holds it, OSError when it cannot be opened or read.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Busy(path) from None
        opened = Opened(path, fd)
        _read_and_repair(opened)
    except BaseException:
        os.close(fd)
        raise
    return opened


def _read_and_repair(opened: Opened) -> None:
    size = os.fstat(opened.fd).st_size
    data = os.pread(opened.fd, size, 0) if size else b""
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail:
        record = _parse(tail)
        if record is not None:  # cut after the record, before its newline
            os.write(opened.fd, b"\n")
            lines.append(tail)
            opened.repaired = "its last record had no newline: added"
        else:
            os.ftruncate(opened.fd, size - len(tail))
            opened.repaired = f"its last line was cut short ({len(tail)} bytes): removed, that submission is graded again"
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = _parse(line)
        if record is None:
            opened.unreadable_lines.append(number)
        else:
            opened.records.append(record)


def _parse(line: bytes) -> dict | None:
    try:
        record = json.loads(line)
    except ValueError:  # also a UnicodeDecodeError
        return None
    return record if isinstance(record, dict) else None
