"""The check of a submission's first line against the competition's header, and the sentence that says what is wrong:
one wording for `scorer validate` / `score` (scorer.engine.file_pass) and for `scorer similar`'s sketch. Plain Python:
importing it loads no kernel."""

from __future__ import annotations

import re

from scorer.spec.competition import Competition, other_competition_hint

BOM = b"\xef\xbb\xbf"
INDEX_COLUMN = "looks like a pandas index column: write with index=False"
TAB_SEPARATED = "tab-separated? the fields must be separated by ','"
TRUTH_FILE = "this looks like a truth file, not a submission: arguments swapped?"


def text(raw: bytes, limit: int = 60) -> str:
    shown = raw.decode("utf-8", "backslashreplace")
    return repr(shown if len(shown) <= limit else shown[:limit] + "…")


def header_fields(first: bytes, separator: str = ",") -> list[str]:
    """The fields of line 1 (without its byte-order mark and CR) split at the separator, quotes and spaces around them
    left out."""
    return [part.strip().strip('"') for part in first.decode("utf-8", "replace").split(separator)]


def swapped(competition: Competition) -> str:
    return f"write {competition.header[0]} first, then {competition.header[-1]}"


def looks_like_row(fields: list[str], competition: Competition) -> bool:
    pattern = re.escape(competition.id_pattern).replace(r"\{session\}", r"\d+").replace(r"\{type\}", r"\w+")
    return len(fields) == 2 and re.fullmatch(pattern, fields[0]) is not None


def header_hint(fields: list[str], first: bytes, competition: Competition) -> str:
    """The likely cause of a wrong header: a pandas index column, columns swapped, tabs between the fields, a truth file
    given as the submission, or another competition's submission."""
    header = list(competition.header)
    if fields[1:] == header and fields[0] in ("", "Unnamed: 0", "index"):
        return f" ({INDEX_COLUMN})"
    if fields[::-1] == header:
        return f" (the columns look swapped: {swapped(competition)})"
    if looks_like_row(fields[::-1], competition):
        return f" (a data row with its columns swapped: {swapped(competition)}, after the header)"
    if b"\t" in first and [part.strip().strip('"') for part in first.decode("utf-8", "replace").split("\t")] == header:
        return f" ({TAB_SEPARATED})"
    if looks_like_truth(fields, first, competition):
        return f" ({TRUTH_FILE})"
    return other_competition_hint(fields, competition)


def looks_like_truth(fields: list[str], first: bytes, competition: Competition) -> bool:
    """Whether line 1 looks like a truth file's: a JSON line, a long truth's header (session, aid; a grade), or its
    first row (session, type, item). Such a line is never quoted (it would show the truth's ids)."""
    row = len(fields) == 3 and fields[0].isdigit() and fields[2].isdigit() and (fields[1] in competition.types or fields[1].isdigit())
    return first.lstrip().startswith(b"{") or {"session", "aid"} <= set(fields) or "grade" in fields or row


def header_problem(first: bytes, competition: Competition) -> tuple[str, bool] | None:
    """None when line 1 (`first`, without its byte-order mark and CR) is the competition's header; else (the sentence
    `scorer validate` gives, True when line 1 is a data row: the header is missing rather than wrong)."""
    fields = header_fields(first)
    expected = ",".join(competition.header)
    if fields == list(competition.header):
        return None
    if looks_like_row(fields, competition) or (fields[0].isdigit() and looks_like_row(fields[1:], competition)):
        hint = f" ({INDEX_COLUMN}, and header=True)" if not looks_like_row(fields, competition) else ""
        return f"header missing: line 1 is a data row ({text(first)}); expected the header {expected!r} first{hint}", True
    if looks_like_truth(fields, first, competition):  # not quoted, nor read further (scorer.engine.file_pass)
        return f"line 1 is not the header {expected!r} and is not shown ({TRUTH_FILE})", False
    return f"header is {text(first)}; expected {expected!r}{header_hint(fields, first, competition)}", False
