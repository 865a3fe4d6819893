"""The teams file of `scorer similar`: a CSV with a header naming the columns `file` and `team` (others, such as a
submission time, are ignored), read as untrusted input: a regular file, bounded, UTF-8, one sentence when wrong."""

from __future__ import annotations

import csv
import io
import os

from scorer.errors import UsageError
from scorer.handed_back import read_bytes
from scorer.wording import printable

MAX_TEAMS_BYTES = 64 << 20


def read_teams(path: str) -> dict[str, str]:
    """{file name as written: team}; a name is matched against a submission's path as given, then its base name."""
    data = read_bytes(path, "teams file", MAX_TEAMS_BYTES)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UsageError(f"the teams file {path} is not UTF-8 text (byte {error.start:,}): give a CSV with the columns file,team") from None
    if "\x00" in text:
        raise UsageError(f"the teams file {path} holds NUL bytes: give a CSV with the columns file,team")
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [field.strip().lower() for field in next(rows, [])]
        if "file" not in header or "team" not in header:
            raise UsageError(f"the teams file {path} needs a header naming the columns file and team "
                             f"(its first line is {printable(','.join(header)[:80])!r})")
        at_file, at_team = header.index("file"), header.index("team")
        teams: dict[str, str] = {}
        for number, row in enumerate(rows, 2):
            if not any(field.strip() for field in row):
                continue
            if len(row) <= max(at_file, at_team) or not row[at_file].strip() or not row[at_team].strip():
                raise UsageError(f"the teams file {path} line {number:,} has no file or no team")
            name, team = row[at_file].strip(), row[at_team].strip()
            if teams.get(name, team) != team:
                raise UsageError(f"the teams file {path} line {number:,} gives {printable(name)!r} a second team "
                                 f"({printable(team)!r}, was {printable(teams[name])!r})")
            teams[name] = team
    except csv.Error as error:
        raise UsageError(f"the teams file {path} is not a readable CSV: {error}") from None
    return teams


def team_of(path: str, teams: dict[str, str]) -> str | None:
    """The team of a submission path: its entry as given, else by its base name; None when it is not listed."""
    return teams.get(path) or teams.get(os.path.normpath(path)) or teams.get(os.path.basename(path))
