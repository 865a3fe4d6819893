"""Round 5's newcomer frictions (issue 44): what a first run waits for is said, whoever reads stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_hostile_round4 import OTTO_SUBMISSION, OTTO_TRUTH

PROBE = ("import sys\nfrom scorer.truth import cache\ncache.SAID_FROM_BYTES = int(sys.argv[1])\nfrom scorer.cli.main import main\n"
         "sys.exit(main(sys.argv[2:]))")


def score_with(cache: Path, said_from: int) -> subprocess.CompletedProcess:
    """A score in a fresh process, stderr a pipe (not a terminal), with the truth cache in `cache`."""
    return subprocess.run([sys.executable, "-c", PROBE, str(said_from), "score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH],
                          capture_output=True, text=True, timeout=120, env={**__import__("os").environ, "SCORER_CACHE_DIR": str(cache)})


def test_the_first_read_of_a_large_truth_is_said_once_even_off_a_terminal(tmp_path):
    first = score_with(tmp_path / "cache", 0)  # every truth counts as large
    assert first.returncode == 0 and first.stderr.startswith("scorer: reading the truth (0 MB) from its source file"), first.stderr
    assert "later runs load it in milliseconds" in first.stderr and OTTO_TRUTH not in first.stderr  # no host path named
    again = score_with(tmp_path / "cache", 0)
    assert again.returncode == 0 and again.stderr == ""  # the compiled copy serves: nothing to wait for
    small = score_with(tmp_path / "other-cache", 32 << 20)
    assert small.returncode == 0 and small.stderr == ""  # a truth read in well under a second is not said
