"""Benchmark the impression shape at MIND's and EB-NeRD's test sizes against their official evaluator, side by side.

    python bench/bench_impressions.py [--dataset mind|ebnerd|both] [--impressions N] [--official-slice 20000]

Makes (once) bench/data/impressions_<dataset>_<N>/ with bench/make_impressions.py (MIND-large test: 2,370,727
impressions; EB-NeRD test: 13,536,710, arXiv 2410.03432), then:

- the official evaluator (MIND's evaluate.py, read from MIND_REPO as tools/compare_news_evaluators.py reads it; EB-NeRD's
  hidden scorer applies the same per-impression functions) scores the first S impressions in a child process; it is a
  Python loop of one roc_auc_score call and two argsorts per impression, so its time is linear in the impressions it
  scores: the full figure is the slice's time × (impressions with labels) / (those of the slice);
- `scorer score` runs end to end as a fresh process, three times: the first with an empty cache folder (the truth text
  parsed and compiled into the cache), the others warm; wall time and the child's own peak RSS. Its receipt names the
  kernels' build (ahead-of-time modules: no compile);
- memory flat in the file's size: the same truth scored against the first tenth of the prediction (the rest filled by
  MIND's rule), whose peak RSS should match the full file's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tools"))
from compare_news_evaluators import MIND_REPO, source  # noqa: E402

from bench_score import timed_child  # noqa: E402
from make_impressions import SIZES, write  # noqa: E402

DATA = HERE / "data"
GNU_TIME = "/usr/bin/time"

OFFICIAL = r"""
import sys, time, types
mind = types.ModuleType("mind_evaluate")
exec(compile(sys.argv[1], "evaluate.py", "exec"), mind.__dict__)
started = time.perf_counter()
with open(sys.argv[2]) as truth, open(sys.argv[3]) as prediction:
    figures = mind.scoring(truth, prediction)
print(time.perf_counter() - started, *map(float, figures))
"""


def data(dataset: str, n: int) -> tuple[Path, Path]:
    folder = DATA / f"impressions_{dataset}_{n}"
    truth = folder / "truth.txt"
    prediction = folder / ("prediction.txt" if dataset == "mind" else "predictions.txt")
    if not (truth.is_file() and prediction.is_file()):
        started = time.perf_counter()
        write(folder, dataset, n, seed=0)
        print(f"  wrote {folder} in {time.perf_counter() - started:.0f} s")
    return truth, prediction


def head(path: Path, lines: int, out: Path) -> Path:
    with open(path, "rb") as source_file, open(out, "wb") as target:
        for _ in range(lines):
            line = source_file.readline()
            if not line:
                break
            target.write(line)
    return out


def labelled(path: Path) -> int:
    """Impressions with labels in a truth file (masked ones, `[]`, are skipped by the evaluators)."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if not line.rstrip().endswith(b"[]"))


def official(truth: Path, prediction: Path, slice_lines: int, folder: Path) -> tuple[float, float, list[float]]:
    """(seconds for the slice, impressions with labels in it, the slice's figures)."""
    truth_slice, prediction_slice = head(truth, slice_lines, folder / "truth.txt"), head(prediction, slice_lines, folder / "prediction.txt")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", OFFICIAL, source(MIND_REPO, "evaluate.py"), str(truth_slice), str(prediction_slice)],
                         capture_output=True, text=True, check=True, env=env).stdout.split()
    return float(out[0]), labelled(truth_slice), [float(x) for x in out[1:]]


def scorer_run(prediction: Path, truth: Path, dataset: str, cache: Path) -> tuple[float, float, dict]:
    """`scorer score` in a fresh process: (wall seconds, its peak RSS in MiB, its JSON). The child is started by GNU time
    where there is one: a child forked from this process would count this process's pages in its peak (ru_maxrss is
    kept across fork and exec), and this one holds the generated data."""
    command = [sys.executable, "-m", "scorer", "score", str(prediction), "--truth", str(truth), "--competition", dataset, "--format", "json"]
    env = dict(os.environ, SCORER_CACHE_DIR=str(cache))
    if not Path(GNU_TIME).is_file():
        wall, peak, out = timed_child(command, env=env)
        return wall, peak, json.loads(out)
    with tempfile.NamedTemporaryFile("r") as report:
        started = time.perf_counter()
        out = subprocess.run([GNU_TIME, "-o", report.name, "-f", "%M", *command], capture_output=True, text=True, env=env, check=True).stdout
        wall = time.perf_counter() - started
        return wall, int(report.read().split()[-1]) / 1024, json.loads(out)


def bench(dataset: str, n: int, slice_lines: int) -> None:
    print(f"{dataset}: {n:,} impressions")
    truth, prediction = data(dataset, n)
    print(f"  truth {truth.stat().st_size / 1e6:,.0f} MB, prediction {prediction.stat().st_size / 1e6:,.0f} MB")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        seconds, counted, figures = official(truth, prediction, slice_lines, folder)
        full = labelled(truth)
        estimate = seconds * full / counted
        print(f"  official evaluate.py: {seconds:.1f} s for the first {slice_lines:,} lines ({counted:,} with labels; AUC {figures[0]:.6f}); "
              f"× {full:,} / {counted:,} = {estimate:,.0f} s for the file")
        cache = folder / "cache"
        runs = [scorer_run(prediction, truth, dataset, cache) for _ in range(3)]
        result = runs[-1][2]
        kernels = result["receipt"]["scorer"]["kernels"]
        for label, (wall, peak, _) in zip(("cold cache (truth parsed)", "warm", "warm"), runs):
            print(f"  scorer score, {label}: {wall:.2f} s wall, peak RSS {peak:,.0f} MiB; {estimate / wall:,.0f}x the official")
        print(f"  scorer's AUC {result['score']:.6f}, kernels: {kernels}")
        tenth = head(prediction, n // 10, folder / prediction.name)
        wall, peak, _ = scorer_run(tenth, truth, dataset, cache)
        print(f"  flat in the file's size: the first tenth of the file (the rest filled) peaks at {peak:,.0f} MiB "
              f"(the whole file: {runs[-1][1]:,.0f} MiB), {wall:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=["mind", "ebnerd", "both"], default="both")
    parser.add_argument("--impressions", type=int, help="default: each dataset's test size")
    parser.add_argument("--official-slice", type=int, default=20_000, help="lines the official evaluator scores (default 20,000)")
    args = parser.parse_args()
    for dataset in (["mind", "ebnerd"] if args.dataset == "both" else [args.dataset]):
        bench(dataset, args.impressions or SIZES[dataset], args.official_slice)


if __name__ == "__main__":
    main()
