"""The folder numba caches the compiled kernels in, checked before numba loads anything from it.

numba's cache of a kernel is an index (.nbi, a pickle) and data files (.nbc, machine code), loaded as they are:
whoever can write the folder runs code in the scorer, as with a planted ahead-of-time module (scorer.kernels.aot).
prepare() runs when scorer.kernels is first imported, before numba is. It finds the folder numba will use for
scorer/kernels (numba.core.caching's locators, in their order: $NUMBA_CACHE_DIR, else __pycache__ beside the
kernels, else the user's cache folder; the first one it can write) and checks it: the folders are this user's
or root's, not symlinks, not writable by others; the cache files are regular files of this user's or root's
that nobody else who may enter their folder can write (scorer.private_files). A missing folder is made 0700.
A folder that fails is not used: numba gets a private one and one stderr line says why. Where no folder is
writable (a read-only root file system), numba gets the private one too, with a copy of the read-only cache's
checked files. The private folder is $SCORER_CACHE_DIR/numba (0700; compiled into once), else a temporary one
removed at exit. Where none can be made either (a read-only root without a writable /tmp, as another user than the
image's), nothing fails yet: a run on the ahead-of-time modules never imports numba. numba's import, if one comes,
stops with a ConfigError (exit 2) that says what to give it. Where the system has no file owners (Windows) numba is
left as it is.
"""

from __future__ import annotations

import os
import stat
import sys

from scorer import private_files
from scorer.digests import sha1
from scorer.errors import ConfigError
from scorer.private_files import Untrusted, cache_dir

_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
# numba's subfolder for a source folder's kernels (CacheLocator.get_suitable_cache_subpath)
_SUBPATH = f"kernels_{sha1(_KERNELS.encode()).hexdigest()}"
_FILES = (".nbi", ".nbc")
_prepared = False


def prepare() -> None:
    """Leave numba its cache folder if it passes the checks, else point numba at a private one (once a process)."""
    global _prepared
    if _prepared or not hasattr(os, "geteuid"):
        return
    candidates = _candidates()
    writable = next((pair for pair in candidates if _writable(pair[1])), None)
    used = writable or next((pair for pair in candidates if os.path.isdir(pair[1])), None)  # read-only: copied
    names, refusal = [], None
    try:
        if os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES"):
            raise Untrusted("$NUMBA_CACHE_LOCATOR_CLASSES chooses numba's cache folders")
        names = _checked(*used) if used else []
    except (Untrusted, OSError) as error:
        refusal = error
    _tolerate_failed_writes()
    if writable and refusal is None:
        _prepared = True
        return
    root = _private_root()
    where = f"numba's cache {used[1]}" if used else "numba's cache"
    if root is None:  # numba could neither load nor compile here: refused when (if ever) it is imported
        why = f"{where} is not used ({refusal})" if refusal is not None else "no folder numba's kernels could be compiled into is writable here"
        error = ConfigError(f"{why} and no private folder can be made for it (a read-only file system without a writable "
                            "/tmp?): point $NUMBA_CACHE_DIR at a folder of your own, or give the process a writable /tmp "
                            "(docker run --tmpfs /tmp)")
        if "numba" in sys.modules:  # loaded before the scorer: it would read that cache now
            raise error
        _refuse_import("numba", error)
        _prepared = True
        return
    if refusal is not None:
        print(f"scorer: warning: {where} is not used: {refusal}; the kernels are compiled into {root} instead. "
              "Point $NUMBA_CACHE_DIR at a folder of your own, or remove that one.", file=sys.stderr)
    _copy(used[1] if used else "", names, os.path.join(root, _SUBPATH))
    _point_numba_at(root)
    _prepared = True


def _refuse_import(name: str, error: Exception) -> None:
    """Make every later import of the module `name` raise `error` (before any of its code runs)."""
    if not any(isinstance(finder, _Refused) and finder.name == name for finder in sys.meta_path):
        sys.meta_path.insert(0, _Refused(name, error))


class _Refused:
    """A meta path finder and loader that raises its error when one module is imported: numba, where no cache folder can
    serve it. Finding it is no import (aot keys the cache's modules by numba's file: importlib.util.find_spec): its spec
    is found, with no file, and only making the module raises."""

    def __init__(self, name: str, error: Exception):
        self.name, self.error = name, error

    def find_spec(self, name, path, target=None):
        if name == self.name:
            from importlib.machinery import ModuleSpec

            return ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        raise self.error

    def exec_module(self, module):
        raise self.error


def _tolerate_failed_writes() -> None:
    """A cache file numba cannot write (a full disk: ENOSPC, EFBIG, a quota) costs a compile next time, not the run:
    numba's Cache.save_overload is wrapped, once numba.core.caching is loaded, to say so in one warning and go on."""
    caching = sys.modules.get("numba.core.caching")
    if caching is not None:
        _wrap_save(caching)
    elif not any(isinstance(finder, _AfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("numba.core.caching", _wrap_save))


class _AfterImport:
    """A meta path finder that calls then(module) once `name` has been imported (numba is not imported here)."""

    def __init__(self, name: str, then):
        self.name, self.then = name, then

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                self.then(module)

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _wrap_save(caching) -> None:
    save = caching.Cache.save_overload
    if getattr(save, "tolerates_failed_writes", False):
        return
    warned = []

    def save_overload(cache, sig, data):
        try:
            save(cache, sig, data)
        except OSError as error:
            if not warned:
                warned.append(True)
                print(f"scorer: warning: numba's cache {cache.cache_path} cannot be written ({error.strerror or error}): "
                      "the kernels work, and are compiled again next run", file=sys.stderr)

    save_overload.tolerates_failed_writes = True  # type: ignore[attr-defined]
    caching.Cache.save_overload = save_overload


def _candidates() -> list[tuple[str, str]]:
    """(folder numba may be pointed at, the folder of the kernels' files in it) for each of numba's locators."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    in_tree = os.path.join(_KERNELS, "__pycache__")
    if sys.platform == "darwin":
        user = os.path.expanduser("~/Library/Caches/numba")
    else:  # numba.misc.appdirs.user_cache_dir, as numba spells it
        user = os.path.join(os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "numba")
    pairs = [(configured, os.path.join(configured, _SUBPATH))] if configured else []
    return pairs + [(in_tree, in_tree), (user, os.path.join(user, _SUBPATH))]


def _writable(folder: str) -> bool:
    """Whether `folder` could be created (or is) and written to: its nearest existing ancestor is writable."""
    path = os.path.abspath(folder)
    while not os.path.isdir(path):
        if os.path.lexists(path) or os.path.dirname(path) == path:
            return False
        path = os.path.dirname(path)
    return os.access(path, os.W_OK | os.X_OK)


def _checked(root: str, folder: str) -> list[str]:
    """The names of the cache files in folder, once root, folder and those files pass the checks (Untrusted
    if not); a missing folder is made 0700 (numba would make it with the umask's mode)."""
    for path in dict.fromkeys((root, folder)):
        try:
            status = os.lstat(path)
        except FileNotFoundError:
            try:
                os.makedirs(path, 0o700, exist_ok=True)
            except OSError:  # where it cannot be made (a read-only root), nothing is cached to load, nor can be
                return []
            status = os.lstat(path)
        private_files.check(status, f"the folder {path}", folder=True, root_too=True)
    others = (stat.S_IMODE(status.st_mode) & 0o011) << 1  # the write bits of those who may enter the folder
    names = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(_FILES):
                private_files.check(entry.stat(follow_symlinks=False), os.path.join(folder, entry.name), folder=False,
                                    root_too=True, others=others)
                names.append(entry.name)
    return names


def _private_root() -> str | None:
    """A private folder to point numba at, with the kernels' subfolder made: $SCORER_CACHE_DIR/numba if it can be
    made private and passes the checks, else a temporary folder removed at exit; None if neither can be made."""
    import tempfile


    try:
        base = cache_dir()
        with private_files.opened_folder(base, create=True), private_files.opened_folder(base / "numba", create=True):
            _checked(str(base / "numba"), str(base / "numba" / _SUBPATH))
        return str(base / "numba")
    except (Untrusted, OSError, RuntimeError):  # RuntimeError: no home folder to put the cache in
        pass
    try:
        root = tempfile.mkdtemp(prefix="scorer-numba-cache-")
        os.mkdir(os.path.join(root, _SUBPATH), 0o700)
    except OSError:
        return None
    import atexit
    import shutil

    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _copy(source: str, names: list[str], target: str) -> None:
    """Copy the checked cache files the target folder lacks; what cannot be copied is compiled again."""
    import shutil

    for name in names:
        if not os.path.lexists(os.path.join(target, name)):
            try:
                shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
            except OSError:
                pass


def _point_numba_at(root: str) -> None:
    """Make root numba's cache folder: its first locator, read from the environment (numba's config too, if
    numba is loaded already: the kernels' caches are placed when their modules are imported)."""
    os.environ["NUMBA_CACHE_DIR"] = root
    os.environ.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = root
        config.CACHE_LOCATOR_CLASSES = ""
