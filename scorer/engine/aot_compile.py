"""Compiling one stage's ahead-of-time module (scorer.engine.aot_build decides which and where): its exported kernels
with the numba types of their examples (scorer.engine.kernel_examples), by numba.pycc, the wrappers releasing the GIL.
What this module does is part of the modules' key (scorer.kernels.aot.BUILD_SOURCES)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from scorer.kernels import aot


def signatures(stage: str) -> dict[str, tuple]:
    """The stage's exported functions' numba signatures: the types of their examples' arguments (numba infers the
    return types, as its JIT does)."""
    from numba import typeof

    from scorer.engine.kernel_examples import examples

    return {name: tuple(typeof(argument) for argument in arguments) for name, arguments in examples(stage).items()}


def compile_stage(stage: str, *, throwaway: bool = False) -> bytes:
    """Compile one stage's module with pycc in a temporary folder of its own; its bytes. throwaway: this process exits
    after its compiles (a build's worker), so the njit helpers the kernels call are compiled for linking only
    (_helpers_for_linking_only)."""
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
        cc.export(aot.IDENTITY, "int64()")(_identity_of(stage))
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()  # pycc types with the JIT's registries, which load on first use
        cpu_target.typing_context.refresh()
        plain = pycc_compiler.Flags
        pycc_compiler.Flags = ReleasingFlags
        try:
            with _helpers_for_linking_only() if throwaway else nullcontext(), _rewrites_where_they_match():
                cc.compile()
        finally:
            pycc_compiler.Flags = plain
        (built,) = Path(work).glob(f"{aot.MODULE_NAME}*")
        return built.read_bytes()


def _identity_of(stage: str):
    """The function a stage's module answers aot.proven with: its stage and source, as a constant."""
    answer = aot.identity(stage)

    def stage_identity():
        return answer

    return stage_identity


@contextmanager
def _helpers_for_linking_only():
    """pycc links the IR of the njit helpers the exported kernels call (numba's JIT compiles them, as it types the calls)
    into the module, and optimizes that whole; so in a process that only compiles, the helpers need no machine code of
    their own and none of the wrappers that call them from Python or C (pycc compiles the exports so: no_cpython_wrapper,
    no_cfunc_wrapper). Numba's JIT code library is made to emit no machine code, and each kernels module's dispatcher
    compiles without wrappers and without its on-disk cache (an overload without its Python wrapper must not be written
    there); the compiled module is the same. Their overloads cannot be called from Python after this: only for a
    process that exits after its compiles (throwaway)."""
    from numba.core.caching import NullCache
    from numba.core.codegen import JITCodeLibrary
    from numba.core.registry import CPUDispatcher

    dispatchers = {id(value): value for name, module in list(sys.modules.items()) if name.startswith("scorer.kernels.")
                   for value in vars(module).values() if isinstance(value, CPUDispatcher)}.values()
    saved = [(dispatcher, dict(dispatcher.targetoptions), dispatcher._cache) for dispatcher in dispatchers]
    finalize = JITCodeLibrary._finalize_specific

    def no_machine_code(library):
        library._codegen._scan_and_fix_unresolved_refs(library._final_module)  # as numba's, without finalize_object

    JITCodeLibrary._finalize_specific = no_machine_code
    for dispatcher, _, _ in saved:
        dispatcher.targetoptions.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)  # the dict its compiler reads
        dispatcher._cache = NullCache()
    try:
        yield
    finally:
        JITCodeLibrary._finalize_specific = finalize
        for dispatcher, options, cache in saved:
            dispatcher.targetoptions.clear()
            dispatcher.targetoptions.update(options)
            dispatcher._cache = cache


@contextmanager
def _rewrites_where_they_match():
    """numba's after-inference rewrites (array expressions, constant getitems, arrays of constant lists) run only on a
    function where one of them matches: none matches a kernel today, and the pass's IR bookkeeping (ir.Del insertion,
    liveness) costs a few percent of a compile for nothing; the modules are the same byte for byte. A rewrite this does
    not know of (a newer numba's) runs everywhere, as before."""
    from numba.core import rewrites, typed_passes
    from numba.core.inline_closurecall import RewriteArrayOfConsts
    from numba.core.rewrites.static_getitem import RewriteStringLiteralGetitems, RewriteStringLiteralSetitems
    from numba.np.ufunc.array_exprs import RewriteArrayExprs

    run_pass = typed_passes.NopythonRewrites.run_pass
    known = {RewriteArrayExprs, RewriteStringLiteralGetitems, RewriteStringLiteralSetitems, RewriteArrayOfConsts}

    def matches(state) -> bool:
        kinds = rewrites.rewrite_registry.rewrites["after-inference"]
        if not set(kinds) <= known:
            return True
        blocks = list(state.func_ir.blocks.values())
        if any(next(block.find_exprs(op="build_list"), None) is not None for block in blocks):
            return True  # RewriteArrayOfConsts's match reads the ir.Del the pass inserts first: any list built is a match
        checks = [kind(state) for kind in kinds if kind is not RewriteArrayOfConsts]  # one of each a function, as the pass
        return any(check.match(state.func_ir, block, state.typemap, state.calltypes) for check in checks for block in blocks)

    def where_they_match(self, state):
        return run_pass(self, state) if matches(state) else False

    typed_passes.NopythonRewrites.run_pass = where_they_match
    try:
        yield
    finally:
        typed_passes.NopythonRewrites.run_pass = run_pass


_runtime_objects: list[str] = []
_runtime_shared_in: list[Path] = []  # a build's folder where its first worker compiles the C runtime for all (share_runtime)
RUNTIME_LIST = "runtime-objects"  # in that folder: the objects' paths, one a line, written once they are all there
RUNTIME_WAIT = 300.0  # seconds a worker waits for them at its first link, before it compiles its own


def share_runtime(folder: Path, compile_it: bool) -> None:
    """A build's workers compile pycc's C runtime once between them: the one with compile_it compiles it into folder now,
    before its stages (the list empty if that failed); the others take it from there when they link their first module
    (waiting for the list; they compile their own if it is empty or late)."""
    if not compile_it:
        _runtime_shared_in[:] = [folder]
        return
    objects: list[str] = []
    try:
        objects = _compiler()(aot.MODULE_NAME).compile_runtime(str(folder))
        _runtime_objects[:] = objects
    except Exception:  # no compiler, say: each stage's compile says why
        pass
    finally:
        temporary = folder / f".{RUNTIME_LIST}.tmp"
        temporary.write_text("".join(f"{path}\n" for path in objects), encoding="utf-8")
        os.replace(temporary, folder / RUNTIME_LIST)


def _shared_runtime() -> list[str]:
    """The runtime's objects another worker of this build compiled (share_runtime), or [] (none shared, failed, late)."""
    if not _runtime_shared_in:
        return []
    listed = _runtime_shared_in[0] / RUNTIME_LIST
    deadline = time.monotonic() + RUNTIME_WAIT
    while not listed.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    objects = listed.read_text(encoding="utf-8").splitlines() if listed.exists() else []
    return objects if objects and all(Path(path).is_file() for path in objects) else []


def _compiler():
    """pycc's CC, compiling its C runtime (the same for every stage: the modules share one name) once per process, or
    once per build (share_runtime), without debug information."""
    import atexit
    import shutil

    from numba.pycc import CC

    class OneRuntime(CC):
        def _compile_mixins(self, build_dir):
            if not _runtime_objects:
                objects = _shared_runtime()
                if not objects:
                    folder = tempfile.mkdtemp(prefix="scorer-aot-runtime-")
                    atexit.register(shutil.rmtree, folder, True)
                    objects = self.compile_runtime(folder)
                _runtime_objects.extend(objects)
            return list(_runtime_objects)

        def compile_runtime(self, folder: str) -> list[str]:
            return self._toolchain.compile_objects(
                self._get_mixin_sources(), folder, include_dirs=self._toolchain.get_python_include_dirs(),
                macros=self._get_mixin_defines(), extra_cflags=[*self._get_extra_cflags(), "-g0"])

    return OneRuntime
