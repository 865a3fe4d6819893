"""Checks the release's files (tools/release.sh runs it on dist/); exit 1 naming every problem.

    build/release-tools/bin/python tools/check_wheel.py dist/*

- a platform wheel (cpXY, manylinux) holds every stage's module (scorer.kernels.door.STAGES) under
  scorer/kernels/prebuilt/, each one byte for byte what its build recorded in <module>.sha256 (scorer.kernels.aot imports
  nothing else: an RPATH that auditwheel patched in would make it refuse the module), named with the key of this
  source, this Python's ABI and a generic CPU (scorer.kernels.aot.prebuilt_name: a module built for the build machine's
  CPU would be found on no other), needing only libc and libm and no RUNPATH (nothing for auditwheel to graft, no folder
  of the build machine searched);
- the pure wheel (py3-none-any) and the sdist hold no compiled module;
- every file is of the version in scorer/__init__.py.
Needs pyelftools for the platform wheels (auditwheel's dependency, in tools/release.sh's tool venv).
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from scorer.kernels.aot import BUILD_SOURCES  # noqa: E402  (neither imports numpy or numba)
from scorer.kernels.door import STAGES  # noqa: E402

VERSION = re.search(r'^__version__ = "([^"]+)"', (ROOT / "scorer" / "__init__.py").read_text(), re.M).group(1)
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"}  # in every manylinux policy
PREBUILT = "scorer/kernels/prebuilt/"


def key(sources: dict[str, bytes], cache_tag: str, numpy_major: str, cpu: str) -> str:
    """scorer.kernels.aot's module key (_source_digest, then prebuilt_name's parts), from the wheel's own sources."""
    digest = hashlib.sha256()
    kernels = sorted(name for name in sources if re.fullmatch(r"scorer/kernels/[^/]+\.py", name))
    for name in [*kernels, *(f"scorer/{path}" for path in BUILD_SOURCES)]:
        digest.update(name.rsplit("/", 1)[1].encode() + b"\0" + sources[name])
    for part in (cache_tag, "numpy" + numpy_major, cpu):
        digest.update(part.encode())
    return digest.hexdigest()[:20]


def elf_problems(name: str, data: bytes) -> list[str]:
    from elftools.elf.dynamic import DynamicSection  # imported here: the rest of the checks need no pyelftools
    from elftools.elf.elffile import ELFFile

    dynamic = next(section for section in ELFFile(io.BytesIO(data)).iter_sections() if isinstance(section, DynamicSection))
    needed = {tag.needed for tag in dynamic.iter_tags("DT_NEEDED")}
    paths = [getattr(tag, "rpath", None) or tag.runpath for tag in dynamic.iter_tags() if tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH")]
    return ([f"{name} needs {sorted(needed - SYSTEM_LIBRARIES)} besides libc and libm"] if needed - SYSTEM_LIBRARIES else []) + \
           ([f"{name} has an RPATH/RUNPATH {paths}"] if paths else [])


def platform_wheel(archive: zipfile.ZipFile, python_tag: str) -> list[str]:
    abi = f"cpython-{python_tag[2:]}-x86_64-linux-gnu.so"
    files = {name: archive.read(name) for name in archive.namelist() if name.startswith("scorer/")}
    modules = {m.group(1): (name, m.group(2)) for name in files if (m := re.fullmatch(PREBUILT + r"scorer_(\w+)-([0-9a-f]{20})\." + re.escape(abi), name))}
    problems = [f"no module of stage {stage}" for stage in STAGES if stage not in modules]
    problems += [f"{name}: not a module of this wheel's stages and ABI" for name in files
                 if name.startswith(PREBUILT) and not name.endswith("/") and name.removesuffix(".sha256") not in {path for path, _ in modules.values()}]
    problems += [f"{name} is outside the package's modules" for name in archive.namelist() if name.endswith(".so") and not name.startswith(PREBUILT)]
    absent = [f"scorer/{path}" for path in BUILD_SOURCES if f"scorer/{path}" not in files]
    problems += [f"no {name}, a source the modules' key is made of" for name in absent]
    keys = {} if absent else {key(files, f"cpython-{python_tag[2:]}", major, "generic"): major for major in ("1", "2", "3")}
    for stage, (name, module_key) in sorted(modules.items()):
        recorded = files.get(name + ".sha256", b"").decode().split()
        if recorded != [hashlib.sha256(files[name]).hexdigest(), name.rsplit("/", 1)[1]]:
            problems.append(f"{name}: its bytes are not the ones its build recorded ({name}.sha256: {recorded}): the loader would refuse it")
        if module_key not in keys:
            problems.append(f"{name}: its key is not this source's for {python_tag} and a generic CPU (built with NUMBA_CPU_NAME=generic?)")
        problems += elf_problems(name, files[name])
    return problems


def check(path: Path) -> tuple[list[str], str]:
    """(problems, what was checked)."""
    if path.name.endswith(".tar.gz"):
        with tarfile.open(path) as archive:
            names = archive.getnames()
        problems = [f"{name} is compiled" for name in names if name.endswith(".so") or "/prebuilt/" in name]
        if path.name != f"recsys_scorer-{VERSION}.tar.gz" or f"recsys_scorer-{VERSION}/setup.py" not in names:
            problems.append(f"not the sdist of version {VERSION} with its setup.py")
        return problems, f"{len(names)} files, none compiled"
    m = re.fullmatch(r"recsys_scorer-([^-]+)-(py3|cp3\d+)-(none|cp3\d+)-(any|manylinux_\d+_\d+_x86_64)\.whl", path.name)
    if not m:
        return ["not a release file name (recsys_scorer-V-cpXY-cpXY-manylinux_2_NN_x86_64.whl, -py3-none-any.whl, .tar.gz)"], ""
    version, python_tag, _, platform = m.groups()
    problems = [] if version == VERSION else [f"version {version}, not scorer.__version__ {VERSION}"]
    with zipfile.ZipFile(path) as archive:
        if platform == "any":
            problems += [f"{name} is compiled" for name in archive.namelist() if name.endswith(".so") or name.startswith(PREBUILT)]
            return problems, "pure: no compiled module"
        return problems + platform_wheel(archive, python_tag), f"the {len(STAGES)} stages' modules whole, for a generic CPU, libc and libm only"


def main(paths: list[str]) -> int:
    failed = 0
    for path in map(Path, paths):
        problems, checked = check(path)
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'ok'}  {path.name}: {'; '.join(problems) or checked}")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
