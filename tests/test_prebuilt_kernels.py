"""The ahead-of-time kernels the package's build compiles (setup.py into scorer/kernels/prebuilt, a module per stage): a
platform wheel where a C compiler works and the pure wheel where none does, loaded first, with the package's trust
checks (the score stage's module stands for all: the checks are one code), and numba's JIT serving whenever a module is
missing or refused."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from scorer.kernels import aot, door

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SCORE = ["score", str(FIXTURES / "otto_submission.csv"), "--truth", str(FIXTURES / "otto_truth.jsonl"), "--format", "json"]
STAGE = "score"
PROBE = ("import sys, io, contextlib\nfrom scorer.cli.main import main\nfrom scorer.kernels import aot\n"
         "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
         "print(code, 'numba' in sys.modules, getattr(aot.load('score'), '__file__', 'jit'))")


def _prebuilt_here(stage: str = STAGE) -> Path:
    """The stage's module compiled with the package; the test skips where there is none."""
    present = [path for path in aot.prebuilt_paths(stage) if path.is_file()]
    if not present:
        pytest.skip("no module compiled with the package here (installed without a C compiler, or from the pure wheel)")
    return present[0]


@pytest.fixture
def prebuilt_copy(tmp_path, monkeypatch):
    """A copy of the package's module and its recorded hash in a folder of their own, which aot now looks in."""
    built = _prebuilt_here()
    folder = tmp_path / "prebuilt"
    folder.mkdir(mode=0o755)
    for suffix in ("", ".sha256"):
        shutil.copy(built.with_name(built.name + suffix), folder)
    monkeypatch.setattr(aot, "PREBUILT", folder)
    monkeypatch.setenv("SCORER_AOT", "1")
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "empty-cache"))  # no warmup module to fall back on
    aot._tried.clear()
    yield folder / built.name
    aot._tried.clear()
    door._served.clear()


def _probe(env: dict, cwd: Path | None = None, python: str = sys.executable) -> list[str]:
    done = subprocess.run([python, "-c", PROBE, *SCORE], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return done.stdout.split()


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_prebuilt_module_serves_a_fresh_process_without_numba(tmp_path):
    built = _prebuilt_here()
    env = {**os.environ, "SCORER_CACHE_DIR": str(tmp_path / "c"), "NUMBA_CACHE_DIR": str(tmp_path / "n")}
    env.pop("SCORER_AOT", None)
    assert _probe(env) == ["0", "False", str(built)]
    assert not (tmp_path / "n").exists() or not any((tmp_path / "n").rglob("*.nbi")), "numba compiled nothing"
    env["SCORER_AOT"] = "cache"  # the package's module skipped: numba's JIT (no warmup module in this cache)
    assert _probe(env)[:2] == ["0", "True"]


def test_prebuilt_module_loads_when_its_checks_pass(prebuilt_copy, capsys):
    module = aot.load(STAGE)
    assert module is not None and module.__file__ == str(prebuilt_copy)
    assert aot.tip() is None and "not loaded" not in capsys.readouterr().err


@pytest.mark.parametrize("spoil, reason", [
    (lambda path: path.parent.chmod(0o777), "is writable by others (mode 777)"),
    (lambda path: path.chmod(0o646), "is writable by others (mode 646)"),
    (lambda path: os.chown(path, 4321, -1), "is owned by uid 4321"),
    (lambda path: os.chown(path.parent, 4321, -1), "is owned by uid 4321"),
    (lambda path: os.chown(path.with_name(path.name + ".sha256"), 4321, -1), "is owned by uid 4321"),
    (lambda path: path.write_bytes(path.read_bytes() + b"\0"), "its SHA-256 differs from the recorded one"),
    (lambda path: path.with_name(path.name + ".sha256").unlink(), "has no recorded SHA-256"),
    (lambda path: (path.rename(path.with_name("elsewhere")), path.symlink_to(path.with_name("elsewhere"))),
     "is a symlink or not a regular file"),
])
def test_prebuilt_module_others_could_have_changed_is_not_imported(prebuilt_copy, capsys, spoil, reason):
    spoil(prebuilt_copy)
    assert aot.load(STAGE) is None and aot.load(STAGE) is None  # numba's JIT serves; asked again: said once
    warning = capsys.readouterr().err
    assert warning.count("installed with the package") == 1 and reason in warning, warning


def test_prebuilt_module_of_the_packages_owner_is_trusted(prebuilt_copy, tmp_path, monkeypatch):
    for path in (prebuilt_copy.parent, prebuilt_copy, prebuilt_copy.with_name(prebuilt_copy.name + ".sha256")):
        os.chown(path, 4321, -1)
    code = tmp_path / "aot.py"  # the package's code, owned by the same user: who could as well edit it
    code.write_text("")
    os.chown(code, 4321, -1)
    monkeypatch.setattr(aot, "_OWN_CODE", str(code))
    assert aot.load(STAGE) is not None


def test_prebuilt_module_of_other_kernels_is_not_looked_for(prebuilt_copy, capsys):
    prebuilt_copy.rename(prebuilt_copy.with_name(f"scorer_{STAGE}-00000000000000000000." + prebuilt_copy.name.split(".", 1)[1]))
    assert aot.load(STAGE) is None and capsys.readouterr().err == ""  # an edited kernel's build is simply not there


def _source_copy(tmp_path: Path) -> Path:
    source = tmp_path / "src"  # a fresh copy: setuptools reuses a build/ folder, and a module built there
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "setup.py"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "scorer", source / "scorer", ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
    return source


def _wheel(source: Path, out: Path, **env) -> tuple[Path, str]:
    """Build the wheel with this environment's setuptools and numba (offline); the wheel and the build's log."""
    environment = {**os.environ, "PIP_NO_INDEX": "1", "NUMBA_CACHE_DIR": str(out / "numba"), **env}
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", str(out), str(source)],
                          capture_output=True, text=True, env=environment, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    return wheel, done.stdout + done.stderr


@pytest.mark.slow
def test_prebuilt_platform_wheel_with_a_compiler_and_pure_wheel_without(tmp_path):
    source = _source_copy(tmp_path)
    wheel, log = _wheel(source, tmp_path / "with")
    compiler = shutil.which(os.environ.get("CC", "cc")) is not None
    if not compiler:
        pytest.skip("no C compiler here: only the pure wheel can be built")
    assert "-cp3" in wheel.name and wheel.name.endswith("linux_x86_64.whl") or "any" not in wheel.name, wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    for stage in door.STAGES:
        module = "scorer/kernels/prebuilt/" + aot.prebuilt_name(stage)
        assert module in names and module + ".sha256" in names, (log[-2000:], names)
        with zipfile.ZipFile(wheel) as archive:
            recorded = archive.read(module + ".sha256").decode().split()
            assert recorded == [hashlib.sha256(archive.read(module)).hexdigest(), module.rsplit("/", 1)[1]]

    venv = tmp_path / "venv"  # installed as users get it: a fresh venv, its own copy of the package, empty caches
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    outer = subprocess.run([sys.executable, "-c", "import site; print('\\n'.join(site.getsitepackages()))"], capture_output=True,
                           text=True, check=True).stdout
    own = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    (Path(own) / "_tests_environment.pth").write_text(outer)  # numpy and the rest from the test environment
    env = {**os.environ, "PIP_NO_INDEX": "1", "SCORER_CACHE_DIR": str(tmp_path / "c"), "NUMBA_CACHE_DIR": str(tmp_path / "n")}
    env.pop("SCORER_AOT", None)
    env.pop("PYTHONPATH", None)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--force-reinstall", str(wheel)],
                   env=env, check=True, capture_output=True)
    code, numba_loaded, served_by = _probe(env, cwd=tmp_path, python=str(venv / "bin" / "python"))
    assert (code, numba_loaded) == ("0", "False") and Path(served_by).is_relative_to(venv), served_by

    pure, log = _wheel(_source_copy(tmp_path / "again"), tmp_path / "without", CC="/nonexistent/cc", CXX="/nonexistent/c++")
    assert pure.name.endswith("-py3-none-any.whl"), pure.name
    assert not [name for name in zipfile.ZipFile(pure).namelist() if "/prebuilt/" in name]
    assert "no ahead-of-time kernels" in log, log[-2000:]
