"""The problem catalogue (stable codes, severities, messages) and the report that collects them."""

from __future__ import annotations

from dataclasses import dataclass, field

ERROR, WARNING, NOTE = "error", "warning", "note"
SEVERITY_RANK = {ERROR: 0, WARNING: 1, NOTE: 2}


@dataclass(frozen=True)
class Kind:
    number: int
    severity: str  # in strict mode; "rows" kinds become warnings in lenient mode
    title: str
    template: str  # formatted with value=..., and extra keys given by the caller
    lenient_warning: bool = False
    once: bool = False  # a property of the whole file: show the first occurrence only, count all

    @property
    def code(self) -> str:
        return f"S{self.number:03d}"


CATALOGUE: dict[int, Kind] = {
    kind.number: kind
    for kind in (
        Kind(1, ERROR, "empty file", "the submission is empty: expected the header {expected} and one row per session and type"),
        Kind(2, ERROR, "header missing or wrong", "{value}"),
        Kind(3, ERROR, "wrong number of fields", "expected 2 fields ({expected}), {value}{hint}"),
        Kind(4, ERROR, "malformed id", "malformed id {value}: expected the form {expected}"),
        Kind(5, ERROR, "unknown type", "unknown type {value} (expected {expected})"),
        Kind(6, ERROR, "session id not an integer", "session id {value} is not an integer"),
        Kind(7, ERROR, "session id out of range", "session id {value} is negative or does not fit in 64 bits"),
        Kind(8, ERROR, "item id not an integer", "item {value} is not an integer{hint}"),
        Kind(9, ERROR, "item id out of range", "item {value} is negative or does not fit in 64 bits"),
        Kind(10, ERROR, "duplicate row", "{value}", lenient_warning=True),
        Kind(11, ERROR, "missing rows", "{value}", lenient_warning=True),
        Kind(12, ERROR, "unknown sessions", "{value}", lenient_warning=True),
        Kind(13, WARNING, "more than K items", "{value} items in the row, more than {k}: only the first {k} count, the other {cut} are cut"),
        Kind(14, WARNING, "duplicate items in a row", "item {value} appears twice in the row: it counts once and wastes a slot"),
        Kind(15, WARNING, "blank line", "blank line (ignored)"),
        Kind(16, ERROR, "invalid UTF-8", "invalid UTF-8 byte {value}: the line scores 0"),
        Kind(17, ERROR, "NUL byte", "NUL byte in the line: the line scores 0"),
        Kind(18, NOTE, "byte-order mark", "the file starts with a UTF-8 byte-order mark (accepted)", once=True),
        Kind(19, NOTE, "CRLF line ends", "lines end with CRLF (accepted; every such line is counted)", once=True),
        Kind(20, NOTE, "quoted field", "quoted field {value} (accepted)"),
        Kind(21, WARNING, "bad item separator", "found {value}: items must be separated by a single space (read anyway)"),
        Kind(22, ERROR, "line too long", "line of {value} bytes, over the limit of {max_line_bytes:,}: the line scores 0"),
        Kind(23, ERROR, "file too large", "{value}"),
        Kind(24, ERROR, "decompressed size too large", "{value}"),
        Kind(25, ERROR, "zip archive not of one file", "{value}"),
        Kind(26, ERROR, "unknown compression", "{value}"),
        Kind(27, ERROR, "unreadable file", "{value}"),
        Kind(28, ERROR, "time limit", "{value}"),
        Kind(30, ERROR, "bad quoting", "unterminated or misplaced quote in {value}: the line scores 0"),
        Kind(31, ERROR, "value not a number", "value {value} is not a number: the line is not scored"),
        Kind(32, ERROR, "empty prediction field", "the prediction field is empty: a row of this file holds one prediction"),
    )
}

STOPPED_TEMPLATES: dict[int, str] = {  # a code's message when the problem also stopped reading (Report.add(stopped=True))
    22: "line of {value} bytes, over the limit of {max_line_bytes:,}, with no end: reading stopped at this line",
}


def kind(code: int | str) -> Kind:
    return CATALOGUE[int(str(code).lstrip("S"))]


@dataclass
class Problem:
    code: str
    severity: str
    message: str
    line: int | None = None
    column: int | None = None
    context: str | None = None  # the line's text (or a window of it), for a caret in text output
    caret: tuple[int, int] | None = None  # (start, width) of the offending part within context
    row: int | None = None  # a frame's problems: the 0-based position of the row, and the column's name
    field: str | None = None

    def to_dict(self) -> dict:
        where = {"row": self.row, "field": self.field} if self.row is not None or self.field is not None else {}
        return {"code": self.code, "severity": self.severity, "line": self.line, "column": self.column, **where, "message": self.message}

    @property
    def where(self) -> str:
        """'line 3:5', 'row 2, column 'labels'' or 'file'."""
        if self.row is not None:
            return f"row {self.row}" + (f", column {self.field!r}" if self.field else "")
        return f"line {self.line}" + (f":{self.column}" if self.column else "") if self.line else "file"


@dataclass
class Report:
    """First `max_per_code` problems of each code, and a count of all of them."""

    strict: bool = False
    max_per_code: int = 20
    counts: dict[str, int] = field(default_factory=dict)
    kept: dict[str, list[Problem]] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)  # occurrences the kept problems stand for
    fatal: bool = False  # reading stopped early (size or time limit, unreadable input)

    def severity(self, number: int) -> str:
        entry = CATALOGUE[number]
        return WARNING if entry.lenient_warning and not self.strict else entry.severity

    def add(self, number: int, value: str = "", line: int | None = None, column: int | None = None,
            context: str | None = None, caret: tuple[int, int] | None = None, count: int = 1, stopped: bool = False,
            row: int | None = None, field: str | None = None, **words) -> None:
        """Record `count` occurrences of a problem, keeping this one if the code has room; `stopped`: reading stopped there;
        row and field: a frame's row and column (instead of line and column)."""
        entry = CATALOGUE[number]
        self.counts[entry.code] = self.counts.get(entry.code, 0) + count
        kept = self.kept.setdefault(entry.code, [])
        if len(kept) < (1 if entry.once else self.max_per_code):
            template = STOPPED_TEMPLATES.get(number, entry.template) if stopped else entry.template
            message = template.format(value=value, **words)
            kept.append(Problem(entry.code, self.severity(number), message, line, column, context, caret, row, field))
            self.covered[entry.code] = self.covered.get(entry.code, 0) + count

    def count_only(self, number: int, count: int) -> None:
        """Occurrences beyond those already kept (a kernel counted them)."""
        if count > 0:
            code = CATALOGUE[number].code
            self.counts[code] = self.counts.get(code, 0) + count

    @property
    def problems(self) -> list[Problem]:
        ordered = sorted(self.kept.items(), key=lambda item: (SEVERITY_RANK[item[1][0].severity], item[0]))
        return [problem for _, kept in ordered for problem in kept]

    def has_errors(self) -> bool:
        return any(kept and kept[0].severity == ERROR for kept in self.kept.values()) or self.fatal

    def summary(self) -> list[dict]:
        """One entry per code: code, severity, title, count (all occurrences), shown (those the listed problems stand for:
        one rolled-up problem such as "1,234 rows are missing" stands for all of them)."""
        rows = []
        for code, kept in self.kept.items():
            entry = kind(code)
            rows.append({"code": code, "severity": kept[0].severity, "title": entry.title, "count": self.counts[code], "shown": self.covered.get(code, len(kept))})
        return sorted(rows, key=lambda row: (SEVERITY_RANK[row["severity"]], row["code"]))
