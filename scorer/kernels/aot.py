"""Ahead-of-time compiled hot kernels (numba.pycc), so that a warm pass starts without numba.

`scorer warmup` compiles parse_block, parse_strings_block, merge_rows, figure_sums and frame_rows with the argument
types the engine passes into an extension module in the cache folder ($SCORER_CACHE_DIR/aot); a pass loads it when it
is there. (Building takes about 13 s, most of it numba compiling and a C compiler linking, so it is
not done in the middle of a participant's first run.) Its name carries a key of the kernels' source, the numba, numpy and Python
versions and the CPU, so an edited kernel or another machine gets its own build. The exported functions
release the GIL, as the JIT kernels do (nogil), so two blocks are still parsed at once.

When a build is impossible (no C compiler, pycc gone from numba) the reason is kept beside it (.failed)
and the JIT kernels are used; the next `scorer warmup` tries again. SCORER_AOT=0 turns the module off.

A module runs inside the scorer, so only one this user built is imported: the folder is private (this user's,
0700, not a symlink), the build's SHA-256 is recorded beside it (.sha256, `sha256sum -c` reads it), and before
the import the file is checked (a regular file of this user's, not writable by others) and hashed. Anything
else (a planted or altered file, a foreign or open folder) is not imported: the JIT kernels serve, and the
process says why once, on stderr.

The package's own build compiles the module too, where a C compiler is there (setup.py; a wheel then is a
platform wheel, and `pip install -e .` builds it in place): scorer/engine/prebuilt/, named for the kernels'
source, the interpreter's ABI, numpy's major version and the CPU it was compiled for. It is tried first, and
trusted as the package's own code is: its folder and file must be root's, this user's or the owner's of this
very file (whoever can write those could as well edit aot.py), not writable by others, not symlinks, and the
file must have the SHA-256 its build recorded beside it. SCORER_AOT=cache skips it (only warmup's module).
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.machinery
import importlib.util
import os
import platform
import sys
from contextlib import ExitStack
from pathlib import Path

from scorer import private_files
from scorer.errors import one_line
from scorer.private_files import Untrusted, cache_dir

NAME = "scorer_hot"  # the extension module's own name (its PyInit_ symbol)
SOURCES = ("kernels/parse.py", "kernels/rank.py", "kernels/kinds.py", "kernels/load.py", "kernels/codes.py",
           "kernels/string_ids.py", "kernels/strings.py", "kernels/frame_rows.py", "kernels/rows.py", "kernels/beyond.py",
           "engine/beyond.py", "engine/aot.py", "engine/aot_build.py")  # engine/beyond.py: the types of parse_block's `side`
PREBUILT = Path(__file__).parent / "prebuilt"  # the module the package's build compiled, if any
_OWN_CODE = __file__  # whose owner may have written the prebuilt module: the package's own code
_tried: dict[Path, object] = {}


def enabled() -> bool:
    return os.environ.get("SCORER_AOT", "1") != "0"


def _prebuilt_wanted() -> bool:
    return os.environ.get("SCORER_AOT", "1") not in ("0", "cache")


def _cpu() -> str:
    """What the code is compiled for: NUMBA_CPU_NAME (as numba's caches), else this host."""
    return os.environ.get("NUMBA_CPU_NAME") or "host"


def _cpu_identity() -> str:
    if _cpu() != "host":
        return _cpu()
    try:
        with open("/proc/cpuinfo") as handle:
            lines = [line for line in handle if line.startswith(("model name", "flags"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.machine() + platform.processor()


def _version_stamp(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return module + ": missing"
    stat = os.stat(spec.origin)
    return f"{spec.origin}:{stat.st_size}:{int(stat.st_mtime)}"  # whole seconds: image layers keep no more


def _named(*parts: str) -> str:
    """The module's file name for the kernels' source and these parts (versions, CPU): NAME-key.<ABI suffix>."""
    digest = hashlib.sha256()
    root = Path(__file__).parent.parent  # scorer/
    for name in SOURCES:
        digest.update((root / name).read_bytes())
    for part in parts:
        digest.update(part.encode())
    return f"{NAME}-{digest.hexdigest()[:20]}{importlib.machinery.EXTENSION_SUFFIXES[0]}"


def module_path() -> Path:
    """Where the build for this source, these libraries and this CPU lives."""
    import numpy

    return cache_dir() / "aot" / _named(sys.version, numpy.__version__, _version_stamp("numba"), _version_stamp("llvmlite"), _cpu_identity())


def prebuilt_name(cpu: str | None = None) -> str:
    """The file name of the module the package's build compiles for cpu (default: this host's identity, or
    NUMBA_CPU_NAME): it runs wherever the source, the ABI and numpy's major version are the same (numba is not
    needed to run it, so its version is no part of the name)."""
    import numpy

    return _named(sys.implementation.cache_tag, "numpy" + numpy.__version__.split(".")[0], cpu or _cpu_identity())


def prebuilt_paths() -> list[Path]:
    """Where a module the package's build compiled for this host would be: built for this CPU, or for any (generic)."""
    return [PREBUILT / name for name in dict.fromkeys((prebuilt_name(), prebuilt_name("generic")))]


def package_trust() -> dict:
    """Whose prebuilt module is trusted: root's, this user's, or that of the owner of this file (the package's code)."""
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


def _verified(path: Path, stack: ExitStack, **trusted) -> int | None:
    """The private folder's descriptor (open until stack closes) once the module in it passed every check; None
    when no module is built. Raises Untrusted (or OSError) saying why a module that is there must not be imported.
    `trusted`: whose folder and files pass besides this user's (private_files.check; the prebuilt module's)."""
    try:
        folder = stack.enter_context(private_files.opened_folder(path.parent, **trusted))
        module = stack.enter_context(private_files.opened_file(folder, path.name, **trusted))
    except FileNotFoundError:
        return None
    recorded = _recorded_hash(folder, path.name, **trusted)
    if not hmac.compare_digest(private_files.sha256(private_files.read_all(module)), recorded):
        raise Untrusted(f"{path.name} is not the file built here: its SHA-256 differs from the recorded one")
    return folder


def _keep(path: Path, suffix: str, data: bytes | None) -> None:
    """Write (or with None remove) a note beside the module, where the folder is private; else do without it."""
    try:
        with private_files.opened_folder(path.parent, create=True) as folder:
            if data is None:
                os.unlink(path.name + suffix, dir_fd=folder)
            else:
                private_files.write(folder, path.name + suffix, data)
    except (OSError, Untrusted):
        pass


def _enabled_path() -> Path | None:
    """The module's path, or None when the module is turned off or the cache folder cannot be named."""
    if not enabled():
        return None
    try:
        return module_path()
    except OSError:
        return None


def tip() -> str | None:
    """A hint for a participant at a terminal while no module is built (and no build has failed), else None."""
    path = _enabled_path()
    if path is None or path.is_file() or path.with_name(path.name + ".failed").is_file():
        return None
    if _prebuilt_wanted() and any(prebuilt.is_file() for prebuilt in prebuilt_paths()):
        return None
    return "run `scorer warmup` once: it compiles the hot kernels ahead of time, and every later run starts without numba"


def load():
    """The compiled module if one is built for this source and machine and passes the checks (the package's own
    first, then the cache's), else None (the JIT kernels serve; a module that is there but fails a check is named
    on stderr, once per process)."""
    path = _enabled_path()
    if path is None:
        return None
    places = [(prebuilt, package_trust()) for prebuilt in prebuilt_paths() if os.path.lexists(prebuilt)] if _prebuilt_wanted() else []
    for where, trusted in [*places, (path, {})]:
        module = _load_once(where, trusted)
        if module is not None:
            return module
    return None


def _load_once(path: Path, trusted: dict):
    """The module at path once it passed the checks, else None (a refusal said on stderr, once per process)."""
    if path in _tried:
        return _tried[path]
    module = None
    with ExitStack() as stack:
        try:
            folder = _verified(path, stack, **trusted)
            if folder is not None:
                module = _import(path, folder)
        except (Untrusted, ImportError, OSError) as error:
            reason = str(error) if isinstance(error, Untrusted) else one_line(error)
            if trusted:
                print(f"scorer: warning: the ahead-of-time kernels installed with the package in {path.parent} were not loaded: "
                      f"{reason}; the ones `scorer warmup` builds, else the JIT kernels, serve (reinstalling the package builds "
                      "them again)", file=sys.stderr)
            else:
                print(f"scorer: warning: the ahead-of-time kernels in {path.parent} were not loaded: {reason}; "
                      "the JIT kernels serve (`scorer warmup` builds them again)", file=sys.stderr)
    _tried[path] = module
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
    loader = importlib.machinery.ExtensionFileLoader(NAME, location)
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(NAME, location, loader=loader))
    loader.exec_module(module)
    module.__file__ = str(path)  # the descriptor's path means nothing once it is closed
    return module
