"""How a build splits the stage modules between its worker processes (scorer.engine.aot_build): each family on one
worker, the rest claimed by whichever worker comes free first, each stage compiled exactly once (no compile here)."""

from pathlib import Path

import pytest

from scorer.engine import aot_build
from scorer.kernels import door


def test_every_stage_has_a_cost_and_every_family_member_is_a_stage():
    assert set(aot_build.COST) == set(door.STAGES)
    assert {stage for family in aot_build.FAMILIES for stage in family} <= set(door.STAGES)


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
@pytest.mark.parametrize("stages", [list(door.STAGES), ["score", "audit"], ["audit", "solution"], ["explain", "prepare"]])
def test_the_shares_hold_each_stage_once_families_whole_and_the_lightest_first(workers, stages):
    shares, claimable = aot_build._shares(stages, workers)
    assert len(shares) == workers
    handed_out = [stage for share in shares for stage in share] + claimable
    assert sorted(handed_out) == sorted(stages)
    for family in aot_build.FAMILIES:
        members = [stage for stage in family if stage in stages]
        if members:
            holder = next(share for share in shares if members[0] in share)
            assert [stage for stage in holder if stage in members] == members  # together, in the family's order
            assert not set(members) & set(claimable)
    loads = [sum(aot_build.COST[stage] for stage in share) for share in shares]
    assert loads[0] == min(loads)  # the first worker also compiles the C runtime
    assert [aot_build.COST[stage] for stage in claimable] == sorted((aot_build.COST[stage] for stage in claimable), reverse=True)


def test_a_claimable_stage_is_compiled_by_one_worker_only_and_claimed_when_the_worker_comes_free(tmp_path, monkeypatch):
    compiled: list[tuple[str, str, int]] = []  # worker, stage, claims made before its compile
    number = ["0"]

    def fake_compile(stage, throwaway=False):
        compiled.append((number[0], stage, len(list(tmp_path.glob("*.claim")))))
        return b"module of " + stage.encode() if stage != "audit" else "RuntimeError: no C compiler"

    monkeypatch.setattr(aot_build, "_compiled_or_error", fake_compile)
    monkeypatch.setattr(aot_build, "share_runtime", lambda folder, compile_it: None)
    shares, claimable = aot_build._shares(list(door.STAGES), 2)
    for worker_number in (1, 0):  # one after the other: the first to run claims every stage it is offered
        number[0] = str(worker_number)
        aot_build.worker(str(tmp_path), number[0], *shares[worker_number], aot_build.CLAIM, *claimable)
    assert sorted(stage for _, stage, _ in compiled) == sorted(door.STAGES)
    assert [(stage, claims) for worker, stage, claims in compiled if stage in shares[1]] == [(stage, 0) for stage in shares[1]]
    assert {stage for worker, stage, _ in compiled if worker == "0"} == set(shares[0])
    assert aot_build._outcome(tmp_path, "score") == b"module of score"
    assert aot_build._outcome(tmp_path, "audit") == "RuntimeError: no C compiler"
    assert not aot_build._claimed(Path(tmp_path), claimable[0]) and aot_build._claimed(Path(tmp_path), "not offered")


def test_the_package_build_says_each_stage_it_compiles(tmp_path, monkeypatch, capsys):
    """pip's spinner says only "still running" for the minute or more the build compiles; with `pip install -v` (or
    where a build's output is shown) each stage is said as it is done. warmup's builds stay quiet."""
    monkeypatch.setattr(aot_build, "_compiled_or_error", lambda stage, throwaway=False: b"m" if stage != "audit" else "RuntimeError: no C compiler")
    monkeypatch.setattr(aot_build, "share_runtime", lambda folder, compile_it: None)
    monkeypatch.setenv(aot_build.PROGRESS, "1")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    aot_build.worker(str(tmp_path / "a"), "0", "score", "audit", aot_build.CLAIM)
    said = capsys.readouterr().err.splitlines()
    assert [line.rsplit(" in ", 1)[0] for line in said] == ["scorer build: compiled the score stage",
                                                             "scorer build: could not compile the audit stage"]
    monkeypatch.setenv(aot_build.PROGRESS, "")
    aot_build.worker(str(tmp_path / "b"), "0", "score", aot_build.CLAIM)
    assert capsys.readouterr().err == ""
