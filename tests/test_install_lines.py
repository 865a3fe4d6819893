"""Install lines and test markers: every `pip install` we print or document names our distribution
(`scorer` on the package index is an unrelated project), and the slow tests carry the `slow` marker."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
WHEEL_NAME = re.sub(r"[-_.]+", "_", PROJECT["name"]).lower()


def install_lines() -> list[tuple[str, str]]:
    """(file:line, text) of every line with `pip install` in the README and docs/, the package, the bundles and docker/."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *(ROOT / "scorer").rglob("*.py"), *(ROOT / "bundles").rglob("*"), *(ROOT / "docker").glob("*")]
    return [(f"{path.relative_to(ROOT)}:{number}", line) for path in paths if path.is_file()
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1) if "pip install" in line]


def test_the_distribution_is_not_the_index_s_scorer():
    assert PROJECT["name"] != "scorer" and PROJECT["scripts"] == {"scorer": "scorer.cli.main:console"}


def test_every_install_line_names_this_distribution():
    lines = install_lines()
    extras = [(where, name) for where, line in lines for name, extra in re.findall(r"([\w.-]+)\[(\w+)\]", line)
              if extra in PROJECT["optional-dependencies"] and name != "."]
    wheels = [(where, name) for where, line in lines for name in re.findall(r"([\w.-]+)-\*\.whl", line)]
    bare = [where for where, line in lines if re.search(r"pip install (?:-\S+ +)*['\"]?scorer(?![\w.\[-])", line)]
    assert extras and wheels, "expected the extras' and the Kaggle wheel's install lines"
    assert [item for item in extras if item[1] != PROJECT["name"]] == []
    assert [item for item in wheels if item[1] != WHEEL_NAME] == []
    assert bare == []


def test_the_slow_tests_carry_the_slow_marker():
    def collected(marks: str) -> set[str]:
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", marks,
                               "tests/test_docker.py", "tests/test_aot.py", "tests/test_dask.py"],
                              cwd=ROOT, capture_output=True, text=True)
        assert done.returncode in (0, 5), done.stdout + done.stderr
        return {line.split("::")[0] + "::" + line.split("::")[1].split("[")[0] for line in done.stdout.splitlines() if "::" in line}

    slow, fast = collected("slow"), collected("not slow")
    assert "tests/test_docker.py::test_install_and_warmup_steps_in_a_fresh_venv" in slow
    assert {test.split("::")[0] for test in slow} == {"tests/test_docker.py", "tests/test_aot.py", "tests/test_dask.py"}
    assert "tests/test_docker.py::test_dockerfile_rules" in fast
    assert {test for test in fast if not test.startswith("tests/test_docker.py")} == set() and not slow & fast
