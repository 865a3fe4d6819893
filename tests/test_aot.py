"""The ahead-of-time compiled stage modules (scorer.kernels.aot): built by warmup, the same results as numba's JIT for
every stage, a fallback when no build is possible, a pass that never imports numba, and only modules this user built
imported (the trust checks are the same code for every stage: the score stage's module stands for all)."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import scorer
from scorer.cli import warmup_runs
from scorer.engine import aot_build
from scorer.kernels import aot, door

STAGE = "score"  # the module the trust checks are tried on
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _the_caches_module_only(request, monkeypatch):
    """These tests are of the module `scorer warmup` builds into the cache: the one the package's build compiled
    (an editable install's, scorer/engine/prebuilt) is skipped, as SCORER_AOT=cache does; its own tests say when."""
    if "prebuilt" not in request.node.name:
        monkeypatch.setenv("SCORER_AOT", "cache")
    aot._tried.clear()
    door._served.clear()


@pytest.fixture(scope="module")
def compiled():
    """The score stage's module of the cache, every stage built once for these tests (in the session's cache folder);
    None where they cannot be."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCORER_AOT", "cache")
        statuses = aot_build.ensure_built()
        assert set(statuses) == set(door.STAGES)
        assert all(status.startswith(("built", "ready", "not built")) for status in statuses.values()), statuses
        return aot.load(STAGE)


def test_a_build_or_a_reason_for_every_stage(compiled):
    for stage, names in door.STAGES.items():
        path = aot.module_path(stage)
        failed = path.with_name(path.name + ".failed")
        if compiled is None:  # no C compiler here: the reason is kept, and the JIT kernels serve
            assert failed.is_file() and failed.read_text().strip(), aot_build.ensure_built()
            assert all(_served(name) is door.jit(name) for name in names)
        else:
            assert path.is_file() and not failed.exists() and aot.tip() is None
            assert set(names) <= set(dir(aot.load(stage)))
            assert all(_served(name) is getattr(aot.load(stage), name) for name in names)


def _served(name: str):
    """The function the door serves (the tests' conftest wraps it, to check the types it is called with)."""
    served = door.kernel(name)
    return getattr(served, "__wrapped__", served)


@pytest.mark.parametrize("stage", door.STAGES)
def test_every_stage_gives_the_same_results_on_both_builds(compiled, tmp_path, stage):
    """The stage's run (what warmup runs: its commands on tiny inputs, with their problems) on numba's JIT and on the
    stage's module."""
    with door.using("jit"):
        jit = warmup_runs.run(stage, tmp_path)
    if compiled is None:
        pytest.skip("no C compiler here: only numba's JIT kernels")
    with door.using("compiled"):
        assert warmup_runs.run(stage, tmp_path) == jit


def _figures(result):
    return json.dumps([result.score, result.metrics, result.counts, [p.to_dict() for p in result.problems]])


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_and_jit_kernels_give_the_same_results(compiled, tmp_path, threads):
    rng = np.random.default_rng(threads)
    truth = tmp_path / "t.jsonl"
    truth.write_text("".join(json.dumps({"session": s, "labels": {"clicks": int(rng.integers(0, 50)),
                                                                   "orders": rng.integers(0, 50, 3).tolist()}}) + "\n"
                             for s in range(300)))
    lines = ["session_type,labels"] + [f"{s}_{t},{' '.join(map(str, rng.integers(0, 50, 25)))}" for s in range(320)
                                       for t in ("clicks", "carts", "orders")]
    lines[7] = "7_clicks,1  2 x"  # the careful path too
    submission = tmp_path / "s.csv"
    submission.write_text("\n".join(lines) + "\n")
    builds = ["jit"] + (["compiled"] if compiled is not None else [])
    outcomes = []
    for build in builds:
        with door.using(build):
            outcomes.append(_figures(scorer.score(submission, truth, block_bytes=4096, threads=threads)))
            outcomes.append(_figures(scorer.score(FIXTURES / "otto_submission.csv", FIXTURES / "otto_truth.jsonl", threads=threads)))
            for name in ("hm", "instacart", "airbnb", "ratings"):  # the string shapes: list, list with a token, long, value
                outcomes.append(_figures(scorer.score(FIXTURES / name / "submission.csv", FIXTURES / name / "truth.csv", name,
                                                      threads=threads)))
    half = len(outcomes) // len(builds)
    assert outcomes[:half] == outcomes[half:] or compiled is None



def _frames(rng):
    """Frames of every list form, with problems, as pyarrow (large offsets) and pandas (32-bit offsets) hand them over."""
    import pyarrow as pa

    rows = [(s, t, rng.integers(0, 50, 22).tolist()) for s in range(320) for t in ("clicks", "carts", "orders")]
    rows[5] = (5, "orders", [1, None, -3, 1])
    rows[9] = (9, "views", [2])
    wide = pa.table({"session_type": [f"{s}_{t}" for s, t, _ in rows] + ["x_clicks"],
                     "labels": pa.array([items for _, _, items in rows] + [[1]], pa.large_list(pa.int64()))})
    keyed = pa.table({"session": [s for s, _, _ in rows], "type": [t for _, t, _ in rows],
                      "labels": pa.array([items for _, _, items in rows], pa.list_(pa.int32()))})
    long = pa.table({"session": [s for s, _, items in rows for _ in items], "type": [t for _, t, items in rows for _ in items],
                     "aid": pa.array([i for _, _, items in rows for i in items], pa.int64())})
    return [wide, keyed, long, wide.slice(10).to_pandas()]


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_and_jit_frame_kernels_give_the_same_results(compiled, threads):
    import pyarrow as pa

    rng = np.random.default_rng(threads)
    truth = scorer.load_truth(pa.table({"session": np.repeat(np.arange(300), 4), "type": ["clicks", "orders", "orders", "orders"] * 300,
                                        "aid": rng.integers(0, 50, 1200)}))
    outcomes = []
    for build in ["jit"] + (["compiled"] if compiled is not None else []):
        with door.using(build):
            results = [scorer.score(frame, truth, threads=threads) for frame in _frames(np.random.default_rng(threads))]
            outcomes.append([_figures(result) for result in results])
    assert outcomes[0] == outcomes[-1]
    assert results[0].counts["rows_with_errors"] == 1 and results[0].counts["rows_scored"] == 898 and results[0].score > 0


def test_the_build_runs_numbas_after_inference_rewrites_where_one_matches(monkeypatch):
    from numba import njit
    from numba.core import rewrites

    from scorer.engine.aot_compile import _rewrites_where_they_match

    applied = []
    apply = rewrites.rewrite_registry.apply
    monkeypatch.setattr(rewrites.rewrite_registry, "apply",
                        lambda kind, state: applied.append((kind, state.func_id.func_name)) or apply(kind, state))

    def array_expression(a, b):
        return a + 2 * b

    def constant_list():
        return np.array([1, 2, 3])

    def plain_loop(a):
        total = 0.0
        for x in a:
            total += x
        return total

    a = np.arange(3.0)
    with _rewrites_where_they_match():
        assert list(njit(array_expression)(a, a)) == [0.0, 3.0, 6.0]
        assert list(njit(constant_list)()) == [1, 2, 3]
        assert njit(plain_loop)(a) == 3.0
    after = {name for kind, name in applied if kind == "after-inference"}
    assert {"array_expression", "constant_list"} <= after and "plain_loop" not in after


def test_a_failed_build_leaves_its_reason_and_the_jit_kernels_serve(tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))

    monkeypatch.setattr(aot_build, "_compiled_each", lambda stages: ["RuntimeError: no C compiler"] * len(stages))
    assert aot_build.ensure_built() == dict.fromkeys(door.STAGES, "not built (the JIT kernels serve): RuntimeError: no C compiler")
    for stage in door.STAGES:
        failed = aot.module_path(stage).with_name(aot.module_path(stage).name + ".failed")
        assert failed.read_text().strip() == "RuntimeError: no C compiler"
        assert aot.load(stage) is None
    assert aot.tip() is None  # no nagging about a build that cannot be made here
    failed = aot.module_path(STAGE).with_name(aot.module_path(STAGE).name + ".failed")
    failed.unlink()
    assert "scorer warmup" in aot.tip()  # nothing built and nothing tried: the participant hears of warmup
    monkeypatch.setenv("SCORER_AOT", "0")
    assert aot.load(STAGE) is None and aot_build.ensure_built() == dict.fromkeys(door.STAGES, "turned off (SCORER_AOT=0)")
    assert aot.tip() is None


def _printed(code: str) -> str:
    """What `code` prints, run in a fresh interpreter (so sys.modules shows what it imported)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True).stdout.strip()


def test_the_cli_scores_without_numba_on_the_compiled_kernels(compiled):
    code = ("import sys, io, contextlib\nfrom scorer.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['score', {str(FIXTURES / 'otto_submission.csv')!r}, '--truth', {str(FIXTURES / 'otto_truth.jsonl')!r}])\n"
            "print('numba' in sys.modules)")
    assert _printed(code) == ("True" if compiled is None else "False")



def test_a_frame_scores_without_numba_on_the_compiled_kernels(compiled):
    code = ("import sys, pyarrow as pa, scorer\n"
            "frame = pa.table({'session_type': ['1_clicks', '2_orders'], 'labels': pa.array([[5, 6], [7]], pa.large_list(pa.int64()))})\n"
            f"result = scorer.score(frame, {str(FIXTURES / 'otto_truth.jsonl')!r})\n"
            "print(result.counts['rows_read'], 'numba' in sys.modules)")
    assert _printed(code) == "2 " + ("True" if compiled is None else "False")


# -- only a module this user built is imported --------------------------------------------------

PLANTED_C = r"""
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
static struct PyModuleDef planted = {PyModuleDef_HEAD_INIT, "scorer_kernels", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_scorer_kernels(void) {
    FILE *marker = fopen(getenv("PLANTED_MARKER"), "w");  /* proof that the planted code ran */
    if (marker) fclose(marker);
    return PyModule_Create(&planted);
}
"""


def _planted_cache(tmp_path):
    """A cache folder whose aot/ holds, at the module's path, an extension module that writes a marker when imported
    (bytes that are no module where there is no C compiler); the folder itself private, as warmup makes it."""
    import sysconfig

    cache = tmp_path / "cache"
    folder = cache / "aot"
    folder.mkdir(parents=True, mode=0o700)
    env = {**os.environ, "SCORER_CACHE_DIR": str(cache), "PLANTED_MARKER": str(tmp_path / "marker")}
    target = Path(subprocess.run([sys.executable, "-c", f"from scorer.kernels import aot; print(aot.module_path({STAGE!r}))"], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip())
    source = tmp_path / "planted.c"
    source.write_text(PLANTED_C)
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    made = subprocess.run([compiler, "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(source), "-o", str(target)],
                          capture_output=True)
    if made.returncode != 0:
        target.write_bytes(b"\x7fELF not a module")
    return env, target, made.returncode == 0


def _score_in_a_fresh_process(env):
    code = ("import sys, io, contextlib\nfrom scorer.cli.main import main\nfrom scorer.kernels import door\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    code = main(['score', {str(FIXTURES / 'otto_submission.csv')!r}, '--truth', {str(FIXTURES / 'otto_truth.jsonl')!r}])\n"
            "print(code, 'score' in out.getvalue(), type(door.kernel('parse_block')).__name__)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_a_planted_module_without_the_recorded_hash_is_not_imported(tmp_path):
    env, target, compiled_here = _planted_cache(tmp_path)
    for manifest in (None, "0" * 64):  # none recorded (an older scorer's build too); a wrong one
        if manifest is not None:
            target.with_name(target.name + ".sha256").write_text(f"{manifest}  {target.name}\n")
        done = _score_in_a_fresh_process(env)
        assert done.stdout.split() == ["0", "True", "CPUDispatcher"], done.stderr  # scored, on numba's JIT
        assert not (tmp_path / "marker").exists()
        warning = [line for line in done.stderr.splitlines() if "ahead-of-time" in line]
        assert len(warning) == 1 and "Traceback" not in done.stderr, done.stderr  # said once, no crash
        assert ("no recorded SHA-256" if manifest is None else "its SHA-256 differs from the recorded one") in warning[0]
    # the control: the same file with its true hash recorded is imported (so the marker would have shown it above)
    import hashlib

    target.with_name(target.name + ".sha256").write_text(f"{hashlib.sha256(target.read_bytes()).hexdigest()}  {target.name}\n")
    done = subprocess.run([sys.executable, "-c", f"from scorer.kernels import aot; aot.load({STAGE!r})"], capture_output=True, text=True, env=env)
    assert (tmp_path / "marker").exists() if compiled_here else "were not loaded: ImportError" in done.stderr


def _copy_of_the_build(compiled, tmp_path, monkeypatch):
    """The honest build and its recorded hash copied into a fresh private cache folder (which this test now uses)."""
    import shutil

    built = aot.module_path(STAGE)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "aot").mkdir(parents=True, mode=0o700)
    path = aot.module_path(STAGE)
    if compiled is not None:
        for suffix in ("", ".sha256"):
            shutil.copy(built.with_name(built.name + suffix), path.with_name(path.name + suffix))
    else:  # no compiler here: any file with its hash recorded passes the checks (and then fails to import)
        path.write_bytes(b"not a module")
        path.chmod(0o600)
        aot.keep_note(path, ".sha256", f"{hashlib.sha256(b'not a module').hexdigest()}  {path.name}\n".encode())
    return path


def test_the_honest_build_loads_from_a_private_folder_with_its_hash_recorded(compiled, tmp_path, monkeypatch, capsys):
    if compiled is not None:
        built = aot.module_path(STAGE)
        assert (built.parent.stat().st_mode & 0o777) == 0o700 and (built.stat().st_mode & 0o777) == 0o600
        recorded = built.with_name(built.name + ".sha256").read_text().split()
        assert recorded == [hashlib.sha256(built.read_bytes()).hexdigest(), built.name]  # `sha256sum -c` reads it
    path = _copy_of_the_build(compiled, tmp_path, monkeypatch)
    assert (aot.load(STAGE) is not None) == (compiled is not None)
    assert aot_build._ready(STAGE) == f"ready: {path}" or compiled is None
    assert "not loaded" not in capsys.readouterr().err or compiled is None


@pytest.mark.parametrize("spoil, reason", [
    (lambda path: path.parent.chmod(0o777), "is writable by others (mode 777)"),
    (lambda path: (os.chown(path.parent, -1, 4321), path.parent.chmod(0o720)), "is writable by others (mode 720)"),  # a group not the user's alone
    (lambda path: os.chown(path.parent, 4321, -1), "is owned by uid 4321"),
    (lambda path: os.chown(path, 4321, -1), "is owned by uid 4321"),
    (lambda path: path.chmod(0o666), "is writable by others (mode 666)"),
    (lambda path: os.chown(path.with_name(path.name + ".sha256"), 4321, -1), "is owned by uid 4321"),
    (lambda path: path.with_name(path.name + ".sha256").chmod(0o622), "is writable by others (mode 622)"),
    (lambda path: path.write_bytes(path.read_bytes() + b"\0"), "its SHA-256 differs from the recorded one"),
    (lambda path: (path.unlink(), os.mkfifo(path)), "is not a regular file"),  # and opening it does not hang
])
def test_a_module_in_a_folder_or_file_others_control_is_not_imported(compiled, tmp_path, monkeypatch, capsys, spoil, reason):
    path = _copy_of_the_build(compiled, tmp_path, monkeypatch)
    spoil(path)
    assert aot.load(STAGE) is None
    assert aot.load(STAGE) is None  # asked again: said once
    warning = capsys.readouterr().err
    assert warning.count("were not loaded") == 1 and reason in warning, warning


def test_symlinks_are_not_followed(compiled, tmp_path, monkeypatch, capsys):
    path = _copy_of_the_build(compiled, tmp_path, monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    os.rename(path.parent, elsewhere)
    path.parent.symlink_to(elsewhere)  # the folder a symlink
    assert aot.load(STAGE) is None and "is a symlink or not a folder" in capsys.readouterr().err
    aot._tried.clear()
    path.parent.unlink()
    path.parent.mkdir(mode=0o700)
    for name in (path.name, path.name + ".sha256"):  # then the module and its hash symlinks to the honest files
        (path.parent / name).symlink_to(elsewhere / name)
    assert aot.load(STAGE) is None and "is a symlink or not a regular file" in capsys.readouterr().err


def test_warmup_refuses_to_build_into_a_folder_others_can_write_to(tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    (tmp_path / "aot").mkdir(mode=0o777)
    (tmp_path / "aot").chmod(0o777)
    for status in aot_build.ensure_built().values():
        assert status.startswith("not built (the JIT kernels serve): Untrusted: the folder") and "writable by others" in status
    assert os.listdir(tmp_path / "aot") == []  # nothing written there, not even the reason
