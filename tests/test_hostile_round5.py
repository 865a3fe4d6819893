"""Round 5 of the hostile trials (issue 44): the contract on the newest commands, and the code the scorer loads.

Exit 0, 1 or 2 with one sentence; never exit 3 or a traceback; a module or cache folder that fails a trust rule is
never imported from, whichever way it is reached.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_hostile_round4 import OTTO_SUBMISSION, OTTO_TRUTH, run_cli, run_process
from test_prebuilt_kernels import _prebuilt_here

# -- text drawn on a report -----------------------------------------------------------------------------------
TEX = "a$\\foo{$"  # mathtext would parse it and fail: ParseFatalException, exit 3


def report_commands(tmp: Path) -> dict[str, list]:
    """Every command that draws a figure, each given files named TEX (and a team named so)."""
    submission = tmp / f"{TEX}.csv"
    shutil.copy(OTTO_SUBMISSION, submission)
    other = tmp / f"{TEX}2.csv"
    other.write_text(Path(OTTO_SUBMISSION).read_text().replace(" ", " 7 ", 1))
    candidates = tmp / f"{TEX}c.csv"
    candidates.write_text("session,aid,type\n" + "".join(f"{s},{a},{t}\n" for s in (1, 2, 3) for t in ("clicks", "carts", "orders")
                                                     for a in range(1, 30)))
    teams = tmp / "teams.csv"
    teams.write_text(f"file,team,time\n{submission},{TEX},1\n{other},{TEX}b,2\n")
    return {
        "score": ["score", submission, "--truth", OTTO_TRUTH, "--split", "public=0.5", "--bootstrap", "10", "--report", tmp / f"{TEX}.html"],
        "compare": ["compare", submission, other, "--truth", OTTO_TRUTH, "--bootstrap", "10", "--report", tmp / f"{TEX}c.png"],
        "leaderboard": ["leaderboard", submission, other, "--truth", OTTO_TRUTH, "--bootstrap", "10", "--report", tmp / f"{TEX}b.html"],
        "ladder": ["ladder", "--teams", teams, "--truth", OTTO_TRUTH, "--split", "public=0.5", "--report", tmp / f"{TEX}l.html"],
        "candidates": ["candidates", candidates, "--truth", OTTO_TRUTH, "--plot", tmp / f"{TEX}p.png"],
    }


@pytest.mark.parametrize("command", ["score", "compare", "leaderboard", "ladder", "candidates"])
def test_a_name_with_dollar_signs_is_drawn_as_written(tmp_path, command):
    pytest.importorskip("matplotlib")
    argv = report_commands(tmp_path)[command]
    code, out, err = run_cli(*argv)
    assert code == 0, err
    assert "internal error" not in err and Path(argv[-1]).stat().st_size > 0


# -- code the scorer loads: a module proves its stage; the cache folder is checked from its root ---------------------------
# Each load runs in a fresh process: CPython keeps an extension module's first contents by its path and name, and every
# module is imported through /proc/self/fd/N/<its file name>, so a second load in one process may not read the file again.
PROBE = ("import sys\nfrom scorer.kernels import aot, door\nmodule = aot.load(sys.argv[1])\n"
         "print(module is not None and module.stage_identity() == aot.identity(sys.argv[1]), door.served(sys.argv[1]).split()[0])")


@pytest.fixture
def cache_modules(tmp_path, monkeypatch):
    """A private cache folder that aot now reads (SCORER_AOT=cache), and a function planting a package module in it under
    a stage's name, with the hash recorded as `scorer warmup` records it."""
    from scorer.kernels import aot

    monkeypatch.setenv("SCORER_AOT", "cache")
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir(mode=0o700)

    def plant(module_of: str, named_as: str) -> Path:
        target = aot.module_path(named_as)
        target.parent.mkdir(mode=0o700, exist_ok=True)
        data = _prebuilt_here(module_of).read_bytes()
        target.write_bytes(data)
        target.chmod(0o600)
        aot.keep_note(target, ".sha256", f"{hashlib.sha256(data).hexdigest()}  {target.name}\n".encode())
        return target

    return plant


def load_fresh(stage: str) -> tuple[list[str], str]:
    """aot.load(stage) in a fresh process: (whether it loaded and proved its identity, which build serves), stderr."""
    done = subprocess.run([sys.executable, "-c", PROBE, stage], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split(), done.stderr


def test_a_stage_module_in_its_place_serves(cache_modules):
    cache_modules("audit", "audit")
    assert load_fresh("audit") == (["True", "ahead-of-time"], "")


@pytest.mark.parametrize("module_of, named_as", [("audit", "score"), ("solution", "audit"), ("score", "strings")])
def test_another_stages_module_with_its_hash_recorded_does_not_serve(cache_modules, module_of, named_as):
    cache_modules(module_of, named_as)
    (loaded, served), warning = load_fresh(named_as)
    assert loaded == "False" and served == "numba-jit"  # numba's kernels serve instead
    assert f"is not the {named_as!r} stage's module built from this source" in warning, warning


def test_a_module_built_from_other_source_does_not_serve(cache_modules, monkeypatch):
    from scorer.kernels import aot

    target = cache_modules("audit", "audit")
    (loaded, _), warning = load_fresh("audit")
    assert loaded == "True"
    source = aot.sources()[0]
    monkeypatch.setattr(aot, "_named", lambda stage, *parts: target.name)  # the other source's module found by this name
    assert aot.module_path("audit") == target
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aot, "_source_digest", lambda: aot.sha256(source.read_bytes() + b"edited"))
        module = aot._checked_import(target, {}, "audit")
    assert module is None


def test_a_swapped_stage_module_leaves_the_command_working(cache_modules):
    cache_modules("solution", "score")
    done = run_process("score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--format", "json")
    assert done.returncode == 0 and "is not the 'score' stage's module" in done.stderr, done.stderr


@pytest.mark.parametrize("spoil, reason", [
    (lambda root: root.chmod(0o777), "is writable by others (mode 777)"),
    (lambda root: (root.rename(root.with_name("real")), root.symlink_to(root.with_name("real"))), "is a symlink or not a folder"),
])
def test_a_cache_folder_others_control_is_not_imported_from(cache_modules, tmp_path, spoil, reason):
    cache_modules("audit", "audit")
    spoil(tmp_path / "cache")
    (loaded, served), warning = load_fresh("audit")
    assert loaded == "False" and served == "numba-jit"
    assert "were not loaded" in warning and reason in warning and str(tmp_path / "cache") in warning, warning


def test_warmup_builds_nothing_into_a_cache_folder_others_control(tmp_path, monkeypatch):
    from scorer.engine import aot_build

    monkeypatch.setenv("SCORER_AOT", "cache")
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache").chmod(0o777)
    for status in aot_build.ensure_built().values():
        assert status.startswith("not built (the JIT kernels serve)") and "writable by others" in status, status
    assert not (tmp_path / "cache" / "aot").exists()


REPEATED_PATH = """
import os, shutil, sys, tempfile
from pathlib import Path
from scorer.kernels import aot

def copy_of(stage):
    built = next(p for p in aot.prebuilt_paths(stage) if p.is_file())
    folder = Path(tempfile.mkdtemp())
    shutil.copy(built, folder)
    return folder / built.name

def load(path):
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        return aot.proven(aot._import(path, fd), path.name.split("-")[0][len("scorer_"):], path.name), fd
    finally:
        os.close(fd)

score = copy_of("score")
first, number = load(score)
other, _ = load(copy_of("explain"))
again, same_number = load(score)  # the same /proc/self/fd/N/name, seen before, while another stage's module was the last
assert same_number == number, (number, same_number)
print(sorted(n for n in vars(again) if not n.startswith("_")) == sorted(n for n in vars(first) if not n.startswith("_")))
"""


def test_a_stage_module_loaded_again_at_a_path_seen_before_stays_itself():
    """CPython keeps a single-phase module's contents by path and name, and every stage module has one name: loaded again
    at a /proc/self/fd path it has seen, a module was merged into the last stage module imported (which then exported
    another stage's kernels too)."""
    _prebuilt_here("score"), _prebuilt_here("explain")
    done = subprocess.run([sys.executable, "-c", REPEATED_PATH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["True"], done.stdout + done.stderr
