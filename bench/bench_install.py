"""The first runs as users get them: a fresh venv, the README's set-up command, empty caches.

    python bench/bench_install.py [--data bench/data] [--runs 3] [--no-otto] [--stages]

Copies the package (pyproject.toml, setup.py, README.md, scorer/, fixtures/) into two temporary folders and, in
this one run, makes a fresh venv in each:
  - "default": the README's set-up, `pip install -e .` (its build compiles every stage's kernels into the package
    where a C compiler is there: scorer/kernels/prebuilt), timed phase by phase (pip -v's lines: the venv, pip's
    isolated build environment, the compile, the dependencies' install), wall and CPU (user+sys), beside the load;
  - "pure": the same with SCORER_BUILD_AOT=0 (the package as it was before: numba compiles the kernels at the
    first run), the straightforward baseline.
Then, on empty caches each time, the first run and the second of each of the ten commands a user tries first
(bench/command_examples.py: score, validate, score of H&M, score --bootstrap 1000 --breakdown, compare, leaderboard of
three files, explain against every convention, candidates of a small table, audit, prepare of a small log), in both
installs, and whether the default install meets the goals (a first run at most 2x its second, and at most 1.5 s where
the second is under 0.75 s); and at OTTO size (bench/make_otto.py's data, truth cache warm): the
default install without `scorer warmup`, the pure install on numba's warm JIT cache, and the pure install after
`scorer warmup` (the cache's ahead-of-time module): wall time (best of --runs, the three interleaved) and peak
RSS, as subprocesses. With --stages, first each stage module's compile alone in a fresh process (wall and CPU, beside
the load); bench/bench_build.py --timeline times them as a build's workers compile them, for aot_build.COST.
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
from command_examples import commands

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


# pip -v's lines that end a phase of the install, and the phase's name
PHASES = (("Installing build dependencies: finished", "pip's isolated build environment"),
          ("Preparing editable metadata (pyproject.toml): finished", "metadata"),
          ("Building editable for", "dependencies resolved"),
          ("Building editable for recsys-scorer (pyproject.toml): finished", "the build (the kernels' compile)"),
          ("Successfully installed", "the dependencies' install"))


def install(source: Path, venv: str, **env: str) -> tuple[float, Path]:
    """`python3 -m venv VENV && VENV/bin/pip install -e .` in source (the README's set-up); seconds and the scorer command.
    Prints the seconds of each phase, and the CPU seconds (user+sys) of the whole, beside the load."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    cpu = _children_cpu()
    environment = {**os.environ, **env}
    environment.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-m", "venv", venv], cwd=source, check=True)  # from a venv: its base interpreter
    phases = [("the venv", time.perf_counter() - started)]
    pip = subprocess.Popen([f"{venv}/bin/pip", "install", "-v", "-e", "."], cwd=source, env=environment, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    last = time.perf_counter()
    for line in pip.stdout:  # the phases end in this order (the build environment's own pip prints an earlier "Successfully")
        if len(phases) <= len(PHASES) and PHASES[len(phases) - 1][0] in line:
            now = time.perf_counter()
            phases.append((PHASES[len(phases) - 1][1], now - last))
            last = now
    if pip.wait():
        raise SystemExit(f"pip install -e . failed in {source}")
    seconds = time.perf_counter() - started
    print(f"  {', '.join(f'{name} {spent:.1f} s' for name, spent in phases)}; CPU {_children_cpu() - cpu:.1f} s; load {load:.2f} at "
          f"the start, {os.getloadavg()[0]:.2f} at the end")
    return seconds, source / venv / "bin" / "scorer"


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stage_times(source: Path) -> None:
    """Each stage module compiled alone in a fresh process of this interpreter, as a build's worker compiles it (C runtime
    included): wall and CPU seconds, and the load."""
    sys.path.insert(0, str(source))
    from scorer.kernels.door import STAGES

    for stage in STAGES:
        load, cpu, started = os.getloadavg()[0], _children_cpu(), time.perf_counter()
        code = f"from scorer.engine.aot_compile import compile_stage; compile_stage({stage!r}, throwaway=True)"  # as a build's worker
        subprocess.run([sys.executable, "-c", code], cwd=source, check=True, env={**os.environ, "PYTHONPATH": str(source),
                                                                                    "NUMBA_CACHE_DIR": tempfile.mkdtemp()})
        print(f"  {stage}: {time.perf_counter() - started:.1f} s wall, {_children_cpu() - cpu:.1f} s CPU (load {load:.2f})")


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


def command_runs(scorer: Path, folder: Path, name: str) -> dict[str, tuple[float, float]]:
    """{command: (first, second)} wall seconds of each of the ten commands, each on empty caches of its own."""
    out = {}
    for command, argv in commands(folder / f"{name}-inputs").items():
        env = fresh_caches(folder / f"{name}-{command.replace(' ', '-')}", name)
        times = []
        for _ in range(2):
            started = time.perf_counter()
            done = subprocess.run([str(scorer), *map(str, argv)], env=env, cwd=folder, capture_output=True, text=True)
            times.append(time.perf_counter() - started)
            if done.returncode not in (0, 1):  # 1: validate's and audit's findings
                raise SystemExit(f"{command} failed (exit {done.returncode}): {done.stderr[-2000:]}")
        out[command] = (times[0], times[1])
    return out


def meets_the_goal(first: float, second: float) -> bool:
    """A first run at most 2x the second, and at most 1.5 s wherever the second is under 0.75 s."""
    return first <= 2 * second and (second >= 0.75 or first <= 1.5)


def print_command_runs(runs: dict[str, dict[str, tuple[float, float]]], load: float) -> None:
    default, pure = runs["default"], runs["pure"]
    print(f"first and second runs of each command on empty caches (wall s; load {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end):")
    print(f"  {'command':<26} {'default 1st':>11} {'2nd':>6} {'1st/2nd':>7} {'goal':>5} | {'pure 1st':>8} {'2nd':>6} {'pure/default 1st':>16}")
    for command, (first, second) in default.items():
        pure_first, pure_second = pure[command]
        print(f"  {command:<26} {first:>11.2f} {second:>6.2f} {first / second:>7.2f} {'met' if meets_the_goal(first, second) else 'MISS':>5} | "
              f"{pure_first:>8.2f} {pure_second:>6.2f} {pure_first / first:>15.1f}x")
    met = sum(meets_the_goal(*times) for times in default.values())
    print(f"  the default install meets the goal for {met} of {len(default)} commands")


def best(runs: list[tuple[float, float, str]]) -> str:
    wall = min(run[0] for run in runs)
    return f"best {wall:.2f} s of {[round(run[0], 2) for run in runs]}, peak RSS {max(run[1] for run in runs):.0f} MB"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-otto", action="store_true", help="the fixture's first runs only")
    parser.add_argument("--stages", action="store_true", help="first each stage module's compile time, alone")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]} (a shared machine: timings are noisy)")
    with tempfile.TemporaryDirectory(prefix="bench-install-") as work:
        folder = Path(work)
        if args.stages:
            print("each stage module compiled alone:")
            stage_times(copy_of_the_package(folder / "stages-src"))
        installs = {}
        for name, env in (("default", {}), ("pure", {"SCORER_BUILD_AOT": "0"})):
            source = copy_of_the_package(folder / f"{name}-src")
            seconds, scorer = install(source, ".venv", **env)
            built = sorted(path.name.split("-")[0] for path in (source / "scorer" / "kernels" / "prebuilt").glob("*.so"))
            print(f"{name}: python3 -m venv .venv && pip install -e . {seconds:.1f} s; compiled into the package: {built or 'nothing'}")
            first, second = first_runs(scorer, source, fresh_caches(folder, name))
            print(f"{name}: first `scorer score` of the fixture on empty caches {first:.2f} s, second {second:.2f} s")
            installs[name] = scorer
        load = os.getloadavg()[0]
        print_command_runs({name: command_runs(scorer, folder, name) for name, scorer in installs.items()}, load)
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
