"""The quick attacks of issue 12, run by bench/attack.py's own case list and judge (bench/attack.py runs them all)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "attack.py"
_spec = importlib.util.spec_from_file_location("attack_bench", BENCH)
attack = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = attack  # its dataclasses look their module up there
_spec.loader.exec_module(attack)


def test_the_quick_cases_are_cases_of_the_bench():
    assert attack.QUICK and set(attack.QUICK) <= set(attack.CASES)


@pytest.mark.parametrize("name", attack.QUICK)
def test_a_quick_attack_meets_every_bound(name, tmp_path):
    outcome = attack.judge(name, tmp_path)
    assert outcome.faults == [], outcome.row()


def test_a_broken_bound_is_reported(tmp_path, monkeypatch):
    """judge fails a case whose exit code is not the wanted one (the bench is a check, not a printout)."""
    build = attack.CASES["max_seconds = nan"]

    def wanting_success(folder):
        run = build(folder)
        run.exit_code = 0
        return run

    monkeypatch.setitem(attack.CASES, "max_seconds = nan", wanting_success)
    outcome = attack.judge("max_seconds = nan", tmp_path)
    assert outcome.faults == ["exit 2, wanted 0"] and "FAIL: exit 2, wanted 0" in outcome.row()


def test_the_peak_memory_is_the_scorer_s_own_not_the_bench_s(tmp_path):
    """Linux keeps a peak RSS across fork and exec: a bench that had grown past the bound must not fail a small child."""
    ballast = b"x" * ((attack.MAX_MB + 100) << 20)
    outcome = attack.judge("max_seconds = nan", tmp_path)
    del ballast
    assert outcome.faults == [] and outcome.peak < attack.MAX_MB, outcome.row()


def test_the_time_limit_counts_bytes_of_csv_also_between_blocks(monkeypatch, tmp_path):
    """The deadline checked after a block names the CSV bytes read (as the reader's checks do), not the gzip's."""
    import gzip

    import scorer
    from scorer.engine import file_pass
    from scorer.engine.reader import Deadline

    counted = []

    class Recording(Deadline):
        def check(self, bytes_read: int) -> None:
            counted.append(bytes_read)

    monkeypatch.setattr(file_pass, "Deadline", Recording)
    content = attack.HEADER + b"\n" * (1 << 20)
    path = tmp_path / "blank.csv.gz"
    path.write_bytes(gzip.compress(content, mtime=0))
    scorer.validate(path)
    assert counted == sorted(counted) and counted[-1] == len(content)  # a count of CSV bytes read so far
