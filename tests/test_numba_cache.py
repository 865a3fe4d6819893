"""numba's cache folder is checked before numba loads code from it (scorer.numba_cache): an open or foreign
folder, or a planted file, is not used; a private one is, as it is."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorer import numba_cache

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "scorer" / "kernels"
FIXTURES = ROOT / "fixtures"
SCORE = ["score", str(FIXTURES / "otto_submission.csv"), "--truth", str(FIXTURES / "otto_truth.jsonl"), "--format", "json"]
FOREIGN = 4321


class _Planted:
    """Unpickled, it leaves a marker and ends the process (exit 7): numba's index is a pickle."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"import os; open({str(self.marker)!r}, 'w').close(); os._exit(7)",)


def _subpath() -> str:
    from numba.core.caching import UserProvidedCacheLocator

    return UserProvidedCacheLocator.get_suitable_cache_subpath(str(KERNELS / "parse.py"))


def _index_names() -> list[str]:
    """numba's index file name of every cached kernel of scorer/kernels."""
    import importlib

    names = []
    for module in ("parse", "rank", "string_ids", "strings", "holdout", "resample"):
        for value in vars(importlib.import_module(f"scorer.kernels.{module}")).values():
            cache = getattr(value, "_cache", None)
            if hasattr(cache, "_cache_file"):
                names.append(cache._cache_file._index_name)
    return names


def _warm_cache() -> Path:
    """Where this test run's numba caches of scorer/kernels are."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    return Path(configured) / _subpath() if configured else KERNELS / "__pycache__"


def _env(cache: Path | None, **extra) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SCORER_AOT": "0", **extra}  # numba's JIT kernels
    env.pop("NUMBA_CACHE_DIR", None)
    return {**env, "NUMBA_CACHE_DIR": str(cache)} if cache else env


def _run(args: list[str], env: dict, unchecked: bool = False) -> subprocess.CompletedProcess:
    prefix = "import scorer.numba_cache as n; n.prepare = lambda: None; " if unchecked else ""
    code = f"import sys; {prefix}from scorer.cli.main import main; sys.exit(main({args!r}))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)


def _decision(env: dict, code: str = "") -> subprocess.CompletedProcess:
    """The NUMBA_CACHE_DIR numba is given once scorer.kernels is imported (stdout), and the warning (stderr)."""
    program = f"import os; {code}\nimport scorer.kernels\nprint(os.environ.get('NUMBA_CACHE_DIR'))"
    return subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def expected_score() -> float:
    done = _run(SCORE, _env(None))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["score"]


def _planted_cache(tmp_path: Path, marker: Path) -> Path:
    cache = tmp_path / "numba"
    (cache / _subpath()).mkdir(parents=True)
    for name in _index_names():
        (cache / _subpath() / name).write_bytes(pickle.dumps(_Planted(marker)))
    return cache


def test_the_subfolder_is_numbas():
    assert numba_cache._SUBPATH == _subpath()


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
@pytest.mark.parametrize("how", ["world-writable", "foreign-owned"])
def test_a_planted_index_in_an_open_or_foreign_cache_is_never_loaded(tmp_path, expected_score, how):
    marker = tmp_path / "planted-code-ran"
    cache = _planted_cache(tmp_path, marker)
    if how == "world-writable":
        for folder in (cache, cache / _subpath()):
            folder.chmod(0o777)
    else:
        for path in [cache, *cache.rglob("*")]:
            os.chown(path, FOREIGN, -1)
    unchecked = _run(SCORE, _env(cache), unchecked=True)
    assert unchecked.returncode == 7 and marker.exists(), "without the check numba loads the planted index"
    marker.unlink()

    done = _run(SCORE, _env(cache))
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert json.loads(done.stdout)["score"] == pytest.approx(expected_score, abs=1e-12)
    warnings = [line for line in done.stderr.splitlines() if "numba's cache" in line]
    reason = "writable by others" if how == "world-writable" else f"owned by uid {FOREIGN}"
    assert len(warnings) == 1 and str(cache) in warnings[0] and reason in warnings[0], done.stderr
    private = Path(os.environ["SCORER_CACHE_DIR"]) / "numba"
    assert private.stat().st_mode & 0o777 == 0o700 and list((private / _subpath()).glob("*.nbi")), \
        "the kernels are compiled into the scorer's private cache instead"


def _own_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "own"
    (cache / _subpath()).mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    return cache


REFUSED = {
    "group-writable folder": (lambda cache: (os.chown(cache / _subpath(), -1, FOREIGN), (cache / _subpath()).chmod(0o770)),
                              "writable by others"),  # a group with no entry: not the user's alone
    "foreign-owned folder": (lambda cache: os.chown(cache / _subpath(), FOREIGN, -1), f"owned by uid {FOREIGN}"),
    "symlinked folder": (lambda cache: (cache / _subpath()).symlink_to((cache / _subpath()).rename(cache / "elsewhere")),
                         "is not a folder"),
    "foreign-owned file": (lambda cache: os.chown(_plant(cache), FOREIGN, -1), f"owned by uid {FOREIGN}"),
    "symlinked file": (lambda cache: (cache / _subpath() / "parse.x-1.py311.nbi").symlink_to(_plant(cache, "real")),
                       "is not a regular file"),
    "world-writable file in an open folder": (lambda cache: ((cache / _subpath()).chmod(0o755),
                                                             _plant(cache).chmod(0o646)), "writable by others"),
}


def _plant(cache: Path, name: str = "parse.x-1.py311.nbi") -> Path:
    path = cache / _subpath() / name
    path.write_bytes(b"planted")
    return path


@pytest.mark.parametrize("case", REFUSED)
def test_a_cache_that_is_not_private_is_replaced_by_a_private_one(tmp_path, case):
    make, reason = REFUSED[case]
    cache = _own_cache(tmp_path)
    make(cache)
    done = _decision(_env(cache))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(Path(os.environ["SCORER_CACHE_DIR"]) / "numba")
    assert reason in done.stderr and done.stderr.count("numba's cache") == 1, done.stderr


def test_files_others_can_write_but_not_reach_and_root_owned_files_are_accepted(tmp_path):
    """A file numba wrote with umask 002 in a folder closed to others is safe; so is a root-owned cache (an image's)."""
    cache = _own_cache(tmp_path)
    _plant(cache).chmod(0o664)
    done = _decision(_env(cache))
    assert (done.stdout.strip(), done.stderr) == (str(cache), "")

    as_another_user = f"os.geteuid = lambda: {FOREIGN}"  # the files are root's (this test runs as root)
    assert os.geteuid() == 0 == cache.stat().st_uid
    done = _decision(_env(cache), as_another_user)
    assert (done.stdout.strip(), done.stderr) == (str(cache), "")
    os.chown(cache / _subpath(), FOREIGN + 1, -1)
    done = _decision(_env(cache), as_another_user)
    assert f"owned by uid {FOREIGN + 1}, not by this user (uid {FOREIGN}) or root" in done.stderr


def test_a_missing_cache_folder_is_made_private(tmp_path):
    cache = tmp_path / "made" / "numba"
    done = _decision(_env(cache))
    assert (done.stdout.strip(), done.stderr) == (str(cache), "")
    assert all((path.stat().st_mode & 0o777) == 0o700 for path in (cache, cache / _subpath()))


def test_a_private_cache_is_used_as_it_is_without_compiling_again(tmp_path):
    cache = _own_cache(tmp_path)
    for path in _warm_cache().glob("*.nb[ic]"):
        shutil.copy(path, cache / _subpath() / path.name)
    first = _run(SCORE, _env(cache))
    assert first.returncode == 0 and first.stderr == "", first.stderr
    files = {path.name: path.stat().st_mtime_ns for path in (cache / _subpath()).glob("*.nb[ic]")}
    again = _run(SCORE, _env(cache, NUMBA_DEBUG_CACHE="1"))
    assert again.returncode == 0 and again.stderr == "", again.stderr
    loaded = [line for line in again.stdout.splitlines() if line.startswith("[cache] data loaded from")]
    assert loaded and all(str(cache / _subpath()) in line for line in loaded)
    assert "saved" not in again.stdout
    assert {path.name: path.stat().st_mtime_ns for path in (cache / _subpath()).glob("*.nb[ic]")} == files


def test_numba_loaded_before_the_scorer_is_pointed_at_the_private_folder_too(tmp_path):
    cache = _own_cache(tmp_path)
    cache.chmod(0o777)
    done = _decision(_env(cache), "import numba.core.config as config")
    private = str(Path(os.environ["SCORER_CACHE_DIR"]) / "numba")
    assert done.stdout.strip() == private and "writable by others" in done.stderr
    done = _decision(_env(cache), "import numba.core.config as config\nimport scorer.kernels\nprint(config.CACHE_DIR)")
    assert done.stdout.split() == [private, private]


def test_a_refused_cache_without_any_private_folder_is_a_clear_error(tmp_path):
    cache = _own_cache(tmp_path)
    cache.chmod(0o777)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    os.chown(foreign, FOREIGN, -1)
    no_temporary = "import tempfile; tempfile.mkdtemp = lambda **_: (_ for _ in ()).throw(OSError('no room'))\n"
    code = f"import sys\n{no_temporary}from scorer.cli.main import main\nsys.exit(main({SCORE!r}))"
    done = subprocess.run([sys.executable, "-c", code], env=_env(cache, SCORER_CACHE_DIR=str(foreign)),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.splitlines()[-1].startswith("scorer: error: numba's cache"), done.stderr  # at numba's import
    assert "writable by others" in done.stderr and "Traceback" not in done.stderr
