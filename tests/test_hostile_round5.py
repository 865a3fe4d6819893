"""Round 5 of the hostile trials (issue 44): the contract on the newest commands, and the code the scorer loads.

Exit 0, 1 or 2 with one sentence; never exit 3 or a traceback; a module or cache folder that fails a trust rule is
never imported from, whichever way it is reached.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_hostile_round4 import OTTO_SUBMISSION, OTTO_TRUTH, run_cli

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
