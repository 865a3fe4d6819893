"""The package's build: setuptools as pyproject.toml configures it, plus every kernel compiled ahead of time.

Where numba.pycc and a C compiler work, every build (`pip wheel`, `pip install`, `pip install -e .`) compiles a
module per kernel stage into the package, scorer/kernels/prebuilt/ (scorer/engine/aot_build.py builds them, on every
core; scorer/kernels/aot.py loads them, with its checks): the wheel is then a platform wheel (cp311-cp311-linux_x86_64,
say), and an editable install gets the modules in place in the source tree (rebuilt only when the kernels' source
changed). Elsewhere the build says why on stderr and makes the pure wheel (py3-none-any), which compiles its kernels
with numba's JIT at first use. The modules are compiled for $NUMBA_CPU_NAME when set (`generic`: any x86-64, for a
wheel that travels), else for this machine's CPU. SCORER_BUILD_AOT=0 builds the pure wheel without trying.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
PREBUILT = Path("scorer", "kernels", "prebuilt")


def compile_kernels(folder: Path) -> bool:
    """Compile the stage modules into folder; True when some are there, False (and why, on stderr) when none can be built."""
    if os.environ.get("SCORER_BUILD_AOT", "1") == "0":
        print("scorer build: SCORER_BUILD_AOT=0: no ahead-of-time kernels (a pure wheel)", file=sys.stderr)
        return False
    sys.path.insert(0, str(HERE))
    saved = os.environ.get("NUMBA_CACHE_DIR")
    try:
        with tempfile.TemporaryDirectory(prefix="scorer-build-numba-") as numba_cache:
            os.environ["NUMBA_CACHE_DIR"] = numba_cache  # nothing of the build's JIT left behind in the source tree
            from scorer.engine import aot_build

            built, failed = aot_build.build_into_package(folder)
        if built:
            print(f"scorer build: ahead-of-time kernels compiled into the package: {', '.join(built)}", file=sys.stderr)
        for stage, reason in failed.items():
            print(f"scorer build: no ahead-of-time kernels of {stage} ({reason}); numba compiles them at first use "
                  "(`scorer warmup`)", file=sys.stderr)
        return bool(built)
    except Exception as error:  # no C compiler, no numba in the build environment, pycc gone: the pure wheel
        message = " ".join(f"{type(error).__name__}: {error}".split())[:500]
        print(f"scorer build: no ahead-of-time kernels ({message}); a pure wheel, whose kernels numba compiles "
              "at first use (`scorer warmup`)", file=sys.stderr)
        return False
    finally:
        sys.path.remove(str(HERE))
        if saved is None:
            os.environ.pop("NUMBA_CACHE_DIR", None)
        else:
            os.environ["NUMBA_CACHE_DIR"] = saved


class BuildWithKernels(build_py):
    """build_py, then the module into the build (or, for an editable install, into the source tree)."""

    def run(self) -> None:
        super().run()
        folder = HERE / PREBUILT if self.editable_mode else Path(self.build_lib) / PREBUILT
        self.distribution.kernels_built = compile_kernels(folder)  # type: ignore[attr-defined]


class WheelOfThisPlatform(bdist_wheel):
    """A platform wheel when the build compiled the module into the package, else the pure wheel."""

    def run(self) -> None:
        if not self.skip_build:
            self.run_command("build")  # run once: bdist_wheel's own run does not build again
        built = getattr(self.distribution, "kernels_built", False)
        self.root_is_pure = not built
        if built:  # the package goes to platlib, as one with extension modules does
            self.distribution.has_ext_modules = lambda: True  # type: ignore[method-assign]
        super().run()


setup(cmdclass={"build_py": BuildWithKernels, "bdist_wheel": WheelOfThisPlatform})
