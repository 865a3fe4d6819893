"""The compiled cache: entries keyed by the truth file's content, kept in a private folder (scorer.private_files)
and read back only from there."""

from __future__ import annotations

import json
import mmap
import os
import stat
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from scorer import private_files
from scorer.digests import sha256
from scorer.errors import TruthError
from scorer.private_files import Untrusted, cache_dir
from scorer.truth.npz import CACHE_VERSION, COMPILED_SUFFIX


def content_digest():
    """xxh3-128 (xxhash, about 10 GB/s); blake2b-128 (hashlib, about 1 GB/s) where xxhash is not installed,
    as after Kaggle's `pip install --no-deps`. The name goes into the key, so the two never mix."""
    try:
        import xxhash
    except ImportError:
        import hashlib

        return "blake2b", hashlib.blake2b(digest_size=16)
    return "xxh3", xxhash.xxh3_128()


def bytes_key(data) -> str:
    """The content key of bytes in memory or mapped (see content_key)."""
    name, digest = content_digest()
    digest.update(data)
    return f"{name}-{len(data)}-{digest.hexdigest()}"


def content_key(path: Path, mapped: bool = True) -> str | None:
    """A hash of the file's bytes, mapped rather than read (xxh3: ~10 ms for OTTO's 113 MB from the page cache,
    bench/bench_truth_key.py); None for what is not a regular file or says it is empty (as /proc's): never cached.
    Not `mapped`: read in blocks (see handle_key), for files as large as a submission."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None  # a FIFO or device: opening it could block, and its bytes can change under the key
    with open(path, "rb", buffering=0) as handle:
        return handle_key(handle, mapped)


def handle_key(handle, mapped: bool = True) -> str | None:
    """content_key of a regular file already opened (binary, unbuffered or at its start); None when it says it is empty.

    Not `mapped`: read 16 MB at a time into one buffer instead, so the process's resident memory does not grow
    by the file's size (mapped pages count in it while mapped, and a memory limit may act on it), and a file
    cut short while it is hashed cannot raise SIGBUS.
    """
    size = os.fstat(handle.fileno()).st_size
    if size == 0:
        return None
    if mapped:
        try:
            return _windowed_key(handle.fileno(), size)
        except (OSError, ValueError):  # a file system that cannot map: read it in blocks
            pass
    name, digest = content_digest()
    handle.seek(0)
    buffer = bytearray(1 << 24)
    view = memoryview(buffer)
    read = 0
    while n := handle.readinto(buffer):
        digest.update(view[:n])
        read += n
    return f"{name}-{read}-{digest.hexdigest()}"


HASH_WINDOW = 16 << 20  # bytes of a file mapped and hashed at a time: the process holds at most this many of its pages


def _windowed_key(fd: int, size: int) -> str:
    """bytes_key of a file's `size` bytes, mapped HASH_WINDOW at a time, each window's pages dropped once hashed (a
    whole mapping of OTTO's 113 MB truth raised the score's peak RSS from 34 to 142 MB); the same key, as fast."""
    name, digest = content_digest()
    for offset in range(0, size, HASH_WINDOW):
        with mmap.mmap(fd, min(HASH_WINDOW, size - offset), access=mmap.ACCESS_READ, offset=offset) as window:
            digest.update(window)
            if hasattr(window, "madvise"):
                window.madvise(mmap.MADV_DONTNEED)
    return f"{name}-{size}-{digest.hexdigest()}"


def cache_path(path: Path, what: list[str], suffix: str = COMPILED_SUFFIX) -> Path | None:
    """The cache entry of a truth file read as `what` (types, shape): keyed by the file's content, so a file
    rewritten with the same size and time, or another file put at its path, is read again. None: not cached."""
    try:
        content = remembered_content_key(path)
    except OSError:
        return None  # the reader names the problem
    if content is None:
        return None
    key = json.dumps([content, what, CACHE_VERSION])
    return cache_dir() / f"{path.name[:100]}.{sha256(key.encode()).hexdigest()[:24]}{suffix}"


STATE_SUFFIX = ".key"
SETTLED_NS = 2_000_000_000  # a file unchanged this long before it is hashed may have its key remembered


def remembered_content_key(path: Path) -> str | None:
    """content_key(path), or the key this user's scorer hashed before for the file in the same state: the same
    device, inode, size, modification and change times (a memo in the private cache folder; about 15 ms of every
    score of OTTO's truth, and its pages). No user can set a change time, and every write moves it. A key is
    remembered only for a file that had not changed for SETTLED_NS before it was hashed, and did not change while
    it was: a later write cannot fall in the clock tick of the state remembered (git's rule for "racily clean"
    files). A memo that is missing, not this user's private file, or malformed is no memo: the file is hashed."""
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        return None
    state = _state(before)
    name = f"{sha256(json.dumps(state).encode()).hexdigest()[:32]}{STATE_SUFFIX}"
    with ExitStack() as stack:
        folder = open_cache_folder(stack, cache_dir(), create=False)
        remembered = _sound_key(read_memo(folder, name, 256), before.st_size) if folder is not None else None
    if remembered is not None:
        return remembered
    started = time.time_ns()
    key = content_key(path)
    settled = max(before.st_mtime_ns, before.st_ctime_ns) <= started - SETTLED_NS
    if key is not None and settled and _state(os.stat(path)) == state:
        with ExitStack() as stack:
            folder = open_cache_folder(stack, cache_dir(), create=True)
            if folder is not None:
                write_memo(folder, name, key.encode())  # unwritten (a full cache): hashed again next time
    return key


def _state(status: os.stat_result) -> list[int]:
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns, CACHE_VERSION]


def _sound_key(memo: bytes | None, size: int) -> str | None:
    """The memo as a content key of a file of `size` bytes (algorithm-size-32 hex digits), None if it is no such key."""
    key = (memo or b"").decode("ascii", "replace")
    algorithm, _, rest = key.partition("-")
    length, _, digest = rest.partition("-")
    sound = algorithm in ("xxh3", "blake2b") and length == str(size) and len(digest) == 32 and set(digest) <= set("0123456789abcdef")
    return key if sound else None


def read_memo(folder: int, name: str, limit: int) -> bytes | None:
    """A memo's bytes (at most `limit`) if it is this user's regular file that others cannot write
    (scorer.private_files), else None: anything else is no memo."""
    try:
        with private_files.opened_file(folder, name) as fd:
            return private_files.read_all(fd, limit)
    except (OSError, Untrusted):
        return None


def write_memo(folder: int, name: str, data: bytes) -> None:
    """Leave a memo, whole or not at all; an unwritable or full cache only costs the work it spares, next time."""
    try:
        private_files.write(folder, name, data)
    except OSError:
        pass


_refused: set[Path] = set()  # cache folders this process said it does not use


def open_cache_folder(stack: ExitStack, folder: Path, create: bool) -> int | None:
    """The cache folder's descriptor (open until the stack closes) if it is private (scorer.private_files: this
    user's, not a symlink, not writable by others; made 0700); else None, and a folder that is there but not
    private is named on stderr, once per process. A missing or unmakeable folder is just no cache."""
    try:
        return stack.enter_context(private_files.opened_folder(folder, create=create))
    except Untrusted as error:
        if folder not in _refused:
            _refused.add(folder)
            print(f"scorer: warning: the truth cache {folder} is not used: {error}; truths are read from their files "
                  "(slower). Point $SCORER_CACHE_DIR at a folder of your own, or remove this one.", file=sys.stderr)
    except OSError:
        pass
    return None


def cached_copy(cached: Path | None, reader, *args, source: str):
    """The cache entry read by reader(cached, *args, source=..., opened=file) if there is a sound one in a private
    cache folder, else None: a missing, damaged or crafted entry is a miss, and so is one that is not this
    user's regular file (a symlink is not followed, a FIFO never waited on). A miss on a large truth is said on stderr
    (say_first_read)."""
    if cached is None:
        return None
    with ExitStack() as stack:
        folder = open_cache_folder(stack, cached.parent, create=False)
        try:
            if folder is not None:
                fd = stack.enter_context(private_files.opened_file(folder, cached.name))
                opened = stack.enter_context(os.fdopen(os.dup(fd), "rb"))
                return reader(cached, *args, source=source, opened=opened)
        except (TruthError, OSError, Untrusted):
            pass
    say_first_read(Path(source))
    return None


SAID_FROM_BYTES = 32 << 20  # a truth file from this size takes seconds to read (OTTO's 113 MB: about 9 s)


def say_first_read(path: Path) -> None:
    """One line on stderr, terminal or not, when a truth of SAID_FROM_BYTES or more is read from its source: the first
    run waits seconds for it, later ones load the compiled copy in milliseconds. It names no path (a grader's stderr
    may reach a participant)."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size >= SAID_FROM_BYTES:
        print(f"scorer: reading the truth ({size / 1e6:,.0f} MB) from its source file: seconds this once (about 9 s at OTTO's "
              "size); it is compiled into the cache, and later runs load it in milliseconds", file=sys.stderr, flush=True)


def save_to_cache(truth, cached: Path | None, path: Path, what: list[str], suffix: str = COMPILED_SUFFIX) -> None:
    """Keep a compiled copy (0600, in the private cache folder), unless the file changed while it was read (the
    key would not be its content's); an unwritable, full or refused cache only costs speed (no partial file)."""
    if cached is None or cache_path(path, what, suffix) != cached:
        return
    with ExitStack() as stack:
        folder = open_cache_folder(stack, cached.parent, create=True)
        try:
            if folder is not None:
                truth.save(cached.name, folder=folder)
        except OSError:
            pass
