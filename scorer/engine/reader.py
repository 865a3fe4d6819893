"""Submission sources (plain, gzip, zip) read as blocks of whole lines, with size and time limits checked while streaming.

A submission is opened once and must be a regular file; everything is then read from that descriptor.
An untrusted submission (a grader's upload) is opened without following a symbolic link and must
have one link (a hard link may be another file's name); a trusted one (a participant's own file,
scored locally) may be reached through links.
"""

from __future__ import annotations

import errno
import io
import math
import mmap
import os
import stat
import struct
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from scorer.engine.problems import Code
from scorer.errors import SubmissionError
from scorer.file_formats import binary_format, compression_of, zip_kind
from scorer.kernels.rows import SLACK
from scorer.private_files import NO_LINK, READ_ANY

DEFAULT_BLOCK_BYTES = 2 << 20  # 6 MiB less at the peak than 4 MiB at OTTO size, for 0-7% more CPU (docs/benchmarks.md)
MAPPED_TAIL = 1 << 20  # a plain file's last bytes (at least these) are read into a zero-padded buffer, the rest mapped
CHUNK_BYTES = 1 << 20
INPUT_PIECE = 4096  # compressed bytes handed to zlib at once: a gzip member's end copies at most this many
MAX_GZIP_MEMBERS = 1 << 20
MAX_ZIP_ENTRIES = 1000  # files and folders; zipfile holds an object per entry of the directory
READ_ERRORS = (OSError, EOFError, ValueError, RuntimeError, NotImplementedError, struct.error, zlib.error, zipfile.BadZipFile)

HEAD_BYTES = 65_536  # the content's first bytes checked for a text encoding or an archive format that is not CSV


class LimitExceeded(SubmissionError):
    """Reading stopped at a configured limit; `number` is the problem code's number.

    `line` and `column` locate it when known; `words` are the other words the code's message names.
    """

    def __init__(self, number: Code, message: str, line: int | None = None, column: int | None = None, **words):
        super().__init__(message)
        self.number = number
        self.line = line
        self.column = column
        self.words = words


class Deadline:
    """Raises the time limit once `max_seconds` have passed since `started` (time.monotonic())."""

    def __init__(self, max_seconds: float = math.inf, started: float | None = None):
        self.max_seconds = max_seconds
        self.at = (time.monotonic() if started is None else started) + max_seconds

    def check(self, bytes_read: int) -> None:
        if time.monotonic() > self.at:
            raise LimitExceeded(Code.TIME_LIMIT, f"scoring took longer than the limit of {self.max_seconds:g} s "
                                            f"(stopped after reading {bytes_read:,} bytes of CSV)")


def refusal(status: os.stat_result, *, untrusted: bool) -> str | None:
    """Why a file of this status (lstat or fstat) is not read as a submission, or None: not a regular file;
    untrusted (an upload), also a symbolic link or a file with other names (hard links)."""
    if untrusted and stat.S_ISLNK(status.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(status.st_mode):
        return "is not a regular file"
    if untrusted and status.st_nlink != 1:
        return f"has {status.st_nlink} hard links (names)"
    return None


def shown_name(path: Path, untrusted: bool) -> str:
    """How messages name a submission: the path given, or for an upload (untrusted) its file name alone."""
    return Path(path).name if untrusted else str(path)


NOT_CSV = "not CSV text: write the submission as CSV (with pandas: df.to_csv('submission.csv', index=False))"


def content_refusal(head: bytes, what: str = "the file") -> LimitExceeded | None:
    """Why content starting with `head` (decompressed; `what` names it) cannot be read as CSV lines, or None: a UTF-16 or
    UTF-32 text, a tar archive, another binary format we recognise (Parquet, Arrow, pickle, ...), or lines ended by a
    lone CR."""
    encoding = _wide_encoding(head)
    if encoding:
        return LimitExceeded(Code.INVALID_UTF8, f"{what} is {encoding} text, not UTF-8: save it as UTF-8 (for example "
                                                f"pandas to_csv(..., encoding='utf-8')), then upload it again", line=1, column=1)
    kind = binary_format(head)
    if kind == "a tar archive":
        return LimitExceeded(Code.UNKNOWN_COMPRESSION, f"{what} is a tar archive, which is not supported: "
                                                       "use plain CSV, .gz or a .zip of one file")
    if kind is not None:
        return LimitExceeded(Code.UNKNOWN_COMPRESSION, f"{what} is {kind}, {NOT_CSV}")
    if b"\n" not in head and b"\r" in head.rstrip(b"\r"):
        return LimitExceeded(Code.UNREADABLE, "the lines end with a lone CR (carriage return, as on classic Mac OS), not LF "
                                              "or CRLF: save the file with LF or CRLF line ends", line=1, column=head.index(b"\r") + 1)
    return None


def _wide_encoding(head: bytes) -> str | None:
    """'UTF-32' or 'UTF-16' (with its byte order) when the head is such text: by its byte-order mark, or by the NUL
    byte every other byte that ASCII text has in UTF-16."""
    for mark, name in ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
                       (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)")):
        if head.startswith(mark):
            return name
    pairs = head[:64]
    if len(pairs) >= 8 and len(pairs) % 2 == 0:
        if not any(pairs[1::2]) and all(pairs[0::2]):
            return "UTF-16 (little-endian)"
        if not any(pairs[0::2]) and all(pairs[1::2]):
            return "UTF-16 (big-endian)"
    return None


def open_regular(path: Path, *, untrusted: bool) -> tuple[int, os.stat_result]:
    """A read descriptor of `path` and its status, if it is a regular file; untrusted, also not a link and of one link.

    The checks are made on the opened descriptor, so what is checked is what is read. The messages
    name the path given (untrusted: its file name only, the grader's folders are the host's), never what a link
    points at.
    """
    name = shown_name(path, untrusted)
    try:
        fd = os.open(path, READ_ANY | (NO_LINK if untrusted else 0))  # a FIFO does not wait for a writer; refused below
    except OSError as error:
        if untrusted and error.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise SubmissionError(f"submission {name} is a symbolic link: upload the file itself") from None
        raise SubmissionError(f"cannot open submission {name}: {error.strerror or error}") from None
    try:
        status = os.fstat(fd)
        why = refusal(status, untrusted=untrusted)
        if why:
            raise SubmissionError(f"submission {name} {why}")
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


class _Gzip(io.RawIOBase):
    """A gzip stream (up to MAX_GZIP_MEMBERS members) whose readinto fills the buffer, checking the deadline as it inflates.

    Compressed bytes go to zlib INPUT_PIECE at a time: zlib copies the input left after a member's
    end, so a stream of many tiny members costs a small copy per member, not a chunk's.
    """

    def __init__(self, raw, deadline: Deadline):
        self.raw = raw
        self.deadline = deadline
        self.inflater = zlib.decompressobj(wbits=31)
        self.members = 1
        self.pending = memoryview(b"")  # compressed bytes read and not yet handed to zlib
        self.inflated = 0

    def readable(self):
        return True

    def _piece(self):
        if not self.pending:
            self.pending = memoryview(self.raw.read(CHUNK_BYTES))
        piece, self.pending = self.pending[:INPUT_PIECE], self.pending[INPUT_PIECE:]
        return piece

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        size, have = len(view), 0
        while have < size:
            self.deadline.check(self.inflated + have)
            if self.inflater.eof:
                rest = self.inflater.unused_data or self._piece()
                if not rest:
                    break
                self.members += 1
                if self.members > MAX_GZIP_MEMBERS:
                    raise LimitExceeded(Code.UNREADABLE, f"the gzip stream holds more than {MAX_GZIP_MEMBERS:,} members: compress the file as one stream")
                self.inflater = zlib.decompressobj(wbits=31)
            else:
                rest = self.inflater.unconsumed_tail or self._piece()
                if not rest:
                    raise SubmissionError("the gzip stream is truncated: it ends in the middle of compressed data")
            data = self.inflater.decompress(rest, size - have)
            view[have : have + len(data)] = data
            have += len(data)
        self.inflated += have
        return have


class _Prefixed(io.RawIOBase):
    """The bytes of `head`, then the rest of `stream` (its head already read)."""

    def __init__(self, head: memoryview, stream):
        self.head = head
        self.stream = stream

    def readable(self):
        return True

    def readinto(self, buffer) -> int:
        if not self.head:
            return self.stream.readinto(buffer) or 0
        size = min(len(buffer), len(self.head))
        buffer[:size] = self.head[:size]
        self.head = self.head[size:]
        return size


def member_kind(info: zipfile.ZipInfo) -> str | None:
    """What a zip member is when its Unix mode says it is not a regular file (a symbolic link, whose content is the
    path it names; a device; a FIFO), or None. unzip would make it that thing, so it is not read as the file."""
    mode = info.external_attr >> 16
    if info.create_system != 3 or not stat.S_IFMT(mode) or stat.S_ISREG(mode):
        return None
    return "a symbolic link" if stat.S_ISLNK(mode) else "a device or a named pipe" if not stat.S_ISDIR(mode) else "a folder"


def _zip_entries(raw) -> int | None:
    """The entry count of a zip's end record (zip64 too), or None when there is none to read (zipfile says why)."""
    try:
        record = zipfile._EndRecData(raw)  # noqa: SLF001 - the end record alone, without reading the directory
        return None if record is None else int(record[zipfile._ECD_ENTRIES_TOTAL])  # noqa: SLF001
    except (OSError, ValueError, struct.error, AttributeError, IndexError):
        return None
    finally:
        raw.seek(0)


@dataclass
class Block:
    buffer: bytearray | mmap.mmap  # whole lines in buffer[start:end], then SLACK readable bytes (zeros, or the next line's)
    end: int
    end_offset: int  # bytes of the source read so far (compressed bytes for archives), for progress
    start: int = 0

    @property
    def data(self) -> memoryview:
        return memoryview(self.buffer)[self.start : self.end]


class BlockReader:
    """Opens a submission and yields Blocks of whole lines, checking the size limits as it reads.

    `untrusted`: the file is an upload a grader reads (see open_regular).
    """

    def __init__(self, path: str | Path, block_bytes: int = DEFAULT_BLOCK_BYTES,
                 max_file_bytes: int = 1 << 62, max_decompressed_bytes: int = 1 << 62, max_line_bytes: int = 1 << 20,
                 deadline: Deadline | None = None, untrusted: bool = False):
        self.path = Path(path)
        self.name = shown_name(self.path, untrusted)
        self.untrusted = untrusted
        self.block_bytes = max(1, int(block_bytes))
        self.max_file_bytes = max_file_bytes
        self.max_decompressed_bytes = max_decompressed_bytes
        self.max_line_bytes = max_line_bytes
        self.deadline = deadline or Deadline()
        self._free: list[bytearray] = []
        self.compression = "plain"
        self.file_bytes = 0
        self.bytes_read = 0

    def _open(self):
        fd, status = open_regular(self.path, untrusted=self.untrusted)
        raw = open(fd, "rb", buffering=0)
        self.file_bytes = status.st_size
        if self.file_bytes > self.max_file_bytes:
            raw.close()
            raise LimitExceeded(Code.FILE_TOO_LARGE, f"the file is {self.file_bytes:,} bytes, over the limit of {self.max_file_bytes:,}")
        try:
            self.compression = compression_of(raw.read(8))
            raw.seek(0)
        except OSError as error:
            raw.close()
            raise SubmissionError(f"cannot read submission {self.name}: {error.strerror or error}") from None
        if self.compression == "plain":
            self.block_bytes = min(self.block_bytes, self.file_bytes + 1)  # a small file: no large buffer to zero
            return raw, raw
        if self.compression == "gzip":
            return _Gzip(raw, self.deadline), raw
        if self.compression == "zip":
            entries = _zip_entries(raw)
            if entries is not None and entries > MAX_ZIP_ENTRIES:  # refused before zipfile reads every entry
                raw.close()
                raise LimitExceeded(Code.ZIP_NOT_ONE_FILE, f"the zip archive holds {entries:,} entries; it must hold exactly one file")
            try:
                archive = zipfile.ZipFile(raw)
                members = [info for info in archive.infolist() if not info.is_dir()]
            except READ_ERRORS as error:
                raw.close()
                raise SubmissionError(f"the zip archive cannot be read: {error}") from None
            kind = zip_kind([info.filename for info in members])
            if kind is not None:
                raw.close()
                raise LimitExceeded(Code.UNKNOWN_COMPRESSION, f"the file is {kind}, {NOT_CSV}")
            if len(members) != 1:
                raw.close()
                names = ", ".join(info.filename for info in members[:5]) or "none"
                raise LimitExceeded(Code.ZIP_NOT_ONE_FILE, f"the zip archive holds {len(members)} files ({names}); it must hold exactly one")
            kind = member_kind(members[0])
            if kind is not None:
                raw.close()
                raise LimitExceeded(Code.ZIP_NOT_ONE_FILE, f"the zip archive's member {members[0].filename!r} is {kind}, not a file: zip the "
                                                           "file itself")
            try:
                return archive.open(members[0]), raw
            except READ_ERRORS as error:
                raw.close()
                why = f"the archive is damaged ({error.strerror})" if isinstance(error, OSError) and error.strerror else error
                raise SubmissionError(f"the zip member {members[0].filename!r} cannot be read: {why}") from None
        raw.close()
        raise LimitExceeded(Code.UNKNOWN_COMPRESSION, f"the file is compressed with {self.compression}, which is not supported: use plain CSV, .gz or .zip")

    def __iter__(self):
        stream, raw = self._open()
        try:
            if self.compression == "plain" and self.file_bytes > 2 * MAPPED_TAIL:
                yield from self._mapped_blocks(raw)
                stream.seek(self.bytes_read)
                yield from self._blocks(stream, raw, tail=True)
            else:
                yield from self._blocks(stream, raw)
        except READ_ERRORS as error:
            content = "" if self.compression == "plain" else " of decompressed content"
            raise SubmissionError(f"reading {self.name} failed after {self.bytes_read:,} bytes{content}: {error}") from None
        finally:
            stream.close()
            raw.close()

    def release(self, block: Block) -> None:
        """Hand a block's buffer back once its data is no longer used, to be filled again (no new pages); a mapped
        block's pages are dropped from the process (its file's pages stay in the page cache)."""
        if isinstance(block.buffer, mmap.mmap):
            block.buffer.madvise(mmap.MADV_DONTNEED)  # unmapped once the last view of it goes
        else:
            self._free.append(block.buffer)

    def _mapped_blocks(self, raw):
        """A plain file's blocks as windows of a private mapping (no copy: the kernels read the page cache), up to the
        last line end before its last MAPPED_TAIL bytes; self.bytes_read is then where the rest starts. A window
        holds the whole lines that end at least SLACK bytes before its end; one without a line end grows, up to the
        longest line allowed and a block (then LINE_TOO_LONG, as the buffered reading says it)."""
        fd = raw.fileno()
        refused = content_refusal(os.pread(fd, HEAD_BYTES, 0))
        if refused is not None:
            raise refused
        stop = self.file_bytes - MAPPED_TAIL
        pos = 0
        while pos < stop:
            self.deadline.check(pos)
            base = pos - pos % mmap.ALLOCATIONGRANULARITY
            want = self.block_bytes
            while True:
                length = min(pos + want, stop) + SLACK - base
                window = mmap.mmap(fd, length, access=mmap.ACCESS_COPY, offset=base)
                cut = window.rfind(b"\n", pos - base, length - SLACK) + 1
                if cut > 0 or base + length - SLACK >= stop:
                    break
                window.close()
                if want > self.max_line_bytes + self.block_bytes:
                    raise LimitExceeded(Code.LINE_TOO_LONG, f"more than {want - 1:,}", max_line_bytes=self.max_line_bytes,
                                        ending=", with no end")
                want += self.block_bytes
            if cut == 0:  # no line end before the tail: the buffered reading takes the line from pos
                window.close()
                break
            self.bytes_read = base + cut
            if self.bytes_read > self.max_decompressed_bytes:
                raise LimitExceeded(Code.DECOMPRESSED_TOO_LARGE, f"the content is over the limit of {self.max_decompressed_bytes:,} bytes: "
                                                                 f"reading stopped after {self.bytes_read:,} bytes")
            yield Block(window, cut, self.bytes_read, start=pos - base)
            pos = base + cut
        self.bytes_read = pos

    def _buffer(self, size: int, tail: bool = False) -> bytearray:
        """A buffer of at least `size` bytes: a released one, else a new one (every byte of it written: bytearray
        zeroes it), of a whole block and a carried line so that it serves again, or of just `size` for a plain
        file's tail (the last buffers its reading makes)."""
        while self._free:
            buffer = self._free.pop()
            if len(buffer) >= size:
                return buffer
        return bytearray(size if tail else max(size, self.block_bytes + 65536 + SLACK))

    def _read_bytes(self, tail: bool) -> int:
        """How much one buffer reads: a block; of a plain file's tail after its mapped blocks, no more than what is
        left of it by its size (and HEAD_BYTES more, should it have grown), so that no block-sized buffer is zeroed
        for about MAPPED_TAIL bytes."""
        return min(self.block_bytes, max(0, self.file_bytes - self.bytes_read) + HEAD_BYTES) if tail else self.block_bytes

    def _fill(self, stream, view: memoryview) -> int:
        """Read into `view` until it is full or the stream ends, CHUNK_BYTES at a time, checking the deadline;
        bytes_read counts every chunk as it comes (a read that fails says how far it got)."""
        have = 0
        while have < len(view):
            self.deadline.check(self.bytes_read)
            got = stream.readinto(view[have : have + CHUNK_BYTES]) or 0
            if got == 0:
                break
            have += got
            self.bytes_read += got
        return have

    def _blocks(self, stream, raw, tail: bool = False):
        """Blocks of whole lines read into reused zero-padded buffers; tail: the stream is a plain file's rest
        after its mapped blocks (self.bytes_read of it already read; its head was checked)."""
        if not tail:
            head = bytearray(HEAD_BYTES)  # the content's first bytes, checked whatever the block size, then read again
            size = self._fill(stream, memoryview(head))
            what = "the file" if self.compression == "plain" else f"the {self.compression} file's content"
            refused = content_refusal(bytes(head[:size]), what)
            if refused is not None:
                raise refused
            self.bytes_read = 0
            stream = _Prefixed(memoryview(head)[:size], stream)
        carry = b""
        plain = self.compression == "plain"
        while True:
            read = self._read_bytes(tail)
            buf = self._buffer(len(carry) + read + SLACK, tail)
            buf[: len(carry)] = carry
            got = self._fill(stream, memoryview(buf)[len(carry) : len(carry) + read])
            if self.bytes_read > self.max_decompressed_bytes:
                raise LimitExceeded(Code.DECOMPRESSED_TOO_LARGE, f"the {'decompressed ' if not plain else ''}content is over the limit of "
                                        f"{self.max_decompressed_bytes:,} bytes: reading stopped after {self.bytes_read:,} bytes")
            end = len(carry) + got
            if got == 0:
                if end == 0:
                    return
                cut = end
            else:
                cut = buf.rfind(b"\n", 0, end) + 1
                if cut == 0:  # no line end yet
                    if end > self.max_line_bytes + self.block_bytes:  # the engine locates it (line, column)
                        raise LimitExceeded(Code.LINE_TOO_LONG, f"more than {end - 1:,}", max_line_bytes=self.max_line_bytes,
                                            ending=", with no end")
                    carry = bytes(buf[:end])
                    self._free.append(buf)
                    continue
            carry = bytes(buf[cut:end])
            buf[cut : cut + SLACK] = bytes(SLACK)
            yield Block(buf, cut, raw.tell() if not raw.closed else self.file_bytes)
            if got == 0:
                return
