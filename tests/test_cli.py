"""The CLI in-process: exit codes, output formats, bad configs, and no tracebacks."""

import json

import pytest

from conftest import full_rows
from scorer.cli.main import main

TRUTH = {1: {"clicks": 5, "orders": [8]}, 2: {"carts": [3]}}


def test_score_text_and_json(files, capsys):
    sub, tru = files(TRUTH, full_rows(TRUTH, {(1, "clicks"): [5], (1, "orders"): [8, 9]}))
    assert main(["score", str(sub), "--truth", str(tru)]) == 0
    assert "score  0.700000" in capsys.readouterr().out
    assert main(["score", str(sub), "--truth", str(tru), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"] == pytest.approx(0.7) and out["valid"] is True
    assert set(out["metrics"]["orders"]) == {"recall@20", "map@20", "ndcg@20"}
    assert {"sessions_in_truth", "rows_read", "rows_missing", "rows_unknown_session", "rows_cut_at_k", "rows_with_duplicate_items"} <= set(out["counts"])


def test_strict_invalid_exits_1_with_null_score(files, capsys):
    sub, tru = files(TRUTH, full_rows(TRUTH)[:-1])
    assert main(["score", str(sub), "--truth", str(tru), "--strict", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["score"] is None and out["valid"] is False
    assert out["problems"][0]["code"] == "S011"
    assert main(["score", str(sub), "--truth", str(tru)]) == 0  # lenient scores it


def test_validate_exit_codes(files, capsys):
    good, tru = files(TRUTH, full_rows(TRUTH))
    assert main(["validate", str(good), "--truth", str(tru)]) == 0
    assert main(["validate", str(good)]) == 0  # without truth: format only
    bad, _ = files(TRUTH, full_rows(TRUTH) + ["1_clicks,x"])
    assert main(["validate", str(bad), "--truth", str(tru)]) == 1
    text = capsys.readouterr().out
    assert "S008" in text and "line 8:10" in text and "^" in text


def test_validate_without_truth_finds_repeated_rows(files, capsys):
    sub, _ = files(TRUTH, full_rows(TRUTH) + [(1, "clicks", [1])])
    assert main(["validate", str(sub), "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [p["code"] for p in out["problems"]] == ["S010"]
    assert "repeats line 2" in out["problems"][0]["message"]
    assert main(["validate", str(sub), "--lenient"]) == 0


@pytest.mark.parametrize("config, message", [
    ("name = 'x'\n", "missing key 'submission'"),
    ("name = 'x'\n[submission]\nheader=['a','b']\nid_pattern='{session}_{type}'\n[scoring]\ntypes=['a']\nk=20\nmetric='recall@20'\nweights=[1, 2]\n",
     "'scoring.weights' must be 1 finite"),
    ("name = 'x'\n[submission]\nheader=['a','b']\nid_pattern='{session}_{type}'\n[scoring]\ntypes=['a']\nk=20\nmetric='recal@20'\n",
     "unknown metric 'recal'"),
    ("name = 'x'\n[submission]\nheader=['a','b']\nid_pattern='{session}_{type}'\n[scoring]\ntypes=['a']\nk=20\nmetric='recall@x'\n",
     "bad metric syntax 'recall@x'"),
    ("name = 'x'\n[submission]\nheader=['a','b']\nid_pattern='{session}_{type}'\n[scoring]\ntypes=['a']\nk=0\nmetric='recall@20'\n",
     "'scoring.k' must be between 1 and 1000, got 0"),
    ("name = [", "not valid TOML"),
])
def test_bad_config_names_key_and_value_exit_2(files, tmp_path, capsys, config, message):
    sub, tru = files(TRUTH, full_rows(TRUTH))
    path = tmp_path / "bad.toml"
    path.write_text(config)
    assert main(["score", str(sub), "--truth", str(tru), "--config", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_usage_errors_exit_2(files, capsys):
    sub, tru = files(TRUTH, full_rows(TRUTH))
    assert main(["score", str(sub)]) == 2  # --truth missing
    assert main(["score", str(sub), "--truth", str(tru), "--competition", "nope"]) == 2
    assert "unknown competition 'nope'" in capsys.readouterr().err
    assert main(["score", str(sub), "--truth", str(tru) + ".missing"]) == 2
    assert main(["frobnicate"]) == 2


def test_missing_submission_exits_1_without_traceback(files, capsys):
    _, tru = files(TRUTH, [])
    assert main(["score", "/nonexistent/sub.csv", "--truth", str(tru)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert "cannot open submission" in captured.out


def test_the_cli_lets_openblas_threads_sleep_before_numpy_starts_them(monkeypatch, capsys):
    import os
    import subprocess
    import sys

    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    assert main(["--version"]) == 0
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "4"
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "20")  # the environment's own setting stays
    assert main(["--version"]) == 0 and os.environ["OPENBLAS_THREAD_TIMEOUT"] == "20"
    watch = """
import os, sys
seen = {}
class Watch:  # notes the setting when numpy is first imported
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and name not in seen:
            seen[name] = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
sys.meta_path.insert(0, Watch())
import scorer.cli.main as cli
cli.main(["--version"])
print(seen)
"""
    environment = {key: value for key, value in os.environ.items() if key != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", watch], capture_output=True, text=True, check=True, env=environment).stdout
    assert out.strip().splitlines()[-1] == "{'numpy': '4'}"  # set before numpy started its threads


@pytest.mark.parametrize("entry", ["-m scorer", "-m scorer.cli", "script"])
def test_the_command_process_skips_the_collections_of_its_exit_and_keeps_the_exit_code(files, entry):
    import subprocess
    import sys
    from pathlib import Path

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10 (tools/cleanroom.py's room of the cp310 wheel): the package tomli
        import tomli as tomllib

    good, tru = files(TRUTH, full_rows(TRUTH))
    bad, _ = files(TRUTH, full_rows(TRUTH) + ["1_clicks,x"])
    note = ("import atexit, gc, sys\n"  # atexit runs after the command returned, before the interpreter's exit collections
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, file=sys.stderr))\n")
    if entry == "script":  # what the installed `scorer` script calls: pyproject's entry point
        module, function = tomllib.loads(Path("pyproject.toml").read_text())["project"]["scripts"]["scorer"].split(":")
        run = f"import importlib, sys\nsys.exit(getattr(importlib.import_module({module!r}), {function!r})())\n"
    else:
        run = f"import runpy\nrunpy.run_module({entry.split()[1]!r}, run_name='__main__')\n"
    for path, code in ((good, 0), (bad, 1)):
        done = subprocess.run([sys.executable, "-c", note + run, "validate", str(path), "--truth", str(tru)],
                              capture_output=True, text=True, cwd=Path(__file__).parent.parent)
        assert done.returncode == code, done.stderr
        assert "frozen True" in done.stderr and "Traceback" not in done.stderr
