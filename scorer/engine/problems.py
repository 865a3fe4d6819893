"""The problem catalogue (stable codes, severities, messages) and the report that collects them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum

from scorer.kernels import codes
from scorer.wording import counted

ERROR, WARNING, NOTE = "error", "warning", "note"
SEVERITY_RANK = {ERROR: 0, WARNING: 1, NOTE: 2}


class Code(IntEnum):
    """The problem codes: the number is the report code's digits (Code.CRLF is "S019"). Those a kernel finds in a
    line take their number from scorer.kernels.codes, where the kernels read them as plain ints."""

    EMPTY_FILE = 1
    BAD_HEADER = 2
    WRONG_FIELD_COUNT = codes.WRONG_FIELD_COUNT
    MALFORMED_ID = codes.MALFORMED_ID
    UNKNOWN_TYPE = codes.UNKNOWN_TYPE
    SESSION_NOT_INTEGER = codes.SESSION_NOT_INTEGER
    SESSION_OUT_OF_RANGE = codes.SESSION_OUT_OF_RANGE
    ITEM_NOT_INTEGER = codes.ITEM_NOT_INTEGER
    ITEM_OUT_OF_RANGE = codes.ITEM_OUT_OF_RANGE
    DUPLICATE_ROW = 10
    MISSING_ROWS = 11
    UNKNOWN_SESSIONS = 12
    TOO_MANY_ITEMS = codes.TOO_MANY_ITEMS
    DUPLICATE_ITEMS = codes.DUPLICATE_ITEMS
    BLANK_LINE = codes.BLANK_LINE
    INVALID_UTF8 = codes.INVALID_UTF8
    NUL_BYTE = codes.NUL_BYTE
    BYTE_ORDER_MARK = 18
    CRLF = codes.CRLF
    QUOTED_FIELD = codes.QUOTED_FIELD
    BAD_SEPARATOR = codes.BAD_SEPARATOR
    LINE_TOO_LONG = codes.LINE_TOO_LONG
    FILE_TOO_LARGE = 23
    DECOMPRESSED_TOO_LARGE = 24
    ZIP_NOT_ONE_FILE = 25
    UNKNOWN_COMPRESSION = 26
    UNREADABLE = 27
    TIME_LIMIT = 28
    BAD_QUOTES = codes.BAD_QUOTES
    VALUE_NOT_NUMBER = codes.VALUE_NOT_NUMBER
    EMPTY_FIELD = codes.EMPTY_FIELD
    IMPRESSION_ID_MISMATCH = codes.IMPRESSION_ID_MISMATCH
    RANK_COUNT = codes.RANK_COUNT
    BAD_RANK = codes.BAD_RANK
    BAD_RANK_LIST = codes.BAD_RANK_LIST
    EXTRA_LINES = codes.EXTRA_LINES
    IMPRESSIONS_FILLED = 38
    LIST_LENGTH = codes.LIST_LENGTH
    ITEM_FORM = codes.ITEM_FORM
    SEED_ITEM = codes.SEED_ITEM

    @property
    def code(self) -> str:
        return f"S{self.value:03d}"


@dataclass(frozen=True)
class ProblemKind:
    number: Code
    severity: str  # in strict mode; "rows" kinds become warnings in lenient mode
    title: str
    template: str  # formatted with value=..., and extra keys given by the caller
    lenient_warning: bool = False
    once: bool = False  # a property of the whole file: show the first occurrence only, count all

    @property
    def code(self) -> str:
        return self.number.code


CATALOGUE: dict[Code, ProblemKind] = {
    kind.number: kind
    for kind in (
        ProblemKind(Code.EMPTY_FILE, ERROR, "empty file", "the submission is empty: expected the header {expected} and one row per session and type"),
        ProblemKind(Code.BAD_HEADER, ERROR, "header missing or wrong", "{value}"),
        ProblemKind(Code.WRONG_FIELD_COUNT, ERROR, "wrong number of fields", "expected {fields} fields ({expected}), {value}{hint}"),
        ProblemKind(Code.MALFORMED_ID, ERROR, "malformed id", "malformed id {value}: expected the form {expected}{hint}"),
        ProblemKind(Code.UNKNOWN_TYPE, ERROR, "unknown type", "unknown type {value} (expected {expected})"),
        ProblemKind(Code.SESSION_NOT_INTEGER, ERROR, "session id not an integer", "session id {value} is not an integer"),
        ProblemKind(Code.SESSION_OUT_OF_RANGE, ERROR, "session id out of range", "session id {value} is negative or does not fit in 64 bits"),
        ProblemKind(Code.ITEM_NOT_INTEGER, ERROR, "item id not an integer", "item {value} is not an integer{hint}"),
        ProblemKind(Code.ITEM_OUT_OF_RANGE, ERROR, "item id out of range", "item {value} is negative or does not fit in 64 bits"),
        ProblemKind(Code.DUPLICATE_ROW, ERROR, "duplicate row", "{value}", lenient_warning=True),
        ProblemKind(Code.MISSING_ROWS, ERROR, "missing rows", "{value}", lenient_warning=True),
        ProblemKind(Code.UNKNOWN_SESSIONS, ERROR, "unknown sessions", "{value}", lenient_warning=True),
        ProblemKind(Code.TOO_MANY_ITEMS, WARNING, "more than K items", "{value} items in the row, more than {k}: only the first {k} count, the other {cut} are cut"),
        ProblemKind(Code.DUPLICATE_ITEMS, WARNING, "duplicate items in a row", "item {value} appears twice in the row: it counts once and wastes a slot"),
        ProblemKind(Code.BLANK_LINE, WARNING, "blank line", "blank line (ignored)"),
        ProblemKind(Code.INVALID_UTF8, ERROR, "invalid UTF-8", "invalid UTF-8 byte {value}: the line scores 0"),
        ProblemKind(Code.NUL_BYTE, ERROR, "NUL byte", "NUL byte in the line: the line scores 0"),
        ProblemKind(Code.BYTE_ORDER_MARK, NOTE, "byte-order mark", "the file starts with a UTF-8 byte-order mark (accepted)", once=True),
        ProblemKind(Code.CRLF, NOTE, "CRLF line ends", "lines end with CRLF (accepted; every such line is counted)", once=True),
        ProblemKind(Code.QUOTED_FIELD, NOTE, "quoted field", "quoted field {value} (accepted)"),
        ProblemKind(Code.BAD_SEPARATOR, WARNING, "bad item separator", "found {value}: items must be separated by a single space (read anyway)"),
        ProblemKind(Code.LINE_TOO_LONG, ERROR, "line too long", "line of {value} bytes, over the limit of {max_line_bytes:,}: the line scores 0"),
        ProblemKind(Code.FILE_TOO_LARGE, ERROR, "file too large", "{value}"),
        ProblemKind(Code.DECOMPRESSED_TOO_LARGE, ERROR, "decompressed size too large", "{value}"),
        ProblemKind(Code.ZIP_NOT_ONE_FILE, ERROR, "zip archive not of one file", "{value}"),
        ProblemKind(Code.UNKNOWN_COMPRESSION, ERROR, "unsupported compression or file format", "{value}"),
        ProblemKind(Code.UNREADABLE, ERROR, "unreadable file", "{value}"),
        ProblemKind(Code.TIME_LIMIT, ERROR, "time limit", "{value}"),
        ProblemKind(Code.BAD_QUOTES, ERROR, "bad quoting", "unterminated or misplaced quote in {value}: the line scores 0"),
        ProblemKind(Code.VALUE_NOT_NUMBER, ERROR, "value not a number", "value {value} is not a number (or is beyond ±1e100): the line is not scored"),
        ProblemKind(Code.EMPTY_FIELD, ERROR, "empty prediction field", "the prediction field is empty: a row of this file holds one prediction"),
        ProblemKind(Code.IMPRESSION_ID_MISMATCH, ERROR, "impression id out of order",
                    "impression id {value} where the truth's impression at this line is {expected}: lines follow the truth's "
                    "order, one per impression{hint}"),
        ProblemKind(Code.RANK_COUNT, ERROR, "not one rank per candidate", "{value} ranks for an impression of {expected} candidates: "
                    "give one rank per candidate, in the truth's order"),
        ProblemKind(Code.BAD_RANK, ERROR, "rank below 1 or not a number read exactly", "{what} {value} is not {expected}{hint}"),
        ProblemKind(Code.BAD_RANK_LIST, ERROR, "ranks not a JSON list", "the ranks are not a JSON list of numbers such as [2,1,3] "
                    "(found {value}){hint}"),
        ProblemKind(Code.EXTRA_LINES, WARNING, "line past the truth's last impression",
                    "a line past the truth's {expected}: ignored, as the evaluators ignore it", once=True),
        ProblemKind(Code.IMPRESSIONS_FILLED, WARNING, "impressions filled with rank 1", "{value}"),
        ProblemKind(Code.LIST_LENGTH, ERROR, "not the competition's number of items",
                    "{value} items in the row, where the competition's lists hold exactly {expected} (the row is scored as read)"),
        ProblemKind(Code.ITEM_FORM, ERROR, "item not of the competition's form",
                    "item {value} is not of the competition's form, {expected} (the first such item of the row; it is scored as read)"),
        ProblemKind(Code.SEED_ITEM, ERROR, "a seed item listed",
                    "item {value} is one of the row's seeds, which it may not list (the first such item of the row; it is scored as read)"),
    )
}

STRICT_TEMPLATES: dict[Code, str] = {  # under strict nothing scores (any error means no score): no "the line scores 0"
    Code.INVALID_UTF8: "invalid UTF-8 byte {value}",
    Code.NUL_BYTE: "NUL byte in the line",
    Code.LINE_TOO_LONG: "line of {value} bytes, over the limit of {max_line_bytes:,}",
    Code.BAD_QUOTES: "unterminated or misplaced quote in {value}",
    Code.VALUE_NOT_NUMBER: "value {value} is not a number (or is beyond ±1e100)",
}

STOPPED_TEMPLATES: dict[Code, str] = {  # a code's message when the problem also stopped reading (Report.add(stopped=True))
    Code.LINE_TOO_LONG: "line of {value} bytes, over the limit of {max_line_bytes:,}{ending}: reading stopped at this line",
    Code.INVALID_UTF8: "{value}",  # the whole file is in another encoding (UTF-16, UTF-32)
}


def kind(code: int | str) -> ProblemKind:
    """The catalogue's entry of a code: a number (or Code) or its report string such as "S010"."""
    return CATALOGUE[int(code.lstrip("S")) if isinstance(code, str) else code]


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
    """First `max_per_code` problems of each code, and a count of all of them.

    max_per_code 0 shows no problem, only the count of each code: the first of each is still kept (it carries the
    code's severity, which decides validity), and `problems` leaves it out."""

    strict: bool = False
    max_per_code: int = 20
    counts: dict[str, int] = field(default_factory=dict)
    kept: dict[str, list[Problem]] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)  # occurrences the kept problems stand for
    fatal: bool = False  # reading stopped early (size or time limit, unreadable input)
    examples: bool = True  # False: max_per_code 0 was asked for (problems and the summary's `shown` are empty)

    def __post_init__(self):
        if self.max_per_code == 0:
            self.max_per_code, self.examples = 1, False

    def severity(self, number: Code) -> str:
        entry = CATALOGUE[number]
        return WARNING if entry.lenient_warning and not self.strict else entry.severity

    def add(self, number: Code, value: str = "", line: int | None = None, column: int | None = None,
            context: str | None = None, caret: tuple[int, int] | None = None, count: int = 1, stopped: bool = False,
            row: int | None = None, field: str | None = None, severity: str | None = None, **words) -> None:
        """Record `count` occurrences of a problem, keeping this one if the code has room; `stopped`: reading stopped there;
        row and field: a frame's row and column (instead of line and column); severity: instead of the code's (a row the
        competition's rules accept, such as a missing row under missing = skip, is a warning in strict mode too)."""
        entry = CATALOGUE[number]
        self.counts[entry.code] = self.counts.get(entry.code, 0) + count
        kept = self.kept.setdefault(entry.code, [])
        if self.has_room(number):
            template = entry.template
            if stopped:
                template = STOPPED_TEMPLATES.get(number, template)
            elif self.strict:
                template = STRICT_TEMPLATES.get(number, template)
            message = template.format(value=value, **words)
            kept.append(Problem(entry.code, severity or self.severity(number), message, line, column, context, caret, row, field))
            self.covered[entry.code] = self.covered.get(entry.code, 0) + count

    def has_room(self, number: Code) -> bool:
        """Would add() keep the next problem of this code (else it only counts it)?"""
        entry = CATALOGUE[number]
        return len(self.kept.get(entry.code, ())) < (1 if entry.once else self.max_per_code)

    def count_only(self, number: Code, count: int) -> None:
        """Occurrences beyond those already kept (a kernel counted them)."""
        if count > 0:
            code = CATALOGUE[number].code
            self.counts[code] = self.counts.get(code, 0) + count

    @property
    def problems(self) -> list[Problem]:
        if not self.examples:
            return []
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
            rows.append({"code": code, "severity": kept[0].severity, "title": entry.title, "count": self.counts[code],
                         "shown": self.covered.get(code, len(kept)) if self.examples else 0})
        return sorted(rows, key=lambda row: (SEVERITY_RANK[row["severity"]], row["code"]))


def report_missing_rows(report: Report, count: int, shown: str, where: str = "", left_out: bool = False, accepted: bool = False) -> None:
    """Report `count` rows of the truth that no line gave (S011); shown: the first of them, named; left_out: such a row is
    left out of the mean instead of scoring 0; accepted: the competition's rules say so (missing = skip), a warning in
    strict mode too."""
    scored = ("it is left out of the mean" if count == 1 else "they are left out of the mean") if left_out else (
        "it scores 0" if count == 1 else "they score 0")
    why = "every row of the truth must be there" if report.strict and not accepted else scored
    report.add(Code.MISSING_ROWS, f"{counted(count, 'row')} {'is' if count == 1 else 'are'} missing{where} ({why}); first: {shown}",
               count=count, severity=WARNING if accepted else None)


def report_unknown_rows(report: Report, count: int, shown: str, line: int | None = None) -> None:
    """Report `count` rows that name sessions the truth does not hold (S012); shown: the first of them, named."""
    why = "each row must name a session of the truth" if report.strict else "ignored"
    names = "names a session that is" if count == 1 else "name sessions that are"
    report.add(Code.UNKNOWN_SESSIONS, f"{counted(count, 'row')} {names} not in the truth ({why}); first: {shown}",
               line=line, column=None if line is None else 1, count=count)


KEPT_ROWS = {"last": "the last one counts", "first": "the first one counts", "all": "each counts"}  # rules.repeated_key


def report_repeated_rows(report: Report, shown: Iterable[tuple[str, int, str]], total: int, prefix: str = "", kept: str = "last") -> None:
    """Report `total` repeated rows (S010): one problem per row of `shown` (the row's id, its line, where the row it
    repeats is, such as "line 3"), the others counted only; kept: which of them count (rules.repeated_key)."""
    ruled = kept != "last"  # the competition's rules say which rows count: a warning in strict mode too
    keep = "each row may appear once" if report.strict and not ruled else KEPT_ROWS[kept]
    n_shown = 0
    for name, line, earlier in shown:
        report.add(Code.DUPLICATE_ROW, f"{prefix}row {name!r} repeats {earlier} ({keep})", line=line, column=1,
                   severity=WARNING if ruled else None)
        n_shown += 1
    report.count_only(Code.DUPLICATE_ROW, total - n_shown)
