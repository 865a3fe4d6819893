"""The build of every stage module, as setup.py's build runs it: wall, CPU and the cores left idle.

    python bench/bench_build.py [--runs 3] [--compare SRC] [--timeline]

Each run compiles every stage (scorer.engine.aot_build._compiled_each: the build's worker processes, one per core)
in a fresh process on an empty numba cache, and reports its wall time, the CPU of its processes (user+sys) and the
core-seconds its workers left idle (cores x wall - CPU: a build whose workers end together leaves none). With
--compare SRC, the same build from another source tree (a `git archive` of an older commit, say) in the same run,
alternated with this one's. With --timeline, one more build of this tree, printing when each worker ended each stage
and its CPU by then: the figures aot_build.COST is set from.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BUILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from scorer.engine import aot_build
from scorer.kernels.door import STAGES
started = time.perf_counter()
outcomes = aot_build._compiled_each(list(STAGES))
wall = time.perf_counter() - started
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": children.ru_utime + children.ru_stime,
                  "failed": [stage for stage, outcome in zip(STAGES, outcomes) if not isinstance(outcome, bytes)]}))
"""

TIMED_WORKER = """
import sys, time
from scorer.engine import aot_build
started, number = float(sys.argv[1]), sys.argv[3]
compile_stage = aot_build._compiled_or_error
def timed(stage, throwaway=False):
    outcome = compile_stage(stage, throwaway)
    print(f"  worker {number}: {stage} ended at {time.time() - started:.1f} s, its CPU by then {time.process_time():.1f} s"
          + ("" if isinstance(outcome, bytes) else f" (not built: {outcome})"), flush=True)
    return outcome
aot_build._compiled_or_error = timed
aot_build.worker(*sys.argv[2:])
"""


def build(tree: Path) -> dict:
    """One whole build from tree's source, in a fresh process on an empty numba cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="bench-build-numba-")}
    done = subprocess.run([sys.executable, "-c", BUILD, str(tree)], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode:
        raise SystemExit(f"the build from {tree} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def timeline() -> None:
    """One build of this tree with each worker's stages timed as they end."""
    import time

    sys.path.insert(0, str(ROOT))
    from scorer.engine import aot_build
    from scorer.kernels.door import STAGES

    shares, claimable = aot_build._shares(list(STAGES), min(len(STAGES), os.cpu_count() or 1))
    print(f"timeline: shares {shares}, claimed as workers come free: {claimable}")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="bench-build-numba-")}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="bench-build-") as out:
        workers = [subprocess.Popen([sys.executable, "-c", TIMED_WORKER, str(started), out, str(number), *share, aot_build.CLAIM, *claimable],
                                    env=env) for number, share in enumerate(shares)]
        for process in workers:
            process.wait()
    print(f"timeline: {time.time() - started:.1f} s wall in all")


def line(name: str, figures: dict, load: float) -> str:
    cores = os.cpu_count() or 1
    idle = cores * figures["wall"] - figures["cpu"]
    failed = f"; not built: {', '.join(figures['failed'])}" if figures["failed"] else ""
    return f"{name}: {figures['wall']:.1f} s wall, {figures['cpu']:.1f} CPU-s, {idle:.1f} core-s idle (load {load:.2f}){failed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="another source tree, built in the same run, alternated with this one")
    parser.add_argument("--timeline", action="store_true", help="one more build, each worker's stages timed as they end")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    trees = [("this tree", ROOT)] + ([(f"{args.compare}", args.compare.resolve())] if args.compare else [])
    results: dict[str, list[dict]] = {name: [] for name, _ in trees}
    for _ in range(args.runs):
        for name, tree in trees:
            load = os.getloadavg()[0]
            figures = build(tree)
            results[name].append(figures)
            print(line(name, figures, load), flush=True)
    for name, runs in results.items():
        best = min(runs, key=lambda figures: figures["wall"])
        print(f"best of {args.runs}, {name}: {best['wall']:.1f} s wall, {best['cpu']:.1f} CPU-s; idle core-s in each run: "
              f"{[round((os.cpu_count() or 1) * run['wall'] - run['cpu'], 1) for run in runs]}")
    if args.timeline:
        timeline()


if __name__ == "__main__":
    main()
