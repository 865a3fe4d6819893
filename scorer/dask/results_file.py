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
import math
import os
import stat
from dataclasses import dataclass, field

from scorer.file_formats import kind_of
from scorer.handed_back import lines, parse
from scorer.schema import ANY, Flag, ListOf, MapOf, Maybe, Number, Record, SchemaError, Text, Whole

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer at a time is then up to the grader
    fcntl = None  # type: ignore[assignment]

FINAL = ("scored", "invalid")
STATUSES = (*FINAL, "failed", "retryable")
MAX_RECORD_BYTES = 64 << 20  # one line; a longer one is no record (and is not read into memory)
FIGURE = Maybe(Number(infinite=True))  # an rmse of a prediction such as 1e200 is infinite
PROBLEM = Record({"code": Text(longest=16), "severity": Text(longest=16), "message": Text()},
                 {"line": Maybe(Whole(0)), "column": Maybe(Whole(0))}, others=True)
RECORD = Record({"file": Text()}, {
    "path": Text(), "content_key": Maybe(Text(longest=256)), "status": Text(STATUSES), "valid": Flag(), "score": FIGURE,
    "metrics": MapOf(MapOf(FIGURE)), "counts": MapOf(ANY), "problem_counts": ListOf(MapOf(ANY)), "problems": ListOf(PROBLEM),
    "error": Text(), "reason": Text(), "seconds": Number(0), "worker": Text(), "pid": Whole(0),
    "index": Whole(0), "attempts": Maybe(Whole(0)), "workers": Maybe(ListOf(Text())),
}, others=True)  # other fields (a receipt, checked by `scorer verify` as it reads one; another tool's) are kept, never read here


def record_problem(record) -> str | None:
    """Why a parsed line is no grade record (a field of the wrong type, a "scored" one without a score), None when it is one."""
    try:
        RECORD.check(record)
    except SchemaError as error:
        return str(error)
    if status(record) == "scored" and record.get("score") is None:
        return "its status is 'scored' but it has no score"
    return None


def finite_score(record: dict) -> bool:
    score = record.get("score")
    return score is not None and math.isfinite(score)


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
    unreadable_lines: list[int] = field(default_factory=list)  # whole lines that are no grade record (left as they are)
    first_unreadable: str = ""  # why the first of them is none

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
    """Open (create) `path` to append records: a regular file only, lock it, read its records, repair a torn last line.

    Raises Busy when another run holds it, OSError when it cannot be opened or read, NotRegular when it is no regular file.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0), 0o644)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # a FIFO nobody reads would take every record and lose it
            raise NotRegular(kind_of(mode))
        os.set_blocking(fd, True)
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


class NotRegular(Exception):
    """The results file is a FIFO, a device or a folder; the message says which."""


def _read_and_repair(opened: Opened) -> None:
    """Read the records line by line (one line in memory at a time); repair a last line without its newline."""
    for line in lines(opened.fd, MAX_RECORD_BYTES):
        if line.data is not None and not line.data.strip():
            continue
        try:
            value = parse(line.data) if line.data is not None else None
            why = "not a JSON object" if not isinstance(value, dict) else record_problem(value)
        except ValueError as error:
            value, why = None, str(error)
        if line.data is None:
            why = f"over {MAX_RECORD_BYTES:,} bytes"
        if not line.ended:  # a killed run's last write
            if value is None:
                size = os.fstat(opened.fd).st_size
                os.ftruncate(opened.fd, line.offset)
                opened.repaired = f"its last line was cut short ({size - line.offset} bytes): removed, that submission is graded again"
                break
            os.write(opened.fd, b"\n")  # cut after the whole value, before its newline
            opened.repaired = "its last record had no newline: added"
        if why:
            opened.unreadable_lines.append(line.number)
            opened.first_unreadable = opened.first_unreadable or why
        else:
            opened.records.append(value)
