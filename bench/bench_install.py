"""The first runs as users get them: a fresh venv, the README's set-up command, empty caches.

    python bench/bench_install.py [--data bench/data] [--runs 3] [--no-otto]

Copies the package (pyproject.toml, setup.py, README.md, scorer/, fixtures/) into two temporary folders and, in
this one run, makes a fresh venv in each:
  - "default": the README's set-up, `pip install -e .` (its build compiles the hot kernels into the package
    where a C compiler is there: scorer/engine/prebuilt);
  - "pure": the same with SCORER_BUILD_AOT=0 (the package as it was before: numba compiles the kernels at the
    first run), the straightforward baseline.
Then, on empty caches each time: the first `scorer score fixtures/otto_submission.csv --truth
fixtures/otto_truth.jsonl` and the second; and at OTTO size (bench/make_otto.py's data, truth cache warm): the
default install without `scorer warmup`, the pure install on numba's warm JIT cache, and the pure install after
`scorer warmup` (the cache's ahead-of-time module): wall time (best of --runs, the three interleaved) and peak
RSS, as subprocesses.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_score import timed_child

HERE = Path(__file__).parent
ROOT = HERE.parent
FIXTURE = ["score", "fixtures/otto_submission.csv", "--truth", "fixtures/otto_truth.jsonl"]


def copy_of_the_package(folder: Path) -> Path:
    source = folder
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("scorer", "fixtures"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "prebuilt", "*.nbi", "*.nbc"))
    return source


def install(source: Path, venv: str, **env: str) -> tuple[float, Path]:
    """`python3 -m venv VENV && VENV/bin/pip install -e .` in source (the README's set-up); seconds and the scorer command."""
    started = time.perf_counter()
    environment = {**os.environ, **env}
    environment.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-m", "venv", venv], cwd=source, check=True)  # from a venv: its base interpreter
    subprocess.run([f"{venv}/bin/pip", "install", "--quiet", "-e", "."], cwd=source, check=True, env=environment,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, source / venv / "bin" / "scorer"


def fresh_caches(folder: Path, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SCORER_AOT", "PYTHONPATH")}
    env.update(SCORER_CACHE_DIR=str(folder / f"{name}-scorer-cache"), NUMBA_CACHE_DIR=str(folder / f"{name}-numba-cache"))
    return env


def first_runs(scorer: Path, source: Path, env: dict[str, str]) -> tuple[float, float]:
    """(first, second) wall seconds of the fixture's score on the caches env names (empty at the start)."""
    os.chdir(source)
    first, _, out = timed_child([str(scorer), *FIXTURE], env)
    second, _, _ = timed_child([str(scorer), *FIXTURE], env)
    assert "0.340000" in out, out
    return first, second


def best(runs: list[tuple[float, float, str]]) -> str:
    wall = min(run[0] for run in runs)
    return f"best {wall:.2f} s of {[round(run[0], 2) for run in runs]}, peak RSS {max(run[1] for run in runs):.0f} MB"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-otto", action="store_true", help="the fixture's first runs only")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]} (a shared machine: timings are noisy)")
    with tempfile.TemporaryDirectory(prefix="bench-install-") as work:
        folder = Path(work)
        installs = {}
        for name, env in (("default", {}), ("pure", {"SCORER_BUILD_AOT": "0"})):
            source = copy_of_the_package(folder / f"{name}-src")
            seconds, scorer = install(source, ".venv", **env)
            built = sorted(path.name for path in (source / "scorer" / "engine" / "prebuilt").glob("*.so"))
            print(f"{name}: python3 -m venv .venv && pip install -e . {seconds:.1f} s; compiled into the package: {built or 'nothing'}")
            first, second = first_runs(scorer, source, fresh_caches(folder, name))
            print(f"{name}: first `scorer score` of the fixture on empty caches {first:.2f} s, second {second:.2f} s")
            installs[name] = scorer
        if not args.no_otto:
            otto(args, folder, installs)


def otto(args, folder: Path, installs: dict[str, Path]) -> None:
    submission, truth = (args.data / "submission.csv").resolve(), (args.data / "test_labels.jsonl").resolve()
    if not submission.exists() or not truth.exists():
        subprocess.run([sys.executable, str(HERE / "make_otto.py"), "--out", str(args.data)], check=True)
    print(f"OTTO size: {submission} ({submission.stat().st_size / 1e6:.0f} MB), truth {truth}")
    command = ["score", str(submission), "--truth", str(truth), "--format", "json", "--no-progress"]
    setups = {"default install, no `scorer warmup`": (installs["default"], fresh_caches(folder, "otto-default")),
              "pure install, numba's warm JIT cache": (installs["pure"], fresh_caches(folder, "otto-jit")),
              "pure install after `scorer warmup`": (installs["pure"], fresh_caches(folder, "otto-warm"))}
    for scorer, env in setups.values():
        timed_child([str(scorer), *command], env)  # fills the truth cache (and numba's, on the pure install)
    pure, warm_env = setups["pure install after `scorer warmup`"]
    subprocess.run([str(pure), "warmup", "--competition", "otto", "--quiet"], env=warm_env, check=True)
    runs: dict[str, list] = {label: [] for label in setups}
    for _ in range(args.runs):  # interleaved, so that the shared machine's load weighs on each alike
        for label, (scorer, env) in setups.items():
            runs[label].append(timed_child([str(scorer), *command], env))
    default, jit, warm = runs.values()
    scores = {json.loads(run[2])["score"] for run in default + jit + warm}
    print(f"default install, no `scorer warmup`: {best(default)}")
    print(f"pure install, numba's warm JIT cache: {best(jit)}")
    print(f"pure install after `scorer warmup`: {best(warm)}")
    print(f"same score everywhere: {'yes' if len(scores) == 1 else 'NO: ' + str(scores)}")


if __name__ == "__main__":
    main()
