"""The ten commands a user tries first, each on bundled data or a tiny file made here (issue: every command fast from its
first run): tests/test_no_numba.py runs them without numba, bench/bench_install.py times their first and second runs."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SUBMISSION, TRUTH = FIXTURES / "otto_submission.csv", FIXTURES / "otto_truth.jsonl"
CONVENTIONS = ("otto-official", "otto-official-2022", "kaggle-apk", "trec_eval", "recommenders-map", "recommenders-map_at_k", "ranx",
               "implicit")  # every convention of `scorer explain --against` (tests/test_no_numba.py checks the list)


def commands(folder: Path) -> dict[str, list]:
    """{name: argv after `scorer`} of the ten commands; the files they need beyond fixtures/ are written into folder."""
    folder.mkdir(parents=True, exist_ok=True)
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
        "explain": ["explain", SUBMISSION, "--truth", TRUTH, "--against", ",".join(CONVENTIONS)],
        "candidates": ["candidates", candidates, "--truth", TRUTH],
        "audit": ["audit", "--truth", TRUTH, "--sample", SUBMISSION],
        "prepare": ["prepare", events, "-o", folder / "prepared"],
    }
