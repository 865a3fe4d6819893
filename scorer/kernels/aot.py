"""The ahead-of-time compiled stage modules (numba.pycc): found, checked and imported, without numba.

Each stage of scorer.kernels.door.STAGES is one extension module, file `scorer_<stage>-<key>`: the key covers the kernels'
source and their build, the interpreter and numpy (and, for warmup's build, the numba and llvmlite versions) and the
CPU it was compiled for, so an edited kernel or another machine simply finds none and the next build serves.
Two builds are looked for, in this order:

1. The package's (setup.py compiles every stage into scorer/kernels/prebuilt/ where a C compiler works), trusted as the
   package's own code is: its folder and files must be root's, this user's or the owner's of this very file (whoever
   can write those could as well edit aot.py). SCORER_AOT=cache skips it.
2. `scorer warmup`'s, in the private cache folder ($SCORER_CACHE_DIR/aot, this user's, 0700).

Either way a module is imported only when neither its folder nor its file is a symlink or writable by others, and the
file has the SHA-256 its build recorded beside it (`<module>.sha256`, `sha256sum -c` reads it). A module that fails a
check is not imported: the next build serves (the cache's, else numba's JIT), and the process says why once, on
stderr. When a build was impossible (no C compiler) its reason is kept beside it (.failed). SCORER_AOT=0 turns both
builds off. The exported functions release the GIL, as the JIT kernels do (nogil).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os
import platform
import sys
import threading
from contextlib import ExitStack
from pathlib import Path

from scorer import private_files
from scorer.digests import sha256
from scorer.errors import one_line
from scorer.kernels.stages import STAGES
from scorer.private_files import Untrusted, cache_dir

PACKAGE = Path(__file__).resolve().parent.parent  # scorer/
# what the modules are compiled from besides scorer/kernels/*.py: the build, and the engine's classes whose arrays give
# the exported kernels their argument types (scorer/engine/kernel_examples.py)
BUILD_SOURCES = ("engine/aot_compile.py", "engine/kernel_examples.py", "engine/id_kernel.py", "engine/string_kernel.py",
                 "engine/table_kernel.py", "engine/impression_kernel.py", "engine/frame_pass.py", "engine/beyond.py",
                 "engine/explain_pass.py", "engine/candidate_pass.py")
PREBUILT = Path(__file__).parent / "prebuilt"  # the modules the package's build compiled, if any
_OWN_CODE = __file__  # whose owner may have written the prebuilt modules: the package's own code
_tried: dict[Path, object] = {}
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("SCORER_AOT", "1") != "0"


def prebuilt_wanted() -> bool:
    return os.environ.get("SCORER_AOT", "1") not in ("0", "cache")


MODULE_NAME = "scorer_kernels"  # every stage module's own name (its PyInit_ symbol): one runtime object file serves all builds


def cpu() -> str:
    """What the code is compiled for: NUMBA_CPU_NAME (as numba's caches), else this host."""
    return os.environ.get("NUMBA_CPU_NAME") or "host"


@functools.cache
def _host_identity() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            lines = [line for line in handle if line.startswith(("model name", "flags"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.machine() + platform.processor()


def _cpu_identity() -> str:
    return cpu() if cpu() != "host" else _host_identity()


def _version_stamp(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return module + ": missing"
    stat = os.stat(spec.origin)
    return f"{spec.origin}:{stat.st_size}:{int(stat.st_mtime)}"  # whole seconds: image layers keep no more


def sources() -> list[Path]:
    """The files whose bytes key the modules: every kernels module, and BUILD_SOURCES."""
    return [*sorted((PACKAGE / "kernels").glob("*.py")), *(PACKAGE / name for name in BUILD_SOURCES)]


@functools.cache
def _source_digest():
    digest = sha256()
    for path in sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest


def _named(stage: str, *parts: str) -> str:
    """The stage module's file name for the kernels' source and these parts (versions, CPU): scorer_<stage>-key.<ABI suffix>."""
    digest = _source_digest().copy()
    for part in parts:
        digest.update(part.encode())
    return f"scorer_{stage}-{digest.hexdigest()[:20]}{importlib.machinery.EXTENSION_SUFFIXES[0]}"


CACHE_SUBFOLDER = "aot"


def cache_folder() -> Path:
    """The private folder of warmup's builds."""
    return cache_dir() / CACHE_SUBFOLDER


def opened_module_folder(path: Path, create: bool = False, **trusted):
    """The checked folder of the module at path (a context manager giving its descriptor): for warmup's builds the cache
    folder too is checked, and the builds' folder opened through it (a cache folder that is a symlink or open to others
    is not used at all, as for the truth cache); for the package's, the folder itself, with `trusted` owners."""
    if not trusted and path.parent == cache_folder():
        return private_files.opened_cache_folder(CACHE_SUBFOLDER, create=create)
    return private_files.opened_folder(path.parent, create=create, **trusted)


def module_path(stage: str) -> Path:
    """Where warmup's build of the stage for this source, these libraries and this CPU lives."""
    import numpy

    return cache_folder() / _named(stage, sys.version, numpy.__version__, _version_stamp("numba"), _version_stamp("llvmlite"),
                                        _cpu_identity())


def prebuilt_name(stage: str, cpu: str | None = None) -> str:
    """The file name of the stage module the package's build compiles for cpu (default: this host's identity, or
    NUMBA_CPU_NAME): it runs wherever the source, the ABI and numpy's major version are the same (numba is not
    needed to run it, so its version is no part of the name)."""
    import numpy

    return _named(stage, sys.implementation.cache_tag, "numpy" + numpy.__version__.split(".")[0], cpu or _cpu_identity())


def prebuilt_paths(stage: str) -> list[Path]:
    """Where a stage module the package's build compiled for this host would be: built for this CPU, or for any (generic)."""
    return [PREBUILT / name for name in dict.fromkeys((prebuilt_name(stage), prebuilt_name(stage, "generic")))]


def package_trust() -> dict:
    """Whose prebuilt modules are trusted: root's, this user's, or that of the owner of this file (the package's code)."""
    return {"root_too": True, "owners": frozenset({os.stat(_OWN_CODE).st_uid})}


def _recorded_hash(folder: int, name: str, **trusted) -> str:
    """The SHA-256 recorded when the module `name` was built, from its checked .sha256 file beside it."""
    try:
        with private_files.opened_file(folder, name + ".sha256", **trusted) as fd:
            fields = private_files.read_all(fd, 4096).decode("ascii", "replace").split()
    except FileNotFoundError:
        raise Untrusted(f"{name} has no recorded SHA-256 (made by an older scorer, or not by `scorer warmup`)") from None
    if len(fields) != 2 or fields[1] != name or len(fields[0]) != 64:
        raise Untrusted(f"the SHA-256 recorded for {name} is unreadable")
    return fields[0]


def verified(path: Path, stack: ExitStack, **trusted) -> int | None:
    """The module's folder's descriptor (open until stack closes) once the module in it passed every check; None
    when no module is built. Raises Untrusted (or OSError) saying why a module that is there must not be imported.
    `trusted`: whose folder and files pass besides this user's (private_files.check; the prebuilt modules')."""
    try:
        folder = stack.enter_context(opened_module_folder(path, **trusted))
        module = stack.enter_context(private_files.opened_file(folder, path.name, **trusted))
    except FileNotFoundError:
        return None
    recorded = _recorded_hash(folder, path.name, **trusted)
    if private_files.sha256(private_files.read_all(module)) != recorded:  # a check of the file, not of a secret: no timing to hide
        raise Untrusted(f"{path.name} is not the file built here: its SHA-256 differs from the recorded one")
    return folder


def keep_note(path: Path, suffix: str, data: bytes | None) -> None:
    """Write (or with None remove) a note beside the module, where the folder is private; else do without it."""
    try:
        with opened_module_folder(path, create=True) as folder:
            if data is None:
                os.unlink(path.name + suffix, dir_fd=folder)
            else:
                private_files.write(folder, path.name + suffix, data)
    except (OSError, Untrusted):
        pass


def _enabled_path(stage: str) -> Path | None:
    """warmup's module path, or None when the modules are turned off or the cache folder cannot be named."""
    if not enabled():
        return None
    try:
        return module_path(stage)
    except OSError:
        return None


def tip(stage: str = "score") -> str | None:
    """A hint for a participant at a terminal while the stage has no module (and no build has failed), else None."""
    path = _enabled_path(stage)
    if path is None or path.is_file() or path.with_name(path.name + ".failed").is_file():
        return None
    if prebuilt_wanted() and any(prebuilt.is_file() for prebuilt in prebuilt_paths(stage)):
        return None
    return "run `scorer warmup` once: it compiles the kernels ahead of time, and every later run starts without numba"


def places(stage: str) -> list[tuple[Path, dict]]:
    """Where the stage's module is looked for, in order, with whose files pass there besides this user's."""
    path = _enabled_path(stage)
    if path is None:
        return []
    prebuilt = [(where, package_trust()) for where in prebuilt_paths(stage) if os.path.lexists(where)] if prebuilt_wanted() else []
    return [*prebuilt, (path, {})]


def load(stage: str):
    """The stage's compiled module if one is built for this source and machine and passes the checks (the package's
    own first, then the cache's), else None (the JIT kernels serve; a module that is there but fails a check is named
    on stderr, once per process)."""
    for where, trusted in places(stage):
        module = _load_once(where, trusted, stage)
        if module is not None:
            return module
    return None


def forget(path: Path) -> None:
    """Look at path again at the next load (a build just wrote it)."""
    _tried.pop(path, None)


def _load_once(path: Path, trusted: dict, stage: str):
    """The module at path once it passed the checks, else None (a refusal said on stderr, once per process)."""
    with _lock:  # kernels are first asked for on several threads at once
        if path not in _tried:
            _tried[path] = _checked_import(path, trusted, stage)
        return _tried[path]


def _checked_import(path: Path, trusted: dict, stage: str):
    with ExitStack() as stack:
        try:
            folder = verified(path, stack, **trusted)
            return None if folder is None else proven(_import(path, folder), stage, path.name)
        except (Untrusted, ImportError, OSError) as error:
            reason = str(error) if isinstance(error, Untrusted) else one_line(error)
            if trusted:
                print(f"scorer: warning: the ahead-of-time kernels installed with the package in {path.parent} were not loaded: "
                      f"{reason}; the ones `scorer warmup` builds, else the JIT kernels, serve (reinstalling the package builds "
                      "them again)", file=sys.stderr)
            else:
                print(f"scorer: warning: the ahead-of-time kernels in {path.parent} were not loaded: {reason}; "
                      "the JIT kernels serve (`scorer warmup` builds them again)", file=sys.stderr)
    return None


IDENTITY = "stage_identity"  # an export of every stage module besides its kernels: identity(stage), compiled in


def identity(stage: str) -> int:
    """What a stage's module built from this source answers when asked which it is: the stage's name and the kernels'
    source, hashed (63 bits)."""
    return int(sha256((_source_digest().hexdigest() + "\0" + stage).encode()).hexdigest()[:15], 16)


def proven(module, stage: str, name: str):
    """The module, once it proved to be the stage's: it exports exactly the stage's kernels and IDENTITY, which answers
    identity(stage). Every stage module has the same init symbol, so another stage's module, or a build of this one
    from other source, imports as well, recorded hash and all; it must not serve."""
    expected = {*STAGES[stage], IDENTITY}
    exports = {attribute for attribute in vars(module) if not attribute.startswith("_")}
    if exports != expected or getattr(module, IDENTITY)() != identity(stage):
        raise Untrusted(f"{name} is not the {stage!r} stage's module built from this source: it "
                        + (f"lacks {', '.join(sorted(expected - exports))}" if expected - exports else
                           f"exports {', '.join(sorted(exports - expected))} besides its kernels" if exports - expected else
                           "answers another stage or source"))
    return module


def _import(path: Path, folder: int):
    """Import the module just hashed.

    The loader opens the file by name again, so between the hash and the import the name could be pointed at
    other bytes. The name is looked up through the checked folder's descriptor (/proc/self/fd/N/name): renaming
    or swapping any folder above it (a cache root others can write to) cannot lead elsewhere, and the folder is
    this user's and closed to everyone else, so only this user, who could as well edit the package, can swap
    the file in that window. (Where /proc is missing, the path checked a moment before is used.)
    """
    through_folder = f"/proc/self/fd/{folder}/{path.name}"
    location = through_folder if os.path.exists(through_folder) else str(path)
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, location)
    # Every stage module has one name, and CPython keeps a single-phase module's first contents by its path and name: a
    # second load of a path it has seen (descriptor numbers come round again) copies them into sys.modules[MODULE_NAME],
    # which would be another stage's module. Nothing is left there, so such a load makes a module of its own (whose
    # identity aot.proven then checks).
    sys.modules.pop(MODULE_NAME, None)
    try:
        module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(MODULE_NAME, location, loader=loader))
        loader.exec_module(module)
    finally:
        sys.modules.pop(MODULE_NAME, None)
    module.__file__ = str(path)  # the descriptor's path means nothing once it is closed
    return module
