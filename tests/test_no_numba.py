"""With the ahead-of-time modules installed, every command's default path runs without numba: each command below runs in a
fresh process on bundled data, and `numba` and `llvmlite` are not in sys.modules at its exit (docs/architecture.md,
"Kernels"). The probe also prints whether pandas and pyarrow were loaded (for the record; not held to anything)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.analytics.conventions import CONVENTIONS
from scorer.kernels import aot, door

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SUBMISSION, TRUTH = FIXTURES / "otto_submission.csv", FIXTURES / "otto_truth.jsonl"
COMMANDS = ("score", "validate", "score hm", "score bootstrap breakdown", "compare", "leaderboard", "explain", "candidates", "audit",
            "prepare")
PROBE = ("import sys, io, json, contextlib\nfrom scorer.cli.main import main\n"
         "with contextlib.redirect_stdout(io.StringIO()) as out:\n    code = main(sys.argv[1:])\n"
         "print(json.dumps({'exit': code, 'loaded': sorted(m for m in ('numba', 'llvmlite', 'pandas', 'pyarrow') if m in sys.modules)}))")


def _commands(folder: Path) -> dict[str, list]:
    other, third = folder / "other.csv", folder / "third.csv"
    other.write_text(SUBMISSION.read_text().replace(",", ",1 ", 3))
    third.write_text(SUBMISSION.read_text().replace(",", ",2 ", 5))
    candidates = folder / "candidates.csv"
    candidates.write_text("session,aid,score\n" + "".join(f"{s},{a},{(7 * s + a) % 10 / 10}\n" for s in range(4) for a in range(12)))
    events = folder / "events.jsonl"
    events.write_text("".join(json.dumps({"session": s, "events": [{"aid": (s + e) % 9, "ts": 1_659_000_000 + s * 86_400 + e * 60,
                                                                   "type": ("clicks", "carts", "orders")[e % 3]} for e in range(3)]}) + "\n"
                              for s in range(20)))
    return {
        "score": ["score", SUBMISSION, "--truth", TRUTH],
        "validate": ["validate", SUBMISSION, "--truth", TRUTH],
        "score hm": ["score", FIXTURES / "hm" / "submission.csv", "--truth", FIXTURES / "hm" / "truth.csv", "--competition", "hm"],
        "score bootstrap breakdown": ["score", SUBMISSION, "--truth", TRUTH, "--bootstrap", "1000", "--breakdown"],
        "compare": ["compare", SUBMISSION, other, "--truth", TRUTH],
        "leaderboard": ["leaderboard", SUBMISSION, other, third, "--truth", TRUTH],
        "explain": ["explain", SUBMISSION, "--truth", TRUTH, "--against", ",".join(c.name for c in CONVENTIONS)],
        "candidates": ["candidates", candidates, "--truth", TRUTH],
        "audit": ["audit", "--truth", TRUTH, "--sample", SUBMISSION],
        "prepare": ["prepare", events, "--out", folder / "prepared"],
    }


def _installed() -> None:
    missing = [stage for stage in door.STAGES if not any(path.is_file() for path in aot.prebuilt_paths(stage))]
    if missing:
        pytest.skip(f"no module compiled with the package for {', '.join(missing)} (installed without a C compiler?)")


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_runs_without_numba(tmp_path, command):
    _installed()
    argv = [str(arg) for arg in _commands(tmp_path)[command]]
    env = {**os.environ, "SCORER_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env.pop("SCORER_AOT", None)
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["exit"] in (0, 1), done.stderr  # 1: the audit's or validate's findings, not a failure
    assert not {"numba", "llvmlite"} & set(found["loaded"]), f"{command} loaded {found['loaded']}"
