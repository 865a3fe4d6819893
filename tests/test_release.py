"""The release (tools/release.sh, tools/check_wheel.py, tools/cleanroom.py): the version said once and released in the
changelog, and the checks that a wheel's compiled modules are still the ones their build recorded."""

from __future__ import annotations

import importlib
import io
import math
import re
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import scorer
from scorer.kernels import door

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_is_the_changelogs_latest_release():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    assert headings[0] == ("Unreleased", ""), headings[:2]  # where the next changes go
    assert headings[1][0] == scorer.__version__ and headings[1][1], (headings[1], scorer.__version__)


def _tool(name: str):
    """tools/NAME.py as a module."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "tools"))


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def test_check_wheel_refuses_what_a_release_must_not_hold(tmp_path):
    check = _tool("check_wheel").check
    version = scorer.__version__
    pure = _zip(tmp_path / f"recsys_scorer-{version}-py3-none-any.whl",
                {"scorer/__init__.py": b"", "scorer/kernels/prebuilt/scorer_score-0123.cpython-311-x86_64-linux-gnu.so": b"\x7fELF"})
    assert any("is compiled" in problem for problem in check(pure)[0])
    platform = _zip(tmp_path / f"recsys_scorer-{version}-cp311-cp311-manylinux_2_31_x86_64.whl", {"scorer/__init__.py": b""})
    problems = check(platform)[0]
    assert "no module of stage score" in problems and "no scorer/engine/aot_compile.py, a source the modules' key is made of" in problems
    assert len([problem for problem in problems if problem.startswith("no module of stage")]) == len(door.STAGES), problems
    old = _zip(tmp_path / "recsys_scorer-0.0.1-py3-none-any.whl", {"scorer/__init__.py": b""})
    assert check(old)[0] == [f"version 0.0.1, not scorer.__version__ {version}"]
    assert check(tmp_path / "recsys_scorer-linux_x86_64.whl")[0][0].startswith("not a release file name")
    sdist = tmp_path / f"recsys_scorer-{version}.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for name in ("setup.py", "scorer/kernels/prebuilt/a.so"):
            info = tarfile.TarInfo(f"recsys_scorer-{version}/{name}")
            archive.addfile(info, io.BytesIO(b""))
    assert check(sdist)[0] == [f"recsys_scorer-{version}/scorer/kernels/prebuilt/a.so is compiled"]
    (tmp_path / "clean").mkdir()
    clean = _zip(tmp_path / "clean" / pure.name, {"scorer/__init__.py": b""})
    assert check(clean) == ([], "pure: no compiled module")


def test_the_clean_rooms_path_has_no_compiler_and_the_rest(tmp_path):
    cleanroom = _tool("cleanroom")
    for name in ("cc", "gcc", "gcc-12", "c++", "x86_64-linux-gnu-gcc-12", "clang", "clang++-17", "c99-gcc"):
        assert cleanroom.COMPILER.fullmatch(name), name
    for name in ("gcc-ar", "x86_64-linux-gnu-gcc-nm-12", "c++filt", "sh", "ccache-swig", "python3"):
        assert not cleanroom.COMPILER.fullmatch(name), name
    path = cleanroom.no_compiler_path(tmp_path / "bin")
    assert not [name for name in ("cc", "gcc", "c++", "clang") if shutil.which(name, path=path)]
    assert shutil.which("sh", path=path) and shutil.which("env", path=path)


def test_the_clean_rooms_expected_score_is_the_engines():
    """The clean room holds each score to tests/reference.py's; here that reference is held to the engine's."""
    expected = _tool("cleanroom").expected_score(ROOT / "fixtures")
    result = scorer.score(ROOT / "fixtures" / "otto_submission.csv", ROOT / "fixtures" / "otto_truth.jsonl", competition="otto")
    assert 0 < expected < 1 and math.isclose(result.score, expected, rel_tol=1e-12)


def test_the_clean_room_says_what_it_lacks(tmp_path, capsys):
    cleanroom = _tool("cleanroom")
    assert cleanroom.main(["--dist", str(tmp_path)]) == 2
    assert "no platform wheel in" in capsys.readouterr().err
    assert cleanroom.main(["--dist", str(tmp_path), "--python", "3.99"]) == 2
    assert "no cp399 manylinux wheel in" in capsys.readouterr().err


def test_the_clean_room_times_the_wheels_own_dependencies(tmp_path):
    """The room's 'dependencies alone' installs what the wheel's METADATA requires, its extras left out."""
    metadata = b"Metadata-Version: 2.4\nName: recsys-scorer\nRequires-Dist: numpy>=1.26\nRequires-Dist: pandas>=2.1\n" \
               b"Provides-Extra: test\nRequires-Dist: pytest>=8; extra == \"test\"\n"
    wheel = _zip(tmp_path / "recsys_scorer-0.2.0-cp311-cp311-manylinux_2_31_x86_64.whl",
                 {"recsys_scorer-0.2.0.dist-info/METADATA": metadata})
    assert _tool("cleanroom").dependencies_of(wheel) == ["numpy>=1.26", "pandas>=2.1"]


def test_a_clean_room_that_stops_early_has_not_met_its_goals(tmp_path):
    cleanroom = _tool("cleanroom")
    room = cleanroom.Room("cp313 wheel", Path("python3"), tmp_path / "x.whl", goals=True, figures={"install": 9.0})
    cleanroom.judge(room)
    assert room.missed == ["first score not reached"]
    room = cleanroom.Room("cp313 wheel", Path("python3"), tmp_path / "x.whl", goals=True, figures={"install": 16.0, "first score": 0.2})
    cleanroom.judge(room)
    assert room.missed == ["install 16.00 s > 15 s"]


def test_the_missing_dask_hint_says_what_to_copy_without_the_package_index(tmp_path, monkeypatch, capsys):
    """Online the extra; offline, the folder of wheels that pip download fills where the index is, and the install
    from it alone (docs/install.md, Without the package index)."""
    from scorer.cli.main import _missing_library, main

    truth = ROOT / "fixtures" / "otto_truth.jsonl"
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    assert main(["grade", str(ROOT / "fixtures" / "otto_submission.csv"), "--truth", str(truth)]) == 2
    said = capsys.readouterr().err
    assert "pip install 'recsys-scorer[dask]'" in said
    assert "pip download 'dask[distributed]' -d dask-wheels" in said and "--no-index --find-links dask-wheels" in said
    assert "--no-index --find-links dask-wheels" in _missing_library(ModuleNotFoundError("no dask", name="dask"))


def test_warmup_says_setuptools_is_what_numba_pycc_lacks(monkeypatch):
    """A pure wheel on Python 3.12+: numba.pycc imports setuptools, which such a venv does not hold; the reason a stage
    was not built says to install it (not a C++ compiler, which was there)."""
    from scorer.engine import aot_build

    def no_setuptools(stage, throwaway=False):
        raise ImportError("The 'setuptools' package is required at runtime for pycc support.")

    monkeypatch.setattr(aot_build, "compile_stage", no_setuptools)
    said = aot_build._compiled_or_error("score")
    assert said.startswith("ImportError: The 'setuptools' package is required") and "pip install setuptools" in said
    monkeypatch.setattr(aot_build, "compile_stage", lambda stage, throwaway=False: (_ for _ in ()).throw(OSError("disk full")))
    assert aot_build._compiled_or_error("score") == "OSError: disk full"


def test_ci_leaves_the_release_files_in_dist():
    """The one recipe (tools/release.sh) writes into dist/ unless DIST says otherwise; CI runs it so and nothing after it
    in .ci/run removes what it wrote (docs/install.md, Release files)."""
    script = (ROOT / "tools" / "release.sh").read_text()
    assert 'DIST=${DIST:-$ROOT/dist}' in script and 'the files are in $DIST' in script
    ci = (ROOT / ".ci" / "run").read_text()
    steps = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    release = next(n for n, line in enumerate(steps) if line.startswith("tools/release.sh"))
    assert "DIST=" not in steps[release]
    assert not [line for line in steps[release + 1:] if re.search(r"\brm\b|rmtree|git clean", line) or "dist" in line.split("#")[0]]
    install = (ROOT / "docs" / "install.md").read_text()
    assert "## Release files" in install and "leaves them in `dist/`" in install


def test_the_organiser_s_page_builds_pushes_and_names_the_image_of_this_version():
    """docs/start-organiser.md: the grader image built and pushed before the bundle names it, every image tag and
    receipt version in the docs the package's own, and the Ladder among the organiser's steps."""
    page = (ROOT / "docs" / "start-organiser.md").read_text()
    tags = re.findall(r"scorer:(\d+\.\d+\.\d+)", page)
    assert tags and set(tags) == {scorer.__version__}, tags
    build, push, bundle = (page.index(text) for text in ("docker build -f docker/Dockerfile -t registry.example.com/scorer:",
                                                          "docker push registry.example.com/scorer:", "bundles/build.py codabench otto.zip --image registry"))
    assert build < push < bundle
    assert "scorer ladder --teams" in page
    docs = "".join(path.read_text() for path in (ROOT / "docs").glob("*.md"))
    versions = set(re.findall(r'scorer:(\d+\.\d+\.\d+)', docs)) | set(re.findall(r'"version": "(\d+\.\d+\.\d+)"', docs))
    assert versions == {scorer.__version__}, versions


def test_the_kaggle_offline_route_is_on_the_pages_of_both_roles():
    """docs/install.md says which files, which Python tag, how they become a Kaggle dataset and the offline dependency
    set; the participant's page and hosting.md point to it."""
    install = (ROOT / "docs" / "install.md").read_text()
    section = install.split("### Kaggle notebooks without internet", 1)[1].split("\n## ", 1)[0]
    for needed in ("!python --version", "cp311", "pure wheel", "kaggle datasets create", "/kaggle/input/",
                   "!pip install --no-index --find-links /kaggle/input/"):
        assert needed in section, needed
    offline = install.split("### Without the package index", 1)[1].split("###", 1)[0]
    assert "pip download --only-binary :all: -d scorer-wheels dist/recsys_scorer-" in offline
    assert "pip install --no-index --find-links scorer-wheels recsys-scorer" in offline
    for page in ("start-participant.md", "hosting.md"):
        assert "install.md#kaggle-notebooks-without-internet" in (ROOT / "docs" / page).read_text(), page
