"""One Codabench job in the grader images at OTTO size, timed from `docker run` to the container's exit.

    python bench/bench_container.py [--image scorer:local] [--grader scorer:local-grader] [--data bench/data] [--runs 3]

The images are docker/build-local.sh's (the full target and the grader target), or any tags built from
docker/Dockerfile. The job is laid out and run as Codabench's hardened worker runs it (input/ref and input/res
mounted read-only, a root-owned 0755 output/, no network, a read-only root, every capability dropped, no new
privileges), with the bundle's command. In this one run: the reference data as the bundle ships it (the truth compiled
by bundles/build.py: a .truth.npz) in the grader image and in the full image, and the source truth
(test_labels.jsonl, which the full image compiles again for every job, as its cache goes with the container) in the
full image. Prints the images' sizes, each run's wall time, the best, the ratios, and whether the scores are equal.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
WORKER = ["--network", "none", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
COMMAND = ["codabench", "/app/input", "/app/output", "--competition", "otto", "--max-seconds", "540"]


def bundle_builder():
    spec = importlib.util.spec_from_file_location("bundle_build", ROOT / "bundles" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def job(image: str, run: Path) -> tuple[float, dict]:
    """Wall seconds from `docker run` to exit, and scores.json."""
    output = run / "output"
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(mode=0o755)
    started = time.perf_counter()
    done = subprocess.run(["docker", "run", "--rm", *WORKER, "-v", f"{run / 'input'}:/app/input:ro", "-v", f"{output}:/app/output",
                           "-w", "/app", image, *COMMAND], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the job failed (exit {done.returncode}): {done.stdout}{done.stderr}")
    return wall, json.loads((output / "scores.json").read_text())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="scorer:local", help="the full image")
    parser.add_argument("--grader", default="scorer:local-grader", help="the grader image")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    submission, truth = args.data / "submission.csv", args.data / "test_labels.jsonl"
    if not submission.exists() or not truth.exists():
        subprocess.run([sys.executable, str(HERE / "make_otto.py"), "--out", str(args.data)], check=True)
    sizes = {image: int(subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", image], capture_output=True, text=True,
                                       check=True).stdout) for image in (args.grader, args.image)}
    print(f"images: {', '.join(f'{image} {size / 1e6:.0f} MB' for image, size in sizes.items())}; "
          f"submission {submission.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} cores (a shared machine: timings are noisy)")
    jobs = (("grader, compiled", args.grader, "compiled"), ("full, compiled", args.image, "compiled"), ("full, jsonl", args.image, "jsonl"))
    with tempfile.TemporaryDirectory(prefix="bench-container-", dir=args.data) as work:
        folders = {}
        for reference in ("compiled", "jsonl"):
            run = Path(work) / reference
            (run / "input" / "ref").mkdir(parents=True)
            (run / "input" / "res").mkdir()
            shutil.copy(submission, run / "input" / "res" / "submission.csv")  # one link: the upload as the worker lays it out
            if reference == "compiled":
                started = time.perf_counter()
                builder = bundle_builder()
                [(compiled, compiled_name)] = builder.reference_files(truth, run, builder.Chosen("otto"))
                shutil.move(compiled, run / "input" / "ref" / compiled_name)
                print(f"truth compiled by the bundle builder (once, on the organiser's machine): {time.perf_counter() - started:.1f} s")
            else:
                shutil.copy(truth, run / "input" / "ref" / truth.name)
            folders[reference] = run
        runs: dict[str, list] = {label: [] for label, _, _ in jobs}
        for _ in range(args.runs):  # interleaved: a slow moment of the machine falls on every job alike
            for label, image, reference in jobs:
                runs[label].append(job(image, folders[reference]))
    best = {label: min(wall for wall, _ in timed) for label, timed in runs.items()}
    for label, timed in runs.items():
        print(f"{label:<18} best {best[label]:.2f} s of {[round(wall, 2) for wall, _ in timed]} (wall, docker run to exit)")
    print(f"full / grader image, compiled truth: {best['full, compiled'] / best['grader, compiled']:.2f}x; "
          f"JSONL / compiled truth in the full image: {best['full, jsonl'] / best['full, compiled']:.1f}x")
    scores = {json.dumps(scores, sort_keys=True) for timed in runs.values() for _, scores in timed}
    print(f"same scores.json in every run: {'yes' if len(scores) == 1 else 'NO'}; {scores.pop()}")


if __name__ == "__main__":
    main()
