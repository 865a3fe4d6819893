"""The grader image, without a Docker engine: the Dockerfile's rules, then its install and warm-up steps in a fresh venv.

The venv sees the packages of the environment running the tests (so nothing is downloaded, and the build uses
the test extra's setuptools, whatever the base interpreter holds), gets the package installed the way the
Dockerfile installs it, runs `scorer warmup` with the Dockerfile's numba settings, and must then score
and validate without compiling anything again.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.kernels.door import STAGES

ROOT = Path(__file__).parent.parent
DOCKERFILE = ROOT / "docker" / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", "\n".join(line for line in DOCKERFILE.read_text().splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip()) for line in text.splitlines() if line.strip()]


def env_of(steps) -> dict[str, str]:
    args = {k: v for step, rest in steps if step == "ARG" for k, _, v in [rest.partition("=")]}
    env = {}
    for step, rest in steps:
        if step == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                env[key] = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), value)
    return env


def venv_seeing_these_packages(venv: Path) -> Path:
    """A venv whose interpreter also imports this test run's packages, and returns its python.

    Not `--system-site-packages`: that shows the base interpreter's packages, not those of a venv running the
    tests, and a bare base lacks setuptools (or has one without `bdist_wheel`) and numba.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    outer = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    (Path(own) / "_tests_environment.pth").write_text("".join(path + "\n" for path in outer))
    return python


def test_the_venv_imports_the_test_environments_packages(tmp_path):
    code = "import setuptools, numba, pip; print(setuptools.__file__, numba.__file__, pip.__file__)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    seen = [subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, check=True).stdout
            for python in (venv_seeing_these_packages(tmp_path / "venv"), sys.executable)]
    assert seen[0] == seen[1], "the fresh venv must build with the test environment's setuptools and run its numba"


def test_dockerfile_rules():
    steps = instructions()
    names = [step for step, _ in steps]
    bases = {k: v for step, rest in steps[:names.index("FROM")] if step == "ARG" for k, _, v in [rest.partition("=")]}
    for key in bases:  # BUILDER_IMAGE=${BASE_IMAGE}
        bases[key] = re.sub(r"\$\{(\w+)\}", lambda m: bases[m.group(1)], bases[key])
    stages: list[str] = []
    for step, rest in steps:  # each stage starts from the pinned base or from a stage named before it
        if step == "FROM":
            image, _, stage = re.sub(r"\$\{(\w+)\}", lambda m: bases[m.group(1)], rest).partition(" AS ")
            assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", image) or image in stages, rest
            stages.append(stage)
    args = {k: v for step, rest in steps if step == "ARG" for k, _, v in [rest.partition("=")]}
    user = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], rest) for step, rest in steps if step == "USER"]
    assert user and user[-1].split(":")[0] == "0", "root by default: Codabench mounts its output root-owned, DAC_OVERRIDE dropped"
    assert names.index("USER") < names.index("ENTRYPOINT")
    runs = [rest for step, rest in steps if step == "RUN"]
    install = next(i for i, run in enumerate(runs) if "pip install" in run)
    warmup = next(i for i, run in enumerate(runs) if "scorer warmup" in run)
    assert install < warmup
    assert names.index("USER") < [i for i, (s, r) in enumerate(steps) if s == "RUN" and "scorer warmup" in r][0], \
        "the warm-up must run as the runtime user, or numba will not use the caches it wrote"
    assert json.loads(dict(steps)["ENTRYPOINT"]) == ["scorer"]
    assert "NUMBA_CACHE_DIR" in env_of(steps)
    copied = {Path(part).name for step, rest in steps if step == "COPY" for part in rest.split()[:-1]}
    assert {"pyproject.toml", "setup.py", "README.md", "scorer"} <= copied


@pytest.mark.slow
def test_install_and_warmup_steps_in_a_fresh_venv(tmp_path):
    steps = instructions()
    # the build context as the Dockerfile copies it
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "scorer", source / "scorer", ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
    venv = tmp_path / "venv"
    python, scorer = venv_seeing_these_packages(venv), venv / "bin" / "scorer"

    env = {**os.environ, **env_of(steps), "SCORER_CACHE_DIR": str(tmp_path / "truth-cache"), "PIP_NO_INDEX": "1"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    env.pop("PYTHONPATH", None)
    # the Dockerfile's install step, offline: the package's wheel built (its kernels compiled into it), then installed,
    # with no dependencies and no isolated build environment fetched
    install = next(rest for step, rest in steps if step == "RUN" and "pip wheel" in rest)
    assert "-w /opt/scorer/dist /opt/scorer/src" in install and "wheel=$(echo /opt/scorer/dist/*.whl)" in install
    assert 'pip install --no-cache-dir "${wheel}[evalai]"' in install  # the wheel with the evalai extra (requests)
    dist = tmp_path / "dist"
    built = subprocess.run([str(python), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)],
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", *map(str, dist.glob("*.whl"))],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    where = subprocess.run([str(python), "-c", "import scorer; print(scorer.__file__)"], env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(venv), "the venv must run its own copy of the package"

    # the warm-up checks every stage's module against the JIT; then its numba cache is emptied, as the image's is
    warm = subprocess.run([str(scorer), "warmup"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert warm.returncode == 0 and "kernels compiled and cached" in warm.stdout, warm.stdout + warm.stderr
    ready = [line for line in warm.stdout.splitlines() if line.startswith("ahead-of-time kernels of ")]
    assert len(ready) == len(STAGES) and all("ready (compiled with the package)" in line for line in ready), warm.stdout
    cache = Path(env["NUMBA_CACHE_DIR"])
    shutil.rmtree(cache)
    cache.mkdir()

    fixtures = ROOT / "fixtures"
    scored = subprocess.run([str(scorer), "score", str(fixtures / "otto_submission.csv"), "--truth", str(fixtures / "otto_truth.jsonl"),
                             "--strict", "--format", "json"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert scored.returncode == 0 and json.loads(scored.stdout)["score"] == pytest.approx(0.34, abs=1e-12)
    hm = fixtures / "hm"
    if (hm / "truth.csv").is_file():  # a string-id (list shape) competition uses kernels of its own
        listed = subprocess.run([str(scorer), "score", str(hm / "submission.csv"), "--truth", str(hm / "truth.csv"), "--competition", "hm"],
                                env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert listed.returncode == 0, listed.stdout + listed.stderr
    bad = fixtures / "bad"
    for name in ("S030_bad_quotes.csv", "S008_item_not_integer.csv"):
        if (bad / name).is_file():
            checked = subprocess.run([str(scorer), "validate", str(bad / name)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert checked.returncode == 1 and name[:4] in checked.stdout
    compiled = sorted(path.name for path in cache.rglob("*") if path.is_file())
    assert compiled == [], "a command after the warm-up compiled kernels with numba, not the package's modules: " + ", ".join(compiled)


# -- the build context ---------------------------------------------------------------------------------------------
def _ignore_rules(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _pattern(rule: str) -> re.Pattern:
    """A .dockerignore pattern as Docker matches it: `*` and `?` within a path element, `**` any number of elements."""
    text = re.escape(rule.strip("/")).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
    return re.compile(text)


def context_files(root: Path, rules: list[str]) -> list[Path]:
    """The files `docker build` sends from `root` under those rules: the last rule that matches a file or one of its
    folders decides, `!` sending it again."""
    compiled = [(rule.startswith("!"), _pattern(rule.lstrip("!"))) for rule in rules]
    exceptions = [rule.lstrip("!").strip("/") for rule in rules if rule.startswith("!")]

    def excluded(relative: str) -> bool:
        parts = relative.split("/")
        verdict = False
        for negated, pattern in compiled:
            if any(pattern.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
                verdict = not negated
        return verdict

    sent = []
    for folder, folders, names in os.walk(root):
        here = Path(folder).relative_to(root).as_posix()
        here = "" if here == "." else here + "/"
        folders[:] = [name for name in folders if name != ".git" and not (
            excluded(here + name) and not any(rule.startswith(here + name + "/") or (here + name).startswith(rule) for rule in exceptions))]
        sent += [Path(folder) / name for name in names if not excluded(here + name)]
    return sent


def test_the_root_dockerignore_keeps_the_context_to_the_package_for_either_builder():
    """The legacy builder (no buildx) reads the context's .dockerignore; BuildKit docker/Dockerfile.dockerignore: the
    same rules, which send what the Dockerfile copies and leave out the venv, caches and the host's compiled modules."""
    rules = _ignore_rules(ROOT / ".dockerignore")
    assert rules == _ignore_rules(ROOT / "docker" / "Dockerfile.dockerignore")
    sent = {path.relative_to(ROOT).as_posix() for path in context_files(ROOT, rules)}
    copied = [source for step, rest in instructions() if step == "COPY" and "--from=" not in rest for source in rest.split()[:-1]]
    assert copied and all(any(name == source or name.startswith(source + "/") for name in sent) for source in copied), copied
    assert {"scorer/__init__.py", "scorer/kernels/parse.py", "scorer/spec/configs/otto.toml"} <= sent
    assert not [name for name in sent if name.startswith((".venv/", "build/", "dist/", "scorer/kernels/prebuilt/", "fixtures/"))
                or "__pycache__" in name.split("/")]
    assert sum((ROOT / name).stat().st_size for name in sent) < 32 * 2**20, "the context is the package, a few MB"


def test_the_context_rules_are_read_as_docker_reads_them(tmp_path):
    """The checker of the rules above, on a tree made for it."""
    for name in ("a.txt", ".venv/lib/x.py", "scorer/x.py", "scorer/__pycache__/x.pyc", "scorer/k/__pycache__/y.pyc",
                 "scorer/kernels/prebuilt/m.so", "docker/wheelhouse/w.whl", "docker/Dockerfile", "docker/constraints.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    sent = {path.relative_to(tmp_path).as_posix() for path in context_files(tmp_path, _ignore_rules(ROOT / ".dockerignore"))}
    assert sent == {"scorer/x.py", "docker/wheelhouse/w.whl", "docker/constraints.txt"}
