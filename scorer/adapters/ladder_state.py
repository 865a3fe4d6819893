"""The Ladder's state between submissions, kept in one file by a grader that sees them one after another (the EvalAI
remote worker, scorer.adapters.evalai), and read back as untrusted input every time.

The file: a first line, the header (JSON: format, version, metric, types, weights, the split {"source", "public",
"private"}, the truth's content key); then one record per submission, a JSON line (a history row of
scorer.analytics.ladder.board, plus "figures": its public figure per type, and "vector": a byte count), followed, when
the submission was released, by exactly "vector" = 8 x public sessions bytes (its per-session public scores, float64
little-endian) and a newline; a file of version 1 (scorer 0.2.0) holds float32 scores, 4 bytes each, and is read and
written on as it is. Records are appended, one write each, under an exclusive lock (flock), never rewritten.

Opening reads it record by record (a line of at most MAX_LINE bytes at a time; a vector is skipped, not read): every
line must be a JSON object of the record's schema, every vector of the size the header says, a released record must
carry one and no other may. A last record cut short (a write killed midway: the file ends inside it, and no whole record
line follows it) is removed when the file is opened to write (that submission was never answered), and left out when it
is only read. Anything else wrong, in any record, is a StateError naming the file and the record, and nothing is removed. Memory: the history rows, and per team the offset of its leader's vector; a vector is read (and
checked finite) only for the team being scored.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field

import numpy as np

from scorer.analytics.teams_file import TEAM_RULE, team_problem
from scorer.file_formats import kind_of
from scorer.handed_back import parsed
from scorer.schema import Flag, ListOf, MapOf, Maybe, Number, Record, Text, Whole

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

FORMAT, VERSION = "scorer-ladder-state", 2
WIDTH = {1: 4, 2: 8}  # bytes per public session's score, by version: float32, float64
MAX_LINE = 64 << 10  # a header or a record's line; a longer one is no record
SCORE = Maybe(Number())
SPLIT = Record({"source": Text(longest=256), "public": Whole(2), "private": Whole(0)})
HEADER = Record({"format": Text((FORMAT,)), "version": Whole(1, VERSION), "metric": Text(longest=256),
                 "types": ListOf(Text(longest=256), longest=64), "weights": ListOf(Number(), longest=64), "split": SPLIT,
                 "truth": Text(longest=256)})
RECORD = Record({"file": Text(longest=4096), "team": Text(longest=256), "time": Number(0, 1e11), "status": Text(("scored", "invalid")),
                 "released": Flag(), "vector": Whole(0)},
                {"reason": Maybe(Text()), "public_score": SCORE, "private_score": SCORE, "difference": SCORE, "threshold": SCORE,
                 "ladder_shown": SCORE, "public_shown": SCORE, "figures": MapOf(SCORE, longest=64)})


class StateError(ValueError):
    """The state file cannot be used; the message names it and what is wrong."""


@dataclass
class Team:
    """What the next submission of a team needs: its leader's record and vector offset, its best public score."""

    leader: dict | None = None
    vector_at: int = 0
    best: float | None = None


@dataclass
class LadderState:
    """An opened state file: its header, its history rows (in the order written) and each team's Team."""

    path: str
    fd: int
    header: dict
    history: list[dict] = field(default_factory=list)
    teams: dict[str, Team] = field(default_factory=dict)
    repaired: str = ""

    @property
    def public(self) -> int:
        return int(self.header["split"]["public"])

    @property
    def width(self) -> int:
        """Bytes per public session's score in this file: 8 (float64), 4 (float32) in a file of version 1."""
        return WIDTH[int(self.header["version"])]

    def leader_sessions(self, team: str) -> np.ndarray | None:
        """The team's leader's per-session public scores (float64), read now and checked finite; None without a leader."""
        found = self.teams.get(team)
        if found is None or found.leader is None:
            return None
        data = os.pread(self.fd, self.width * self.public, found.vector_at)
        vector = np.frombuffer(data, f"<f{self.width}").astype(np.float64)
        if len(vector) != self.public or not np.isfinite(vector).all():
            raise StateError(f"the Ladder state {self.path}: the leader of team {team!r} has a damaged score vector")
        return vector

    def append(self, row: dict, sessions: np.ndarray | None) -> None:
        """One record (and its vector when released) written at the end of the file with one call, handed to the system."""
        record = {**row, "vector": 0 if sessions is None else self.width * self.public}
        line = (json.dumps(record) + "\n").encode()
        blob = b"" if sessions is None else np.ascontiguousarray(sessions, f"<f{self.width}").tobytes() + b"\n"
        at = os.fstat(self.fd).st_size
        data = line + blob
        while data:
            data = data[os.write(self.fd, data):]
        os.fsync(self.fd)
        self._take(record, at + len(line))

    def _take(self, record: dict, vector_at: int) -> None:
        """Index one record: the history, its team's leader (when released) and best public score."""
        self.history.append({k: v for k, v in record.items() if k not in ("vector", "figures")})
        team = self.teams.setdefault(record["team"], Team())
        if record["released"]:
            team.leader, team.vector_at = record, vector_at
        if record.get("public_score") is not None and (team.best is None or record["public_score"] > team.best):
            team.best = record["public_score"]

    def close(self) -> None:
        os.close(self.fd)  # also drops the lock


def open_state(path: str, header: dict, write: bool = True) -> LadderState:
    """The state file at `path`, read and checked (created with `header` when missing, if write). With write, it is
    locked for this process until close() and a last record cut short is removed. StateError when it cannot be used:
    not a regular file, made for another header (truth, split, competition), or damaged. A file of an earlier version
    is used as it is (its own width of scores)."""
    flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT) if write else os.O_RDONLY
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError as error:
        raise StateError(f"cannot open the Ladder state {path}: {error.strerror or error}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise StateError(f"the Ladder state {path} is {kind_of(mode)}, not a regular file")
        os.set_blocking(fd, True)
        if write and fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        if write and os.fstat(fd).st_size == 0:
            os.write(fd, (json.dumps(header) + "\n").encode())
        state = _read(path, fd, write)
        same = [k for k in header if k != "version"]
        if {k: state.header.get(k) for k in same} != {k: header[k] for k in same}:
            raise StateError(f"the Ladder state {path} was made for another truth, split or competition: start a new file")
    except BaseException:
        os.close(fd)
        raise
    return state


def _read(path: str, fd: int, write: bool) -> LadderState:
    size = os.fstat(fd).st_size
    line, at = _line(fd, 0, size, path, 1)
    if line is None:
        raise StateError(f"the Ladder state {path} has no header line")
    header = _checked(line, HEADER, path, 1)
    state = LadderState(path, fd, header)
    vector = state.width * state.public
    number = 1
    while at < size:
        start = at
        number += 1
        line, at = _line(fd, at, size, path, number)
        record = None if line is None else _checked(line, RECORD, path, number)
        want = 0 if record is None or not record["released"] else vector
        if record is not None and (record["vector"] != want or (record["released"] and record["status"] != "scored")):
            raise StateError(f"the Ladder state {path}: record {number - 1} holds a vector of {record['vector']} bytes, "
                             f"expected {want}")
        if record is not None and team_problem(record["team"]):
            raise StateError(f"the Ladder state {path}: record {number - 1} has a team name that is not {TEAM_RULE}")
        if record is None or (want and at + want + 1 > size):  # the file ends inside this record
            _torn_tail(fd, at, size, path, number)
            if write:
                os.ftruncate(fd, start)
                state.repaired = f"its last record was cut short ({size - start} bytes): removed"
            break
        if want:
            if os.pread(fd, 1, at + vector) != b"\n":
                raise StateError(f"the Ladder state {path}: record {number - 1}'s vector does not end where it should")
            state._take(record, at)
            at += vector + 1
        else:
            state._take(record, 0)
    return state


def _torn_tail(fd: int, at: int, size: int, path: str, number: int) -> None:
    """Nothing but a write cut short may follow record `number - 1`'s line, which the file ends inside: StateError when
    a whole record line follows it (a record edited by hand, not a torn last one, and nothing may be removed)."""
    for piece in os.pread(fd, size - at, at).split(b"\n")[:-1]:
        try:
            later = json.loads(piece)
        except ValueError:
            continue
        if isinstance(later, dict) and "team" in later:
            raise StateError(f"the Ladder state {path}: record {number - 1}'s vector runs into a later record: "
                             "the file was changed, not cut short")


def _line(fd: int, at: int, size: int, path: str = "", number: int = 0) -> tuple[bytes | None, int]:
    """(the line starting at `at` without its newline, where the next starts); (None, size) for the file's last bytes
    when they end in no newline (a write cut short); StateError for a line of over MAX_LINE bytes."""
    data = os.pread(fd, min(MAX_LINE + 1, size - at), at)
    end = data.find(b"\n")
    if end >= 0:
        return data[:end], at + end + 1
    if at + len(data) < size:
        raise StateError(f"the Ladder state {path}: record {number - 1} is over {MAX_LINE:,} bytes: no record")
    return None, size


def _checked(line: bytes, spec, path: str, number: int) -> dict:
    """The JSON object of a header (number 1) or record (2, 3, ...: record number - 1) line, checked against its schema."""
    where = "the header" if number == 1 else f"record {number - 1}"
    return parsed(line, spec, lambda detail: StateError(f"the Ladder state {path}: {where}{detail}"))


def read_state(path: str) -> tuple[dict, list[dict]]:
    """(header, history rows) of a state file, read only (no lock; a last record cut short is left out)."""
    from scorer.handed_back import opened

    with opened(path, "Ladder state") as (fd, _):
        state = _read(path, fd, write=False)
    return state.header, state.history
