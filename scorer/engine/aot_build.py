"""Building the ahead-of-time module (scorer.engine.aot loads it): the exported kernels, their argument types (those
the engine's passes use) and the pycc compile into the private cache folder (`scorer warmup`) or into the package
(scorer/engine/prebuilt, by setup.py's build), written whole with its SHA-256."""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack
from pathlib import Path

from scorer import private_files
from scorer.engine.aot import (
    NAME,
    _cpu,
    _keep,
    _prebuilt_wanted,
    _tried,
    _verified,
    enabled,
    module_path,
    package_trust,
    prebuilt_name,
    prebuilt_paths,
)
from scorer.errors import one_line
from scorer.private_files import Untrusted


def ensure_built() -> str:
    """Build the module for this source and machine unless it is there (and passes the checks); say what happened."""
    if not enabled():
        return "turned off (SCORER_AOT=0)"
    for prebuilt in prebuilt_paths() if _prebuilt_wanted() else []:
        try:
            with ExitStack() as stack:
                if _verified(prebuilt, stack, **package_trust()) is not None:
                    return f"ready (compiled with the package): {prebuilt}"
        except (Untrusted, OSError):
            pass  # refused (load() says why): the cache's module is built
    path = module_path()
    try:
        with ExitStack() as stack:
            if _verified(path, stack) is not None:
                return f"ready: {path}"
    except (Untrusted, OSError):
        pass  # built again, over it (a folder that is not private refuses the build too, with its reason)
    try:
        build(path)
    except Exception as error:  # no compiler, pycc missing or broken, a folder that is not private: the JIT kernels serve
        message = one_line(error)
        _keep(path, ".failed", (message + "\n").encode())
        return f"not built (the JIT kernels serve): {message}"
    _keep(path, ".failed", None)
    _tried.pop(path, None)
    return f"built: {path}"


def signatures() -> dict:
    """The exported functions' numba signatures: the types of the arguments the engine passes."""
    import numpy as np
    from numba import typeof, types

    from scorer.engine.id_kernel import IdKernel
    from scorer.kernels.rows import scratch_for
    from scorer.spec.competition import load_competition
    from scorer.truth.ids import from_long

    competition = load_competition("otto")
    truth = from_long(np.array([1, 2]), np.array([0, 1]), np.array([5, 6]), competition.types)
    kernel = IdKernel(competition, truth, 1)
    row_ints, row_values = kernel.rows()
    block = np.zeros(16, np.uint8)
    counts, found = np.zeros(4, np.int64), np.zeros((4, 5), np.int64)
    from scorer.engine.beyond import NO_SIDE

    parse_args = (block, 0, 1, 0, kernel.idspec, kernel.truth, kernel.metric, NO_SIDE, kernel.limits, scratch_for(kernel.kmax),
                  row_ints, row_values, counts, found, 0)
    slots = np.zeros(4, np.int64)
    merge_args = (row_ints, row_values, 0, 0, slots, np.zeros((4, 0)), slots, found, 0, found, 0)
    shape_kernel = _string_kernel()
    strings_rows = shape_kernel.rows()
    strings_args = (block, 0, 1, 0, shape_kernel.shape, shape_kernel.tables, shape_kernel.truth, shape_kernel.metric,
                    shape_kernel.limits, shape_kernel.scratch(), *strings_rows, np.zeros((1, 3), np.int64), counts, found, 0)
    frame_args = _frame_rows_args(kernel, counts, found)
    strided = types.Array(types.int64, 1, "A")
    integers, floats = types.Array(types.int64, 1, "C"), types.Array(types.float64, 1, "C")
    return {  # argument types only: numba infers the return types, as its JIT does
        "parse_block": tuple(typeof(arg) for arg in parse_args),
        "parse_strings_block": tuple(typeof(arg) for arg in strings_args),
        "merge_rows": tuple(typeof(arg) for arg in merge_args),
        "figure_sums": (strided, strided, strided, integers, integers, floats, floats, types.Array(types.int64, 3, "C")),
        "frame_rows": tuple(typeof(arg) for arg in frame_args),
    }


def _frame_rows_args(kernel, counts, found) -> tuple:
    """frame_rows' arguments for a one-row frame, as scorer.engine.frame_pass passes them (its _Job fixes their types)."""
    import numpy as np

    from scorer.engine.frame_pass import _Job
    from scorer.kernels.rows import scratch_for

    empty8, empty64 = np.empty(0, np.uint8), np.empty(0, np.int64)
    lists = (np.array([0, 1], np.int64), empty8, 0, np.array([5], np.int64), empty8, 0, empty64)
    job = _Job((np.frombuffer(b"1_clicks", np.uint8), np.array([0, 8]), empty8, 0), (empty64, empty64, empty64), lists, 1, 0, ())
    row_ints, row_values = kernel.rows()
    return (0, 1, 0, job.ids, job.keys, job.lists, kernel.idspec, kernel.truth, kernel.metric, kernel.max_per_code,
            scratch_for(kernel.kmax)[:3], row_ints, row_values, counts, found, 0)


def _string_kernel():
    """A string-shape kernel over a tiny truth: its arrays have the types every string shape passes."""
    import numpy as np

    from scorer.engine.string_kernel import ShapeKernel
    from scorer.spec.competition import load_competition
    from scorer.truth.strings import StringTable, StringTruth

    names = StringTable.of(np.array(["a", "b"], dtype=object))
    truth = StringTruth(("all",), np.arange(2, dtype=np.int64), np.array([0, 1, 2], np.int64), np.array([0, 1], np.int64),
                        ids=names, item_names=names)
    return ShapeKernel(load_competition("hm"), truth, 1)


def build(path: Path) -> None:
    """Compile the module into path (written whole or not at all, with its SHA-256 beside it)."""
    with private_files.opened_folder(path.parent, create=True) as folder:  # not private: Untrusted, before compiling
        data = _compile()
        private_files.write(folder, path.name, data)  # the module first, then its hash: never a hash without it
        private_files.write(folder, path.name + ".sha256", f"{private_files.sha256(data)}  {path.name}\n".encode())


def build_into_package(folder: Path) -> Path:
    """Compile the module into the package's folder scorer/engine/prebuilt (of a build, or of the source tree for an
    editable install) unless it is there with its hash; any other build there is removed. Readable by all (0644):
    the package is. Raises whatever stops the build (no C compiler: the caller builds a pure wheel)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / prebuilt_name()
    recorded = target.with_name(target.name + ".sha256")
    if target.is_file() and recorded.is_file() and recorded.read_text(encoding="utf-8").split() == [private_files.sha256(target.read_bytes()), target.name]:
        return target
    data = _compile()
    for old in folder.glob(NAME + "-*"):
        old.unlink()
    for path, content in ((target, data), (recorded, f"{private_files.sha256(data)}  {target.name}\n".encode())):
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(content)
        temporary.chmod(0o644)
        os.replace(temporary, path)
    return target


def _compile() -> bytes:
    """Compile the module with pycc in a temporary folder of its own; its bytes."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc's pending-deprecation notice: it is what exists for this today
        import numba.pycc.compiler as pycc_compiler
        from numba.pycc import CC

    from scorer.engine.kernel_set import jit_kernels

    class ReleasingFlags(pycc_compiler.Flags):  # pycc has no nogil option: its wrappers keep the GIL otherwise
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    functions = vars(jit_kernels())
    with tempfile.TemporaryDirectory(prefix="scorer-aot-") as work, warnings.catch_warnings():  # made 0700
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
        return built.read_bytes()
