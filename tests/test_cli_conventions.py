"""CLI conventions (issue 14): -o/--output for every written file, --bootstrap on score and compare, the seed defaults
said in --help, a usage line and examples in every --help, old spellings as hidden aliases, "did you mean" for
competition names."""

from __future__ import annotations

import importlib
import json
import re
import shlex
import subprocess
import sys

import pytest

from conftest import full_rows
from scorer.cli.common import DEFAULT_SEED, PREPARE_SEED
from scorer.cli.main import COMMANDS, build_parser, main
from scorer.errors import ConfigError
from test_prepare import random_sessions, write_jsonl

TRUTH = {s: {"clicks": s % 7 + 1, "carts": [s % 5 + 1], "orders": [s % 3 + 1, s % 4 + 10]} for s in range(1, 41)}
WRITERS = ("prepare", "export", "compile-truth", "grade")  # the commands whose output is a file or a folder
ALIASES = [("prepare", "--out", "-o"), ("grade", "--out", "--output"), ("compare", "--resamples", "--bootstrap")]


def help_text(command: str, capsys) -> str:
    assert main([command, "--help"]) == 0
    return capsys.readouterr().out


def required_arguments(command: str) -> list[str]:
    """Placeholder positionals and required options, enough for the parser to accept the command line."""
    return {"score": ["s.csv", "--truth", "t.jsonl"], "compare": ["a.csv", "b.csv", "--truth", "t.jsonl"],
            "prepare": ["e.jsonl", "-o", "out"], "grade": ["s.csv", "--truth", "t.jsonl"],
            "export": ["kaggle-solution", "t.jsonl", "-o", "solution.csv"]}[command]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_help_shows_the_usage_line_and_examples(command, capsys):
    module = importlib.import_module(COMMANDS[command])
    text = help_text(command, capsys)
    assert text.startswith(f"usage: {module.USAGE}\n")
    assert module.EXAMPLES and "\nexamples:\n" in text
    for example in module.EXAMPLES:
        assert f"\n  {example}\n" in text + "\n"  # one example a line, not re-wrapped


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_example_parses_as_its_own_command(command):
    parser = build_parser()
    for example in importlib.import_module(COMMANDS[command]).EXAMPLES:
        words = shlex.split(example)
        assert words[:2] == ["scorer", command]
        assert parser.parse_args(words[1:]).command == command


@pytest.mark.parametrize("command", list(COMMANDS))
def test_one_command_parser_parses_its_examples_as_the_whole_parser(command):
    """main builds the parser of the command the line names alone: the same arguments as from every command's."""
    whole, alone = build_parser(), build_parser(command)
    for example in importlib.import_module(COMMANDS[command]).EXAMPLES:
        words = shlex.split(example)[1:]
        assert vars(alone.parse_args(words)) == vars(whole.parse_args(words))


def test_one_command_parser_imports_no_other_command():
    code = ("import sys\nfrom scorer.cli.main import COMMANDS, build_parser\nbuild_parser('score')\n"
            "print(sorted(name for name in COMMANDS.values() if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['scorer.cli.score']"


def test_top_level_help_lists_every_command_usage(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for module_name in COMMANDS.values():
        assert f"\n  {importlib.import_module(module_name).USAGE}\n" in text + "\n"


@pytest.mark.parametrize("command", WRITERS)
def test_every_command_that_writes_a_file_spells_it_dash_o_output(command, capsys):
    assert re.search(r"\n  -o (\w+), --output \1\s", help_text(command, capsys))


@pytest.mark.parametrize("command, old, new", ALIASES)
def test_old_spellings_parse_as_the_new_one_and_stay_out_of_help(command, old, new, capsys):
    value = "7" if "resamples" in old else "out.jsonl"
    base = [command, *required_arguments(command)]
    if command == "prepare":
        base = base[:-2]  # its -o is the option under test
    parser = build_parser()
    assert parser.parse_args([*base, old, value]) == parser.parse_args([*base, new, value])
    assert not re.search(rf"{old}\b", help_text(command, capsys))  # \b: --output is not --out


@pytest.mark.parametrize("command, old, new", ALIASES)
def test_old_and_new_spelling_together_is_a_usage_error(command, old, new, capsys):
    base = [command, *required_arguments(command)]
    if command == "prepare":
        base = base[:-2]
    assert main([*base, old, "5", new, "6"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_prepare_without_an_output_folder_is_a_usage_error(capsys):
    assert main(["prepare", "events.jsonl"]) == 2
    assert "-o/--output" in capsys.readouterr().err


def test_resample_count_is_bootstrap_on_score_and_compare():
    parser = build_parser()
    assert parser.parse_args(["score", *required_arguments("score"), "--bootstrap", "9"]).bootstrap == 9
    assert parser.parse_args(["compare", *required_arguments("compare"), "--bootstrap", "9"]).bootstrap == 9
    assert parser.parse_args(["score", *required_arguments("score")]).bootstrap == 0  # off unless asked
    assert parser.parse_args(["compare", *required_arguments("compare")]).bootstrap == 1000


def test_seed_defaults_are_the_ones_help_states(capsys):
    parser = build_parser()
    for command in ("score", "compare", "export"):
        assert parser.parse_args([command, *required_arguments(command)]).seed == DEFAULT_SEED
        assert re.search(rf"--seed SEED\s+seed of .*\(default\s+{DEFAULT_SEED}\b", help_text(command, capsys), re.DOTALL)
    # prepare keeps the seed it always had: a split made without --seed stays the same split
    assert parser.parse_args(["prepare", *required_arguments("prepare")]).seed == PREPARE_SEED == 42
    assert re.search(rf"\(default\s+{PREPARE_SEED},\s+prepare's\s+own", help_text("prepare", capsys))


def test_prepare_with_dash_o_writes_what_out_wrote(tmp_path):
    events = write_jsonl(tmp_path / "events.jsonl", random_sessions(5, n=200))
    assert main(["prepare", str(events), "-o", str(tmp_path / "new"), "--quiet"]) == 0
    assert main(["prepare", str(events), "--out", str(tmp_path / "old"), "--quiet"]) == 0
    names = sorted(path.name for path in (tmp_path / "old").iterdir())
    assert names == sorted(path.name for path in (tmp_path / "new").iterdir()) and "test_labels.jsonl" in names
    for name in names:
        if name != "summary.json":  # it names its own folder
            assert (tmp_path / "new" / name).read_bytes() == (tmp_path / "old" / name).read_bytes(), name


def test_compare_bootstrap_gives_what_resamples_gave(files, tmp_path, capsys):
    sub, tru = files(TRUTH, full_rows(TRUTH, {(s, "orders"): [s % 3 + 1] for s in TRUTH}))
    other = tmp_path / "other.csv"
    other.write_text("session_type,labels\n" + "".join(f"{s}_{t},{s % 2 + 1}\n" for s in TRUTH for t in ("clicks", "carts", "orders")))
    outputs = []
    for flag in ("--bootstrap", "--resamples"):
        assert main(["compare", str(sub), str(other), "--truth", str(tru), flag, "30", "--format", "json", "--no-progress"]) == 0
        outputs.append(json.loads(capsys.readouterr().out)["comparison"])
    assert outputs[0] == outputs[1]
    assert main(["compare", str(sub), str(other), "--truth", str(tru), "--bootstrap", "31", "--format", "json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"] != outputs[0]  # the count is really read


@pytest.mark.parametrize("typo, guess", [("ottto", "otto"), ("OTTO", "otto"), ("santandr", "santander"), ("hm2", "hm")])
def test_a_misspelt_competition_gets_a_did_you_mean(files, capsys, typo, guess):
    sub, tru = files(TRUTH, full_rows(TRUTH))
    assert main(["score", str(sub), "--truth", str(tru), "--competition", typo]) == 2
    err = capsys.readouterr().err
    assert f"unknown competition '{typo}'; did you mean '{guess}'? (bundled: " in err and "otto, " in err
    assert "Traceback" not in err


def test_a_far_name_gets_the_list_but_no_guess(capsys):
    assert main(["compile-truth", "t.jsonl", "-o", "t.truth.npz", "--competition", "movielens"]) == 2
    err = capsys.readouterr().err
    assert "unknown competition 'movielens' (bundled: " in err and "did you mean" not in err and "Traceback" not in err


def test_the_api_raises_the_same_message():
    from scorer.api import resolve_competition

    with pytest.raises(ConfigError, match=r"unknown competition 'ottto'; did you mean 'otto'\? \(bundled: "):
        resolve_competition("ottto")
