"""Issue 29, a newcomer's frictions: a small truth read without pyarrow (and both truth paths alike), shared options
that mean the same everywhere, another competition's file named, binary formats named, a missing file in one line,
strict wording, prepare's next command, a candidate recipe, grade's worker count, the leaderboard's figures, key,
ties and colours, the report's scales, explain's rules, today's evaluate.py, and the readings the docs now state."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, run_main
from scorer.errors import TruthError
from scorer.truth import ids

ROOT = Path(__file__).resolve().parent.parent
TYPES = ("clicks", "carts", "orders")


# -- 1. a small JSONL truth: the line reader, with the large path's verdicts -------------------------------------------
TRUTHS = {
    "plain": '{"session": 3, "labels": {"orders": [3, 1], "clicks": 2}}\n{"session": 1, "labels": {"carts": [9, 9]}}\n',
    "empty labels and none": '{"session": 1, "labels": {}}\n{"session": 2}\n',
    "crlf and blank lines": '{"session": 1}\r\n\r\n   \n{"session": 2}\r\n',
    "no final newline": '{"session": 1, "labels": {"clicks": 4}}',
    "a BOM": '\ufeff{"session": 1}\n',
    "usage": '{"session": 1, "usage": " PRIVATE "}\n{"session": 2, "usage": "Pub\\u006cic"}\n',
    "an extra key": '{"session": 1, "x": 2}\n',
    "empty lists": '{"session": 1, "labels": {"clicks": []}}\n',
    "empty file": "",
    "a null label next to a good one": '{"session": 1, "labels": {"clicks": null}}\n{"session": 2, "labels": {"clicks": 5}}\n',
    "null labels next to good ones": '{"session": 1, "labels": null}\n{"session": 2, "labels": {"clicks": 5}}\n',
    "a null in a list": '{"session": 1, "labels": {"clicks": [1, null]}}\n',
    "two objects on a line": '{"session": 1} {"session": 2}\n',
    "a tab between objects": '{"session": 1}\t{"session": 2}\n',
    "lone CRs": '{"session": 1}\r{"session": 2}\r',
    "one object over lines": '{\n "session": 1\n}\n',
    "bad UTF-8 in usage": b'{"session": 1, "usage": "Pub\xfflic"}\n',
    "a repeated session": '{"session": 1}\n{"session": 1}\n',
    "an unknown type": '{"session": 1, "labels": {"views": [2]}}\n',
    "a float item": '{"session": 1, "labels": {"clicks": 5.0}}\n',
    "an int and a list": '{"session": 1, "labels": {"clicks": 5}}\n{"session": 2, "labels": {"clicks": [5]}}\n',
    "a negative session": '{"session": -1}\n',
    "a session past int64": '{"session": 9223372036854775808}\n',
    "usage on some lines": '{"session": 1, "usage": "Public"}\n{"session": 2}\n',
    "a bad usage": '{"session": 1, "usage": "Nope"}\n',
    "trailing garbage": '{"session": 1} x\n',
    "NaN": '{"session": NaN}\n',
    "a list for labels": '{"session": 1, "labels": [1]}\n',
}


def _verdict(read, path: Path):
    try:
        truth = read(path, TYPES)
    except TruthError as error:
        return str(error)
    usage = None if truth.usage is None else truth.usage.tolist()
    return truth.sessions.tolist(), truth.indptr.tolist(), truth.items.tolist(), usage


def _write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "truth.jsonl"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize("content", TRUTHS.values(), ids=TRUTHS.keys())
def test_the_small_and_the_large_truth_path_agree(tmp_path, content):
    path = _write(tmp_path, content)
    assert _verdict(ids._read_jsonl_lines, path) == _verdict(ids._read_jsonl_large, path)


def test_the_large_path_reads_a_plain_file_with_pyarrow(tmp_path):
    path = _write(tmp_path, TRUTHS["plain"])
    lines = ids._lines_without_null(path)
    assert lines == 2 and ids._read_jsonl_arrow(path, TYPES, lines) is not None  # the agreement above is not all fallback


_PIECES = [b'{"session": 1', b'{"session": 2', b', "labels": {', b'"clicks": 5', b'"carts": [1, 2]', b'"orders": []', b"null",
           b', "usage": "public"', b"}", b"}", b"\n", b"\n", b"\r", b"\t", b" ", b"[", b"]", b",", b"3", b'"x"', b"\xff"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24))
def test_the_two_paths_agree_on_any_arrangement(tmp_path_factory, pieces):
    path = _write(tmp_path_factory.mktemp("truth"), b"".join(pieces))
    assert _verdict(ids._read_jsonl_lines, path) == _verdict(ids._read_jsonl_large, path)


def test_a_small_truth_takes_the_line_reader(tmp_path, monkeypatch):
    path = _write(tmp_path, TRUTHS["plain"])
    monkeypatch.setattr(ids, "_read_jsonl_large", lambda *a: pytest.fail("a small truth went the large path"))
    assert ids.read_jsonl(path, TYPES).n_sessions == 2
    monkeypatch.setattr(ids, "SMALL_JSONL_BYTES", path.stat().st_size - 1)
    with pytest.raises(pytest.fail.Exception):
        ids.read_jsonl(path, TYPES)


def test_a_fixture_score_imports_neither_pyarrow_nor_pandas(tmp_path):
    code = ("import json, sys; from scorer.cli.main import main\n"
            "for _ in range(2):  # an empty cache, then the compiled one\n"
            "    assert main(['score', 'fixtures/otto_submission.csv', '--truth', 'fixtures/otto_truth.jsonl']) == 0\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "SCORER_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert list((tmp_path / "cache").glob("*.npz")), "the truth was not compiled into the empty cache"


# -- 2. the shared options mean the same in every command -----------------------------------------------------------
def _options_by_command() -> dict[str, dict]:
    """Each command's options as --help shows them (an old spelling kept for scripts is left out)."""
    import argparse

    from scorer.cli.main import build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    return {name: {option: action for option, action in command._option_string_actions.items() if action.help != argparse.SUPPRESS}
            for name, command in commands.items()}


def _accepts(action, text: str) -> bool:
    import argparse

    try:
        value = action.type(text) if action.type else text
    except argparse.ArgumentTypeError:
        return False
    return action.choices is None or value in action.choices


@pytest.mark.parametrize("option, good, bad", [
    ("--max-per-code", ["0", "20", "10000"], ["-1", "10001", "x"]),
    ("--threads", ["1", "64"], ["0", "65", "x"]),
    ("--format", ["text", "json"], ["csv", "parquet"]),
    ("--seed", ["0", str(2**63 - 1)], ["-1", str(2**63)]),
])
def test_a_shared_option_takes_the_same_values_in_every_command(option, good, bad):
    holders = {name: options[option] for name, options in _options_by_command().items() if option in options}
    assert len(holders) >= 3, holders
    for name, action in holders.items():
        assert [_accepts(action, text) for text in good + bad] == [True] * len(good) + [False] * len(bad), name
        assert action.metavar in (None, "N", "SEED"), name


def test_the_shared_options_have_one_default_everywhere():
    by_command = _options_by_command()
    for option in ("--max-per-code", "--format", "--no-progress", "--untrusted", "--level"):
        defaults = {name: options[option].default for name, options in by_command.items() if option in options}
        assert len(defaults) >= 2 and len(set(defaults.values())) == 1, (option, defaults)


def _candidate_table(tmp_path, repeats: int) -> Path:
    path = tmp_path / "candidates.csv"
    path.write_text("session,aid\n" + "".join(f"1,{item}\n1,{item}\n" for item in range(repeats)))
    return path


def test_candidates_takes_max_per_code_as_score_does(tmp_path, capsys):
    from scorer.cli.common import WARNING_EXAMPLES
    from scorer.cli.main import main

    repeats = WARNING_EXAMPLES + 2  # one S014 warning per repeated item
    table = _candidate_table(tmp_path, repeats)
    truth = ROOT / "fixtures" / "otto_truth.jsonl"
    for options, shown in (([], WARNING_EXAMPLES), (["--max-per-code", "0"], 0), (["--max-per-code", str(repeats - 1)], repeats - 1)):
        assert main(["candidates", str(table), "--truth", str(truth), *options]) == 0
        out = capsys.readouterr().out
        assert f"S014 warning: duplicate items in a row — {repeats} in all" in out
        assert out.count("appears twice in the row") == shown, options


# -- 3. another bundled competition's file: named, and counts that agree --------------------------------------------
FIXTURE_OF = {"otto": ("otto_submission.csv", "otto_truth.jsonl"), "hm": ("hm/submission.csv", "hm/truth.csv")}


def _counts_agree(counts: dict) -> bool:
    """Counts of rows are parts of the rows read (or expected): a line that gives no row is in none of them."""
    read = counts["rows_read"]
    return (counts["rows_with_duplicate_items"] <= read and counts["rows_cut_at_k"] <= read and counts["rows_with_errors"] <= read
            and counts["rows_scored"] + counts["rows_missing"] == counts["rows_expected"])


@pytest.mark.parametrize("given, scored_as", [("hm", "otto"), ("otto", "hm")])
def test_another_competitions_file_is_named_and_counted_alike(given, scored_as):
    submission, _ = FIXTURE_OF[given]
    _, truth = FIXTURE_OF[scored_as]
    code, out, _ = run_cli("score", ROOT / "fixtures" / submission, "--truth", ROOT / "fixtures" / truth, "--competition", scored_as,
                           "--format", "json")
    result = json.loads(out)
    header = next(p for p in result["problems"] if p["code"] == "S002")
    assert code == 1 and header["message"].endswith(f"(this looks like a `--competition {given}` submission)")
    assert _counts_agree(result["counts"]), result["counts"]


def test_a_frame_of_another_competition_is_named():
    import pandas as pd

    import scorer
    from scorer.errors import UsageError

    with pytest.raises(UsageError, match=r"this looks like a `--competition hm` submission"):
        scorer.score(pd.DataFrame({"customer_id": ["a"], "prediction": ["1 2"]}), ROOT / "fixtures" / "otto_truth.jsonl")


def test_a_wrong_header_of_no_bundled_competition_gets_no_such_hint():
    code, out, _ = run_cli("validate", _bad_fixture("S002_header_wrong.csv"))
    assert code == 1 and "S002" in out and "--competition" not in out


def _bad_fixture(name: str) -> Path:
    return ROOT / "fixtures" / "bad" / name


@pytest.mark.parametrize("name", sorted(path.name for path in (ROOT / "fixtures" / "bad").glob("*.csv")))
def test_a_bad_files_counts_agree(name):
    code, out, _ = run_cli("score", _bad_fixture(name), "--truth", ROOT / "fixtures" / "otto_truth.jsonl", "--format", "json")
    assert code in (0, 1) and _counts_agree(json.loads(out)["counts"])


def test_a_line_with_a_bad_id_counts_no_repeated_or_cut_items(tmp_path):
    path = tmp_path / "sub.csv"
    items = " ".join(["5"] * 30)  # repeats, and more than K
    path.write_text(f"session_type,labels\n1_clicks,{items}\nx_clicks,{items}\n1_views,{items}\n")
    code, out, _ = run_cli("score", path, "--truth", ROOT / "fixtures" / "otto_truth.jsonl", "--format", "json")
    counts = json.loads(out)["counts"]
    assert counts["rows_read"] == 1 and counts["rows_with_duplicate_items"] == 1 and counts["rows_cut_at_k"] == 1


@pytest.mark.parametrize("form", ["id_labels", "long lists"])
def test_a_frame_row_with_a_bad_id_counts_no_repeated_or_cut_items(form):
    import pandas as pd

    import scorer

    items = [5] * 30
    if form == "id_labels":
        frame = pd.DataFrame({"session_type": ["1_clicks", "x_clicks", "1_views"], "labels": [items] * 3})
    else:
        frame = pd.DataFrame({"session": pd.array([1, None, -4], dtype="Int64"), "type": ["clicks"] * 3, "labels": [items] * 3})
    counts = scorer.score(frame, ROOT / "fixtures" / "otto_truth.jsonl").counts
    assert counts["rows_read"] == 1 and counts["rows_with_duplicate_items"] == 1 and counts["rows_cut_at_k"] == 1, counts


# -- 4. binary formats are named, and no message carries raw bytes ------------------------------------------------------
def _frame_files(tmp_path) -> dict[str, Path]:
    import gzip
    import zipfile

    import numpy as np
    import pandas as pd

    frame = pd.DataFrame({"session_type": [f"{s}_clicks" for s in range(50)], "labels": ["1 2"] * 50})
    made = {"a Parquet file": tmp_path / "sub.parquet", "an Arrow IPC (Feather v2) file": tmp_path / "sub.feather",
            "a Python pickle": tmp_path / "sub.pkl", "a NumPy .npz archive": tmp_path / "sub.npz"}
    frame.to_parquet(made["a Parquet file"])
    frame.to_feather(made["an Arrow IPC (Feather v2) file"])
    frame.to_pickle(made["a Python pickle"])
    np.savez(made["a NumPy .npz archive"], ids=np.arange(3))
    made["the gzip file's content is a Parquet file"] = tmp_path / "sub.parquet.gz"
    made["the gzip file's content is a Parquet file"].write_bytes(gzip.compress(made["a Parquet file"].read_bytes()))
    made["the zip file's content is a Parquet file"] = tmp_path / "sub.zip"
    with zipfile.ZipFile(made["the zip file's content is a Parquet file"], "w") as archive:
        archive.write(made["a Parquet file"], "submission.csv")
    made["an Excel workbook (.xlsx)"] = tmp_path / "sub.xlsx"
    with zipfile.ZipFile(made["an Excel workbook (.xlsx)"], "w") as archive:
        for name in ("[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml"):
            archive.writestr(name, "<x/>")
    return made


def _one_sentence(code: int, out: str, what: str) -> None:
    problems = json.loads(out)["problems"]
    assert code == 1 and [p["code"] for p in problems] == ["S026"], problems
    assert what in problems[0]["message"] and "not CSV text" in problems[0]["message"]


def test_a_data_file_given_as_the_submission_is_named(tmp_path):
    for what, path in _frame_files(tmp_path).items():
        code, out, _ = run_cli("validate", path, "--format", "json")
        _one_sentence(code, out, what)


@pytest.mark.parametrize("magic", sorted(__import__("scorer.file_formats").file_formats.BINARY_FORMATS))
def test_every_binary_format_we_know_is_named(tmp_path, magic):
    from scorer.file_formats import BINARY_FORMATS

    path = tmp_path / "sub.csv"
    path.write_bytes(magic + bytes(range(256)) * 4)
    _one_sentence(*run_cli("validate", path, "--format", "json")[:2], BINARY_FORMATS[magic])


def test_an_orc_file_is_named_and_a_header_starting_orc_is_not(tmp_path):
    path = tmp_path / "sub.csv"
    path.write_bytes(b"ORC\x0a\x06\x08\x00\x10\x00" + bytes(600))
    _one_sentence(*run_cli("validate", path, "--format", "json")[:2], "an ORC file")
    path.write_text("ORCA,labels\n1_clicks,1\n")
    code, out, _ = run_cli("validate", path, "--format", "json")
    assert "S026" not in out and "S002" in out


def test_no_message_prints_a_raw_byte(tmp_path):
    path = tmp_path / "sub.csv"
    path.write_bytes(b"session_type,labels\n1_clicks,1 \x1b[31mred\xc2\x9b2J \xe2\x80\xae \x7f\n\x1b]0;title\x07_clicks,1\n")
    code, out, _ = run_cli("validate", path)
    assert code == 1 and "S008" in out and "S006" in out  # the bad items, and the session id of the escapes
    assert all(line.isprintable() for line in out.splitlines()), [line for line in out.splitlines() if not line.isprintable()]


@pytest.mark.parametrize("command", ["score", "candidates"])
def test_a_data_file_given_as_truth_or_candidates_is_named(tmp_path, command):
    made = _frame_files(tmp_path)
    disguised = tmp_path / "labels.jsonl"
    disguised.write_bytes(made["a Parquet file"].read_bytes())
    fixtures = ROOT / "fixtures"
    if command == "score":
        code, _, err = run_cli("score", fixtures / "otto_submission.csv", "--truth", disguised)
    else:
        table = tmp_path / "candidates.csv"
        table.write_bytes(made["a Parquet file"].read_bytes())
        code, _, err = run_main("candidates", table, "--truth", fixtures / "otto_truth.jsonl")
    assert code in (1, 2) and "a Parquet file, not text (name it .parquet to read it as Parquet)" in err, err


# -- 5. a file that is not there: one line -------------------------------------------------------------------------
def _receipt(tmp_path) -> Path:
    code, out, _ = run_cli("score", ROOT / "fixtures" / "otto_submission.csv", "--truth", ROOT / "fixtures" / "otto_truth.jsonl",
                           "--format", "json")
    path = tmp_path / "receipt.json"
    path.write_text(out)
    return path


@pytest.mark.parametrize("argv, expected_code", [
    (["score", "{missing}", "--truth", "{truth}"], 1),
    (["score", "{missing}", "--truth", "{truth}", "--bootstrap", "10", "--split", "public=0.5"], 1),
    (["score", "{missing}", "--truth", "{truth}", "--strict"], 1),
    (["validate", "{missing}"], 1),
    (["compare", "{missing}", "{submission}", "--truth", "{truth}"], 1),
    (["explain", "{missing}", "--truth", "{truth}"], 1),
    (["verify", "{receipt}", "{missing}", "--truth", "{truth}"], 1),
    (["candidates", "{missing}", "--truth", "{truth}"], 1),
    (["score", "{submission}", "--truth", "{missing}"], 2),
    (["prepare", "{missing}", "-o", "{folder}"], 2),
    (["compile-truth", "{missing}", "-o", "{folder}/t.truth.npz"], 2),
])
def test_a_missing_file_is_said_in_one_line(tmp_path, argv, expected_code):
    fixtures = ROOT / "fixtures"
    names = {"missing": tmp_path / "nosuch.csv", "truth": fixtures / "otto_truth.jsonl", "submission": fixtures / "otto_submission.csv",
             "receipt": _receipt(tmp_path) if "{receipt}" in argv else "", "folder": tmp_path / "out"}
    code, out, err = run_main(*(part.format(**names) for part in argv))
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert code == expected_code and len(lines) == 1, lines
    assert "nosuch.csv" in lines[0] and ("No such file" in lines[0] or "not found" in lines[0] or "no such file" in lines[0]), lines


# -- 6. strict wording: nothing scores under strict -------------------------------------------------------------------
SCORING_WORDS = re.compile(r"\bscores? 0\b|\bis not scored\b|truth \(ignored\)|\bthe last one counts\b")  # a blank line is ignored in both modes


def _messages(path: Path, *mode: str) -> list[tuple[str, str]]:
    code, out, _ = run_cli("validate", path, "--truth", ROOT / "fixtures" / "otto_truth.jsonl", *mode, "--format", "json")
    return [(p["code"], p["message"]) for p in json.loads(out)["problems"]]


def test_strict_messages_do_not_speak_of_scoring(tmp_path):
    said = []
    for path in sorted((ROOT / "fixtures" / "bad").glob("S0*.csv")):
        said += [(code, message) for code, message in _messages(path) if SCORING_WORDS.search(message)]
    assert said == []


def test_lenient_messages_say_what_scores(tmp_path):
    path = tmp_path / "sub.csv"
    path.write_bytes(b"session_type,labels\n1_clicks,10\n9_clicks,1\n2_clicks,1 \xff\n")
    lenient = dict(_messages(path, "--lenient"))
    strict = dict(_messages(path))
    assert "(they score 0)" in lenient["S011"] and "(ignored)" in lenient["S012"] and "the line scores 0" in lenient["S016"]
    assert "every row of the truth must be there" in strict["S011"] and "must name a session of the truth" in strict["S012"]
    assert strict["S016"] == "invalid UTF-8 byte 0xff"


def test_one_missing_row_is_one_row():
    from scorer.engine.problems import Report, report_missing_rows, report_unknown_rows

    report = Report()
    report_missing_rows(report, 1, "1_clicks")
    report_unknown_rows(report, 1, "9 (line 3)", 3)
    assert [p.message for p in report.problems] == ["1 row is missing (it scores 0); first: 1_clicks",
                                                     "1 row names a session that is not in the truth (ignored); first: 9 (line 3)"]


# -- 7. prepare names the labels it wrote, and the command that scores against them ------------------------------------
@pytest.mark.parametrize("log, output_format", [("events.jsonl", None), ("events.parquet", None), ("events.parquet", "jsonl")])
def test_prepare_prints_the_score_command_with_the_labels_it_wrote(tmp_path, log, output_format):
    from test_prepare import random_sessions, write_jsonl, write_parquet

    write = write_jsonl if log.endswith(".jsonl") else write_parquet
    events = write(tmp_path / log, random_sessions(3, n=300))
    given = ["--output-format", output_format] if output_format else []
    code, out, _ = run_cli("prepare", events, "-o", tmp_path / "split", "--days", "4", *given)
    command = out.splitlines()[-1].removeprefix("next: ").split()
    assert code == 0 and command[:3] == ["scorer", "score", "SUBMISSION.csv"] and command[3] == "--truth"
    labels = Path(command[4])
    assert labels.parent == tmp_path / "split" and labels.suffix == "." + (output_format or log.rsplit(".", 1)[1])
    submission = tmp_path / "submission.csv"
    submission.write_text("session_type,labels\n")
    code, out, err = run_cli(*command[1:2], submission, *command[3:])
    assert code == 0 and "score  0.000000" in out, err


# -- 8. a candidate table from the generated data -----------------------------------------------------------------------
def _bench_module(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("log", ["events.jsonl", "events.parquet"])
def test_the_candidate_recipe_makes_a_table_scorer_candidates_reads(tmp_path, log):
    from test_prepare import random_sessions, write_jsonl, write_parquet

    sessions = random_sessions(5, n=400, items=300)
    events = (write_jsonl if log.endswith(".jsonl") else write_parquet)(tmp_path / log, sessions)
    assert run_cli("prepare", events, "-o", tmp_path / "split", "--days", "4")[0] == 0
    recipe = _bench_module("make_candidates")
    per_session = 30
    table_path = tmp_path / "candidates.parquet"
    recipe.main([str(tmp_path / "split"), "-o", str(table_path), "--per-session", str(per_session)])
    import pandas as pd

    table = pd.read_parquet(table_path)
    own = recipe.history(tmp_path / "split", per_session)
    assert (table.groupby("session").size() == per_session).all()
    for chunk in (1, 7):  # made a few sessions at a time (memory bounded at OTTO's size), the table is the same
        small = tmp_path / f"chunked{chunk}.parquet"
        assert recipe.write(tmp_path / "split", small, per_session, chunk=chunk) == (len(table), table["session"].nunique())
        pd.testing.assert_frame_equal(pd.read_parquet(small), table)
    as_csv = tmp_path / "candidates.csv"
    recipe.write(tmp_path / "split", as_csv, per_session, chunk=7)
    pd.testing.assert_frame_equal(pd.read_csv(as_csv), table, check_dtype=False)
    first = table.groupby("session").head(1).merge(own[own["rank"] == 0], on=["session", "aid"])
    assert len(first) == table["session"].nunique()  # each list starts with the session's latest item
    labels = next((tmp_path / "split").glob("test_labels.*"))
    code, out, err = run_main("candidates", table_path, "--truth", labels, "--k", f"5,{per_session}", "--format", "json")
    recall = [json.loads(out)["at_k"][k]["weighted"]["recall"] for k in ("5", str(per_session))]
    assert code == 0 and 0 < recall[0] <= recall[1], (recall, err)


# -- 9. grade counts the workers that graded, in the right number --------------------------------------------------------
def test_grade_counts_the_workers_its_tasks_ran_on():
    from scorer.cli.grade_report import ran, workers_that_graded

    records = [{"workers": ["tcp://a"]}, {"workers": ["tcp://a"]}, {"workers": ["tcp://b", "tcp://a"]}]
    assert workers_that_graded(records) == 2 and workers_that_graded(records[:2]) == 1
    assert workers_that_graded([*records, {"workers": None}]) is None  # the scheduler did not count: grade asks it instead
    assert ran(3, 2, 1.0, 0) == "graded 3 submissions on 2 workers in 1.0 s (180.0 per minute)"
    assert ran(1, 1, 2.0, 4).startswith("graded 1 submission on 1 worker in 2.0 s") and ran(1, 1, 2.0, 4).endswith("(4 skipped: already graded)")


@pytest.mark.slow
def test_grade_on_a_cluster_that_is_still_starting_counts_the_workers_that_graded(tmp_path):
    pytest.importorskip("distributed")
    results = tmp_path / "results.jsonl"
    code, _, err = run_cli("grade", ROOT / "fixtures" / "otto_submission.csv", ROOT / "fixtures" / "hm" / "submission.csv",
                           "--truth", ROOT / "fixtures" / "otto_truth.jsonl", "--workers", "2", "-o", results)
    graded_on = {worker for line in results.read_text().splitlines() for worker in json.loads(line)["workers"]}
    assert code == 1 and f"graded 2 submissions on {len(graded_on)} worker{'s' if len(graded_on) > 1 else ''} in" in err


# -- 10. the leaderboard: small figures, ties explained, a key, colours that say what they are -------------------------
def test_a_small_figure_never_reads_as_zero():
    from scorer.wording import fixed, significant

    assert fixed(4.15e-7) == "4.15e-07" and fixed(-4.15e-7, sign="+") == "-4.15e-07" and fixed(0.0) == "0.000000"
    assert fixed(0.34) == "0.340000" and fixed(None) == "-" and fixed(float("nan")) == "-"
    assert significant(4.15e-06) == "4.15e-06" and significant(0.012345) == "0.0123" and significant(None) == "-"


def _ranked(tmp_path, count: int = 3) -> list[Path]:
    """count submissions of the fixture's truth, each missing one more of its hits."""
    rows = ["1_clicks,10", "1_carts,20", "1_orders,30 31 32 33", "2_clicks,11", "2_carts,", "2_orders,0", "3_clicks,", "3_carts,",
            "3_orders,"]
    paths = []
    for n in range(count):
        path = tmp_path / f"sub{n}.csv"
        path.write_text("session_type,labels\n" + "\n".join(row.split(",")[0] + "," if i < n else row for i, row in enumerate(rows)) + "\n")
        paths.append(path)
    return paths


def test_the_mde_of_many_sessions_is_printed_in_significant_figures(tmp_path):
    code, out, _ = run_main("leaderboard", *_ranked(tmp_path), "--truth", ROOT / "fixtures" / "otto_truth.jsonl", "--bootstrap", "50",
                            "--mde", 10**12)
    mde_lines = [line for line in out.splitlines() if "MDE" in line]
    assert code == 0 and mde_lines and not any("0.000000" in line for line in mde_lines), mde_lines
    assert re.search(r"MDE \d(\.\d+)?e-\d\d", "\n".join(mde_lines)), mde_lines


def _board(tiers: list[int], intervals: list[tuple[int, int]], adjusted: float = 0.24) -> dict:
    names = [f"s{i}.csv" for i in range(len(tiers))]
    submissions = [{"name": name, "score": 0.5 - i / 100, "rank": i + 1, "rank_low": low, "rank_high": high, "tier": tier,
                    "p_first": 0.0, "p_top": 0.0, "score_low": 0.4, "score_high": 0.6, "figures": {"clicks": 0.5}}
                   for i, (name, tier, (low, high)) in enumerate(zip(names, tiers, intervals))]
    pairs = [{"a": a, "b": b, "difference": 0.01, "p_value": 0.012, "p_adjusted": adjusted, "significant": False}
             for i, a in enumerate(names) for b in names[i + 1:]]
    return {"metric": "recall@20", "types": ["clicks"], "sessions": 100, "resamples": 1000, "seed": 0, "level": 0.95, "top_k": 3,
            "control": {"method": "holm", "name": "Holm (family-wise error rate)", "alpha": 0.05, "comparisons": len(pairs)},
            "submissions": submissions, "unranked": [], "pairs": pairs}


def test_a_tier_whose_rank_intervals_are_apart_says_why_it_is_tied():
    from scorer.analytics.leaderboard.board import render_text

    text = render_text(_board([1, 1, 2], [(1, 1), (2, 3), (3, 3)]))
    assert "tier 1: s1.csv (ranks 2-3) is tied with s0.csv (ranks 1-1) although their rank intervals do not overlap" in text
    assert "adjusted p = 0.24 > α = 0.05" in text
    assert "although" not in render_text(_board([1, 1, 2], [(1, 2), (1, 3), (3, 3)]))  # overlapping intervals: nothing to explain


def test_every_column_of_the_leaderboard_has_a_key(tmp_path):
    code, out, _ = run_main("leaderboard", *_ranked(tmp_path), "--truth", ROOT / "fixtures" / "otto_truth.jsonl", "--bootstrap", "50",
                            "--split", "public=0.5")
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("rank"))
    keyed = {line[5:].split()[0] for line in lines[lines.index(next(line for line in lines if line.startswith("key:"))):]
             if line.startswith(("key:", "     ")) and line[5:].strip()}
    columns = set(header.split()) - {"name", "clicks", "carts", "orders"}  # the types: 'score ... then each type's'
    assert code == 0 and columns <= keyed, columns - keyed


@pytest.mark.parametrize("tiers", [8, 25])
def test_the_plot_gives_each_tier_its_own_colour_and_says_which(tiers):
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    from scorer.analytics.leaderboard.plot import LEGEND_TIERS, leaderboard_figure

    board = _board(list(range(1, tiers + 1)), [(i + 1, i + 1) for i in range(tiers)], adjusted=0.001)
    figure = leaderboard_figure(board)
    ranks = figure.axes[0]
    dots = [line for line in ranks.lines if line.get_marker() == "o"]
    assert len({to_hex(line.get_color()) for line in dots}) == tiers  # no two tiers share a colour
    legend = ranks.get_legend()  # under the ranks, over no point
    if tiers <= LEGEND_TIERS:
        assert [text.get_text() for text in legend.get_texts()] == [f"tier {t}" for t in range(1, tiers + 1)]
    else:
        assert legend is None and any(ax.get_ylabel() == "tier (1 = top)" for ax in figure.axes[2:])  # a colour bar


# -- 11. the score report and the candidate plot: scales that show what is there -----------------------------------------
def _axis():
    pytest.importorskip("matplotlib")
    from scorer.analytics.plots import _pyplot

    return _pyplot().subplots()


def test_the_interval_panel_shows_intervals_of_a_thousandth():
    from scorer.analytics.plots import _intervals

    def figure(value):
        return {"value": value, "low": value - 0.001, "high": value + 0.001, "se": 0.0005}

    subsets = {name: {"score": figure(0.5 + shift), "metrics": {t: {"recall@20": figure(0.3 + shift)} for t in TYPES}}
               for name, shift in (("public", 0.002), ("private", -0.002), ("all", 0.0))}
    figure_, ax = _axis()
    assert _intervals(ax, {"bootstrap": {"subsets": subsets, "level": 0.95, "resamples": 100}})
    strips = figure_.axes  # a strip per figure, each on its own scale: the scores themselves
    assert [strip.get_title(loc="left").split("\n")[-1] for strip in strips] == ["score", *(f"{t} recall@20" for t in TYPES)]
    for strip in strips:
        low, high = strip.get_xlim()
        assert high - low < 0.02  # on a 0-1 scale a 0.002 interval is a dot
        assert [label.get_text() for label in strip.get_yticklabels()] == ["public", "private", "all"]


def test_where_the_hits_are_starts_at_zero():
    from scorer.analytics.plots import _ranks

    counts = [485 + (r % 3) * 10 for r in range(20)]  # shares of about 0.0485-0.0512: noise
    figure_, ax = _axis()
    _ranks(ax, {"k": 20, "hit_ranks": {"clicks": counts}})
    assert ax.get_ylim()[0] == 0


def test_an_html_report_has_one_title(tmp_path):
    pytest.importorskip("matplotlib")
    from scorer.analytics.plots import report_figure

    code, _, _ = run_cli("score", ROOT / "fixtures" / "otto_submission.csv", "--truth", ROOT / "fixtures" / "otto_truth.jsonl",
                         "--bootstrap", "20", "--report", tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert code == 0 and page.count("<h1>") == 1
    summary, analytics = {"submission": "s.csv", "score": 0.5}, {"breakdown": None}
    assert report_figure(summary, analytics, title=False)._suptitle is None  # the page's heading says it
    assert report_figure(summary, analytics)._suptitle.get_text() == "s.csv: score 0.500000"


def test_the_candidate_hit_ranks_are_a_density_over_bins_of_unequal_width(tmp_path):
    pytest.importorskip("matplotlib")
    import numpy as np

    import scorer
    from scorer.analytics.candidate_plot import candidate_figure

    table = tmp_path / "candidates.csv"  # the fixture's hits at ranks 1, 3 and 60
    items = {1: [10, 5, 30, *range(100, 156), 31], 2: [7, 8, 11], 3: [1]}
    table.write_text("session,aid\n" + "".join(f"{s},{item}\n" for s, row in items.items() for item in row))
    result = scorer.candidates(table, ROOT / "fixtures" / "otto_truth.jsonl", k=(20, 100))
    histogram = candidate_figure(result).axes[2]
    [clicks, carts, orders] = [patch for patch in histogram.patches]
    values, edges, _ = orders.get_data()
    assert list(edges) == [1, 2, 6, 11, 21, 51, 101]
    counts = np.array([result.per_type["orders"]["hit_ranks"][label] for label in result.rank_labels()])
    assert np.allclose(values * np.diff(edges), counts / counts.sum())  # a bar's area is its share


# -- 12. explain lists what moves a figure, the rest on request ---------------------------------------------------------
def test_explain_lists_the_rules_that_move_a_figure_and_the_rest_with_all():
    from scorer.analytics.explain.published import explain

    fixtures = ROOT / "fixtures" / "explain"
    explanation = explain(fixtures / "submission.csv", fixtures / "truth.jsonl", against="trec_eval")
    moving = [rule for entry in explanation.conventions[0]["metrics"] for rule in entry["rules"]
              if rule["rows"] and rule["change"] and rule["rule"] == "repeats collapsed"]
    assert len(moving) >= 2
    moving[0]["change"], moving[1]["change"] = 0.0, 4.15e-7  # as 23 rows of an OTTO-size file: no move, and a tiny one
    text, rules = explanation.to_text().split("\nrules:\n")  # the tables, then what each rule applied does
    assert "+4.15e-07" in text and "+0.000000" not in text and ", 0.000000" not in text
    assert text.count("repeats collapsed") == len(moving) - 1 and rules.count("repeats collapsed") == 1
    assert "note: 1 more rule touches rows without moving a figure (--all lists it)" in text
    everything = explanation.to_text(all_rules=True).split("\nrules:\n")[0]
    assert everything.count("repeats collapsed") == len(moving) and "--all lists" not in everything


def test_explain_with_show_0_lists_no_rows(tmp_path):
    code, out, _ = run_main("explain", ROOT / "fixtures" / "explain" / "submission.csv", "--truth",
                            ROOT / "fixtures" / "explain" / "truth.jsonl", "--show", "0", "--all")
    assert code == 0 and "first:" not in out and "repeats collapsed: 1 row, +" in out


# -- 13. otto-official models today's evaluate.py; the one before December 2022 is otto-official-2022 -------------------
def test_otto_official_is_todays_evaluate_py_and_the_older_one_is_named(tmp_path):
    from scorer.analytics.explain.published import explain

    (tmp_path / "truth.jsonl").write_text('{"session": 1, "labels": {"clicks": 4, "carts": [5]}}\n{"session": 2, "labels": {"clicks": 6}}\n')
    (tmp_path / "sub.csv").write_text("session_type,labels\n1_clicks,4\n2_clicks,6\n")  # session 1 has no carts row
    default = explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl")
    assert "otto-official-2022" not in [c["name"] for c in default.conventions] and "KeyError" not in default.to_text().split("note:")[0]
    older = explain(tmp_path / "sub.csv", tmp_path / "truth.jsonl", against="otto-official-2022")
    assert older.conventions[0]["stops"]["rows"] == 1 and "1_carts (missing)" in older.to_text()
    assert [e["theirs"] for e in older.conventions[0]["metrics"]] == [e["theirs"] for e in default.conventions[0]["metrics"]]


# -- 14. the readings the docs now state -------------------------------------------------------------------------------
def test_the_mde_takes_its_variance_from_the_private_sessions(tmp_path):
    code, out, _ = run_main("leaderboard", *_ranked(tmp_path), "--truth", ROOT / "fixtures" / "otto_truth.jsonl", "--bootstrap", "20",
                            "--split", "public=0.5", "--mde", "--format", "json")
    board = json.loads(out)
    assert code == 0 and board["mde"]["variance_from"] == board["split"]["sessions"]["private"] < board["sessions"]


def _candidates(tmp_path, truth: str, table: str):
    import scorer

    (tmp_path / "truth.jsonl").write_text(truth)
    (tmp_path / "candidates.csv").write_text(table)
    return scorer.candidates(tmp_path / "candidates.csv", tmp_path / "truth.jsonl", k=(20,))


def test_a_session_without_truth_items_is_no_missing_candidate_row(tmp_path):
    result = _candidates(tmp_path, '{"session": 1, "labels": {"clicks": 4}}\n{"session": 2, "labels": {}}\n{"session": 3, "labels": {"carts": [1]}}\n',
                         "session,aid\n1,4\n")
    [missing] = [p for p in result.report.problems if p.code == "S011"]
    assert result.report.counts["S011"] == 1 and "e.g. 3" in missing.message  # session 2, with no truth item, is not counted


def test_a_hit_tied_only_with_its_own_repeat_counts_as_tied(tmp_path):
    result = _candidates(tmp_path, '{"session": 1, "labels": {"clicks": 4}}\n', "session,aid,score\n1,4,0.5\n1,4,0.5\n1,7,0.1\n")
    assert result.per_type["clicks"]["tied_hits"] == 1


def test_the_median_of_an_even_count_of_sessions_is_the_mean_of_the_middle_two(tmp_path):
    result = _candidates(tmp_path, '{"session": 1, "labels": {"clicks": 4}}\n{"session": 2, "labels": {"clicks": 5}}\n',
                         "session,aid\n1,4\n2,5\n2,6\n2,7\n2,8\n")
    assert result.per_type["clicks"]["candidates_per_session"]["median"] == 2.5
