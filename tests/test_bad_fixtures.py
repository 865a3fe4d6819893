"""Every fixture of fixtures/bad/ gives exactly the problems fixtures/bad/expected.toml declares for it."""

from __future__ import annotations

import gzip
import json
import tomllib
from collections import Counter
from pathlib import Path

import pytest

import scorer
from scorer.cli.main import main
from scorer.engine.problems import CATALOGUE, ERROR
from scorer.engine.reader import BlockReader, LimitExceeded

BAD = Path(__file__).parent.parent / "fixtures" / "bad"
TRUTH = BAD.parent / "otto_truth.jsonl"
TABLE = tomllib.loads((BAD / "expected.toml").read_text())["fixture"]
HELPERS = {"expected.toml", "make_binaries.py", "impressions_truth.txt", "seeds.csv"}


def truth_of(entry: dict) -> Path | None:
    """The entry's truth: `truth = true` is OTTO's fixture, a text names a file of fixtures/bad (another shape's)."""
    truth = entry.get("truth")
    return BAD / truth if isinstance(truth, str) else TRUTH if truth else None


def _run(entry: dict):
    truth = truth_of(entry)
    config = BAD / entry["config"] if "config" in entry else None
    return scorer.validate(BAD / entry["file"], truth, config=config, seeds=BAD / entry["seeds"] if "seeds" in entry else None)


@pytest.mark.parametrize("entry", TABLE, ids=[entry["file"] for entry in TABLE])
def test_fixture_gives_exactly_the_declared_problems(entry):
    result = _run(entry)
    found = Counter((p.code, p.line, p.column) for p in result.problems)
    declared = Counter((p["code"], p.get("line"), p.get("column")) for p in entry["problems"])
    assert found == declared, "\n".join(f"{p.code} {p.line}:{p.column} {p.message}" for p in result.problems)
    for wanted in entry["problems"]:
        if "says" in wanted:
            messages = [p.message for p in result.problems if p.code == wanted["code"]]
            assert any(wanted["says"] in message for message in messages), (wanted["says"], messages)
    errors = [p for p in result.problems if p.severity == ERROR]
    assert result.valid == (not errors)


@pytest.mark.parametrize("entry", TABLE, ids=[entry["file"] for entry in TABLE])
def test_cli_json_agrees_and_exit_code_says_valid(entry, capsys):
    argv = ["validate", str(BAD / entry["file"]), "--format", "json", "--no-progress"]
    if entry.get("truth"):
        argv += ["--truth", str(truth_of(entry))]
    if "config" in entry:
        argv += ["--config", str(BAD / entry["config"])]
    if "seeds" in entry:
        argv += ["--seeds", str(BAD / entry["seeds"])]
    code = main(argv)
    out = json.loads(capsys.readouterr().out)
    found = Counter((p["code"], p["line"], p["column"]) for p in out["problems"])
    assert found == Counter((p["code"], p.get("line"), p.get("column")) for p in entry["problems"])
    has_error = any(p["severity"] == ERROR for p in out["problems"])
    assert code == (1 if has_error else 0) and out["valid"] == (not has_error)


def test_every_code_of_the_catalogue_has_a_fixture():
    declared = {p["code"] for entry in TABLE for p in entry["problems"]}
    assert sorted(kind.code for kind in CATALOGUE.values()) == sorted(declared)


def test_every_file_of_the_folder_is_in_the_table():
    listed = {entry["file"] for entry in TABLE} | {entry["config"] for entry in TABLE if "config" in entry}
    present = {path.name for path in BAD.iterdir() if path.is_file()} - HELPERS
    assert present == listed
    assert len(listed) == len({entry["file"] for entry in TABLE}) + len({e["config"] for e in TABLE if "config" in e})


def test_file_names_start_with_their_code():
    for entry in TABLE:
        if entry["problems"]:
            assert entry["file"].split("_")[0] in {p["code"] for p in entry["problems"]}, entry["file"]


def test_a_decompression_bomb_stops_early(tmp_path):
    """32 MB of line ends in 32 KB of gzip: reading stops within one block of the limit, not at the end."""
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"session_type,labels\n" + b"\n" * (32 << 20), 9, mtime=0))
    limit, block = 100_000, 1 << 16
    reader = BlockReader(bomb, block, max_decompressed_bytes=limit)
    with pytest.raises(LimitExceeded) as stop:
        for _ in reader:
            pass
    assert stop.value.number == 24
    assert limit < reader.bytes_read <= limit + block
    assert f"{reader.bytes_read:,}" in str(stop.value)


def test_the_readme_table_lists_every_code_with_its_severity():
    readme = (BAD.parent.parent / "docs" / "semantics.md").read_text()
    section = readme[readme.index("## Problems a submission can have") :]
    section = section[: section.index("\n## ", 1)]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| S")]
    table = {code.strip(): severity.strip().split(" ")[0] for code, severity in rows}
    assert table == {kind.code: kind.severity for kind in CATALOGUE.values()}
