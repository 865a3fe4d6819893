"""`scorer audit`: a good competition passes every check, and each check fails on a crafted bad input, naming the fix."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import TYPES, truth_lines
from scorer.analytics import audit
from scorer.api import load_truth, resolve_competition
from scorer.api import score as api_score
from scorer.cli.main import main
from scorer.spec.competition import competition_from_dict

ROOT = Path(__file__).parent.parent
rng = np.random.default_rng(11)
# every session has truth for every type: a test set with nothing to drop
TRUTH = {int(s): {"clicks": int(rng.integers(1, 60)), "carts": sorted({int(x) for x in rng.integers(1, 60, 2)}),
                  "orders": sorted({int(x) for x in rng.integers(1, 60, 3)})} for s in range(500, 800)}


def _build():
    spec = importlib.util.spec_from_file_location("bundle_build", ROOT / "bundles" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def good(tmp_path):
    """A truth, its solution and sample (scorer export), and a Codabench bundle holding that truth."""
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    assert main(["export", "kaggle-solution", str(truth), "-o", str(tmp_path / "solution.csv"), "--public", "0.3"]) == 0
    bundle = tmp_path / "bundle.zip"
    _build().codabench(bundle, "ghcr.io/example/scorer:0.1.0", truth)
    return tmp_path, truth


def run_audit(capsys, *argv) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["audit", *map(str, argv), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] == (code == 0) and all(set(check) == {"name", "state", "ok", "warn", "detail"} for check in out["checks"])
    return code, {check["name"]: check for check in out["checks"]}


def failing(checks: dict) -> list[str]:
    return [name for name, check in checks.items() if not check["ok"]]


def test_a_good_competition_passes_every_check(good, capsys):
    folder, truth = good
    code, checks = run_audit(capsys, "--truth", truth, "--sample", folder / "sample_submission.csv",
                             "--solution", folder / "solution.csv", "--bundle", folder / "bundle.zip")
    assert code == 0, checks
    assert list(checks) == ["truth", "truth over K", "sample", "solution", "split", "perfect", "empty", "random", "repeatable",
                            "time", "bundle files", "bundle truth", "bundle program"]
    assert "300 sessions, 0 without any truth item" in checks["truth"]["detail"]
    assert "of the 600 s limit" in checks["time"]["detail"]  # the bundle's execution_time_limit
    assert checks["bundle program"]["detail"].startswith("ran on sample_submission.csv: score 0.0000")
    capsys.readouterr()
    assert main(["audit", "--truth", str(truth)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("audit of otto") and "ok    perfect" in text and "checks passed" in text


def test_a_codalab_bundle_is_audited_too(good, capsys):
    """CodaLab's bundle zips its program and reference data: both are unpacked, and its `metadata` command runs."""
    folder, truth = good
    bundle = folder / "codalab.zip"
    _build().codalab(bundle, "ghcr.io/example/scorer:0.1.0", truth)
    code, checks = run_audit(capsys, "--truth", truth, "--sample", folder / "sample_submission.csv", "--bundle", bundle)
    assert code == 0, checks
    assert "all 7 files" in checks["bundle files"]["detail"] and checks["bundle program"]["detail"].startswith("ran on")


def test_a_sample_100_rows_short_fails_and_names_the_fix(good, capsys):
    folder, truth = good
    lines = (folder / "sample_submission.csv").read_text().splitlines(keepends=True)
    short = folder / "short.csv"
    short.write_text("".join(lines[:-100]))
    code, checks = run_audit(capsys, "--truth", truth, "--sample", short)
    assert code == 1 and failing(checks) == ["sample"]
    assert "100 missing" in checks["sample"]["detail"] and "fix: make the sample from the truth" in checks["sample"]["detail"]
    bad = folder / "bad.csv"
    bad.write_text("".join(lines[:1]) + "".join(line.replace(",", ";") for line in lines[1:]))
    code, checks = run_audit(capsys, "--truth", truth, "--sample", bad)
    assert failing(checks) == ["sample"]


def test_an_overlapping_split_fails(good, capsys):
    folder, truth = good
    rows = (folder / "solution.csv").read_text().splitlines(keepends=True)
    first = rows[1].split("_")[0]
    flipped = [row.replace(",Public", ",Private") if row.startswith(first + "_carts") else
               row.replace(",Private", ",Public") if row.startswith(first + "_carts") else row for row in rows]
    if flipped == rows:  # that session was Private: make one of its rows Public
        flipped = [row.replace(",Private", ",Public") if row.startswith(first + "_carts") else row for row in rows]
    (folder / "overlap.csv").write_text("".join(flipped))
    code, checks = run_audit(capsys, "--truth", truth, "--solution", folder / "overlap.csv")
    assert code == 1 and failing(checks) == ["split"] and "1 sessions are in both" in checks["split"]["detail"]
    assert "fix: give every row of a session the same Usage" in checks["split"]["detail"]
    all_private = folder / "private.csv"
    all_private.write_text("".join(row.replace(",Public", ",Private") for row in rows))
    assert failing(run_audit(capsys, "--truth", truth, "--solution", all_private)[1]) == ["split"]


def test_a_solution_of_another_truth_fails(good, capsys):
    folder, truth = good
    rows = (folder / "solution.csv").read_text().splitlines(keepends=True)
    rows[1] = rows[1].split(",")[0] + ",59999," + rows[1].split(",")[2]
    (folder / "other.csv").write_text("".join(rows))
    code, checks = run_audit(capsys, "--truth", truth, "--solution", folder / "other.csv")
    assert failing(checks) == ["solution"] and "labels are not the truth's" in checks["solution"]["detail"]


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_a_bundle_missing_a_file_with_the_demo_truth_or_a_bad_program_fails(good, capsys, tmp_path):
    folder, truth = good
    source = zipfile.ZipFile(folder / "bundle.zip")

    def rebuilt(name: str, skip: str = "", replace: dict | None = None) -> Path:
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as out:
            for entry in source.namelist():
                if entry != skip:
                    out.writestr(entry, (replace or {}).get(entry, source.read(entry)))
        return path

    sample = folder / "sample_submission.csv"
    code, checks = run_audit(capsys, "--truth", truth, "--sample", sample, "--bundle", rebuilt("a.zip", skip="pages/terms.md"))
    assert code == 1 and failing(checks) == ["bundle files"] and "missing: pages/terms.md" in checks["bundle files"]["detail"]
    demo = tmp_path / "demo.zip"
    _build().codabench(demo, "ghcr.io/example/scorer:0.1.0")  # the demo truth of three sessions
    code, checks = run_audit(capsys, "--truth", truth, "--sample", sample, "--bundle", demo)
    assert failing(checks) == ["bundle truth", "bundle program"]
    assert "fix: build the bundle with --truth" in checks["bundle truth"]["detail"]
    assert "exited 1" in checks["bundle program"]["detail"]  # our sample's sessions are unknown to the demo truth
    metadata = {"scoring_program/metadata.yaml": b"command: codabench /app/input /app/output --competition hm\n"}
    code, checks = run_audit(capsys, "--truth", truth, "--sample", sample, "--bundle", rebuilt("b.zip", replace=metadata))
    assert failing(checks) == ["bundle program"]


def test_a_truth_with_empty_sessions_and_rows_over_k(tmp_path, capsys):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines({**TRUTH, 900: {}}))
    code, checks = run_audit(capsys, "--truth", truth)
    assert code == 0 and failing(checks) == [] and "1 without any truth item" in checks["truth"]["detail"]
    assert checks["truth"]["state"] == "warn" and "consider: drop the sessions" in checks["truth"]["detail"]
    assert "session ids 500..900" in checks["truth"]["detail"]
    config = tmp_path / "c.toml"
    config.write_text((ROOT / "configs" / "otto.toml").read_text().replace("k = 20", "k = 2").replace(
        'metric = "recall@20"', 'metric = "recall@2(denominator=truth)"').replace('["map@20", "ndcg@20"]', '["map@2", "ndcg@2"]'))
    big = tmp_path / "big.jsonl"
    big.write_text(truth_lines(TRUTH))
    code, checks = run_audit(capsys, "--truth", big, "--config", config)
    assert failing(checks) == ["truth over K"] and "fix: use denominator=min" in checks["truth over K"]["detail"]
    assert checks["perfect"]["ok"], "the best figures follow the metric's denominator"


def made(truth_path: Path, folder: Path):
    """(competition, truth, {name: path}) of the perfect, empty and random submissions written into folder."""
    comp = resolve_competition("otto")
    truth = load_truth(truth_path)
    paths = {}
    for name, mode in audit.modes().items():
        paths[name] = folder / f"{name}.csv"
        assert audit.write_submission(paths[name], truth, comp, mode) == paths[name].stat().st_size
    return comp, truth, paths


def test_the_made_submission_checks_can_fail(good, tmp_path):
    """Each expectation, given another submission than its own, fails (the comparison is not vacuous)."""
    comp, truth, paths = made(good[1], tmp_path)
    for name, other in (("perfect", "random"), ("empty", "perfect"), ("random", "perfect"), ("random", "empty")):
        check = audit.check_made(name, paths[other], truth, comp)
        assert not check.ok and "fix:" in check.detail, (name, other)
    assert all(audit.check_made(name, paths[name], truth, comp).ok for name in paths)


def test_a_run_that_differs_fails_the_repeatable_check(good, tmp_path, monkeypatch):
    _, truth_path = good
    comp = resolve_competition("otto")
    truth = load_truth(truth_path)
    path = tmp_path / "random.csv"
    audit.write_submission(path, truth, comp, audit.RANDOM)
    calls = []

    def drifting(*args, **kwargs):
        result = api_score(*args, **kwargs)
        calls.append(1)
        if len(calls) == 2:
            result.score += 1e-15
        return result

    monkeypatch.setattr(audit, "score", drifting)
    check = audit.check_repeatable(path, truth, comp)
    assert not check.ok and "differ in score" in check.detail


def test_a_time_limit_too_short_fails(good, capsys):
    _, truth = good
    code, checks = run_audit(capsys, "--truth", truth, "--time-limit", "0.001")
    assert failing(checks) == ["time"] and "fix:" in checks["time"]["detail"]


def test_the_made_submissions_have_their_shape(good, tmp_path):
    """Perfect: the truth first, then fillers up to K; empty: no item; random: K distinct catalogue items, by seed."""
    comp, truth, paths = made(good[1], tmp_path)
    lines = {name: path.read_text().splitlines() for name, path in paths.items()}
    assert all(len(rows) == 1 + 3 * len(TRUTH) for rows in lines.values())
    first = lines["perfect"][4].split(",")  # after the header and session 500's clicks
    items = [int(x) for x in first[1].split()]
    assert first[0] == "501_clicks" and items[0] == TRUTH[501]["clicks"] and len(items) == 20 and min(items[1:]) > 59
    assert lines["empty"][1] == "500_clicks,"
    drawn = [[int(x) for x in row.split(",")[1].split()] for row in lines["random"][1:]]
    catalogue = set(audit.catalogue(truth).tolist())
    assert all(len(row) == 20 == len(set(row)) and set(row) <= catalogue for row in drawn)
    again = tmp_path / "again.csv"
    audit.write_submission(again, truth, comp, audit.RANDOM)
    assert again.read_text().splitlines() == lines["random"]
    audit.write_submission(again, truth, comp, audit.RANDOM, seed=1)
    assert again.read_text().splitlines() != lines["random"]


METRICS = ["recall@5", "precision@5", "hitrate@5", "f1@5", "map@5", "ndcg@5", "mrr@5", "recall@5(average=macro)",
           "map@3(denominator=truth)", "ndcg@4(gain=exp)", "f1"]


@pytest.mark.slow  # over 5 s: the fast suite stays within 3 minutes
def test_the_random_expectation_matches_the_average_of_many_random_submissions(tmp_path):
    """The worked-out E[figure] of every supported metric against the mean of 300 seeded random submissions, and its
    spread bound against their spread. (A 3% error in one formula is some 10 standard errors off here.)"""
    comp = competition_from_dict({"name": "wide", "submission": {"header": ["session_type", "labels"], "id_pattern": "{session}_{type}"},
                                  "scoring": {"types": list(TYPES), "k": 5, "metric": METRICS[0], "diagnostics": METRICS[1:]}})
    small = {s: {"clicks": s % 13, "carts": [s % 7, 8 + s % 5], "orders": list(range(s % 4, s % 4 + 1 + s % 3))} for s in range(600)}
    path = tmp_path / "t.jsonl"
    path.write_text(truth_lines(small))
    truth = load_truth(path, competition=comp)
    size = len(audit.catalogue(truth))
    values: dict = {}
    runs = 300
    for seed in range(runs):
        audit.write_submission(tmp_path / "r.csv", truth, comp, audit.RANDOM, seed=seed)
        result = api_score(tmp_path / "r.csv", truth, comp, strict=True)
        for t, figures in result.metrics.items():
            for name, value in figures.items():
                values.setdefault((t, name), []).append(value)
    for t, type_name in enumerate(TYPES):
        sizes = truth.type_sizes(t)
        for metric in comp.metrics:
            expected, sigma = audit.random_total(metric, sizes, size, min(comp.k, size))
            drawn = np.array(values[(type_name, str(metric))])
            assert abs(drawn.mean() - expected) <= 5 * drawn.std() / np.sqrt(runs), (type_name, str(metric))
            assert sigma >= 0.85 * drawn.std(), (type_name, str(metric))  # an upper bound, up to the noise of 300 draws
            assert expected > 0.05, "a catalogue this small makes every metric's expectation clearly positive"
