"""Ahead-of-time compiled hot kernels (numba.pycc), so that a warm pass starts without numba.

`scorer warmup` compiles parse_block, parse_strings_block, merge_rows and figure_sums with the argument
types the engine passes into an extension module in the cache folder ($SCORER_CACHE_DIR/aot); a pass loads it when it
is there. (Building takes about 13 s, most of it numba compiling and a C compiler linking, so it is
not done in the middle of a participant's first run.) Its name carries a key of the kernels' source, the numba, numpy and Python
versions and the CPU, so an edited kernel or another machine gets its own build. The exported functions
release the GIL, as the JIT kernels do (nogil), so two blocks are still parsed at once.

When a build is impossible (no C compiler, pycc gone from numba) the reason is kept beside it (.failed)
and the JIT kernels are used; the next `scorer warmup` tries again. SCORER_AOT=0 turns the module off.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

NAME = "scorer_hot"  # the extension module's own name (its PyInit_ symbol)
SOURCES = ("kernels/parse.py", "kernels/rank.py", "kernels/kinds.py", "kernels/load.py", "kernels/codes.py", "kernels/shapes.py",
           "kernels/strings.py", "kernels/beyond.py", "beyond.py", "aot.py")  # beyond.py: the types of parse_block's `side`
_tried: dict[Path, object] = {}


def enabled() -> bool:
    return os.environ.get("SCORER_AOT", "1") != "0"


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
    return f"{spec.origin}:{stat.st_size}:{stat.st_mtime_ns}"


def module_path() -> Path:
    """Where the build for this source, these libraries and this CPU lives."""
    from scorer.truth import cache_dir

    digest = hashlib.sha256()
    root = Path(__file__).parent
    for name in SOURCES:
        digest.update((root / name).read_bytes())
    import numpy

    for part in (sys.version, numpy.__version__, _version_stamp("numba"), _version_stamp("llvmlite"), _cpu_identity()):
        digest.update(part.encode())
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return cache_dir() / "aot" / f"{NAME}-{digest.hexdigest()[:20]}{suffix}"


def ensure_built() -> str:
    """Build the module for this source and machine unless it is there; say what happened."""
    if not enabled():
        return "turned off (SCORER_AOT=0)"
    path = module_path()
    failed = path.with_name(path.name + ".failed")
    if path.is_file():
        return f"ready: {path}"
    try:
        build(path)
    except Exception as error:  # no compiler, pycc missing or broken: the JIT kernels serve
        message = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        try:
            failed.parent.mkdir(parents=True, exist_ok=True)
            failed.write_text(message + "\n")
        except OSError:
            pass
        return f"not built (the JIT kernels serve): {message}"
    failed.unlink(missing_ok=True)
    _tried.pop(path, None)
    return f"built: {path}"


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
    return "run `scorer warmup` once: it compiles the hot kernels ahead of time, and every later run starts without numba"


def load():
    """The compiled module if it is built for this source and machine, else None (the JIT kernels serve)."""
    path = _enabled_path()
    if path is None:
        return None
    if path in _tried:
        return _tried[path]
    module = None
    if path.is_file():
        try:
            spec = importlib.util.spec_from_file_location(NAME, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except (ImportError, OSError):
            module = None
    _tried[path] = module
    return module


def signatures() -> dict:
    """The exported functions' numba signatures: the types of the arguments the engine passes."""
    import numpy as np
    from numba import typeof, types

    from scorer.competition import load_competition
    from scorer.engine import _Kernel
    from scorer.kernels.rows import scratch_for
    from scorer.truth import from_long

    competition = load_competition("otto")
    truth = from_long(np.array([1, 2]), np.array([0, 1]), np.array([5, 6]), competition.types)
    kernel = _Kernel(competition, truth, 1)
    row_ints, row_values = kernel.rows()
    block = np.zeros(16, np.uint8)
    counts, found = np.zeros(4, np.int64), np.zeros((4, 5), np.int64)
    from scorer.beyond import NO_SIDE

    parse_args = (block, 0, 1, 0, kernel.idspec, kernel.truth, kernel.metric, NO_SIDE, kernel.limits, scratch_for(kernel.kmax),
                  row_ints, row_values, counts, found, 0)
    slots = np.zeros(4, np.int64)
    merge_args = (row_ints, row_values, 0, 0, slots, np.zeros((4, 0)), slots, found, 0, found, 0)
    shape_kernel = _string_kernel()
    strings_rows = shape_kernel.rows()
    strings_args = (block, 0, 1, 0, shape_kernel.shape, shape_kernel.tables, shape_kernel.truth, shape_kernel.metric,
                    shape_kernel.limits, shape_kernel.scratch(), *strings_rows, np.zeros((1, 3), np.int64), counts, found, 0)
    strided = types.Array(types.int64, 1, "A")
    integers, floats = types.Array(types.int64, 1, "C"), types.Array(types.float64, 1, "C")
    return {  # argument types only: numba infers the return types, as its JIT does
        "parse_block": tuple(typeof(arg) for arg in parse_args),
        "parse_strings_block": tuple(typeof(arg) for arg in strings_args),
        "merge_rows": tuple(typeof(arg) for arg in merge_args),
        "figure_sums": (strided, strided, strided, integers, integers, floats, floats, floats),
    }


def _string_kernel():
    """A string-shape kernel over a tiny truth: its arrays have the types every string shape passes."""
    import numpy as np

    from scorer.competition import load_competition
    from scorer.shapes import ShapeKernel
    from scorer.string_truth import StringTable, StringTruth

    names = StringTable.of(np.array(["a", "b"], dtype=object))
    truth = StringTruth(("all",), np.arange(2, dtype=np.int64), np.array([0, 1, 2], np.int64), np.array([0, 1], np.int64),
                        ids=names, item_names=names)
    return ShapeKernel(load_competition("hm"), truth, 1)


def build(path: Path) -> None:
    """Compile the module into path (written whole or not at all)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc's pending-deprecation notice: it is what exists for this today
        import numba.pycc.compiler as pycc_compiler
        from numba.pycc import CC

    from scorer.kernels.hot import jit_kernels

    class ReleasingFlags(pycc_compiler.Flags):  # pycc has no nogil option: its wrappers keep the GIL otherwise
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    functions = vars(jit_kernels())
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as work, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cc = CC(NAME)
        cc.output_dir = work
        cc.target_cpu = _cpu()
        cc.verbose = False
        for name, signature in signatures().items():
            cc.export(name, signature)(functions[name].py_func)
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()  # pycc types with the JIT's registries, which load on first use
        cpu_target.typing_context.refresh()
        plain = pycc_compiler.Flags
        pycc_compiler.Flags = ReleasingFlags
        try:
            cc.compile()
        finally:
            pycc_compiler.Flags = plain
        (built,) = Path(work).glob(f"{NAME}*")
        shutil.move(str(built), str(path.with_name(path.name + ".tmp")))
        os.replace(path.with_name(path.name + ".tmp"), path)
