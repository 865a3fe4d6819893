"""Building the ahead-of-time stage modules (scorer.kernels.aot loads them) where they are missing: into the private
cache folder (`scorer warmup`) or into the package (scorer/kernels/prebuilt, by setup.py's build), written whole with
their SHA-256. The stages are compiled (scorer.engine.aot_compile) in parallel processes, one numba import each."""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from scorer import private_files
from scorer.engine.aot_compile import compile_stage, share_runtime
from scorer.errors import one_line
from scorer.kernels import aot
from scorer.kernels.door import STAGES
from scorer.private_files import Untrusted

# CPU-seconds each stage's module takes to compile (bench/bench_build.py --timeline, load 0.8-1.3); a
# family's stages share helpers, which numba compiles once per process: a family goes to one worker, in the order listed
COST = {"score": 13.2, "strings": 11.2, "explain": 4.8, "prepare": 11.5, "resample": 9.8, "candidates": 13.0, "partitions": 2.2,
        "audit": 0.8, "solution": 0.9, "impressions": 3.0}
FAMILIES = (("score", "strings", "explain"),)
CLAIM = "--claim"
PROGRESS = "SCORER_BUILD_PROGRESS"  # set for the workers of the package's build: each says on stderr when a stage is done  # in a worker's arguments: the stages after it are compiled by whichever worker claims each first


def ensure_built() -> dict[str, str]:
    """Build the stage modules for this source and machine that are not there (or fail the checks); per stage, what
    happened ("ready ...", "built ...", "not built ...")."""
    if not aot.enabled():
        return dict.fromkeys(STAGES, "turned off (SCORER_AOT=0)")
    status = {stage: _ready(stage) for stage in STAGES}
    missing = [stage for stage, said in status.items() if said is None]
    try:
        with private_files.opened_cache_folder(aot.CACHE_SUBFOLDER, create=True):
            pass
    except (Untrusted, OSError) as error:  # not private: nothing compiled, nothing written there
        return {stage: said or f"not built (the JIT kernels serve): {one_line(error)}" for stage, said in status.items()}
    for stage, outcome in zip(missing, _compiled_each(missing)):
        path = aot.module_path(stage)
        try:
            if isinstance(outcome, str):  # no compiler, pycc missing or broken: the JIT kernels serve
                raise RuntimeError(outcome)
            _write_private(path, outcome)
        except (RuntimeError, Untrusted, OSError) as error:
            reason = str(error) if isinstance(error, RuntimeError) else one_line(error)
            aot.keep_note(path, ".failed", (reason + "\n").encode())
            status[stage] = f"not built (the JIT kernels serve): {reason}"
            continue
        aot.keep_note(path, ".failed", None)
        aot.forget(path)
        status[stage] = f"built: {path}"
    return status


def _ready(stage: str) -> str | None:
    """What serves the stage when a module that passes the checks is there, else None."""
    for where, trusted in aot.places(stage):
        try:
            with ExitStack() as stack:
                if aot.verified(where, stack, **trusted) is not None:
                    return f"ready (compiled with the package): {where}" if trusted else f"ready: {where}"
        except (Untrusted, OSError):
            pass  # refused (load() says why): built again, into the cache
    return None


def _write_private(path: Path, data: bytes) -> None:
    """The module into the private folder (written whole or not at all), with its SHA-256 beside it."""
    with aot.opened_module_folder(path, create=True) as folder:  # not private: Untrusted
        private_files.write(folder, path.name, data)  # the module first, then its hash: never a hash without it
        private_files.write(folder, path.name + ".sha256", f"{private_files.sha256(data)}  {path.name}\n".encode())


def build_into_package(folder: Path, stages: tuple[str, ...] = tuple(STAGES)) -> tuple[list[str], dict[str, str]]:
    """Compile the stage modules into the package's folder scorer/kernels/prebuilt (of a build, or of the source tree for
    an editable install) unless they are there with their hashes; any other build there is removed (a few `stages`
    only: for a scratch copy, such as bench_stages' instruction counts). Readable by all (0644): the package is. (The
    stages whose module is there, {stage: why it could not be built}: no C compiler, every stage.)"""
    folder.mkdir(parents=True, exist_ok=True)
    targets = {stage: folder / aot.prebuilt_name(stage) for stage in stages}
    missing = [stage for stage, target in targets.items() if not _whole(target)]
    if missing:  # pip shows this only with -v (its spinner says "still running" meanwhile)
        print(f"scorer build: compiling {len(missing)} kernel stages ahead of time on {min(len(missing), os.cpu_count() or 1)} "
              f"processes (about {sum(COST.get(stage, 10.0) for stage in missing):.0f} CPU-seconds; a minute or more on 2 cores)",
              file=sys.stderr, flush=True)
    outcomes = dict(zip(missing, _compiled_each(missing, progress=True)))
    failed = {stage: outcome for stage, outcome in outcomes.items() if isinstance(outcome, str)}
    for old in folder.glob("scorer_*"):
        if old.name.removesuffix(".sha256") not in {target.name for stage, target in targets.items() if stage not in failed}:
            old.unlink()
    for stage, data in outcomes.items():
        if isinstance(data, bytes):
            target = targets[stage]
            for path, content in ((target, data), (_hash_file(target), f"{private_files.sha256(data)}  {target.name}\n".encode())):
                temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                temporary.write_bytes(content)
                temporary.chmod(0o644)
                os.replace(temporary, path)
    return [stage for stage in stages if stage not in failed], failed


def _hash_file(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _whole(target: Path) -> bool:
    recorded = _hash_file(target)
    return target.is_file() and recorded.is_file() and recorded.read_text(encoding="utf-8").split() == [private_files.sha256(target.read_bytes()),
                                                                                        target.name]


def _compiled_each(stages: list[str], progress: bool = False) -> list[bytes | str]:
    """Each stage's module bytes (or why it could not be built), compiled in parallel processes, one per core at most (each
    imports numba once and compiles its families, then claims the other stages one at a time, the largest first, until
    none is left); a single stage is compiled here. progress: each stage compiled is said on stderr (the package's build)."""
    if len(stages) <= 1:
        return [_compiled_or_error(stage) for stage in stages]
    import subprocess

    shares, claimable = _shares(stages, min(len(stages), os.cpu_count() or 1))
    package_root = str(Path(__file__).resolve().parent.parent.parent)  # where `import scorer` finds this package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (package_root, os.environ.get("PYTHONPATH")))),
           PROGRESS: "1" if progress else ""}
    with tempfile.TemporaryDirectory(prefix="scorer-aot-") as out:
        workers = [subprocess.Popen([sys.executable, "-c", "import sys; from scorer.engine.aot_build import worker; worker(*sys.argv[1:])",
                                     out, str(number), *share, CLAIM, *claimable], env=env) for number, share in enumerate(shares)]
        for process in workers:
            process.wait()
        return [_outcome(Path(out), stage) for stage in stages]


def _shares(stages: list[str], workers: int) -> tuple[list[list[str]], list[str]]:
    """The families split between the workers (a family at a time, the longest to compile first, to the least loaded
    worker by COST; the lightest share first, since the first worker also compiles the C runtime), and the stages of no
    family, the longest first, for the workers to claim as each comes free."""
    families = [[stage for stage in family if stage in stages] for family in FAMILIES]
    shares: list[list[str]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for family in sorted(filter(None, families), key=lambda family: -sum(COST[stage] for stage in family)):
        least = loads.index(min(loads))
        shares[least] += family
        loads[least] += sum(COST[stage] for stage in family)
    claimable = sorted((stage for stage in stages if not any(stage in family for family in FAMILIES)), key=lambda stage: -COST[stage])
    return [shares[worker] for worker in sorted(range(workers), key=loads.__getitem__)], claimable


def worker(out: str, number: str, *stages: str) -> None:
    """A worker process: compile each stage of its share, then each of the stages after CLAIM that no other worker has
    claimed yet, into out/<stage>, or say why not in out/<stage>.failed; the first (number 0) compiles pycc's C runtime
    into out for all of them first (share_runtime)."""
    share_runtime(Path(out), compile_it=number == "0")
    split = stages.index(CLAIM)
    for stage in itertools.chain(stages[:split], (stage for stage in stages[split + 1 :] if _claimed(Path(out), stage))):
        started = time.perf_counter()
        outcome = _compiled_or_error(stage, throwaway=True)
        name = stage if isinstance(outcome, bytes) else stage + ".failed"
        (Path(out) / name).write_bytes(outcome if isinstance(outcome, bytes) else outcome.encode())
        if os.environ.get(PROGRESS):
            done = "compiled" if isinstance(outcome, bytes) else "could not compile"
            print(f"scorer build: {done} the {stage} stage in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)


def _claimed(out: Path, stage: str) -> bool:
    """True for the one worker that claims the stage first (creating out/<stage>.claim)."""
    try:
        os.close(os.open(out / f"{stage}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


def _outcome(out: Path, stage: str) -> bytes | str:
    if (out / stage).is_file():
        return (out / stage).read_bytes()
    failed = out / (stage + ".failed")
    return failed.read_text(encoding="utf-8") if failed.is_file() else "its compiler process stopped without a word"


# What a failed build lacks, by a phrase of its error: the sentence that says what to install.
MISSING = {"The 'setuptools' package is required at runtime for pycc support":
           "numba.pycc needs setuptools, which a venv of Python 3.12 or later does not hold: pip install setuptools, "
           "then scorer warmup again; it needs a C++ compiler too"}


def with_remedy(reason: str) -> str:
    """The reason a stage was not built, with what to install when it is one MISSING names."""
    return next((f"{reason} ({remedy})" for phrase, remedy in MISSING.items() if phrase in reason), reason)


def _compiled_or_error(stage: str, throwaway: bool = False) -> bytes | str:
    try:
        return compile_stage(stage, throwaway=throwaway)
    except Exception as error:  # handed back to the parent, which says why the stage was not built
        return with_remedy(one_line(error))
