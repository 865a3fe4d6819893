"""scorer warmup: build the ahead-of-time kernel modules (scorer.kernels.aot) that are missing, then run every stage's
kernels on tiny built-in examples (scorer.cli.warmup_runs: every way a grader scores, and the other commands) on both
builds, so numba compiles (and caches) its own kernels too, and the two are held to the same results."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

USAGE = "scorer warmup [--competition NAME]... [--quiet]"
EXAMPLES = ("scorer warmup", "scorer warmup --competition otto --competition hm --quiet")
HELP = "compile and cache the kernels of every command and bundled competition (run once, e.g. when building a Docker image)"


def add_arguments(parser) -> None:
    parser.add_argument("--competition", action="append", metavar="NAME",
                        help="warm up for this bundled competition only (repeatable; default: every bundled one)")
    parser.add_argument("--quiet", action="store_true", help="print nothing")


def byte_compile_package() -> None:
    """Write the package's .pyc files where they are missing (where PYTHONDONTWRITEBYTECODE kept imports from it):
    a run then imports them rather than compiling the sources, about 40 ms. A read-only install is left as it is."""
    import compileall

    import scorer

    try:
        compileall.compile_dir(Path(scorer.__file__).parent, quiet=2)
    except OSError:
        pass


def run(args) -> int:
    from scorer.cli.warmup_runs import digest, run
    from scorer.engine import aot_build
    from scorer.kernels import door
    from scorer.spec.competition import bundled_names

    started = time.monotonic()
    names = args.competition or bundled_names()
    built = aot_build.ensure_built()
    byte_compile_package()
    with tempfile.TemporaryDirectory(prefix="scorer-warmup-") as folder:
        for stage in door.STAGES:
            with door.using("any"):  # the ahead-of-time module where this stage has one, else numba's (then run twice)
                compiled = digest(run(stage, Path(folder), names))
            with door.using("jit"):  # numba's kernels, compiled and cached for a run without the module
                jit = digest(run(stage, Path(folder), names))
            if compiled != jit:  # a bug of ours: the modules are not used until it is fixed
                raise RuntimeError(f"the ahead-of-time kernels of {stage!r} gave other results than numba's JIT kernels")
    if not args.quiet:
        print(f"scorer warmup: kernels compiled and cached for {', '.join(names)} in {time.monotonic() - started:.1f} s")
        for stage, status in built.items():
            print(f"ahead-of-time kernels of {stage}: {status}")
    return 0
