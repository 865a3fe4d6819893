"""Every option of every command, given a value that means nothing (issue 44, item 19).

The parser of each command is walked: every option that takes a value gets each of HOSTILE in turn, on a command line
that is otherwise valid. The command must answer with exit 0, 1 or 2 and at most a sentence: never exit 3 (an internal
error, such as `candidates --k 1000000000000000`'s OverflowError in an int32 kernel argument), a traceback or a hang.
A new option is covered as soon as it is added; a new command needs its base command line in BASE.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from scorer.cli.main import COMMANDS, build_parser
from test_hostile_round4 import OTTO_SUBMISSION, OTTO_TRUTH, run_cli

HOSTILE = ("1000000000000000", "-1", "0", "nan", "-inf", "1e400", "20,1000000000000000", "recall@1000000000000000",
           "public=1e-300", "public=nan")

# Options whose every value starts work this test does not want in the fast suite (a Dask cluster, a wait for workers), or
# whose value is a file or folder path (a path named "nan" is simply missing: the bounds of paths are tested elsewhere).
LEFT_OUT = {"--scheduler", "--workers", "--wait-workers", "--engine", "--truth-parts", "--partitions", "--retries"}
PATHS = {"--truth", "--config", "--report", "--plot", "-o", "--out", "--sample", "--solution", "--bundle", "--teams", "--results",
         "--state", "--items", "--train", "--against", "--sessions"}


def base(command: str, tmp: Path) -> list[str]:
    """A valid command line of COMMAND, to which one option is added."""
    teams = tmp / "teams.csv"
    teams.write_text(f"file,team,time\n{Path(OTTO_SUBMISSION).resolve()},red,1\n")
    (tmp / "in" / "ref").mkdir(parents=True, exist_ok=True)
    (tmp / "in" / "res").mkdir(parents=True, exist_ok=True)
    (tmp / "in" / "ref" / "truth.jsonl").write_bytes(Path(OTTO_TRUTH).read_bytes())
    (tmp / "in" / "res" / "submission.csv").write_bytes(Path(OTTO_SUBMISSION).read_bytes())
    other = tmp / "other.csv"
    other.write_text(Path(OTTO_SUBMISSION).read_text().replace(" ", " 7 ", 1))
    candidates = tmp / "candidates.csv"
    candidates.write_text("session,aid,type\n" + "".join(f"{s},{a},{t}\n" for s in (1, 2, 3) for t in ("clicks", "carts", "orders")
                                                       for a in range(1, 30)))
    events = tmp / "events.jsonl"
    events.write_text("".join(json.dumps({"session": s, "events": [{"aid": a, "ts": 1_659_304_800 + 86_400 * d + s, "type": t}
                                                                    for d in range(10) for a, t in ((s, "clicks"), (s + 1, "carts"))]}) + "\n"
                              for s in range(1, 40)))
    receipt = tmp / "receipt.json"
    if not receipt.exists():
        code, out, err = run_cli("score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--format", "json")
        assert code == 0, err
        receipt.write_text(out)
    return {
        "score": ["score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH],
        "validate": ["validate", OTTO_SUBMISSION],
        "prepare": ["prepare", str(events), "-o", str(tmp / "split")],
        "compare": ["compare", OTTO_SUBMISSION, OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--bootstrap", "20"],
        "compile-truth": ["compile-truth", OTTO_TRUTH, "-o", str(tmp / "t.truth.npz")],
        "export": ["export", "kaggle-solution", OTTO_TRUTH, "-o", str(tmp / "solution.csv")],
        "codabench": ["codabench", str(tmp / "in"), str(tmp / "out")],
        "warmup": ["warmup", "--help"],  # warmup compiles: only its parser is walked here (tests/test_aot.py runs it)
        "grade": ["grade", "--help"],  # grade starts a Dask cluster: likewise (tests/test_dask*.py run it)
        "explain": ["explain", OTTO_SUBMISSION, "--truth", OTTO_TRUTH],
        "verify": ["verify", str(receipt), OTTO_SUBMISSION, "--truth", OTTO_TRUTH],
        "audit": ["audit", "--truth", OTTO_TRUTH],
        "leaderboard": ["leaderboard", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--bootstrap", "20"],
        "ladder": ["ladder", "--teams", str(teams), "--truth", OTTO_TRUTH, "--split", "public=0.5"],
        "candidates": ["candidates", str(candidates), "--truth", OTTO_TRUTH],
        "similar": ["similar", OTTO_SUBMISSION, str(other)],
    }[command]


def options(command: str) -> list[str]:
    """The options of COMMAND that take a value, by their first name."""
    parser = build_parser(command)
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return [action.option_strings[0] for action in sub.choices[command]._actions
            if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._HelpAction)]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_a_base_command_line_that_runs(tmp_path, command):
    code, out, err = run_cli(*base(command, tmp_path))
    assert code == 0, err


CASES = [(command, option) for command in COMMANDS for option in options(command)
         if option not in LEFT_OUT and option not in PATHS and command not in ("warmup", "grade")]


@pytest.mark.parametrize("command, option", CASES, ids=[f"{c}{o}" for c, o in CASES])
def test_an_option_given_a_value_that_means_nothing_is_refused_or_served(tmp_path, command, option):
    argv = base(command, tmp_path)
    for value in HOSTILE:
        code, out, err = run_cli(*argv, f"{option}={value}")
        assert code in (0, 1, 2), (value, code, err[-400:])
        assert "Traceback" not in err and "internal error" not in err, (value, err[-400:])
        if code == 0 and "--format" in argv + [option] and value == "json":
            json.loads(out)


def test_the_value_options_left_out_are_bounded_by_their_type():
    """The options this walk leaves out take bounded numbers or names, decided by argparse before any work."""
    for command in ("grade", "score", "leaderboard"):
        parser = build_parser(command)
        sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
        for action in sub.choices[command]._actions:
            if set(action.option_strings) & {"--workers", "--wait-workers", "--partitions", "--retries"}:
                with pytest.raises(argparse.ArgumentTypeError):
                    action.type("1000000000000000")


def test_the_python_api_bounds_the_same_numbers(tmp_path):
    """The API's own doors to the same kernels: K cut-offs and the test period."""
    import scorer
    from scorer.errors import UsageError
    from scorer.prepare.pipeline import prepare

    for k in (10**15, "20,1000000000000000", 0, -3):
        with pytest.raises(UsageError, match="k must be whole numbers from 1 to"):
            scorer.candidates(OTTO_SUBMISSION, OTTO_TRUTH, k=k)
    for days in (1e15, float("nan"), float("inf"), 0):
        with pytest.raises(UsageError, match="--days must be a number of days above 0"):
            prepare(OTTO_TRUTH, tmp_path / "split", days=days)
