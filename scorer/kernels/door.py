"""The one door to the kernels: every caller outside scorer.kernels calls kernel(name).

Each exported kernel belongs to one stage, and each stage is one module compiled ahead of time (scorer.kernels.aot), so
a command loads only the stages it runs, and never numba: kernel(name) is the compiled function when its stage's
module is built and trusted, else numba's JIT dispatcher (its kernels module is imported only then). An exported
kernel takes one set of argument types (scorer/engine/kernel_examples.py holds an example of each, from which the
build takes its signature); a kernel that needs two is exported twice under two names, and the caller names the one
it calls.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from scorer.kernels.stages import JIT_ONLY, STAGE_OF, STAGES  # noqa: F401  (door.STAGES etc., as callers name them)

_served: dict[str, object] = {}
_choice = "any"  # "any": compiled where trusted, else numba's; "jit": numba's; "compiled": compiled only (tests)
_lock = threading.Lock()


def kernel(name: str):
    """The exported kernel `name`: compiled ahead of time where its stage's module serves, else numba's JIT."""
    try:
        return _served[name]
    except KeyError:
        pass
    with _lock:
        if name not in _served:
            module = None if _choice == "jit" else _stage_module(STAGE_OF[name])
            _served[name] = getattr(module, name) if module is not None else jit(name)
        return _served[name]


def jit(name: str):
    """numba's JIT dispatcher of the exported kernel `name`."""
    import importlib

    module, _, function = STAGES[STAGE_OF[name]][name].partition(".")
    return getattr(importlib.import_module(f"scorer.kernels.{module}"), function or name)


def _stage_module(stage: str):
    from scorer.kernels import aot

    module = aot.load(stage)
    if module is None and _choice == "compiled":
        raise LookupError(f"no ahead-of-time module of the kernels' stage {stage!r} serves here")
    return module


def served(stage: str = "score") -> str:
    """Which build serves a stage, for a score receipt: the ahead-of-time module's file, or numba's JIT and its version."""
    from scorer.kernels import aot

    module = None if _choice == "jit" else aot.load(stage)
    if module is None:
        import numba

        return f"numba-jit {numba.__version__}"
    from pathlib import Path

    return f"ahead-of-time {Path(getattr(module, '__file__', '?')).name}"


@contextmanager
def using(choice: str):
    """Run the block with the kernels of one build: "jit" (numba's), "compiled" (the modules' only; a stage without one
    raises LookupError) or "any" (the default: a stage's module where it serves, else numba's). `scorer warmup` and the
    tests run their examples on both builds."""
    global _choice
    saved = _choice
    with _lock:
        _choice = choice
        _served.clear()
    try:
        yield
    finally:
        with _lock:
            _choice = saved
            _served.clear()
