"""Where one OTTO-size `scorer score` spends its time: the score split into its stages, beside the floors, in one run.

    python bench/bench_stages.py [--data DIR] [--runs 3] [--no-polars] [--instructions MB] [--scale DIR ...] [--compare SRC]

DIR holds submission.csv and test_labels.jsonl (bench/make_otto.py writes them). Measured in this one run, each
best of --runs, the runs interleaved so that a change of the machine's load falls on every line alike:

- the score end to end, as a user runs it (`scorer score SUBMISSION --truth TRUTH`, text output, truth cache warm):
  wall, CPU (user + system, all threads) and peak RSS of the process;
- the same score split into its stages, in a child process that runs them one after the other with the engine's own
  pieces (see stage_child): process start, imports, truth load, opening the file and cutting it into blocks of whole
  lines (read into buffers; or mapped, and then the pages are read in the parse), parsing, the hit test,
  merging the rows into the per-slot arrays, the sums, the output; and the whole pass as the score runs it (the
  stages overlap there: the reading, parsing and hit test run on two threads);
- the floors: `cat` of the file; a pass that counts the commas of the mapped file with numpy (every byte read once,
  one thread); `pyarrow.csv.read_csv` of it on 2 threads; `python -c "import numpy"`; the items alone (ITEMS_ALONE:
  the work every row's items cost whatever reads them this way, on 2 threads: each item's end from a bit per byte, its
  checks, its key and the line's repeat filter, with no id read, no row written and no truth);
- the polars one-liner a Kaggle participant writes (read, split, explode, join, group), its score checked against ours.

The parse and the hit test live in one kernel: the parse alone is the kernel over a truth with no sessions (every row's
session is then unknown, so no row reaches the hit test); the hit test is the same kernel over the real truth, less
that. --instructions MB also counts the instructions (valgrind's callgrind) of an end-to-end score of the first MB of
the submission and of the parse kernel in it: figures that do not move with the machine's load. --scale DIR scores
another data folder (a 4x one from `make_otto.py --sessions 6687212`) in the same runs, for peak RSS against size.
--compare SRC scores with another source tree of the scorer (`git archive main | tar -x -C SRC`, its kernels' module
built there with scorer.engine.aot_build.build_into_package) in the same runs: before and after side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the source tree whose scorer the bench runs
WEIGHTS = {"clicks": 0.10, "carts": 0.30, "orders": 0.60}


def load() -> str:
    return "load " + ", ".join(f"{value:.2f}" for value in os.getloadavg())


def run_child(command: list[str], env=None, max_rss_mb: int | None = None, cwd=None) -> dict:
    """Run a command; its wall seconds, CPU seconds (user + system, all threads: its own rusage), peak RSS (MiB) and
    output. Exit status 1 passes: the score ran and found problems (this submission repeats items in 510 rows)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd)
        if max_rss_mb is not None:
            threading.Thread(target=_guard, args=(child, max_rss_mb), daemon=True).start()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if child.returncode not in (0, 1):
            sys.exit(f"command failed ({child.returncode}): {' '.join(command)}\n{err.read().decode()[-3000:]}")
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024, "out": out.read().decode()}


def _guard(child: subprocess.Popen, max_rss_mb: int) -> None:
    """Kill the child once its resident memory passes max_rss_mb (a shared machine: never run it out of memory)."""
    while child.returncode is None:
        try:
            with open(f"/proc/{child.pid}/status") as handle:
                rss = next((int(line.split()[1]) // 1024 for line in handle if line.startswith("VmRSS")), 0)
        except OSError:
            return
        if rss > max_rss_mb:
            child.kill()
            return
        time.sleep(0.05)


# -- the floors, each a child process that prints its own timing of the work (imports excluded) as JSON ------------

COUNT_COMMAS = """
import json, mmap, resource, sys, time
import numpy as np
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
wall, used = time.perf_counter(), cpu()
with open(sys.argv[1], "rb") as handle:
    mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
data = np.frombuffer(mapping, np.uint8)
step, commas = 1 << 20, 0
for start in range(0, len(data), step):
    commas += int(np.count_nonzero(data[start : start + step] == 44))
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": cpu() - used, "commas": commas}))
"""

ITEMS_ALONE = """
import json, mmap, resource, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros
from scorer.kernels.load import load8, nondigit_mask64
U = np.uint64
TAG = U(1) << U(63)
@njit(nogil=True)
def items_alone(buf, pos, n):
    # per line: the comma found a word at a time (no id read); per item: its end from a bit per byte, its length and
    # leading zero checked, its bytes kept as a key, the key tested and set in the line's repeat filter; no row is
    # written, no truth read. Returns (lines, items); a line with a repeated item or a bad one is skipped to its end.
    seen = np.zeros(4096, np.uint8)
    items = np.zeros(64, np.int64)
    lines = 0
    total = 0
    while pos < n:
        lines += 1
        stamp = np.uint8(lines & 255)
        p = pos
        while True:
            w = load8(buf, p)
            x = w ^ U(0x2C2C2C2C2C2C2C2C)
            z = (x - U(0x0101010101010101)) & ~x & U(0x8080808080808080)
            if z != U(0):
                p += np.int64(trailing_zeros(z)) >> 3
                break
            p += 8
        p += 1
        n_items = 0
        base = p
        ends = U(0)
        ok = True
        while True:
            if ends == U(0):
                base, ends = p, nondigit_mask64(buf, p)
            e = base + np.int64(trailing_zeros(ends))
            ends &= ends - U(1)
            run = e - p
            w = load8(buf, p)
            if run == 0 or run > 7 or (run > 1 and (w & U(0xFF)) == U(48)):
                ok = False
                break
            key = np.int64((w & ((U(1) << U(8 * run)) - U(1))) | TAG)
            p = e
            end = buf[e]
            h = (U(key) * U(0x9E3779B97F4A7C15)) >> U(52)
            if seen[h] == stamp:
                for j in range(n_items):
                    if items[j] == key:
                        ok = False
                if not ok:
                    break
            seen[h] = stamp
            items[n_items] = key
            n_items += 1
            if end != 32:
                break
            p += 1
        while buf[p] != 10:
            p += 1
        total += n_items
        pos = p + 1
    return lines, total
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
sample = np.frombuffer(b"1_clicks,12 345 12\\n2_carts,7\\n" + bytes(200), np.uint8)
items_alone(sample, 0, 31)  # compiled before the clock starts
wall, used = time.perf_counter(), cpu()
with open(sys.argv[1], "rb") as handle:
    mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
data = np.frombuffer(mapping, np.uint8)
head = bytes(data[:4096]).index(b"\\n") + 1
stop = int(np.flatnonzero(data[-4096:] == 10)[-3]) + len(data) - 4096 + 1  # the last lines left out: 64-byte loads stay inside
middle = int(np.flatnonzero(data[len(data) // 2 : len(data) // 2 + 4096] == 10)[0]) + len(data) // 2 + 1
with ThreadPoolExecutor(2) as pool:
    parts = list(pool.map(lambda span: items_alone(data, *span), [(head, middle), (middle, stop)]))
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": cpu() - used, "lines": sum(p[0] for p in parts),
                  "items": sum(p[1] for p in parts)}))
"""

PYARROW_READ = """
import json, resource, sys, time
import pyarrow, pyarrow.csv
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
pyarrow.set_cpu_count(2)
wall, used = time.perf_counter(), cpu()
table = pyarrow.csv.read_csv(sys.argv[1], read_options=pyarrow.csv.ReadOptions(use_threads=True))
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": cpu() - used, "rows": table.num_rows}))
"""

POLARS_ONE_LINER = """
import json, resource, sys, time
import polars as pl
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
wall, used = time.perf_counter(), cpu()
sub = (pl.read_csv(sys.argv[1])
       .select(pl.col("session_type").str.split_exact("_", 1).struct.rename_fields(["session", "type"]).alias("id"),
               pl.col("labels").str.split(" ").list.head(20).cast(pl.List(pl.Int32)).alias("aid"))
       .unnest("id").with_columns(pl.col("session").cast(pl.Int32), pl.col("type").cast(pl.Categorical))
       .explode("aid"))
labels = pl.read_ndjson(sys.argv[2]).unnest("labels")
truth = pl.concat([labels.select(pl.col("session").cast(pl.Int32), pl.lit(t).cast(pl.Categorical).alias("type"),
                                 pl.concat_list(pl.col(t)).alias("aid")).explode("aid").drop_nulls()
                   for t in ("clicks", "carts", "orders")]).with_columns(pl.col("aid").cast(pl.Int32)).unique()
hits = sub.join(truth, on=["session", "type", "aid"]).unique().group_by("type").len()
sizes = truth.group_by("session", "type").len().group_by("type").agg(pl.col("len").clip(upper_bound=20).sum())
recall = {row["type"]: row["len"] for row in hits.iter_rows(named=True)}
recall = {row["type"]: recall.get(row["type"], 0) / row["len"] for row in sizes.iter_rows(named=True)}
score = sum(weight * recall[t] for t, weight in {WEIGHTS}.items())
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": cpu() - used, "score": score}))
""".replace("{WEIGHTS}", repr(WEIGHTS))


# -- the stages, in a child process ---------------------------------------------------------------------------------

def stage_child(submission: str, truth_path: str, spawned: float) -> None:
    """One score, stage after stage, with the engine's pieces (as scorer.cli.score and scorer.engine.file_pass.Pass.run
    call them); prints [(stage, wall, cpu)] as JSON. `spawned`: time.monotonic() when the parent started this process."""
    started = time.monotonic()

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    stages = [("process start (interpreter)", started - spawned, cpu())]
    clock = [time.perf_counter(), cpu()]

    def done(name: str) -> None:
        wall, used = time.perf_counter(), cpu()
        stages.append((name, wall - clock[0], used - clock[1]))
        clock[:] = [time.perf_counter(), cpu()]

    import scorer.cli.main as cli

    cli._quiet_blas_threads()  # what main() does before it builds the parser
    args = cli.build_parser().parse_args(["score", submission, "--truth", truth_path])
    cli._skip_blas_probe()
    from scorer.api import _result, resolve_truth
    from scorer.cli.common import warning_examples
    from scorer.cli.item_options import from_args
    from scorer.kernels import door

    door.kernel("parse_block")  # the score stage's module loaded, as the pass's first block does
    done("imports (numpy, scorer, the kernels' module)")

    competition, _ = from_args(args, args.competition)
    truth = resolve_truth(args.truth, competition)
    done("truth load (compiled, cached)")

    from concurrent.futures import ThreadPoolExecutor

    from scorer.engine.file_pass import Pass
    from scorer.engine.problems import Report
    from scorer.engine.reader import BlockReader
    from scorer.truth.ids import empty_truth

    def engine(over) -> Pass:
        return Pass(competition, over, Report(max_per_code=args.max_per_code), threads=args.threads, progress=False)

    reader = BlockReader(submission, max_line_bytes=competition.limits.max_line_bytes)
    for block in reader:  # as the pass reads it: each block handed back once used
        reader.release(block)
    done("open the file, blocks of whole lines (read or mapped)")
    blocks = list(BlockReader(submission, max_line_bytes=competition.limits.max_line_bytes))  # kept for the parse stages
    clock[:] = [time.perf_counter(), cpu()]

    def parse_all(kernel_of: Pass, blocks: list) -> list:
        import numpy as np

        offset, first_line = kernel_of._header(blocks[0].data)
        with ThreadPoolExecutor(args.threads) as pool:
            jobs = [pool.submit(kernel_of.kernel.parse, np.frombuffer(block.buffer, np.uint8), offset if i == 0 else 0, block.end,
                                first_line if i == 0 else 1) for i, block in enumerate(blocks)]
            return [job.result() for job in jobs]

    # The parse without and with the truth, twice each in turn, the file mapped afresh for each (its pages faulted in by
    # every one); each stage keeps its faster run, so what one of them pays first (the row arrays' fresh pages, say)
    # does not fall on the other.
    timed: dict[str, list] = {}
    for name, over in [("parse (kernel, 2 threads, truth without sessions)", empty_truth(competition.types)),
                       ("parse + hit test (kernel, 2 threads)", truth)] * 2:
        del blocks
        blocks = list(BlockReader(submission, max_line_bytes=competition.limits.max_line_bytes))
        scoring = engine(over)
        wall, used = time.perf_counter(), cpu()
        parsed = parse_all(scoring, blocks)
        timed.setdefault(name, []).append((time.perf_counter() - wall, cpu() - used))
    stages.extend((name, *min(runs)) for name, runs in timed.items())
    clock[:] = [time.perf_counter(), cpu()]
    lines_before = 0
    for one in parsed:
        scoring._absorb(one, lines_before)
        lines_before += one.last_line
    outcome = scoring._finish()
    done("merge rows into the per-slot arrays")
    result = _result(competition, truth, scoring.report, outcome, submission, False, 0.0)
    done("sums and the result")
    with open(os.devnull, "w") as sink:
        print(result.to_text(warning_examples(args)), file=sink)
    done("output (text)")
    del blocks, parsed, outcome, result, scoring
    engine(truth).run(submission)
    done("the whole pass, as a score runs it (read, parse, hits, merge)")
    print(json.dumps(stages))


# -- instruction counts ---------------------------------------------------------------------------------------------

def instructions(data: Path, megabytes: int, env: dict) -> dict:
    """callgrind's instruction counts of `scorer score` on the first `megabytes` MB of the submission: the whole process
    and the parse kernel (inclusive), per byte of the slice. valgrind runs no AVX-512 instruction, which the host's
    build of the kernels may hold: the score runs a copy of this tree's package whose score module is built for an AVX2
    CPU (NUMBA_CPU_NAME=haswell)."""
    import shutil

    with tempfile.TemporaryDirectory(prefix="bench-stages-") as work:
        shutil.copytree(ROOT / "scorer", Path(work) / "scorer", ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
        env = {**env, "PYTHONPATH": work, "NUMBA_CPU_NAME": "haswell"}
        build = ("import sys; from pathlib import Path; from scorer.engine.aot_build import build_into_package; "
                 "built, failed = build_into_package(Path(sys.argv[1]), ('score',)); sys.exit(1 if failed else 0)")
        subprocess.run([sys.executable, "-c", build, str(Path(work) / "scorer" / "kernels" / "prebuilt")], env=env, cwd=work, check=True)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(work) / "scorer")], env=env, check=True, capture_output=True)
        part = Path(work) / "submission.csv"
        with open(data / "submission.csv", "rb") as source:
            head = source.read(megabytes * 1_000_000)
        part.write_bytes(head[: head.rfind(b"\n") + 1])
        size = part.stat().st_size
        out = Path(work) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", "scorer.cli", "score", str(part),
                   "--truth", str(data / "test_labels.jsonl"), "--no-progress"]
        subprocess.run(command, env=env, cwd=work, capture_output=True, check=False)
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)], capture_output=True, text=True).stdout
    total = int(re.search(r"([\d,]+) \(100\.0+%\)\s+PROGRAM TOTALS", annotated).group(1).replace(",", ""))
    kernel = re.search(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(?!\S*cpython)\S*(?:6scorer7kernels5parse11parse_block|parse::parse_block)",
                       annotated, re.M)  # the kernel itself, not its Python wrapper
    return {"bytes": size, "total": total, "kernel": int(kernel.group(1).replace(",", "")) if kernel else None}


# -- the parent -----------------------------------------------------------------------------------------------------

def best(runs: list[dict], key: str) -> float:
    return min(run[key] for run in runs)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data", help="folder of submission.csv and test_labels.jsonl")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-polars", action="store_true", help="skip the polars one-liner (about 7 GB of memory at OTTO size)")
    parser.add_argument("--polars-max-mb", type=int, default=12_000, help="kill the polars one-liner past this RSS (MiB)")
    parser.add_argument("--instructions", type=int, metavar="MB", help="also count instructions (callgrind) on the first MB of the file")
    parser.add_argument("--scale", type=Path, action="append", default=[], metavar="DIR",
                        help="another data folder scored end to end in the same runs (peak RSS against size)")
    parser.add_argument("--compare", type=Path, metavar="SRC",
                        help="another source tree of the scorer (its kernels' module built in it), scored end to end in the same runs")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return stage_child(args.child[0], args.child[1], float(args.child[2]))

    submission, truth = args.data / "submission.csv", args.data / "test_labels.jsonl"
    env = dict(os.environ)
    env.pop("SCORER_AOT", None)
    compiled = dict(env)
    compiled.pop("PYTHONDONTWRITEBYTECODE", None)  # the package's bytecode, as an installed (or once imported) package has it
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "scorer")], env=compiled, check=True, capture_output=True)
    python = sys.executable
    scorer_cli = [python, "-m", "scorer.cli"]
    size = submission.stat().st_size
    print(f"data: {submission} ({size / 1e6:.0f} MB), truth {truth}; machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print(f"at the start: {load()}")
    warm = run_child([*scorer_cli, "score", str(submission), "--truth", str(truth), "--format", "json", "--no-progress"], env)
    ours = json.loads(warm["out"])["score"]
    for folder in args.scale:  # its truth compiled into the cache, its file in the page cache
        run_child([*scorer_cli, "score", str(folder / "submission.csv"), "--truth", str(folder / "test_labels.jsonl")], env)
    kernels = run_child([python, "-c", "from scorer.kernels import door; print(door.served('score'))"], env)["out"].strip()
    print(f"truth cache and page cache warmed by one score of each file, the package's bytecode compiled (not counted); kernels: {kernels}")

    score_command = [*scorer_cli, "score", str(submission), "--truth", str(truth)]
    measured: dict[str, list] = {name: [] for name in ("score", "compare", "stages", "cat", "numpy", "commas", "items", "pyarrow")}
    other = dict(env, PYTHONPATH=str(args.compare)) if args.compare else None
    if other is not None:  # run in SRC: `python -m` puts the working folder before PYTHONPATH
        run_child(score_command, other, cwd=args.compare)  # its truth cache entry, if its format differs
    scales: dict[Path, list] = {folder: [] for folder in args.scale}
    for _ in range(args.runs):
        measured["score"].append(run_child(score_command, env))
        if other is not None:
            measured["compare"].append(run_child(score_command, other, cwd=args.compare))
        for folder in args.scale:
            scales[folder].append(run_child([*scorer_cli, "score", str(folder / "submission.csv"), "--truth",
                                             str(folder / "test_labels.jsonl")], env))
        stage_run = run_child([python, __file__, "--child", str(submission), str(truth), repr(time.monotonic())], env)
        measured["stages"].append(json.loads(stage_run["out"]))
        measured["cat"].append(run_child(["cat", str(submission)], env) | {"out": ""})
        measured["numpy"].append(run_child([python, "-c", "import numpy"], env))
        commas = run_child([python, "-c", COUNT_COMMAS, str(submission)], env)
        measured["commas"].append(json.loads(commas["out"]) | {"process": commas})
        measured["items"].append(json.loads(run_child([python, "-c", ITEMS_ALONE, str(submission)], env)["out"]))
        arrow = run_child([python, "-c", PYARROW_READ, str(submission)], env)
        measured["pyarrow"].append(json.loads(arrow["out"]) | {"process": arrow})
    print(f"after the runs: {load()}")
    polars = None
    if not args.no_polars:
        run = run_child([python, "-c", POLARS_ONE_LINER, str(submission), str(truth)], env, max_rss_mb=args.polars_max_mb)
        polars = json.loads(run["out"]) | {"process": run}
        print(f"after the polars one-liner: {load()}")

    score_runs = measured["score"]
    print()
    print(f"scorer score, end to end (best of {args.runs}): {best(score_runs, 'wall'):.3f} s wall, {best(score_runs, 'cpu'):.3f} s CPU, "
          f"peak RSS {best(score_runs, 'rss'):.0f} MiB  (walls {[round(run['wall'], 2) for run in score_runs]})")
    if other is not None:
        runs = measured["compare"]
        print(f"the same, from {args.compare}: {best(runs, 'wall'):.3f} s wall, {best(runs, 'cpu'):.3f} s CPU, peak RSS {best(runs, 'rss'):.0f} MiB  "
              f"(walls {[round(run['wall'], 2) for run in runs]}); this tree / that one: {best(score_runs, 'wall') / best(runs, 'wall'):.2f}x wall, "
              f"{best(score_runs, 'cpu') / best(runs, 'cpu'):.2f}x CPU, {best(score_runs, 'rss') / best(runs, 'rss'):.2f}x RSS")
    names = [name for name, _, _ in measured["stages"][0]]
    rows = [(name, min(run[i][1] for run in measured["stages"]), min(run[i][2] for run in measured["stages"])) for i, name in enumerate(names)]
    by_name = {name: (wall, used) for name, wall, used in rows}
    parse_only = next(value for name, value in by_name.items() if name.startswith("parse (kernel"))
    with_hits = next(value for name, value in by_name.items() if name.startswith("parse + hit test"))
    floors = {
        "process start (interpreter)": "",
        "imports (numpy, scorer, the kernels' module)": f"python -c 'import numpy': {best(measured['numpy'], 'wall'):.3f} s wall, "
                                                        f"{best(measured['numpy'], 'cpu'):.3f} s CPU",
        "open the file, blocks of whole lines (read or mapped)": f"cat of the file: {best(measured['cat'], 'wall'):.3f} s wall, "
                                                          f"{best(measured['cat'], 'cpu'):.3f} s CPU",
        "parse (kernel, 2 threads, truth without sessions)": f"numpy counting the commas, mapped: {best(measured['commas'], 'wall'):.3f} s wall, "
                                                             f"{best(measured['commas'], 'cpu'):.3f} s CPU; pyarrow.csv.read_csv, 2 threads: "
                                                             f"{best(measured['pyarrow'], 'wall'):.3f} s wall, {best(measured['pyarrow'], 'cpu'):.3f} s CPU",
    }
    print(f"\nstages of one score (a child process running them one after the other; best of {args.runs} each):")
    print(f"{'stage':60s} {'wall s':>7s} {'CPU s':>7s}   floor beside it (same run)")
    for name, wall, used in rows:
        if name.startswith("parse + hit test"):
            print(f"{'hit test (parse + hit test, less parse)':60s} {with_hits[0] - parse_only[0]:7.3f} {with_hits[1] - parse_only[1]:7.3f}")
            continue
        print(f"{name:60s} {wall:7.3f} {used:7.3f}   {floors.get(name, '')}")
    staged = [value for name, value in by_name.items() if not name.startswith(("the whole pass", "parse (kernel"))]
    print(f"{'sum of the stages':60s} {sum(w for w, _ in staged):7.3f} {sum(c for _, c in staged):7.3f}")

    commas, arrow = measured["commas"], measured["pyarrow"]
    floor_wall = best(commas, "wall")
    floor_process = min(run["process"]["wall"] for run in commas)
    print(f"\nfloor pass (numpy counts the commas of the mapped file, {commas[0]['commas']:,} commas): {floor_wall:.3f} s wall, "
          f"{best(commas, 'cpu'):.3f} s CPU; as a process with its start: {floor_process:.3f} s")
    print(f"pyarrow.csv.read_csv, 2 threads: {best(arrow, 'wall'):.3f} s wall, {best(arrow, 'cpu'):.3f} s CPU ({arrow[0]['rows']:,} rows)")
    alone = measured["items"]
    print(f"the items alone (numba, 2 threads, mapped: each item's end, checks, key and repeat filter; no id, row or truth; "
          f"{alone[0]['items']:,} items): {best(alone, 'wall'):.3f} s wall, {best(alone, 'cpu'):.3f} s CPU = "
          f"{best(alone, 'wall') / floor_wall:.2f}x the floor pass; the parse stage is {parse_only[0] / best(alone, 'wall'):.2f}x it in wall, "
          f"{parse_only[1] / best(alone, 'cpu'):.2f}x in CPU")
    print(f"score / floor pass: {best(score_runs, 'wall') / floor_wall:.2f}x wall (goal: at most 2x)")
    started = by_name["process start (interpreter)"][0] + by_name["imports (numpy, scorer, the kernels' module)"][0]
    print(f"the process start and imports with the items alone: {started + best(alone, 'wall'):.3f} s = "
          f"{(started + best(alone, 'wall')) / floor_wall:.2f}x the floor pass, before any id, row, truth or sum")
    if polars is not None:
        print(f"polars one-liner (read, split, explode, join, group): {polars['wall']:.2f} s wall, {polars['cpu']:.2f} s CPU, "
              f"peak RSS {polars['process']['rss']:.0f} MiB; score {polars['score']:.12f} (ours {ours:.12f}, "
              f"difference {abs(polars['score'] - ours):.1e}); ours is {polars['wall'] / best(score_runs, 'wall'):.1f}x faster in wall time, "
              f"{polars['cpu'] / best(score_runs, 'cpu'):.1f}x in CPU")
    for folder, runs in scales.items():
        mb = (folder / "submission.csv").stat().st_size / 1e6
        print(f"scale {folder} ({mb:.0f} MB, {mb * 1e6 / size:.1f}x): {best(runs, 'wall'):.3f} s wall, {best(runs, 'cpu'):.3f} s CPU, "
              f"peak RSS {best(runs, 'rss'):.0f} MiB (1x: {best(score_runs, 'rss'):.0f} MiB)")
    goals = (f"goals: wall {best(score_runs, 'wall'):.3f} s (<= 0.5), CPU {best(score_runs, 'cpu'):.3f} s (<= 1.0), "
             f"peak RSS {best(score_runs, 'rss'):.0f} MiB (<= 128), {best(score_runs, 'wall') / floor_wall:.2f}x the floor pass (<= 2); "
             f"{best(score_runs, 'wall') / floor_process:.2f}x it as a process with its start")
    print(goals)
    if args.instructions:
        counted = instructions(args.data, args.instructions, env)
        kernel = f", parse kernel {counted['kernel'] / counted['bytes']:.2f} per byte" if counted["kernel"] else ""
        print(f"instructions (callgrind, `scorer score` of the first {counted['bytes'] / 1e6:.0f} MB): {counted['total']:,} in all, "
              f"{counted['total'] / counted['bytes']:.2f} per byte{kernel}")
    print(f"at the end: {load()}")


if __name__ == "__main__":
    main()
