"""Files only this user can have written: a private folder (owned by this user, 0700, not a symlink) held open as a
descriptor, and files read and written through that descriptor (regular, owned by this user, not writable by
others, never followed through a symlink). What fails a check raises Untrusted, saying which check."""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable

from scorer import digests

NO_LINK = getattr(os, "O_NOFOLLOW", 0)  # POSIX; elsewhere opened_folder refuses anyway
READ_ANY = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)  # O_NONBLOCK: a FIFO never blocks
_NO_LINK = NO_LINK | getattr(os, "O_CLOEXEC", 0)
_READ = READ_ANY | NO_LINK


class Untrusted(Exception):
    """A folder or file that is not this user's alone; the message says why."""


def check(status: os.stat_result, what: str, folder: bool, root_too: bool = False, others: int = 0o022,
          owners: frozenset[int] = frozenset()) -> None:
    """Untrusted unless a folder (or regular file) of this user's (with root_too, or root's; or of one of `owners`)
    without the write bits `others` (group and world: 0o022); the group's write bit is no concern when the group
    is this user's alone (own_group)."""
    if not (stat.S_ISDIR if folder else stat.S_ISREG)(status.st_mode):
        raise Untrusted(f"{what} is not a {'folder' if folder else 'regular file'}")
    if status.st_uid != os.geteuid() and not (root_too and status.st_uid == 0) and status.st_uid not in owners:
        also = "".join(f" or uid {uid}" for uid in sorted(owners - {os.geteuid(), 0}))
        raise Untrusted(f"{what} is owned by uid {status.st_uid}, not by this user (uid {os.geteuid()})"
                        f"{' or root' if root_too and os.geteuid() else ''}{also}")
    if status.st_mode & others & 0o020 and own_group(status.st_gid):
        others &= ~0o020  # the group is this user's alone (a umask of 002): its write bit lets nobody else in
    if status.st_mode & others:
        raise Untrusted(f"{what} is writable by others (mode {stat.S_IMODE(status.st_mode):o})")


@functools.cache
def own_group(gid: int) -> bool:
    """Is gid this user's private group (the user-private-group scheme of Debian, Ubuntu, Fedora): the user's
    primary group, named as the user, with no other member listed?"""
    try:
        import grp
        import pwd

        user = pwd.getpwuid(os.geteuid())
        group = grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return gid == user.pw_gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def _not_a_link(error: OSError, what: str, kind: str) -> Exception:
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # O_NOFOLLOW met a symlink (EMLINK on FreeBSD)
        return Untrusted(f"{what} is a symlink or not a {kind}")
    return error


@contextmanager
def opened_folder(path: Path, create: bool = False, **trusted):
    """The private folder's descriptor; with create, made (0700) if missing and closed to others if it was not.
    FileNotFoundError when it is not there (and not create), Untrusted when it is not private. `trusted`:
    check()'s root_too and owners, for a folder others than this user may own (a package's, installed by root)."""
    if not hasattr(os, "geteuid"):
        raise Untrusted("no file owners to check on this system")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    with _checked_folder(path, None, f"the folder {path}", create, **trusted) as fd:
        yield fd


@contextmanager
def opened_cache_folder(name: str, create: bool = False):
    """The descriptor of `name` in the scorer's cache folder (cache_dir()): both folders private, the second opened
    through the first's descriptor, so that neither a symlink nor a folder others can write on the way leads elsewhere.
    FileNotFoundError when either is missing (and not create), Untrusted when either is not private."""
    root = cache_dir()
    with opened_folder(root, create=create) as parent:
        if create:
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
        with _checked_folder(name, parent, f"the folder {root / name}", create) as fd:
            yield fd


@contextmanager
def _checked_folder(path, parent: int | None, what: str, create: bool, **trusted):
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_LINK, dir_fd=parent)
    except OSError as error:
        raise _not_a_link(error, what, "folder") from None
    try:
        check(os.fstat(fd), what, folder=True, **trusted)
        if create:
            os.fchmod(fd, 0o700)  # one made by an older scorer is 0755: nobody else need read it either
        yield fd
    finally:
        os.close(fd)


@contextmanager
def opened_file(folder: int, name: str, **trusted):
    """The descriptor of the file `name` in the folder, checked (`trusted`: as for opened_folder); FileNotFoundError
    when it is not there."""
    try:
        fd = os.open(name, _READ, dir_fd=folder)
    except OSError as error:
        raise _not_a_link(error, name, "regular file") from None
    try:
        check(os.fstat(fd), name, folder=False, **trusted)
        yield fd
    finally:
        os.close(fd)


def read_all(fd: int, limit: int = 1 << 30) -> bytes:
    """The file's bytes from its start (at most limit)."""
    chunks, size = [], 0
    while size < limit and (chunk := os.pread(fd, min(1 << 20, limit - size), size)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def sha256(data: bytes) -> str:
    return digests.sha256(data).hexdigest()


TEMPORARY = re.compile(r"\..+\.(\d+)\.[0-9a-f]{8}\.tmp")  # write()'s temporary names: .NAME.PID.RANDOM.tmp
STALE_SECONDS = 60  # a temporary file of a writer that is gone is removed once it is this old
ABANDONED_SECONDS = 86_400  # and any temporary file this old (its pid may have been given to another process)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process (or no way to ask): keep its file
    return True


def sweep_temporaries(folder: int, now: float | None = None) -> int:
    """Remove the temporary files write() left in the folder when its writer was killed (kill -9, a lost machine):
    those of a process that is no longer running, once STALE_SECONDS old, and any ABANDONED_SECONDS old.
    Only this user's regular files of write()'s naming are touched; returns how many were removed."""
    now = time.time() if now is None else now
    removed = 0
    for name in os.listdir(folder):
        match = TEMPORARY.fullmatch(name)
        if match is None:
            continue
        try:
            status = os.stat(name, dir_fd=folder, follow_symlinks=False)
            age = now - status.st_mtime
            if (not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid() or age < STALE_SECONDS
                    or (age < ABANDONED_SECONDS and _running(int(match.group(1))))):
                continue
            os.unlink(name, dir_fd=folder)
            removed += 1
        except OSError:
            continue  # gone meanwhile, or not ours to remove
    return removed


def write(folder: int, name: str, data: bytes | Callable[[BinaryIO], object]) -> None:
    """Write name in the folder whole or not at all: a fresh 0600 file (never an existing one), renamed over it.
    data: the bytes, or a function that writes them to the open file (a large file need not be held in memory).
    Temporary files that killed writers left behind are swept first (sweep_temporaries)."""
    sweep_temporaries(folder)
    temporary = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            data(handle) if callable(data) else handle.write(data)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise


def cache_dir() -> Path:
    """The scorer's own cache folder: $SCORER_CACHE_DIR, else $XDG_CACHE_HOME/scorer, else ~/.cache/scorer."""
    root = os.environ.get("SCORER_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scorer"
    return Path(root)
