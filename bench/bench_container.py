"""One Codabench job in the grader image at OTTO size, timed from `docker run` to the container's exit.

    python bench/bench_container.py [--image scorer:local] [--data bench/data] [--runs 3]

The image is docker/build-local.sh's (or any tag built from docker/Dockerfile). The job is laid out and run as
Codabench's hardened worker runs it (input/ref and input/res mounted read-only, a root-owned 0755 output/, no
network, a read-only root, every capability dropped, no new privileges), with the bundle's command. In this one
run: reference data as the bundle ships it now (the truth compiled by bundles/build.py: a .truth.npz), against
the source truth as bundles shipped it before (test_labels.jsonl, which the read-only image compiles again for
every submission). Prints each run's wall time, the best, the ratio, and the scores (which must be equal).
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
    parser.add_argument("--image", default="scorer:local")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    submission, truth = args.data / "submission.csv", args.data / "test_labels.jsonl"
    if not submission.exists() or not truth.exists():
        subprocess.run([sys.executable, str(HERE / "make_otto.py"), "--out", str(args.data)], check=True)
    size = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", args.image], capture_output=True, text=True, check=True)
    print(f"image {args.image}: {int(size.stdout) / 1e6:.0f} MB; submission {submission.stat().st_size / 1e6:.0f} MB; "
          f"{os.cpu_count()} cores (a shared machine: timings are noisy)")
    with tempfile.TemporaryDirectory(prefix="bench-container-", dir=args.data) as work:
        runs = {}
        for name in ("compiled", "jsonl"):
            run = Path(work) / name
            (run / "input" / "ref").mkdir(parents=True)
            (run / "input" / "res").mkdir()
            shutil.copy(submission, run / "input" / "res" / "submission.csv")  # one link: the upload as the worker lays it out
            if name == "compiled":
                started = time.perf_counter()
                builder = bundle_builder()
                [(compiled, compiled_name)] = builder.reference_files(truth, run, builder.Chosen("otto"))
                shutil.move(compiled, run / "input" / "ref" / compiled_name)
                print(f"truth compiled by the bundle builder (once, on the organiser's machine): {time.perf_counter() - started:.1f} s")
            else:
                shutil.copy(truth, run / "input" / "ref" / truth.name)
            runs[name] = [job(args.image, run) for _ in range(args.runs)]
    for name, label in (("compiled", "reference data compiled (.truth.npz, as bundles ship it now)"),
                        ("jsonl", "reference data as JSONL (as bundles shipped it before)")):
        walls = [round(wall, 2) for wall, _ in runs[name]]
        print(f"{label}: best {min(walls):.2f} s of {walls} (wall, docker run to exit)")
    ratio = min(w for w, _ in runs["jsonl"]) / min(w for w, _ in runs["compiled"])
    scores = {json.dumps(scores, sort_keys=True) for name in runs for _, scores in runs[name]}
    print(f"ratio (JSONL / compiled): {ratio:.1f}x; same scores.json in every run: {'yes' if len(scores) == 1 else 'NO'}; {scores.pop()}")


if __name__ == "__main__":
    main()
