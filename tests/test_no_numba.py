"""With the ahead-of-time modules installed, every command's default path runs without numba: each command below runs in a
fresh process on bundled data, and `numba` and `llvmlite` are not in sys.modules at its exit (docs/architecture.md,
"Kernels"). A score does not load OpenSSL either (`_hashlib`: scorer.digests). The probe also prints whether pandas and
pyarrow were loaded (for the record; not held to anything)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.analytics.explain.conventions import CONVENTIONS as ALL_CONVENTIONS
from scorer.kernels import aot, door

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from command_examples import CONVENTIONS, commands  # noqa: E402  (bench/: the ten commands, also timed by bench_install.py)

COMMANDS = ("score", "validate", "score hm", "score bootstrap breakdown", "compare", "leaderboard", "explain", "candidates", "audit",
            "prepare")
PROBE = ("import sys, io, json, contextlib\nfrom scorer.cli.main import main\n"
         "with contextlib.redirect_stdout(io.StringIO()) as out:\n    code = main(sys.argv[1:])\n"
         "print(json.dumps({'exit': code, 'loaded': sorted(m for m in ('numba', 'llvmlite', 'pandas', 'pyarrow', '_hashlib') if m in sys.modules)}))")


def test_the_examples_are_the_ten_commands_and_every_convention(tmp_path):
    assert tuple(commands(tmp_path)) == COMMANDS
    assert set(CONVENTIONS) == {convention.name for convention in ALL_CONVENTIONS}


def _installed() -> None:
    missing = [stage for stage in door.STAGES if not any(path.is_file() for path in aot.prebuilt_paths(stage))]
    if missing:
        pytest.skip(f"no module compiled with the package for {', '.join(missing)} (installed without a C compiler?)")


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_runs_without_numba(tmp_path, command):
    _installed()
    argv = [str(arg) for arg in commands(tmp_path)[command]]
    env = {**os.environ, "SCORER_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env.pop("SCORER_AOT", None)
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["exit"] in (0, 1), done.stderr  # 1: the audit's or validate's findings, not a failure
    assert not {"numba", "llvmlite"} & set(found["loaded"]), f"{command} loaded {found['loaded']}"
    if command == "score":
        assert "_hashlib" not in found["loaded"], "a score loaded OpenSSL's libcrypto (3.4 MiB): hashlib is on its path"


def test_building_the_command_line_loads_no_kernel():
    """Every command's parser is built before main() can turn an error into a sentence: a parser that imports
    scorer.kernels (numba's cache is prepared there, and may refuse) would show a traceback instead."""
    code = ("import sys\nfrom scorer.cli.main import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith(('scorer.kernels', 'numba', 'llvmlite'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout
