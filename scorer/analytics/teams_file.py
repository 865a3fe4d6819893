"""The teams file of `scorer ladder` and `scorer similar`: which team made each submission file, and (for the ladder)
when. Read as the untrusted input it is.

CSV (name ending in .csv): a header row naming the columns file and team, and time where the command needs it (in any
order; other columns, such as a platform's export adds, are ignored), then one row per submission. JSON (.json):
{"submissions": [{"file": ..., "team": ..., "time": ...}, ...]} ("time" optional where the command needs none).

  file  the submission as `scorer grade` was given it (a grade record's "file"), or its absolute path (its "path");
        without --results, the file scored (relative to the current folder); each file once, under any spelling
        (`x/A.csv` and `x/./A.csv`, or a link to it, are one file: scorer.file_identity)
  team  the team's name, 1 to 256 printable characters (no control byte, newline or escape sequence: TEAM_RULE, the
        rule for a name from EvalAI's metadata too)
  time  when it was submitted: an ISO 8601 date and time ("2024-03-01T12:00:00Z"; without a zone, UTC) or a number of
        seconds since 1970 (from 0 to 10^11)

At most MAX_BYTES bytes and MAX_ROWS submissions, a regular file, UTF-8. Submissions of one team are taken in the order of
their times; equal times in the order of the file's rows. A file that breaks a rule is refused with one sentence naming
its line (CSV) or field (JSON) (UsageError, exit 2).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from scorer.errors import UsageError
from scorer.file_identity import identity
from scorer.handed_back import parsed, read_bytes
from scorer.schema import ListOf, Number, OneOf, Record, Text
from scorer.wording import printable

MAX_BYTES = 64 << 20
MAX_ROWS = 1_000_000
MAX_TEAM = 256
MAX_FILE = 4096
LATEST = 1e11  # seconds since 1970: the year 5138
COLUMNS = ("file", "team", "time")  # the ladder's; `similar` needs the first two
WHAT = "teams file"
TEAM_RULE = f"1 to {MAX_TEAM} printable characters (no control byte, newline or escape sequence)"


@dataclass(frozen=True)
class Entry:
    file: str
    team: str
    time: float  # seconds since 1970, UTC (0.0 where the file gives none and the command needs none)
    row: int  # its place in the file (from 1): the order of equal times


TIME = OneOf("an ISO 8601 date and time or a number of seconds since 1970", Text(longest=64), Number(0, LATEST))
WHO = {"file": Text(longest=MAX_FILE), "team": Text(longest=MAX_TEAM)}
DOCUMENT = Record({"submissions": ListOf(Record({**WHO, "time": TIME}), longest=MAX_ROWS)})
UNTIMED_DOCUMENT = Record({"submissions": ListOf(Record(WHO, {"time": TIME}), longest=MAX_ROWS)})  # `similar`'s: times optional


def read_teams(path: str, times: bool = True) -> list[Entry]:
    """The entries of a teams file (CSV or JSON by its name), checked; UsageError naming the file and what is wrong.
    times=False: the file may leave the times out (`scorer similar` needs none)."""
    name = str(path).lower()
    if not name.endswith((".csv", ".json")):
        raise UsageError(f"the {WHAT} {path}: its name must end in .csv or .json (the two forms it may take)")
    if name.endswith(".csv"):
        try:
            rows = _csv_rows(read_bytes(path, WHAT, MAX_BYTES).decode("utf-8-sig"), path, COLUMNS if times else COLUMNS[:2])
        except UnicodeDecodeError:
            raise UsageError(f"the {WHAT} {path} is not UTF-8 text") from None
    else:
        document = parsed(read_bytes(path, WHAT, MAX_BYTES), DOCUMENT if times else UNTIMED_DOCUMENT,
                          lambda detail: UsageError(f"the {WHAT} {path}{detail}"))
        rows = [(f"submissions[{k}]", row) for k, row in enumerate(document["submissions"])]
    entries = [_entry(row, where, path, number) for number, (where, row) in enumerate(rows, 1)]
    seen: dict[tuple, tuple[str, str]] = {}
    for (where, _), entry in zip(rows, entries):
        key = identity(entry.file)
        if key in seen:
            first, spelled = seen[key]
            again = "again" if spelled == entry.file else f"again (as {spelled!r})"
            raise UsageError(f"the {WHAT} {path}: {where} names the file {entry.file!r} {again}, first at {first}: "
                             "each submission once")
        seen[key] = (where, entry.file)
    if not entries:
        raise UsageError(f"the {WHAT} {path} names no submission")
    return entries


def _csv_rows(text: str, path, required: tuple[str, ...]) -> list[tuple[str, dict]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[str, dict]] = []
    try:
        header = next(reader, None)
        names = [h.strip().lower() for h in header or []]
        if not set(required) <= set(names) or len(set(names)) != len(names):
            data = any(name.isdigit() for name in names)  # a row of another file (a truth's ids): not shown
            shown = "a data row (not shown)" if data else repr(printable(",".join(header or [])[:80]))
            raise UsageError(f"the {WHAT} {path}: its first line must be a header naming the columns {','.join(required)} once each "
                             f"(in any order; others are ignored), not {shown}")
        for values in reader:
            line = f"line {reader.line_num}"
            if not values or values == [""]:
                continue
            if len(values) != len(names):
                raise UsageError(f"the {WHAT} {path}: {line} has {len(values)} fields, the header {len(names)}")
            if len(rows) == MAX_ROWS:
                raise UsageError(f"the {WHAT} {path} names over {MAX_ROWS:,} submissions")
            row = dict(zip(names, values))
            rows.append((line, {**row, "time": _csv_time(row["time"])} if "time" in row else row))
    except csv.Error as error:
        raise UsageError(f"the {WHAT} {path}: line {reader.line_num} is not CSV ({error})") from None
    return rows


def _csv_time(text: str):
    """A number when the text is one (seconds since 1970), else the text (an ISO date and time, checked later)."""
    try:
        return float(text)
    except ValueError:
        return text


def _entry(row: dict, where: str, path, number: int) -> Entry:
    file, team = row["file"], row["team"].strip()
    if not file or len(file) > MAX_FILE or "\x00" in file:
        raise UsageError(f"the {WHAT} {path}: {where} has no file name (or one of over {MAX_FILE:,} characters)")
    if team_problem(team):
        raise UsageError(f"the {WHAT} {path}: {where} has a team name that is not {TEAM_RULE}")
    return Entry(file, team, _seconds(row["time"], where, path) if "time" in row else 0.0, number)


def team_problem(team: str) -> bool:
    """Whether a team name breaks TEAM_RULE (the teams file's, and the live Ladder's for EvalAI's metadata): a name is
    printed on every board, and a control byte or a newline in it would forge the board's lines."""
    return not team or len(team) > MAX_TEAM or not team.isprintable()


def _seconds(value, where: str, path) -> float:
    """Seconds since 1970 (UTC) of a number or an ISO 8601 text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not (math.isfinite(value) and 0 <= value <= LATEST):
            raise UsageError(f"the {WHAT} {path}: {where} has the time {value!r}: seconds since 1970 go from 0 to {LATEST:g}")
        return float(value)
    try:
        text = str(value).strip()
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)  # Python 3.10 reads no Z
    except ValueError:
        raise UsageError(f"the {WHAT} {path}: {where} has the time {str(value)[:40]!r}, not an ISO 8601 date and time "
                         "(such as 2024-03-01T12:00:00Z) or a number of seconds") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return _seconds(moment.timestamp(), where, path)


def by_team(entries: list[Entry]) -> dict[str, list[Entry]]:
    """Each team's entries in the order they were made (time, then the file's row order); teams in order of first
    appearance."""
    teams: dict[str, list[Entry]] = {}
    for entry in entries:
        teams.setdefault(entry.team, []).append(entry)
    return {team: sorted(found, key=lambda e: (e.time, e.row)) for team, found in teams.items()}


def team_lookup(entries: list[Entry]) -> Callable[[str], str | None]:
    """path -> the team of that submission: the entry naming this file (under any spelling), else an entry naming its
    base name alone; None when it is not listed."""
    by_file = {identity(entry.file): entry.team for entry in entries}
    by_name = {entry.file: entry.team for entry in entries if os.path.basename(entry.file) == entry.file}
    return lambda path: by_file.get(identity(path)) or by_name.get(os.path.basename(path))
