"""Compiling one stage's ahead-of-time module (scorer.engine.aot_build decides which and where): its exported kernels
with the numba types of their examples (scorer.engine.kernel_examples), by numba.pycc, the wrappers releasing the GIL.
What this module does is part of the modules' key (scorer.kernels.aot.BUILD_SOURCES)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from scorer.kernels import aot


def signatures(stage: str) -> dict[str, tuple]:
    """The stage's exported functions' numba signatures: the types of their examples' arguments (numba infers the
    return types, as its JIT does)."""
    from numba import typeof

    from scorer.engine.kernel_examples import examples

    return {name: tuple(typeof(argument) for argument in arguments) for name, arguments in examples(stage).items()}


def compile_stage(stage: str) -> bytes:
    """Compile one stage's module with pycc in a temporary folder of its own; its bytes."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc's pending-deprecation notice: it is what exists for this today
        import numba.pycc.compiler as pycc_compiler

    from scorer.kernels import door

    class ReleasingFlags(pycc_compiler.Flags):  # pycc has no nogil option: its wrappers keep the GIL otherwise
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    with tempfile.TemporaryDirectory(prefix="scorer-aot-") as work, warnings.catch_warnings():  # made 0700
        warnings.simplefilter("ignore")
        cc = _compiler()(aot.MODULE_NAME)
        cc.output_dir = work
        cc.target_cpu = aot.cpu()
        cc.verbose = False
        for export, signature in signatures(stage).items():
            cc.export(export, signature)(door.jit(export).py_func)
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()  # pycc types with the JIT's registries, which load on first use
        cpu_target.typing_context.refresh()
        plain = pycc_compiler.Flags
        pycc_compiler.Flags = ReleasingFlags
        try:
            cc.compile()
        finally:
            pycc_compiler.Flags = plain
        (built,) = Path(work).glob(f"{aot.MODULE_NAME}*")
        return built.read_bytes()


_runtime_objects: list[str] = []


def _compiler():
    """pycc's CC, compiling its C runtime (the same for every stage: the modules share one name) once per process,
    without debug information."""
    import atexit
    import shutil

    from numba.pycc import CC

    class OneRuntime(CC):
        def _compile_mixins(self, build_dir):
            if not _runtime_objects:
                folder = tempfile.mkdtemp(prefix="scorer-aot-runtime-")
                atexit.register(shutil.rmtree, folder, True)
                _runtime_objects.extend(self._toolchain.compile_objects(
                    self._get_mixin_sources(), folder, include_dirs=self._toolchain.get_python_include_dirs(),
                    macros=self._get_mixin_defines(), extra_cflags=[*self._get_extra_cflags(), "-g0"]))
            return list(_runtime_objects)

    return OneRuntime
