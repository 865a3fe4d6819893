"""Every attack of issue 12 ("Grader hardening"), each run the way a grader runs scorer, one child process each.

    python bench/attack.py            # warm-up, then all cases: about two minutes
    python bench/attack.py gzip blank # only the cases whose name holds one of these words
    python bench/attack.py --no-warmup

First runs `scorer warmup` (as a grader's image does), so no case pays for numba compiling a kernel. Then
builds the inputs in a temporary folder and runs `python -m scorer.cli ...` (the Codabench scoring
program, or `score --strict --untrusted`), with a competition config whose max_seconds is 2. Prints per case the
exit code (and the one wanted), wall seconds, peak RSS of the child (os.wait4), and whether it ended
within max_seconds + 2 s and 300 MB, gave the wanted exit code and passed the case's own check (no
byte of the truth or of the environment quoted, the right truth scored, nothing planted imported).
Ends with "N of M cases met every bound" and exits 1 if a case failed. Timings depend on the machine's load.
tests/test_attack_bench.py runs the QUICK cases through judge().
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
OTTO_TRUTH = FIXTURES / "otto_truth.jsonl"
OTTO_SUBMISSION = FIXTURES / "otto_submission.csv"
HM_TRUTH, HM_SUBMISSION = FIXTURES / "hm" / "truth.csv", FIXTURES / "hm" / "submission.csv"
HEADER = b"session_type,labels\n"
MAX_SECONDS = 2
MAX_MB = 300
HARD_STOP = 120  # a child still running after this is killed (and fails)
SECRET = "attack-bench-secret-4c1d"  # in the children's environment: no output may show it


@dataclass
class Run:
    argv: list[str]  # after `python -m scorer.cli`
    exit_code: int  # the one wanted
    check: object = None  # (stdout + stderr) -> str | None: what is wrong, if anything
    seconds: float = MAX_SECONDS + 2
    env: dict = field(default_factory=dict)
    after: object = None  # () -> str | None, a check of the case's files after the run


def config(folder: Path, name: str = "otto", seconds: float = MAX_SECONDS, **limits) -> Path:
    """The bundled config with max_seconds (and other limits) replaced."""
    text = (ROOT / "scorer" / "spec" / "configs" / f"{name}.toml").read_text()
    for key, value in {"max_seconds": seconds, **limits}.items():
        text, found = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        assert found == 1, key
    path = folder / f"{name}-{seconds}.toml"
    path.write_text(text)
    return path


def quotes_none(*files: Path):
    """A check: no line of these files (nor the planted secret) appears in the output."""
    lines = [line for path in files for line in path.read_text(errors="replace").splitlines()[1:] if len(line) > 6]

    def check(output: str):
        quoted = [line for line in lines if line in output]
        return f"quotes {quoted[0][:40]!r}" if quoted else ("shows the environment" if SECRET in output else None)

    return check


def codabench(folder: Path, truth: Path, plant, competition: str = "otto") -> Run:
    """INPUT/ref with the truth, INPUT/res with what plant(res, ref_truth) puts there."""
    (folder / "input" / "ref").mkdir(parents=True)
    (folder / "input" / "res").mkdir()
    shutil.copy(truth, folder / "input" / "ref" / truth.name)
    plant(folder / "input" / "res", folder / "input" / "ref" / truth.name)
    argv = ["codabench", str(folder / "input"), str(folder / "output"), "--config", str(config(folder, competition))]
    scored = folder / "output" / "scores.json"
    return Run(argv, 1, quotes_none(truth), after=lambda: "scores were written" if scored.exists() else None)


def strict(folder: Path, submission: Path, truth: Path = OTTO_TRUTH, competition: str = "otto", wanted: int = 1, **limits) -> Run:
    argv = ["score", str(submission), "--truth", str(truth), "--strict", "--untrusted", "--no-progress",
            "--config", str(config(folder, competition, **limits))]
    budget = float(limits.get("seconds", MAX_SECONDS))
    return Run(argv, wanted, quotes_none(truth) if wanted == 1 and submission != truth else None,
               seconds=budget + 2 if budget == budget else MAX_SECONDS + 2)  # nan: the usual budget


# -- links ----------------------------------------------------------------------------------------
def symlink_truth(folder, competition="otto", truth=OTTO_TRUTH):
    return codabench(folder, truth, lambda res, target: os.symlink(os.path.relpath(target, res), res / "submission.csv"), competition)


def hardlink_truth(folder, competition="otto", truth=OTTO_TRUTH):
    return codabench(folder, truth, lambda res, target: os.link(target, res / "submission.csv"), competition)


def symlink_environ(folder):
    return codabench(folder, OTTO_TRUTH, lambda res, _: os.symlink("/proc/self/environ", res / "submission.csv"))


# -- time and size --------------------------------------------------------------------------------
def empty_members(folder: Path, count: int) -> Path:
    """A gzip of the header and then `count` empty members (20 bytes each), written a million at a time."""
    path = folder / f"members{count}.csv.gz"
    member = gzip.compress(b"", mtime=0)
    with open(path, "wb") as out:
        out.write(gzip.compress(HEADER, mtime=0))
        for done in range(0, count, 1_000_000):
            out.write(member * min(1_000_000, count - done))
    return path


def gzip_members(count):
    return lambda folder: strict(folder, empty_members(folder, count))


def newlines(gigabytes: int, seconds: float = MAX_SECONDS):
    """A gzip of `gigabytes` GB of line ends (members of 64 MB each: about 1 MB of gzip per GB)."""
    def build(folder: Path) -> Run:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        member = packer.compress(b"\n" * (64 << 20)) + packer.flush()
        path = folder / "newlines.csv.gz"
        path.write_bytes(gzip.compress(HEADER, mtime=0) + member * (gigabytes << 4))
        return strict(folder, path, seconds=seconds)

    return build


def no_line_end(folder: Path) -> Run:
    path = folder / "long.csv"
    path.write_bytes(HEADER + b"1_clicks," + b"1 " * (9 << 19))  # 9 MB without a line end: more than a block
    return strict(folder, path)


def zip_bad_offset(folder: Path) -> Run:
    path = folder / "submission.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(OTTO_SUBMISSION, "submission.csv")
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x05\x06") + 16  # the end record's offset of the central directory
    data[at : at + 4] = (int.from_bytes(data[at : at + 4], "little") + 1000).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return strict(folder, path)


# -- odd submissions ------------------------------------------------------------------------------
def pandas_index(folder: Path) -> Run:
    rows = OTTO_SUBMISSION.read_text().splitlines()
    path = folder / "to_csv.csv"
    path.write_text("," + rows[0] + "\n" + "".join(f"{n},{row}\n" for n, row in enumerate(rows[1:])))
    return strict(folder, path)


def truth_as_submission(folder: Path) -> Run:
    return strict(folder, OTTO_TRUTH)


def python_lists(folder: Path) -> Run:
    rows = OTTO_SUBMISSION.read_text().splitlines()
    path = folder / "lists.csv"
    path.write_text(rows[0] + "\n" + "".join(f'{row.split(",")[0]},"{row.split(",")[1].split()}"\n' for row in rows[1:]))
    return strict(folder, path)


# -- truth and config (the host's errors: exit 2) -------------------------------------------------
def nested_truth(folder: Path) -> Run:
    path = folder / "truth.jsonl"
    path.write_text('{"session": 1, "labels": {"clicks": ' + "[" * 100_000 + "\n")
    return strict(folder, OTTO_SUBMISSION, path, wanted=2)


def crafted_npz(how: str):
    def build(folder: Path) -> Run:
        sys.path.insert(0, str(ROOT))
        from scorer.truth.npz import read_npz, write_npz

        compiled = folder / "truth.truth.npz"
        subprocess.run([sys.executable, "-m", "scorer.cli", "compile-truth", str(OTTO_TRUTH), "-o", str(compiled)],
                       check=True, capture_output=True, env=child_env({}))
        arrays = {name: array.copy() for name, array in read_npz(compiled).items()}
        meta = json.loads(bytes(arrays.pop("meta")).decode())
        indptr, items = arrays["indptr"], arrays["items"]
        if how == "out of range":
            indptr[-1] = len(items) + 1_000_000
        elif how == "decreasing":
            indptr[1], indptr[2] = indptr[2] + 5, indptr[1]
        else:  # items of a slot out of order
            slot = next(s for s in range(len(indptr) - 1) if indptr[s + 1] - indptr[s] > 1)
            items[indptr[slot] : indptr[slot + 1]] = items[indptr[slot] : indptr[slot + 1]][::-1].copy()
        write_npz(compiled, meta, **arrays)
        return strict(folder, OTTO_SUBMISSION, compiled, wanted=2)

    return build


def nan_seconds(folder: Path) -> Run:
    return strict(folder, OTTO_SUBMISSION, wanted=2, seconds="nan")


def rewritten_truth(folder: Path) -> Run:
    """Score, rewrite the truth with the same size and modification time, score again: the new truth must count."""
    truth = folder / "truth.jsonl"
    old = OTTO_TRUTH.read_bytes()
    truth.write_bytes(old)
    stamp = truth.stat()
    cache = folder / "cache"
    argv = strict(folder, OTTO_SUBMISSION, truth, wanted=0).argv + ["--format", "json"]
    env = child_env({"SCORER_CACHE_DIR": str(cache)})
    first = json.loads(subprocess.run([sys.executable, "-m", "scorer.cli", *argv], capture_output=True, env=env).stdout)["score"]
    new = old.replace(b'"carts": [20]', b'"carts": [21]')  # 1_carts,21 is in the submission: the score changes
    assert len(new) == len(old) and new != old
    truth.write_bytes(new)
    os.utime(truth, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    fresh = json.loads(subprocess.run([sys.executable, "-m", "scorer.cli", *argv], capture_output=True,
                                      env=child_env({"SCORER_CACHE_DIR": str(folder / "fresh")})).stdout)["score"]

    def check(output: str):
        now = json.JSONDecoder().raw_decode(output, output.index("{"))[0]["score"]
        return None if now == fresh != first else f"scored {now}: the old truth gives {first}, the new {fresh}"

    return Run(argv, 0, check, env={"SCORER_CACHE_DIR": str(cache)})


PLANT = r"""
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
PyMODINIT_FUNC PyInit_%s(void) {
    FILE *marker = fopen(getenv("SCORER_ATTACK_MARKER"), "w");
    if (marker) { fputs("imported", marker); fclose(marker); }
    PyErr_SetString(PyExc_ImportError, "a planted module");
    return NULL;
}
"""


def planted_module(folder: Path) -> Run:
    """A module of our own, with its SHA-256 recorded as a build records it, at the path of the ahead-of-time
    kernels in a cache folder anyone can write to (a shared cache root): scoring must not import it, and must say so."""
    cache, marker = folder / "cache", folder / "imported"
    # SCORER_AOT=cache: the score stage's module is looked for in the cache alone (the package's own would serve first)
    env = child_env({"SCORER_CACHE_DIR": str(cache), "SCORER_AOT": "cache"})
    path, init = subprocess.run([sys.executable, "-c", "from scorer.kernels import aot; print(aot.module_path('score')); print(aot.MODULE_NAME)"],
                                capture_output=True, text=True, env=env, check=True).stdout.split()
    path = Path(path)
    path.parent.mkdir(parents=True)
    path.parent.chmod(0o777)
    source = folder / "plant.c"
    source.write_text(PLANT % init)  # the init symbol every stage module has: importable, were it loaded
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("no C compiler to build the planted module")
    subprocess.run([compiler, "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(source), "-o", str(path)], check=True)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    run = strict(folder, OTTO_SUBMISSION, wanted=0)
    run.env = {"SCORER_CACHE_DIR": str(cache), "SCORER_AOT": "cache", "SCORER_ATTACK_MARKER": str(marker)}
    run.seconds = 30  # the JIT kernels load instead (numba's import and cache)
    run.check = lambda output: None if f"kernels in {path.parent} were not loaded" in output else "no word of the planted module"
    run.after = lambda: "the planted module was imported" if marker.exists() else None
    return run


CASES = {
    "symlink to truth (otto)": symlink_truth,
    "hard link to truth (otto)": hardlink_truth,
    "symlink to /proc/self/environ": symlink_environ,
    "symlink to truth (hm)": lambda folder: symlink_truth(folder, "hm", HM_TRUTH),
    "hard link to truth (hm)": lambda folder: hardlink_truth(folder, "hm", HM_TRUTH),
    "gzip of 1M empty members": gzip_members(1_000_000),
    "gzip of 6M empty members": gzip_members(6_000_000),
    "10 MB gzip of newlines (10 GB)": newlines(10),
    "1 GB of newlines (1 MB gzip), max_seconds 30": newlines(1, 30),
    "line without end in the block": no_line_end,
    "zip with bad directory offset": zip_bad_offset,
    "pandas to_csv with index column": pandas_index,
    "truth file as submission": truth_as_submission,
    "labels as Python lists": python_lists,
    "truth line of 100k nested [": nested_truth,
    "truth.npz offsets out of range": crafted_npz("out of range"),
    "truth.npz decreasing indptr": crafted_npz("decreasing"),
    "truth.npz unsorted items": crafted_npz("unsorted"),
    "truth rewritten, same size and mtime": rewritten_truth,
    "max_seconds = nan": nan_seconds,
    "planted ahead-of-time module": planted_module,
}
# the cases that compile no kernel and end in about a second each: tests/test_attack_bench.py runs them
QUICK = ("symlink to truth (otto)", "hard link to truth (otto)", "symlink to /proc/self/environ", "symlink to truth (hm)",
         "hard link to truth (hm)", "zip with bad directory offset", "truth line of 100k nested [",
         "truth.npz offsets out of range", "truth.npz decreasing indptr", "truth.npz unsorted items", "max_seconds = nan")


def child_env(extra: dict) -> dict:
    env = dict(os.environ, SCORER_TEST_SECRET=SECRET, PYTHONPATH=str(ROOT), **extra)
    env.pop("SCORER_DEBUG", None)
    return env


# Linux keeps a process's peak RSS across exec, and a child forked from this bench starts from the bench's own
# peak (after building a case's input, 100 MB and more): a small launcher forks the scorer and reports its figures.
LAUNCHER = """
import os, subprocess, sys, threading, time
result, stop = sys.argv[1], float(sys.argv[2])
started = time.monotonic()
child = subprocess.Popen(sys.argv[3:])
watchdog = threading.Timer(stop, child.kill)
watchdog.start()
_, status, usage = os.wait4(child.pid, 0)
seconds = time.monotonic() - started
watchdog.cancel()
with open(result, "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {seconds} {usage.ru_maxrss / 1024}")
"""


def run_child(run: Run, folder: Path) -> tuple[int, float, float, str]:
    """Exit code, wall seconds, peak RSS (MB) and output of `python -m scorer.cli *run.argv`."""
    out_path, result = folder / "output.txt", folder / "launcher.txt"
    with open(out_path, "wb") as out:
        subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, str(result), str(HARD_STOP),
                        sys.executable, "-m", "scorer.cli", *run.argv],
                       stdout=out, stderr=subprocess.STDOUT, env=child_env(run.env), cwd=folder, timeout=HARD_STOP + 30)
    code, seconds, peak = result.read_text().split()
    return int(code), float(seconds), float(peak), out_path.read_text(errors="replace")


@dataclass
class Outcome:
    """What one case did, and every bound it broke (none: it met them all)."""

    name: str
    faults: list[str]
    code: int | None = None
    wanted: int | None = None
    seconds: float | None = None
    peak: float | None = None
    says: str = "-"

    def row(self) -> str:
        if self.code is None:
            return f"{self.name:44} {'-':>9} {'-':>8} {'-':>8}  {'':14} not run: {'; '.join(self.faults)}"
        verdict = "ok" if not self.faults else "FAIL: " + "; ".join(self.faults)
        return f"{self.name:44} {self.code:>4} ({self.wanted}) {self.seconds:>8.2f} {self.peak:>8.0f}  {self.says:14} {verdict}"


def judge(name: str, folder: Path) -> Outcome:
    """Build the case `name` in the empty folder, run it as a grader would and hold it to every bound."""
    try:
        run = CASES[name](folder)
        code, seconds, peak, output = run_child(run, folder)
    except Exception as error:  # noqa: BLE001 - the case could not be set up or measured here: say so, go on
        return Outcome(name, [f"{type(error).__name__}: {error}"])
    faults = []
    if code != run.exit_code:
        faults.append(f"exit {code}, wanted {run.exit_code}")
    if seconds > run.seconds:
        faults.append(f"over {run.seconds:g} s")
    if peak > MAX_MB:
        faults.append(f"over {MAX_MB} MB")
    for check in (run.check and (lambda: run.check(output)), run.after):
        fault = check() if check else None
        if fault:
            faults.append(fault)
    if "Traceback" in output or "internal error" in output:
        faults.append("internal error: " + output.strip().splitlines()[-1][:80])
    says = ",".join(list(dict.fromkeys(re.findall(r"\bS0\d\d\b", output)))[:3]) or "-"
    return Outcome(name, faults, code, run.exit_code, seconds, peak, says)


def warm_up() -> str:
    """`scorer warmup` for the competitions the cases use, as a grader's image runs it: its last line, or why it failed."""
    done = subprocess.run([sys.executable, "-m", "scorer.cli", "warmup", "--competition", "otto", "--competition", "hm"],
                          capture_output=True, text=True, env=child_env({}))
    lines = (done.stdout + done.stderr).strip().splitlines() or ["(no output)"]
    return lines[-1] if done.returncode == 0 else f"failed (exit {done.returncode}): {lines[-1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="run only the cases whose name holds one of these words")
    parser.add_argument("--no-warmup", action="store_true", help="do not run `scorer warmup` first (timings then include numba compiling)")
    args = parser.parse_args()
    chosen = [name for name in CASES if not args.only or any(word in name for word in args.only)]
    if not args.no_warmup:
        started = time.monotonic()
        said = warm_up()
        print(f"warm-up ({time.monotonic() - started:.0f} s): {said}", flush=True)
    print(f"bounds: the wanted exit code, at most max_seconds ({MAX_SECONDS} s unless the case names it) + 2 s, "
          f"at most {MAX_MB} MB peak RSS, the case's own check\n")
    print(f"{'case':44} {'exit':>9} {'seconds':>8} {'peak MB':>8}  {'says':14} verdict")
    failed = []
    for name in chosen:
        with tempfile.TemporaryDirectory(prefix="scorer-attack-") as tmp:
            outcome = judge(name, Path(tmp))
        print(outcome.row(), flush=True)
        if outcome.faults:
            failed.append(name)
    print(f"\n{len(chosen) - len(failed)} of {len(chosen)} cases met every bound" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
