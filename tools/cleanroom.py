"""Clean-room install tests of the release's files (issue 31): each one installed as a user gets it, then used.

    python3 tools/cleanroom.py [--dist dist] [--python 3.11 ...] [--no-sdist] [--no-pure] [--no-compile] [--goals]

Rooms, one after the other (default: every Python with a platform wheel in --dist, which tools/release.sh fills; the pure
wheel and the sdist with the first of them):
  - each platform wheel (recsys_scorer-V-cpXY-cpXY-manylinux_*_x86_64.whl), no C compiler on PATH;
  - the pure wheel (py3-none-any), no C compiler on PATH;
  - the sdist with no C compiler on PATH (its build must fall back to the pure package) and with one (its build must
    compile every stage's kernels).
A room is a fresh venv of that Python (`python3.X -m venv`), a fresh HOME (so empty caches: the scorer's, numba's, pip's)
and an environment of PATH, HOME, TMPDIR and LANG alone. Without a compiler PATH is the venv's bin and a folder of links
to the system's commands less every C compiler (cc, gcc, c++, clang, ...); the room checks that none is found.
In each room, timed (wall seconds, the 1-minute load beside):
  1. install: `pip install --no-index --find-links WHEELHOUSE FILE`, the venv's own pip, no pip cache. The wheelhouse,
     build/wheelhouse/cpXY, holds the wheels of the dependencies, of the sdist's build requirements and of the tests; it
     is filled from the package index by `pip download --only-binary :all:` before any room, outside the timing. For a
     platform wheel, the same pip then installs the wheel's dependencies alone into a venv of their own, timed too: the
     share of the install that is pip's work on numpy, pandas, pyarrow and numba, not the wheel's;
  2. the installed modules: every stage's ahead-of-time module (scorer.kernels.aot.prebuilt_paths) where the room
     expects them, none where it expects the pure package;
  3. the first and the second `scorer score otto_submission.csv --truth otto_truth.jsonl --format json` (copies of
     fixtures/), the first on empty caches: each score must be tests/reference.py's (plain Python, no scorer code), and
     its receipt must name the kernels the room expects (the package's module, or numba's JIT for the pure package);
  4. where the kernels came compiled: the same score in a fresh process on empty caches leaves numba and llvmlite
     unloaded;
  5. for the wheels: the fast test subset (SUBSET) against the installed package, from a copy of tests/, bench/,
     fixtures/ and pyproject.toml with no scorer/ beside it: every test must pass, none skip (test_no_numba.py, whose
     premise is the modules, is left out for the pure wheel).
Goals (issue 31, for the platform wheels): the install under 15 s and the first score at most 1 s. Each room's figures
are printed against them; a missed goal fails only with --goals (figures vary with the load; a broken room always fails).
Exit 0 when every room passed, 1 naming each failure, 2 when a room cannot be set up (no such Python, no file).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import reference  # noqa: E402  (tests/reference.py: the scoring rules in plain Python, no code of scorer/)

SUBMISSION, TRUTH = "otto_submission.csv", "otto_truth.jsonl"
SUBSET = ("tests/test_no_numba.py", "tests/test_metrics.py", "tests/test_cli.py", "tests/test_examples.py")
NEEDS_MODULES = "tests/test_no_numba.py"
TEST_REQUIREMENTS = ("pytest>=8", "hypothesis>=6.100")
GOALS = {"install": 15.0, "first score": 1.0}  # seconds, issue 31's goals for a platform wheel
COMPILER = re.compile(r"(x86_64-linux-gnu-)?(cc|c\+\+|c89(-gcc)?|c99(-gcc)?|gcc|g\+\+|cpp|clang(\+\+)?|tcc|icx|icc)(-[\d.]+)?")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SETTLE = 600  # seconds a step may take before the room fails as hung
PROBE = ("import sys, io, json, contextlib\nfrom scorer.cli.main import main\n"
         "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
         "print(json.dumps({'exit': code, 'loaded': sorted(m for m in ('numba', 'llvmlite') if m in sys.modules)}))")
MODULES = ("import json\nfrom scorer.kernels import aot, door\n"
           "print(json.dumps({s: [str(p) for p in aot.prebuilt_paths(s) if p.is_file()] for s in door.STAGES}))")


class Failed(Exception):
    """A step of a room went wrong: the message says which and why."""


class SetUp(Exception):
    """A room cannot be set up (no such Python, no release file)."""


@dataclass
class Room:
    name: str
    python: Path
    file: Path
    compiler: bool = False  # a C compiler on PATH
    modules: bool = True  # the install should hold every stage's ahead-of-time module
    tests: tuple[str, ...] = ()
    goals: bool = False  # issue 31's goals apply
    pip_options: tuple[str, ...] = ()  # more options of the timed pip install (--no-compile)
    figures: dict[str, float] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)  # the goals missed
    failures: list[str] = field(default_factory=list)


def python_of(version: str) -> Path:
    """The interpreter of that version: pyenv's, else pythonX.Y on PATH (as tools/release.sh finds it)."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = sorted(root.glob(f"versions/{version}.*/bin/python3")) + [Path(p) for p in [shutil.which(f"python{version}")] if p]
    for candidate in candidates:
        done = subprocess.run([str(candidate), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == version:
            return candidate
    raise SetUp(f"no Python {version} here (looked under {root}/versions and for python{version} on PATH)")


def tag_of(version: str) -> str:
    return "cp" + version.replace(".", "")


def release_files(dist: Path, versions: list[str] | None, sdist: bool, pure: bool) -> list[Room]:
    """The rooms for the release files in dist."""
    wheels = {m.group(1): path for path in sorted(dist.glob("recsys_scorer-*-cp3*-manylinux_*_x86_64.whl"))
              if (m := re.search(r"-(cp3\d+)-\1-", path.name))}
    if versions is None:
        versions = [f"3.{tag[3:]}" for tag in sorted(wheels, key=lambda tag: int(tag[3:]))]
        if not versions:
            raise SetUp(f"no platform wheel in {dist} (tools/release.sh builds them)")
    rooms = []
    for version in versions:
        if tag_of(version) not in wheels:
            raise SetUp(f"no {tag_of(version)} manylinux wheel in {dist} (tools/release.sh {version} builds it)")
        rooms.append(Room(f"{tag_of(version)} wheel", python_of(version), wheels[tag_of(version)], tests=SUBSET, goals=True))
    first = python_of(versions[0])
    if pure:
        rooms.append(Room("pure wheel", first, _one(dist, "recsys_scorer-*-py3-none-any.whl"), modules=False,
                          tests=tuple(test for test in SUBSET if test != NEEDS_MODULES)))
    if sdist:
        file = _one(dist, "recsys_scorer-*.tar.gz")
        rooms.append(Room("sdist, no compiler", first, file, modules=False))
        rooms.append(Room("sdist, compiler", first, file, compiler=True))
    return rooms


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        raise SetUp(f"{len(found)} files {pattern} in {dist}, not one (tools/release.sh builds them)")
    return found[0]


def requirements(rooms: list[Room]) -> list[str]:
    """What the rooms install besides the release file: the wheels' dependencies (their METADATA, extras left out), the
    sdist's build requirements (pyproject.toml) and the tests'."""
    wanted = list(TEST_REQUIREMENTS)
    wheel = next((room.file for room in rooms if room.file.suffix == ".whl"), None)
    if wheel is not None:
        wanted += dependencies_of(wheel)
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted += pyproject["build-system"]["requires"] + pyproject["project"]["dependencies"]
    return list(dict.fromkeys(wanted))


def dependencies_of(wheel: Path) -> list[str]:
    """The wheel's own requirements (its METADATA's Requires-Dist, extras left out)."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]


def fill_wheelhouse(python: Path, folder: Path, wanted: list[str]) -> None:
    """Every wheel the rooms of this Python install, from the package index (files already there are kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(python), "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary", ":all:",
                           "--dest", str(folder), *wanted], capture_output=True, text=True, timeout=SETTLE)
    if done.returncode:
        raise SetUp(f"pip download into {folder} failed (the package index reachable?):\n{done.stdout}{done.stderr}")


def no_compiler_path(folder: Path) -> str:
    """A folder of links to the system's commands, every C compiler left out; PATH's entry for it."""
    folder.mkdir()
    for directory in SYSTEM_PATH.split(":"):
        if not os.path.isdir(directory):
            continue
        for entry in sorted(os.listdir(directory)):
            target = os.path.join(directory, entry)
            if COMPILER.fullmatch(entry) or (folder / entry).exists() or not os.access(target, os.X_OK):
                continue
            (folder / entry).symlink_to(target)
    return str(folder)


def run(room: Room, step: str, argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=SETTLE)
    except subprocess.TimeoutExpired as error:
        raise Failed(f"{step}: no end after {SETTLE} s ({' '.join(argv)})") from error
    seconds = time.perf_counter() - started
    if done.returncode:
        raise Failed(f"{step} exited {done.returncode} ({' '.join(argv)}):\n{_tail(done.stdout + done.stderr)}")
    return seconds, done


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-lines:])


def empty_caches(home: Path) -> None:
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()


def expected_score(folder: Path) -> float:
    rows = reference.read_submission(folder / SUBMISSION, 20)
    return reference.score(rows, reference.read_truth_jsonl(folder / TRUTH))["score"]


def enter(room: Room, base: Path, wheelhouse: Path) -> None:
    """Set the room up, run its steps; its figures and failures go into room."""
    venv, home, work = base / "venv", base / "home", base / "work"
    work.mkdir()
    for name in (SUBMISSION, TRUTH):
        shutil.copy(ROOT / "fixtures" / name, work / name)
    path = SYSTEM_PATH if room.compiler else no_compiler_path(base / "bin")
    env = {"PATH": f"{venv / 'bin'}:{path}", "HOME": str(home), "TMPDIR": str(base / "tmp"), "LANG": "C.UTF-8",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PIP_CONFIG_FILE": os.devnull}
    (base / "tmp").mkdir()
    empty_caches(home)
    python = str(venv / "bin" / "python")
    room.figures["venv"], _ = run(room, "python -m venv", [str(room.python), "-m", "venv", str(venv)], env, work)

    found = [name for name in ("cc", "gcc", "c++", "clang") if shutil.which(name, path=env["PATH"])]
    if room.compiler and not found:
        raise Failed(f"no C compiler on {SYSTEM_PATH} for the room with one")
    if not room.compiler and found:
        raise Failed(f"{found} on the room's PATH, which should hold no C compiler")

    room.figures["load"] = os.getloadavg()[0]
    pip_install = ["-m", "pip", "install", "--no-index", "--find-links", str(wheelhouse), "--no-cache-dir", *room.pip_options]
    room.figures["install"], _ = run(room, "install", [python, *pip_install, str(room.file)], env, work)
    if room.goals:  # the same pip, in a venv of its own, installing the wheel's dependencies alone: the share that is not ours
        alone = base / "dependencies-venv"
        run(room, "python -m venv (dependencies alone)", [str(room.python), "-m", "venv", str(alone)], env, work)
        room.figures["dependencies alone"], _ = run(room, "the dependencies alone",
                                                    [str(alone / "bin" / "python"), *pip_install, *dependencies_of(room.file)], env, work)
        shutil.rmtree(alone, ignore_errors=True)
    _, done = run(room, "the installed modules", [python, "-c", MODULES], env, work)
    modules = json.loads(done.stdout)
    missing, present = [stage for stage, paths in modules.items() if not paths], [stage for stage, paths in modules.items() if paths]
    if room.modules and missing:
        room.failures.append(f"installed without the ahead-of-time modules of {', '.join(missing)}")
    if not room.modules and present:
        room.failures.append(f"installed with ahead-of-time modules of {', '.join(present)}: a compiler was reachable, "
                             "or the pure file holds modules")

    expected = expected_score(work)
    empty_caches(home)
    for run_name in ("first score", "second score"):
        room.figures[run_name], done = run(room, run_name, [str(venv / "bin" / "scorer"), "score", SUBMISSION, "--truth", TRUTH,
                                                            "--format", "json"], env, work)
        result = json.loads(done.stdout)
        if not math.isclose(result["score"], expected, rel_tol=1e-12, abs_tol=1e-15):
            room.failures.append(f"{run_name}: score {result['score']!r}, tests/reference.py's is {expected!r}")
        kernels = result["receipt"]["scorer"]["kernels"]
        if room.modules != kernels.startswith("ahead-of-time "):
            room.failures.append(f"{run_name}: the receipt's kernels are {kernels!r}, "
                                 f"{'the package' if room.modules else 'numba-jit'}'s expected")

    if room.modules:
        empty_caches(home)
        _, done = run(room, "numba probe", [python, "-c", PROBE, "score", SUBMISSION, "--truth", TRUTH], env, work)
        probe = json.loads(done.stdout.strip().splitlines()[-1])
        if probe["exit"] != 0 or probe["loaded"]:
            room.failures.append(f"a score on empty caches exited {probe['exit']} and loaded {probe['loaded'] or 'no numba'}")

    if room.tests:
        run(room, "the tests' requirements", [python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheelhouse),
                                              *TEST_REQUIREMENTS], env, work)
        checkout = base / "checkout"  # tests, bench, fixtures and pyproject.toml (pytest's settings): no scorer/ to import
        for name in ("tests", "bench", "fixtures"):
            shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "data"))
        shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")
        _, done = run(room, "import scorer", [python, "-c", "import scorer; print(scorer.__file__)"], env, checkout)
        if not done.stdout.strip().startswith(str(venv)):
            raise Failed(f"the tests would import scorer from {done.stdout.strip()}, not from the room's venv")
        empty_caches(home)
        report = base / "tests.xml"
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *room.tests]
        try:
            room.figures["tests"], done = run(room, "the fast test subset", argv, env, checkout)
        finally:
            if report.exists():
                suite = ElementTree.parse(report).getroot().find("testsuite")
                room.figures["tests run"] = int(suite.get("tests"))
                room.figures["skipped"] = int(suite.get("skipped"))
        if room.figures["skipped"]:
            room.failures.append(f"{room.figures['skipped']} of the subset's tests skipped:\n{_tail(done.stdout)}")
        if not room.figures["tests run"]:
            room.failures.append("the subset collected no test")


def judge(room: Room) -> None:
    """The goals the room's figures missed; a step the room never reached counts as missed."""
    if room.goals:
        for step, goal in GOALS.items():
            if step not in room.figures:
                room.missed.append(f"{step} not reached")
            elif room.figures[step] > goal:
                room.missed.append(f"{step} {room.figures[step]:.2f} s > {goal:g} s")


def report(room: Room) -> str:
    figures = room.figures
    parts = [f"{name} {figures[name]:.2f} s" for name in ("venv", "install", "dependencies alone", "first score", "second score", "tests")
             if name in figures]
    if "tests run" in figures:
        parts.append(f"{figures['tests run']} tests, {figures['skipped']} skipped")
    if "load" in figures:
        parts.append(f"load {figures['load']:.2f}")
    goals = "" if not room.goals else "; goals " + ("met" if not room.missed else "MISSED: " + ", ".join(room.missed))
    status = "FAIL" if room.failures else "ok"
    how = f", pip install {' '.join(room.pip_options)}" if room.pip_options else ""
    return f"{status:4}  {room.name} ({room.file.name}, {Path(room.python).parent.parent.name}{how}): {', '.join(parts)}{goals}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="the release files (tools/release.sh's output)")
    parser.add_argument("--python", action="append", dest="versions", help="3.11, 3.12, ...: that platform wheel's room (repeatable)")
    parser.add_argument("--no-sdist", dest="sdist", action="store_false", help="no sdist rooms")
    parser.add_argument("--no-pure", dest="pure", action="store_false", help="no pure wheel room")
    parser.add_argument("--goals", action="store_true", help="fail when a platform wheel misses issue 31's goals")
    parser.add_argument("--no-compile", dest="pip_options", action="store_const", const=("--no-compile",), default=(),
                        help="install with pip's --no-compile (no .pyc written by pip: Python writes each at its first import)")
    parser.add_argument("--keep", action="store_true", help="keep the rooms' folders (printed) for a look")
    args = parser.parse_args(argv)
    try:
        rooms = release_files(args.dist.resolve(), args.versions, args.sdist, args.pure)
        for room in rooms:
            room.pip_options = args.pip_options
        wanted = requirements(rooms)
        for python in dict.fromkeys(room.python for room in rooms):
            version = subprocess.run([str(python), "-c", "import sys; print('%d%d' % sys.version_info[:2])"], capture_output=True,
                                     text=True).stdout.strip()
            print(f"cleanroom: the wheelhouse of cp{version} (pip download from the package index)", flush=True)
            fill_wheelhouse(python, ROOT / "build" / "wheelhouse" / f"cp{version}", wanted)
    except SetUp as error:
        print(f"cleanroom: {error}", file=sys.stderr)
        return 2
    failed = False
    for room in rooms:
        print(f"cleanroom: {room.name} ...", flush=True)
        base = Path(tempfile.mkdtemp(prefix=f"cleanroom-{room.name.replace(' ', '').replace(',', '-')}-"))
        try:
            version = subprocess.run([str(room.python), "-c", "import sys; print('%d%d' % sys.version_info[:2])"], capture_output=True,
                                     text=True).stdout.strip()
            enter(room, base, ROOT / "build" / "wheelhouse" / f"cp{version}")
        except Failed as error:
            room.failures.append(str(error))
        finally:
            judge(room)
            if args.keep:
                print(f"cleanroom: kept {base}")
            else:
                shutil.rmtree(base, ignore_errors=True)
        missed = args.goals and room.missed
        failed |= bool(room.failures or missed)
        print(report(room), flush=True)
        for failure in room.failures:
            print(f"      {failure}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
