"""Score receipts (scorer/engine/receipt.py) and `scorer verify`: each input changed in turn is named; no truth id leaks."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from conftest import TYPES, submission_text, truth_lines
from scorer.adapters.codabench import grade as codabench_grade
from scorer.adapters.evalai import evaluate
from scorer.api import load_truth, resolve_competition
from scorer.api import score as api_score
from scorer.cli.main import main
from scorer.engine import receipt as receipts
from scorer.engine.receipt import config_hash, make_receipt, truth_hash, write_receipt

rng = np.random.default_rng(3)
# large, distinctive ids: a leak would show as their digits in the receipt's text
TRUTH = {int(s): {"clicks": int(rng.integers(7_000_000_000, 7_100_000_000)),
                  "carts": [int(x) for x in rng.integers(7_000_000_000, 7_100_000_000, 2)],
                  "orders": [int(x) for x in rng.integers(7_000_000_000, 7_100_000_000, 3)]}
         for s in rng.choice(np.arange(9_100_000_000, 9_200_000_000), 40, replace=False)}


def truth_ids() -> set[str]:
    found = set()
    for session, labels in TRUTH.items():
        found.add(str(session))
        for value in labels.values():
            found |= {str(v) for v in (value if isinstance(value, list) else [value])}
    return found


def rows(hit_share: float = 0.5, seed: int = 0):
    pick = np.random.default_rng(seed)
    out = []
    for session, labels in TRUTH.items():
        for t in TYPES:
            wanted = labels[t] if isinstance(labels[t], list) else [labels[t]]
            items = [int(x) for x in pick.integers(1, 10**6, 5)]
            if pick.random() < hit_share:
                items[2] = wanted[0]
            out.append((session, t, items))
    return out


@pytest.fixture
def case(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    submission = tmp_path / "sub.csv"
    submission.write_text(submission_text(rows()))
    return tmp_path, submission, truth


def score_json(capsys, *argv) -> dict:
    capsys.readouterr()
    main(["score", *map(str, argv), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def verify(capsys, *argv) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["verify", *map(str, argv), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    return code, {check["name"]: check for check in out["checks"]} | {"ok": out["ok"]}


def failing(checks: dict) -> list[str]:
    return [name for name, check in checks.items() if name != "ok" and not check["ok"]]


def test_a_score_json_carries_a_receipt_that_verifies(case, capsys):
    folder, submission, truth = case
    out = score_json(capsys, submission, "--truth", truth, "--strict")
    receipt = out["receipt"]
    comp = resolve_competition("otto")
    assert receipt["scorer"]["version"] == __import__("scorer").__version__ and receipt["scorer"]["kernels"]
    assert receipt["competition"] == {"name": "otto", "config": config_hash(comp), "metrics": ["recall@20", "map@20", "ndcg@20"]}
    assert receipt["mode"] == "strict" and receipt["split"] is None and receipt["bootstrap"] is None
    assert receipt["figures"]["score"] == out["score"] and receipt["figures"]["metrics"] == out["metrics"]
    (folder / "result.json").write_text(json.dumps(out))
    code, checks = verify(capsys, folder / "result.json", submission, "--truth", truth)
    assert code == 0 and checks["ok"] and failing(checks) == []


def test_the_truth_hash_is_of_the_content_not_the_file(case, capsys):
    folder, submission, truth = case
    compiled = folder / "truth.truth.npz"
    assert main(["compile-truth", str(truth), "-o", str(compiled)]) == 0
    assert truth_hash(load_truth(truth)) == truth_hash(load_truth(compiled, use_cache=False))
    other = dict(TRUTH)
    first = next(iter(other))
    other[first] = {**other[first], "orders": other[first]["orders"][:2]}
    changed = folder / "other.jsonl"
    changed.write_text(truth_lines(other))
    assert truth_hash(load_truth(changed)) != truth_hash(load_truth(truth))


def test_verify_names_each_changed_input(case, capsys, monkeypatch):
    folder, submission, truth = case
    (folder / "result.json").write_text(json.dumps(score_json(capsys, submission, "--truth", truth)))
    recorded = folder / "result.json"

    other_truth = folder / "other.jsonl"
    first = next(iter(TRUTH))
    other_truth.write_text(truth_lines({**TRUTH, first: {**TRUTH[first], "clicks": 5}}))
    code, checks = verify(capsys, recorded, submission, "--truth", other_truth)
    assert code == 1 and "truth" in failing(checks) and "fix: pass the truth" in checks["truth"]["detail"]

    changed = folder / "changed" / "sub.csv"  # the same name, other bytes: another row hits
    changed.parent.mkdir()
    changed.write_text(submission_text(rows(seed=1)))
    code, checks = verify(capsys, recorded, changed, "--truth", truth)
    assert code == 1 and failing(checks) == ["submission", "figures"]
    assert "a figure differs: score" in checks["figures"]["detail"]

    config = folder / "otto_weights.toml"
    from importlib import resources

    otto = (resources.files("scorer.spec") / "configs" / "otto.toml").read_text()
    config.write_text(otto.replace("weights = [0.10, 0.30, 0.60]", "weights = [0.20, 0.20, 0.60]"))
    code, checks = verify(capsys, recorded, submission, "--truth", truth, "--config", config)
    assert code == 1 and failing(checks) == ["config", "figures"]
    config.write_text(otto.replace('max_seconds = 600', 'max_seconds = 60').replace('title = "OTTO', 'title = "Another OTTO'))
    code, checks = verify(capsys, recorded, submission, "--truth", truth, "--config", config)
    assert code == 0, "the title and the limits change no score: not part of the canonical config"

    monkeypatch.setattr("scorer.__version__", "9.9.9")
    code, checks = verify(capsys, recorded, submission, "--truth", truth)
    assert code == 0 and failing(checks) == [] and "9.9.9" in checks["version"]["detail"]  # the figures agree: a warning
    assert checks["version"]["state"] == "warn" and "the figures agree" in checks["version"]["detail"]
    changed.write_text(submission_text(rows(seed=1)))
    code, checks = verify(capsys, recorded, changed, "--truth", truth)
    assert code == 1 and failing(checks) == ["version", "submission", "figures"]  # then the version may be why


def test_a_receipt_hashed_without_xxhash_says_so(case, capsys):
    folder, submission, truth = case
    out = score_json(capsys, submission, "--truth", truth)
    out["receipt"]["truth"] = "blake2b-" + "0" * 32
    (folder / "result.json").write_text(json.dumps(out))
    code, checks = verify(capsys, folder / "result.json", submission, "--truth", truth)
    assert code == 1 and failing(checks) == ["truth"] and "hashed with blake2b, here with xxh3" in checks["truth"]["detail"]


def test_verify_names_changed_figures(case, capsys):
    """A receipt whose figures were edited (or a scorer whose figures moved) fails on the figures alone."""
    folder, submission, truth = case
    out = score_json(capsys, submission, "--truth", truth)
    out["receipt"]["figures"]["metrics"]["orders"]["map@20"] += 1e-12
    (folder / "result.json").write_text(json.dumps(out))
    code, checks = verify(capsys, folder / "result.json", submission, "--truth", truth)
    assert code == 1 and failing(checks) == ["figures"] and "metrics.orders.map@20" in checks["figures"]["detail"]


def test_split_and_bootstrap_settings_are_recorded_and_checked(case, capsys):
    folder, submission, truth = case
    out = score_json(capsys, submission, "--truth", truth, "--split", "public=0.3", "--seed", "5", "--bootstrap", "20")
    receipt = out["receipt"]
    assert receipt["split"] == {"public": 0.3, "seed": 5} and receipt["bootstrap"] == {"resamples": 20, "seed": 5, "level": 0.95}
    assert receipt["figures"]["split"] == out["analytics"]["split"] and receipt["figures"]["bootstrap"] == out["analytics"]["bootstrap"]
    (folder / "result.json").write_text(json.dumps(receipt))  # the receipt alone verifies as well
    assert verify(capsys, folder / "result.json", submission, "--truth", truth)[0] == 0
    receipt["split"]["seed"] = 6  # another split: its figures are not the recorded ones
    (folder / "result.json").write_text(json.dumps(receipt))
    code, checks = verify(capsys, folder / "result.json", submission, "--truth", truth)
    assert code == 1 and failing(checks) == ["figures"] and "split" in checks["figures"]["detail"]


def test_no_truth_id_in_any_receipt(case, capsys, tmp_path):
    folder, submission, truth = case
    out = score_json(capsys, submission, "--truth", truth, "--split", "public=0.5", "--bootstrap", "5")
    ids = truth_ids()
    codabench = tmp_path / "cb"
    (codabench / "input" / "ref").mkdir(parents=True)
    (codabench / "input" / "res").mkdir(parents=True)
    (codabench / "input" / "ref" / "truth.jsonl").write_text(truth_lines(TRUTH))
    (codabench / "input" / "res" / "sub.csv").write_text(submission_text(rows()))
    assert codabench_grade(codabench / "input", codabench / "output").exit_code == 0
    written = json.loads((codabench / "output" / "receipt.json").read_text())
    for receipt in (out["receipt"], written):
        text = json.dumps(receipt)
        digits = set(__import__("re").findall(r"\d+", text))
        assert not digits & ids, "a truth id appears in the receipt"
        assert receipt["truth"].startswith(("xxh3-", "blake2b-"))
    assert written["figures"]["score"] is not None and written["mode"] == "strict"


def test_the_codabench_receipt_verifies_and_is_written_atomically(tmp_path, capsys, monkeypatch):
    root = tmp_path / "cb"
    for part in ("ref", "res"):
        (root / "input" / part).mkdir(parents=True)
    (root / "input" / "ref" / "truth.jsonl").write_text(truth_lines(TRUTH))
    upload = root / "input" / "res" / "sub.csv"
    upload.write_text(submission_text(rows()))
    assert codabench_grade(root / "input", root / "output", max_seconds=30).exit_code == 0
    code, checks = verify(capsys, root / "output" / "receipt.json", upload, "--truth", root / "input" / "ref" / "truth.jsonl")
    assert code == 0, checks
    assert sorted(os.listdir(root / "output")) == ["receipt.json", "scores.json", "scores.txt"]  # no temporary file left

    def broken_replace(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(receipts.os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_receipt(tmp_path / "r.json", {"receipt": 1})
    assert os.listdir(tmp_path) == ["cb"], "a failed write leaves neither the receipt nor its temporary file"


def test_evalai_returns_and_writes_the_receipt(tmp_path, capsys):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    submission = tmp_path / "sub.csv"
    submission.write_text(submission_text(rows()))
    out = evaluate(str(truth), str(submission), "test", receipt_dir=str(tmp_path / "receipts"))
    written = json.loads((tmp_path / "receipts" / "sub.csv.receipt.json").read_text())
    assert out["receipt"] == written and written["figures"]["score"] == out["submission_result"]["score"]
    assert verify(capsys, tmp_path / "receipts" / "sub.csv.receipt.json", submission, "--truth", truth)[0] == 0


def test_a_grade_record_carries_the_receipt(case):
    from scorer.dask.tasks import grade_one

    folder, submission, truth = case
    comp = resolve_competition("otto")
    record = grade_one(str(submission), str(truth), comp)
    expected = make_receipt(api_score(submission, truth, comp, strict=True), comp, submission)
    assert record["receipt"] == expected


def test_verify_reads_grade_lines_and_refuses_what_holds_no_receipt(case, capsys):
    from scorer.dask.tasks import grade_one

    folder, submission, truth = case
    comp = resolve_competition("otto")
    lines = folder / "results.jsonl"
    lines.write_text(json.dumps(grade_one(str(submission), str(truth), comp)) + "\n"
                     + json.dumps({"file": "/elsewhere/other.csv", "receipt": {}}) + "\n")
    assert verify(capsys, lines, submission, "--truth", truth)[0] == 0
    (folder / "empty.json").write_text("{}")
    assert main(["verify", str(folder / "empty.json"), str(submission), "--truth", str(truth)]) == 2
    assert "no receipt found" in capsys.readouterr().err


def test_verify_takes_the_newest_record_of_this_file_and_these_bytes(case, capsys):
    """grade's records: the same bytes graded twice, the same name in two folders, a file graded before it changed. The
    newest record of this file (by its path, however spelled) and these bytes counts; a file of that name elsewhere
    with other bytes does not stand in for it."""
    from scorer.dask.tasks import grade_one

    folder, submission, truth = case
    comp = resolve_competition("otto")
    (folder / "x").mkdir(), (folder / "y").mkdir()
    x, y = folder / "x" / "A.csv", folder / "y" / "A.csv"
    x.write_text(submission_text(rows(0.5, seed=1)))
    y.write_text(submission_text(rows(0.8, seed=2)))
    lines = folder / "results.jsonl"

    def write(*paths):
        lines.write_text("".join(json.dumps(grade_one(str(p), str(truth), comp)) + "\n" for p in paths))

    write(x, x)  # the same bytes graded twice
    assert verify(capsys, lines, x, "--truth", truth)[0] == 0
    write(x, y)  # x/A.csv and y/A.csv both graded: each verifies by its own record, under any spelling
    assert verify(capsys, lines, x, "--truth", truth)[0] == 0
    assert verify(capsys, lines, folder / "y" / "." / "A.csv", "--truth", truth)[0] == 0
    moved = folder / "A.csv"  # a copy of y's bytes elsewhere: found by its name and content key
    moved.write_bytes(y.read_bytes())
    assert verify(capsys, lines, moved, "--truth", truth)[0] == 0
    moved.write_text(submission_text(rows(0.3, seed=3)))  # other bytes by that name: no record of them
    assert main(["verify", str(lines), str(moved), "--truth", str(truth)]) == 2
    assert "none of these bytes" in capsys.readouterr().err
    write(x, y)
    x.write_text(submission_text(rows(0.3, seed=4)))  # x changed after it was graded: its record, and the submission differs
    code, checks = verify(capsys, lines, x, "--truth", truth)
    assert code == 1 and failing(checks) == ["submission", "figures"]


def test_a_submission_is_hashed_in_blocks_never_mapped(tmp_path, monkeypatch):
    """A mapped file counts in the process's resident memory: a partitioned score's client grew by the size of the largest
    part when it hashed the parts for its receipt. The key is the same as the mapped one's."""
    from scorer.truth import cache

    parts = tmp_path / "parts"
    parts.mkdir()
    for index in range(2):
        (parts / f"part-{index}.csv").write_text(submission_text([(index, "clicks", [1, 2])]))
    mapped = {str(path): cache.content_key(path) for path in parts.iterdir()}
    maps = []
    real_mmap = cache.mmap.mmap
    monkeypatch.setattr(cache.mmap, "mmap", lambda *args, **kwargs: maps.append(args) or real_mmap(*args, **kwargs))
    key = receipts.submission_hash(parts)
    one = receipts.submission_hash(parts / "part-0.csv")
    assert maps == [] and key.startswith("parts-") and one == mapped[str(parts / "part-0.csv")]
