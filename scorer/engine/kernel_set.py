"""The kernels every scoring pass calls — parse_block (OTTO's shape), parse_strings_block (the string shapes),
merge_rows, figure_sums, frame_rows (data frames) — from the module compiled
ahead of time for this source (scorer.engine.aot) when there is one, else from numba's JIT (cached on disk).

With the compiled module a pass never imports numba: about 0.6 s less start-up and 110 MB less memory
(OTTO size, bench/bench_score.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

_kernels = None


def kernels():
    """The kernel functions (loaded once per process)."""
    global _kernels
    if _kernels is None:
        from scorer.engine import aot

        _kernels = aot.load() or jit_kernels()
    return _kernels


def name() -> str:
    """Which kernels serve, for a score receipt: the ahead-of-time module's file, or numba's JIT and its version."""
    chosen = kernels()
    if isinstance(chosen, SimpleNamespace):
        import numba

        return f"numba-jit {numba.__version__}"
    from pathlib import Path

    return f"ahead-of-time {Path(getattr(chosen, '__file__', '?')).name}"


def jit_kernels() -> SimpleNamespace:
    """The same functions as numba dispatchers."""
    from scorer.kernels.frame_rows import frame_rows
    from scorer.kernels.parse import merge_rows, parse_block
    from scorer.kernels.rank import figure_sums
    from scorer.kernels.string_ids import parse_strings_block

    return SimpleNamespace(parse_block=parse_block, parse_strings_block=parse_strings_block, merge_rows=merge_rows,
                           figure_sums=figure_sums, frame_rows=frame_rows)


@contextmanager
def using(chosen):
    """Run the block with the given kernel set (`scorer warmup` runs its examples on both)."""
    global _kernels
    saved, _kernels = _kernels, chosen
    try:
        yield
    finally:
        _kernels = saved
