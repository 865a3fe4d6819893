"""One streaming pass over a submission: blocks → parse+score kernel (threads) → per-slot figures.

The kernel is the file shape's scorer.engine.row_kernel.RowKernel (IdKernel for OTTO's ids, ShapeKernel for
string ids); the pass merges its rows and reports the problems the same way for every shape.

Per-row figures land in arrays indexed by (session, type) slot, in line order, so the
aggregates are the same to the last bit whatever the block size or thread count.
"""

from __future__ import annotations

import re
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scorer.engine.figures import SlotFigures
from scorer.engine.header import BOM, INDEX_COLUMN, TAB_SEPARATED, TRUTH_FILE, header_problem, looks_like_row, swapped
from scorer.engine.header import text as _text
from scorer.engine.heap import bound_heap
from scorer.engine.id_kernel import IdKernel
from scorer.engine.problems import Code, Report, report_missing_rows, report_repeated_rows, report_unknown_rows
from scorer.engine.reader import DEFAULT_BLOCK_BYTES, BlockReader, Deadline, LimitExceeded, open_regular
from scorer.engine.row_kernel import Parsed, RowKernel
from scorer.engine.row_keys import RowKeys
from scorer.kernels import codes
from scorer.kernels.rows import LINE_DTYPE
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth
from scorer.truth.npz import give_back

PYTHON_LIST = re.compile(rb"[,\"]\s*\[\s*-?\d*\s*(,|\])")  # a labels field such as [1, 2] or "[1, 2]" or []
PYTHON_LIST_HINT = "looks like a Python list: write the items separated by single spaces, e.g. '1 2'"
SHOWN_IDS = 5  # ids quoted in the missing / unknown messages
MAX_LINES = int(np.iinfo(LINE_DTYPE).max)  # the last line number slot_line holds: a file of more lines is refused


@dataclass
class PassResult:
    slot_line: np.ndarray  # int32 per slot: line of the row that counts, 0 if none
    figures: SlotFigures  # per slot and metric: the row figure (stored, or derived from slot_hits)
    slot_hits: np.ndarray  # per slot (uint32 to K 32, else int64: figures.hits_dtype): bit r set when rank r (< 63) hits
    counts: dict = field(default_factory=dict)
    coverage: dict = field(default_factory=dict)  # per coverage@K (string shapes): share of the truth's items in some row's top K
    side: object = None  # scorer.engine.beyond.SideFigures of the beyond-accuracy metrics, None without them
    weights: np.ndarray | None = None  # per slot, how many times its row counts in a mean (rules that weigh rows), None: once
    labels: np.ndarray | None = None  # value shape: per slot, the truth's value (the totals over all rows read them)
    metadata: str | None = None  # the file's metadata line (Spotify's team_info), as written

    @property
    def slot_values(self) -> np.ndarray:
        """float64 (slots, metrics): every row figure (made on first use when derived)."""
        return self.figures.array()


def _shown(raw: bytes) -> str:
    """Bytes of a line as text a terminal shows as it is: every character that is not printable (NUL, tab, CR, ESC, DEL,
    a C1 control, a bidirectional override) and every byte that is not UTF-8 becomes one U+FFFD, one column wide."""
    text = raw.decode("utf-8", "replace")
    return text if text.isprintable() else "".join(c if c.isprintable() else "\ufffd" for c in text)


EXCERPT = 100  # bytes of the offending part a problem keeps: a whole 64 KB field helps nobody (10,000 of them were 400 MB)


def _context(line: bytes, start: int, end: int) -> dict:
    """A window of the line around bytes [start, end) (at most EXCERPT of them, then "…") and the caret under them, in
    characters."""
    window = max(0, start - 60)
    cut = min(end, start + EXCERPT)
    before, bad = _shown(line[window:start]), _shown(line[start:cut]) + ("…" if cut < end else "")
    after = _shown(line[end : window + 160].rstrip(b"\r")) if cut == end else ""
    return {"context": before + bad + after, "caret": (len(before), max(1, len(bad)))}


class Pass:
    def __init__(self, competition: Competition, truth: Truth, report: Report,
                 block_bytes: int = DEFAULT_BLOCK_BYTES, threads: int = 2, progress: bool | None = None, items=None, side=None):
        self.competition = competition
        self.truth = truth
        self.report = report
        self.block_bytes = block_bytes
        self.threads = max(1, int(threads))
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.has_truth = truth.n_sessions > 0
        self.keep_row_keys = not self.has_truth  # without truth (no slots), repeated rows are found by sorting the keys
        self.row_keys = RowKeys(len(competition.types))
        self.kernel = kernel_for(competition, truth, report.max_per_code, items, side)
        n_slots = truth.n_sessions * len(competition.types)
        self.slot_line = np.zeros(n_slots, LINE_DTYPE)
        self.slot_values = np.zeros((n_slots, self.kernel.stored_metrics), np.float64)
        self.slot_hits = np.zeros(n_slots, self.kernel.hits_dtype)
        self.positional = self.kernel.positional
        if self.positional:
            self.kernel.attach(self.slot_line, self.slot_values)
        self.duplicates = np.zeros((report.max_per_code, 3), np.int64)  # slot, line, previous line
        self.unknown = np.zeros((report.max_per_code, 2), np.int64)  # session, line
        self.n_duplicates = 0
        self.n_unknown = 0
        self.rows_read = 0
        self.rows_with_errors = 0  # rows of the truth read with an error: they hold their slot and score 0
        self.metadata = None  # the file's metadata line (first_line = "metadata"), as written
        self.headerless = False  # the file's lines have no header line (a Parquet file's rows, read as lines)
        self.kmax_items = competition.k
        self.format_keys = {
            "expected": "",
            "fields": len(self._fields()),
            "hint": "",
            "k": competition.k,
            "max_line_bytes": competition.limits.max_line_bytes,
        }

    # -- the header ---------------------------------------------------------------------------
    def _header(self, data: memoryview) -> tuple[int, int]:
        """Check the first line; return (offset where data rows start, their first line number)."""
        offset = 0
        if self.headerless:  # a Parquet file's rows, made lines: no header
            return 0, 1
        if bytes(data[:3]) == BOM:
            self.report.add(Code.BYTE_ORDER_MARK, line=1, column=1)
            offset = 3
        if self.competition.first_line == "row":  # no header line: the first line is a row
            return offset, 1
        if self.competition.first_line == "metadata":
            return self._metadata(data, offset)
        if offset == len(data):  # a byte-order mark and nothing else
            self.report.add(Code.EMPTY_FILE, expected=repr(",".join(self.competition.header)))
            return offset, 1
        max_line = self.competition.limits.max_line_bytes
        end = bytes(data[offset : offset + max_line + 2]).find(b"\n")
        if end < 0 and len(data) - offset > max_line + 1:  # no line end within the limit
            end = bytes(data[offset:]).find(b"\n")
            end = len(data) if end < 0 else offset + end
            self.report.add(Code.LINE_TOO_LONG, f"{end - offset:,}", line=1, column=max_line + 1, **self.format_keys)
            return end + 1, 2
        end = len(data) if end < 0 else offset + end
        first = bytes(data[offset:end])
        if first.endswith(b"\r"):
            first = first[:-1]
            self.report.add(Code.CRLF, line=1, column=len(first) + 1)
        read_header = getattr(self.kernel, "read_header", None)  # the table reader finds its columns by name
        problem = header_problem(first, self.competition) if read_header is None else read_header(first)
        if problem is None:
            if b'"' in first:
                quoted = first[first.index(b'"') : first.index(b'"', first.index(b'"') + 1) + 1] if first.count(b'"') > 1 else first
                self.report.add(Code.QUOTED_FIELD, _text(quoted), line=1, column=first.index(b'"') + 1)
            return end + 1, 2
        sentence, missing = problem
        if TRUTH_FILE in sentence:  # a truth given as the submission: its lines are neither shown nor read
            raise LimitExceeded(Code.BAD_HEADER, sentence, line=1, column=1)
        self.report.add(Code.BAD_HEADER, sentence, line=1, column=1, **_context(first, 0, len(first)))
        return (offset, 1) if missing else (end + 1, 2)

    def _metadata(self, data: memoryview, offset: int) -> tuple[int, int]:
        """The first line that is neither blank nor a comment is the file's metadata (Spotify's team_info line): kept when it
        starts with the config's text; else a problem, and that line is read as a row. Returns (where rows start, their
        first line number)."""
        competition, line, max_line = self.competition, 1, self.competition.limits.max_line_bytes
        while True:
            window = bytes(data[offset : offset + max_line + 2])
            end = window.find(b"\n")
            text = window if end < 0 else window[:end]
            if end < 0 and len(window) > max_line + 1:
                raise LimitExceeded(Code.LINE_TOO_LONG, f"more than {max_line:,}", line=line, column=max_line + 1, max_line_bytes=max_line,
                                    ending="")
            stripped = text.rstrip(b"\r").strip()
            if end >= 0 and (not stripped or (competition.comment and stripped.startswith(competition.comment.encode()))):
                offset, line = offset + end + 1, line + 1
                continue
            break
        if stripped.startswith(competition.metadata.encode()):
            self.metadata = text.rstrip(b"\r").decode("utf-8", "replace")
            return (offset + len(text) + 1, line + 1)
        self.report.add(Code.BAD_HEADER, f"line {line} is not the metadata line: expected a line that starts with "
                                         f"{competition.metadata!r} (such as {competition.metadata},main,team name,email) before the rows",
                        line=line, column=1, **_context(text, 0, len(text)))
        return offset, line

    def _fields(self) -> list[str] | tuple[str, ...]:
        """A row's fields: the kernel's, as its file has them (the table reader), else the config's header."""
        return self.competition.header if self.kernel.names is None else self.kernel.names

    def _swapped(self) -> str:
        return swapped(self.competition)

    def _looks_like_row(self, fields: list[str]) -> bool:
        return looks_like_row(fields, self.competition)

    def _row_hint(self, line: bytes) -> str:
        """The likely cause of a row with too many fields: a pandas index column or a Python list of items."""
        head, _, rest = line.partition(b",")
        if head.strip().isdigit() and self._looks_like_row(rest.decode("utf-8", "replace").split(",")):
            return f" ({INDEX_COLUMN})"
        if PYTHON_LIST.search(line):
            return f" ({PYTHON_LIST_HINT})"
        return ""

    # -- blocks -------------------------------------------------------------------------------
    def _describe(self, code: int, text: bytes, start: int, end: int) -> dict:
        """The value and the other words a kernel problem's message names."""
        words = dict(self.format_keys, value=_text(text[start:end]))
        if code == codes.WRONG_FIELD_COUNT:
            words["value"] = f"found more: {_text(text[start:end])}" if end > start else f"found one: {_text(text)}"
            words["hint"] = self._row_hint(text)
            if not words["hint"] and end > start and re.fullmatch(rb"(?:,\s*\d+)+\s*", text[start:end]):
                words["hint"] = " (items must be separated by a single space, not ',')"
            if not words["hint"] and end == start and b"\t" in text:
                words["hint"] = f" ({TAB_SEPARATED})"
            words["expected"] = self.competition.field_separator.join(self._fields())
            words["fields"] = len(self._fields())
        elif code == codes.MALFORMED_ID and self.kernel.names is not None:  # the table reader: a key column is empty, or no integer
            column = self.kernel.names[text[:start].count(self.competition.field_separator.encode())]
            words["value"] = f"{_text(text[start:end])} (column {column!r} holds no whole number)" if end > start else f"'' (column {column!r} is empty)"
            words["expected"] = repr(self.competition.field_separator.join(self.competition.key))
        elif code == codes.MALFORMED_ID:
            words["expected"] = repr(self.competition.id_pattern)
            if self._looks_like_row(text.decode("utf-8", "replace").split(",")[::-1]):
                words["hint"] = f" (the columns look swapped: {self._swapped()})"
        elif code == codes.UNKNOWN_TYPE:
            words["expected"] = ", ".join(self.competition.types)
        elif code in (codes.INVALID_UTF8, codes.NUL_BYTE):
            words["value"] = f"0x{text[start]:02x}"
        elif code == codes.ITEM_NOT_INTEGER:
            joined = re.fullmatch(rb"\d+([^\d\s])\d+(\1\d+)*", text[start:end])
            if re.fullmatch(rb"\[?-?\d*,?\]?", text[start:end]) and PYTHON_LIST.search(text):
                words["hint"] = f" ({PYTHON_LIST_HINT})"
            elif joined:
                words["hint"] = f" (found {_text(joined.group(1))} between items: use a single space)"
        elif code == codes.LINE_TOO_LONG:
            words["value"] = f"{end:,}"
        elif code == codes.LIST_LENGTH:
            separator = self.competition.item_separator
            words.update(value=f"{sum(1 for item in text[start:end].split(separator.encode()) if item.strip()):,}",
                         expected=f"{self.competition.list_length:,}")
        elif code == codes.ITEM_FORM:
            words["expected"] = f"{self.competition.item_prefix!r} then {self.competition.item_id_bytes} characters"
        elif code == codes.BAD_RANK:  # the table reader's rank column (the impression shape's words are its kernel's)
            words.update(what="rank", expected="a whole number of at least 1 (1 is the first place)")
        elif code == codes.TOO_MANY_ITEMS:
            cut = len(text[start:end].split())
            words["value"], words["cut"] = f"{self.kmax_items + cut:,}", f"{cut:,}"
        elif code == codes.BAD_SEPARATOR:
            found = _text(text[start:end]) if end > start else "nothing"
            if start > 0 and text[start - 1 : start] in (b",", b'"'):
                words["value"] = f"{found} before the first item"
            elif text[end:].rstrip(b"\r") in (b"", b'"'):
                words["value"] = f"{found} after the last item"
            else:
                words["value"] = f"{found} between items"
        return words

    def _merge(self, chunks: list, line_offset: int) -> None:
        """The rows of a kernel's calls into the per-slot arrays, their lines offset by line_offset (repeated rows and
        rows of unknown sessions noted)."""
        for row_ints, row_values, n_rows in chunks:
            if n_rows:
                check_line_count(int(row_ints[n_rows - 1, 3]) + line_offset)  # rows come in line order: the last is the highest
            self.rows_read += n_rows
            if self.keep_row_keys:
                self.row_keys.add(row_ints[:n_rows, 1], row_ints[:n_rows, 2], row_ints[:n_rows, 3], line_offset)
            self.n_duplicates, self.n_unknown = self.kernel.merge((row_ints, row_values, n_rows), line_offset, self)

    def _absorb(self, parsed: Parsed, line_offset: int) -> None:
        check_line_count(line_offset + parsed.last_line)
        self._merge(parsed.chunks, line_offset)
        if self.positional:  # no rows to merge: each line was its impression's
            self.rows_read += parsed.last_line
        self.rows_read += sum(len(block) for block in parsed.preds)  # the long shape's rows: one prediction each
        self.kernel.absorb(parsed, line_offset)
        kept = np.zeros(codes.N_CODES, np.int64)
        data = parsed.data
        for code, line, start, end, line_start in parsed.found[: parsed.n_problems].tolist():
            if not self.report.has_room(code):  # its examples are all kept: counted with the others below, no message made
                continue
            kept[code] += 1
            text = data[line_start : line_start + self.competition.limits.max_line_bytes + 2].tobytes()
            text = text[: text.find(b"\n")] if b"\n" in text else text
            start, end = start - line_start, end - line_start  # now columns (0-based) within the line
            words = self._describe(code, text, start, end)
            if self.positional:
                words.update(self.kernel.words(code, text, start, end, line + line_offset))
            if code == codes.WRONG_FIELD_COUNT and start == end and b"\t" in text:  # one field: point at the tab
                start = text.index(b"\t")
                end = start + 1
            self.report.add(code, line=line + line_offset, column=start + 1, **_context(text, start, end), **words)
        self.rows_with_errors += int(parsed.counts[codes.ROWS_WITH_ERRORS])
        for code in np.flatnonzero(parsed.counts[: codes.ROWS_WITH_ERRORS]):
            self.report.count_only(int(code), int(parsed.counts[code] - kept[code]))

    def _reader(self, path, deadline: Deadline, untrusted: bool):
        """The file's blocks of lines: a text file's (plain, gzip, zip), or a Parquet file's rows as lines (the table
        reader's; a key of row positions, `__index__`, needs one)."""
        from scorer.engine.parquet_rows import ParquetBlocks, is_parquet_file
        from scorer.spec.competition import ROW_INDEX

        limits = self.competition.limits
        self.headerless = self.competition.table_reader and is_parquet_file(path)
        if self.headerless:
            return ParquetBlocks(path, self.competition, limits.max_file_bytes, limits.max_decompressed_bytes, deadline, untrusted)
        if ROW_INDEX in self.competition.key:
            import os

            os.close(open_regular(Path(path), untrusted=untrusted)[0])  # what is no regular file is said so first
            raise LimitExceeded(Code.UNKNOWN_COMPRESSION, f"the submission must be a Parquet file: its rows' positions ({ROW_INDEX}, "
                                                          f"its pandas index) name the rows, which a text file's lines do not")
        return BlockReader(path, self.block_bytes, limits.max_file_bytes, limits.max_decompressed_bytes, limits.max_line_bytes, deadline,
                           untrusted=untrusted)

    def run(self, path, untrusted: bool = False, deadline: Deadline | None = None) -> PassResult:
        """Score the file; `deadline` (default: the config's max_seconds from now) is checked between blocks and
        inside decompression."""
        bound_heap()
        limits = self.competition.limits
        deadline = deadline or Deadline(limits.max_seconds, time.monotonic())
        reader = self._reader(path, deadline, untrusted)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=None, unit="B", unit_scale=True, file=sys.stderr, desc="scoring", leave=False)
        pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        pending: deque = deque()
        lines_before = 0  # lines of the blocks already absorbed
        lines_handed = 0  # positional shape: lines of the blocks handed to the kernel (the next block's first slot)

        def absorb(parsed: Parsed) -> None:
            nonlocal lines_before
            self._absorb(parsed, lines_before)
            lines_before += parsed.last_line

        first = True
        try:
            for block in reader:
                if bar is not None:
                    bar.total = reader.file_bytes
                    bar.n = block.end_offset
                    bar.refresh()
                offset, first_line = block.start, 1
                if first:
                    first = False
                    offset, first_line = self._header(block.data)
                    offset += block.start
                data = np.frombuffer(block.buffer, np.uint8)
                arguments = (data, offset, block.end, first_line)
                if self.positional:
                    arguments += (lines_handed,)
                    lines_handed += self.kernel.lines_in(data, offset, block.end)
                if pool is None:
                    absorb(self.kernel.parse(*arguments))
                    reader.release(block)
                else:
                    pending.append((block, pool.submit(self.kernel.parse, *arguments)))
                    while len(pending) > self.threads:
                        done, future = pending.popleft()
                        absorb(future.result())
                        reader.release(done)
                deadline.check(reader.bytes_read)  # bytes of CSV, as the reader's own checks count
            while pending:
                absorb(pending.popleft()[1].result())
        except LimitExceeded as error:
            if error.number == Code.LINE_TOO_LONG and error.line is None:  # the reader found no line end: the next line
                while pending:
                    absorb(pending.popleft()[1].result())
                error.line, error.column = lines_before + 1, limits.max_line_bytes + 1
            raise
        finally:
            for _, future in pending:
                future.cancel()
            if pool is not None:
                pool.shutdown(wait=True)
            if bar is not None:
                bar.close()
        if first and not self.positional:  # an empty file of impressions misses them all: the rules' `missing` says how they score
            self.report.add(Code.EMPTY_FILE, expected=repr(",".join(self.competition.header)))
        outcome = self._finish()
        if self.headerless:
            from scorer.engine.parquet_rows import name_rows

            name_rows(self.report, self.competition)
        return outcome

    # -- rows that are missing, repeated or unknown -------------------------------------------
    def _repeated_rows_by_key(self) -> None:
        """Repeats found by sorting the rows' kept keys (session, type, line): rows that have no slot to meet in."""
        keys, self.row_keys = self.row_keys, RowKeys(len(self.competition.types))
        self.n_duplicates, shown = keys.repeats(self.report.max_per_code)  # rows in order (as OTTO's are): none, no sort
        report_repeated_rows(self.report, ((self.kernel.repeat_name(session, kind, line), line, f"line {before}")
                                           for session, kind, line, before in shown), self.n_duplicates)

    def _finish(self) -> PassResult:
        report = self.report
        self.kernel.finish(self.slot_line, self.slot_values, self.slot_hits, report)
        self.kernel.spare.clear()  # the merged rows' arrays, kept for the next block: none comes, they go before the totals
        if isinstance(self.truth, Truth):  # its items are read no more: their pages go before the totals too
            give_back(self.truth.items)
        repeats = self.duplicates[: min(self.n_duplicates, report.max_per_code)].tolist()  # slot, line, previous line
        report_repeated_rows(report, ((self.kernel.slot_name(slot), line, f"line {previous}") for slot, line, previous in repeats),
                             self.n_duplicates, kept=self.competition.rules.repeated_key)
        if not self.has_truth:
            self._repeated_rows_by_key()
        elif self.n_unknown:
            sessions, lines = self.unknown.T
            first = min(self.n_unknown, SHOWN_IDS, len(sessions))  # rows past n_unknown are unused
            shown = ", ".join(self.kernel.unknown_name(s, n) for s, n in zip(sessions[:first], lines[:first]))
            report_unknown_rows(report, self.n_unknown, shown, int(lines[0]))
        if not self.has_truth:
            missing = np.empty(0, np.int64)
        elif self.positional:
            missing = self.kernel.missing_slots(self.slot_line)
        else:
            missing = np.flatnonzero(self.slot_line == 0)
        if len(missing):
            shown = ", ".join(self.kernel.slot_name(int(slot)) for slot in missing[:SHOWN_IDS])
            left_out = self.competition.rules.missing == "skip"  # the value shape's, always; the others' by their config
            report_missing_rows(report, len(missing), shown, left_out=left_out, accepted=left_out and self.competition.shape != "value")
        counts = {
            "sessions_in_truth": self.truth.n_sessions,
            "rows_expected": len(self.slot_line),
            "rows_read": self.rows_read,
            "rows_scored": int(len(self.slot_line) - len(missing)),
            "rows_missing": int(len(missing)),
            "rows_unknown_session": self.n_unknown if self.has_truth else 0,
            "rows_duplicate": self.n_duplicates,
            "rows_with_errors": self.rows_with_errors,
            "rows_cut_at_k": report.counts.get(Code.TOO_MANY_ITEMS.code, 0),
            "rows_with_duplicate_items": report.counts.get(Code.DUPLICATE_ITEMS.code, 0),
        }
        stored = self.slot_values if self.slot_values.shape[1] == self.kernel.n_metrics else None
        figures = SlotFigures.of(self.competition, self.truth.indptr, self.slot_hits, stored)
        if any(metric.sums_suffice for metric in self.competition.metrics):  # the totals will ask for them
            figures.start_sums(len(self.competition.types))  # under way while the caller reads the truth's sizes
        return PassResult(self.slot_line, figures, self.slot_hits, counts, self.kernel.coverage(), self.kernel.side_figures(),
                          self.kernel.weights(self.slot_line), self.kernel.labels, self.metadata)


def check_line_count(last_line: int) -> None:
    """Refuse a submission whose line numbers pass what slot_line holds (MAX_LINES), before one is stored."""
    if last_line > MAX_LINES:
        raise LimitExceeded(Code.FILE_TOO_LARGE, f"the submission has more than {MAX_LINES:,} lines (a frame's: rows), the most "
                                                 "this scorer numbers")


def kernel_for(competition: Competition, truth: Truth, max_per_code: int, items=None, side=None) -> RowKernel:
    """The kernel of the competition's file shape (items: the id shape's item side; side: the table reader's,
    scorer.truth.sides.TableSide)."""
    if competition.shape == "id_type":
        return IdKernel(competition, truth, max_per_code, items)
    if competition.shape == "impression":
        from scorer.engine.impression_kernel import ImpressionKernel

        return ImpressionKernel(competition, truth, max_per_code)
    if competition.table_reader:
        from scorer.engine.table_kernel import TableKernel

        return TableKernel(competition, truth, max_per_code, side)
    from scorer.engine.string_kernel import ShapeKernel

    return ShapeKernel(competition, truth, max_per_code)
