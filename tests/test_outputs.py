"""What a command writes is checked against what it reads before any work (scorer.cli.outputs, scorer.file_identity):
an output that is an input under another spelling (`x/./T`, a symbolic link, a hard link) or another output is a usage
error (exit 2) and every input keeps its bytes; and every file option of every command is known as an input or an
output, so that a new one cannot slip past the check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import TYPES, run_main, submission_text, truth_lines
from scorer.cli.main import build_parser
from scorer.cli.outputs import INPUTS
from scorer.file_identity import same_file

TRUTH = {1: {"clicks": 5, "carts": [6]}, 2: {"clicks": 7}, 3: {"orders": [8, 9]}}


def spelled(path: Path, how: str) -> Path:
    """Another name of the same file: the path through `.` and `..`, a symbolic link, or a hard link."""
    if how == "dots":
        return path.parent / "." / ".." / path.parent.name / path.name
    other = path.with_name(f"{how}-{path.stem}{''.join(path.suffixes) or '.csv'}")
    (os.symlink if how == "symlink" else os.link)(path, other)
    return other


def alias(path: Path, name: str, how: str) -> Path:
    """A name `name` (beside path) for path's file: a symbolic or a hard link (a report's suffix differs from its input's)."""
    other = path.with_name(name)
    (os.symlink if how == "symlink" else os.link)(path, other)
    return other


@pytest.fixture
def made(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    subs = []
    for k in range(2):
        sub = tmp_path / f"sub{k}.csv"
        sub.write_text(submission_text([(s, t, [5 + k, 6, 7]) for s in TRUTH for t in TYPES]))
        subs.append(sub)
    return truth, subs


def kept(paths, before):
    return [p.read_bytes() for p in paths] == before


@pytest.mark.parametrize("how", ["dots", "symlink", "hardlink"])
@pytest.mark.parametrize("target", ["kaggle-solution", "hf-solution"])
@pytest.mark.parametrize("option", ["-o", "--sample"])
def test_export_never_overwrites_its_truth(made, tmp_path, how, target, option):
    truth, _ = made
    before = truth.read_bytes()
    other = tmp_path / "elsewhere.csv"
    argv = ["export", target, truth, "-o", spelled(truth, how), "--sample", other] if option == "-o" else \
           ["export", target, truth, "-o", other, "--sample", spelled(truth, how)]
    code, out, err = run_main(*argv)
    assert code == 2 and f"cannot write {option}" in err and "the truth" in err and out == "", err
    assert truth.read_bytes() == before and not other.exists()


def test_export_never_writes_its_solution_and_sample_to_one_file(made, tmp_path):
    truth, _ = made
    solution = tmp_path / "solution.csv"
    code, _, err = run_main("export", "kaggle-solution", truth, "-o", solution, "--sample", spelled(solution, "dots"))
    assert code == 2 and "give each output its own file" in err and not solution.exists()
    solution.write_text("kept\n")
    code, _, err = run_main("export", "kaggle-solution", truth, "-o", solution, "--sample", spelled(solution, "hardlink"))
    assert code == 2 and "give each output its own file" in err and solution.read_text() == "kept\n"


def test_an_export_keeps_a_different_sample_that_another_export_wrote(made, tmp_path):
    """hf-solution beside kaggle-solution's files: the sample at its default name is kept when it holds the same bytes,
    refused (exit 2, nothing written) when it holds another sample, and replaced only when --sample names it."""
    truth, _ = made
    sample = tmp_path / "sample_submission.csv"
    assert run_main("export", "kaggle-solution", truth, "-o", tmp_path / "solution.csv", "--sample-labels", "popular")[0] == 0
    popular = sample.read_bytes()
    code, _, err = run_main("export", "hf-solution", truth, "-o", tmp_path / "hf.csv")
    assert code == 2 and "holds another sample submission" in err and f"--sample {sample}" in err, err
    assert sample.read_bytes() == popular and not (tmp_path / "hf.csv").exists()
    code, out, _ = run_main("export", "hf-solution", truth, "-o", tmp_path / "hf.csv", "--sample-labels", "popular")
    assert code == 0 and "the same bytes: kept" in out and sample.read_bytes() == popular
    assert run_main("export", "hf-solution", truth, "-o", tmp_path / "hf.csv", "--sample", sample)[0] == 0
    assert sample.read_bytes() != popular


def test_compile_truth_never_overwrites_its_truth(made, tmp_path):
    truth, _ = made
    compiled = tmp_path / "t.truth.npz"
    assert run_main("compile-truth", truth, "-o", compiled)[0] == 0
    before = compiled.read_bytes()
    for other in (spelled(compiled, "dots"), alias(compiled, "h.truth.npz", "hardlink"), alias(compiled, "s.truth.npz", "symlink")):
        code, _, err = run_main("compile-truth", compiled, "-o", other)
        assert code == 2 and "cannot write -o" in err and "the truth" in err, err
        assert compiled.read_bytes() == before


@pytest.mark.parametrize("fmt", [None, "parquet"])
def test_prepare_never_replaces_its_session_log(tmp_path, fmt):
    folder = tmp_path / "data"
    folder.mkdir()
    log = folder / ("train_sessions.parquet" if fmt else "train_sessions.jsonl")
    log.write_text("not read: the check comes first\n")
    code, _, err = run_main("prepare", log, "-o", tmp_path / "." / "data", *(["--output-format", fmt] if fmt else []))
    assert code == 2 and "cannot write -o" in err and "the session log" in err, err
    assert log.read_text() == "not read: the check comes first\n" and sorted(p.name for p in folder.iterdir()) == [log.name]


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_a_report_or_plot_never_overwrites_an_input(made, tmp_path, how):
    truth, (a, b) = made
    before = [truth.read_bytes(), a.read_bytes(), b.read_bytes()]
    cases = [
        (("score", a, "--truth", truth), alias(truth, f"{how}-t.html", how), "--report", "the truth"),
        (("compare", a, b, "--truth", truth), alias(b, f"{how}-b.png", how), "--report", "the submission B"),
        (("leaderboard", a, b, "--truth", truth), alias(a, f"{how}-a.html", how), "--report", "the submission"),
        (("similar", a, b), alias(b, f"{how}-s.html", how), "--report", "the submission"),
        (("candidates", a, "--truth", truth), alias(a, f"{how}-c.png", how), "--plot", "the candidate table"),
    ]
    for argv, output, option, named in cases:
        code, _, err = run_main(*argv, option, output)
        assert code == 2 and f"cannot write {option}" in err and named in err, (argv, err)
    assert kept([truth, a, b], before)


def test_ladder_never_overwrites_its_teams_file_state_or_a_submission_it_names(made, tmp_path):
    truth, (a, b) = made
    teams = tmp_path / "teams.csv"
    teams.write_text(f"file,team,time\n{a},red,1\n{b},blue,2\n")
    before = [teams.read_bytes(), a.read_bytes(), b.read_bytes()]
    for output, named in ((alias(b, "b.html", "hardlink"), "a submission the teams file names"),
                         (alias(teams, "t.html", "symlink"), "the teams file")):
        code, _, err = run_main("ladder", "--teams", teams, "--truth", truth, "--split", "public=0.5", "--report", output)
        assert code == 2 and "cannot write --report" in err and named in err, err
    state = tmp_path / "ladder.state"
    state.write_bytes(b"a state\n")
    code, _, err = run_main("ladder", "--state", state, "--report", alias(state, "st.html", "hardlink"))
    assert code == 2 and "the Ladder state" in err, err
    assert kept([teams, a, b], before) and state.read_bytes() == b"a state\n"


def test_grade_never_appends_to_a_submission_or_its_truth(made):
    pytest.importorskip("distributed")
    truth, (a, b) = made
    before = [truth.read_bytes(), a.read_bytes(), b.read_bytes()]
    for output, named in ((spelled(a, "dots"), "the submission"), (spelled(truth, "hardlink"), "the truth")):
        code, _, err = run_main("grade", a, b, "--truth", truth, "-o", output, "--no-progress")
        assert code == 2 and "cannot write -o" in err and named in err, err
    assert kept([truth, a, b], before)


def test_same_file_sees_through_every_spelling(tmp_path):
    path = tmp_path / "x" / "a.csv"
    path.parent.mkdir()
    path.write_text("a\n")
    assert same_file(path, tmp_path / "x" / "." / "a.csv") and same_file(path, spelled(path, "hardlink"))
    assert same_file(path, spelled(path, "symlink")) and not same_file(path, tmp_path / "x" / "b.csv")
    assert same_file(tmp_path / "y" / "new.csv", tmp_path / "y" / ".." / "y" / "new.csv")  # not there yet: by its resolved path


# Options that name a file and are neither an input (scorer.cli.outputs.INPUTS) nor checked as an output by name here:
# audit writes nothing; export's --sample is its second output; codabench's folders are the platform's, in and out.
OUTPUTS = {"output", "report", "plot", "truth_parts"}
OTHERS = {("audit", "sample"), ("audit", "solution"), ("audit", "bundle"), ("export", "sample"), ("codabench", "input_dir"),
          ("codabench", "output_dir")}
NOT_FILES = {"competition", "scheduler", "split", "metrics", "k", "against", "command", "format", "output_format", "borda"}


def test_every_file_option_is_a_known_input_or_output():
    """A file option added to a command must be listed in INPUTS (then every output of the command is checked against
    it) or be an output: a new input that no check knows of could be overwritten."""
    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    unknown = []
    for name, parser in commands.items():
        for action in parser._actions:
            if action.type is not None or action.choices or action.nargs == 0 or action.dest in NOT_FILES | {"help"}:
                continue
            if action.dest not in INPUTS and action.dest not in OUTPUTS and (name, action.dest) not in OTHERS:
                unknown.append((name, action.dest))
    assert unknown == []


# -- no message quotes the truth ---------------------------------------------------------------------------------------

LABELS = {9_100_000_000 + s: {"clicks": 7_000_000_100 + s, "carts": [7_000_000_200 + s], "orders": [7_000_000_300 + s]} for s in range(1, 6)}


def label_ids() -> set[str]:
    return {str(v) for labels in LABELS.values() for value in labels.values() for v in (value if isinstance(value, list) else [value])}


@pytest.fixture
def truths(tmp_path):
    jsonl = tmp_path / "truth.jsonl"
    jsonl.write_text(truth_lines(LABELS))
    long = tmp_path / "long.csv"  # a long truth without its header: line 1 is a row of ids
    long.write_text("".join(f"{s},{t},{i}\n" for s, labels in LABELS.items() for t, v in labels.items()
                            for i in (v if isinstance(v, list) else [v])))
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(s, t, [1, 2]) for s in LABELS for t in TYPES]))
    teams = tmp_path / "teams.csv"
    teams.write_text(f"file,team,time\n{sub},red,1\n{jsonl},blue,2\n")
    return jsonl, long, sub, teams


@pytest.mark.parametrize("argv, code", [
    (("score", "{jsonl}", "--truth", "{jsonl}"), 1),
    (("score", "{long}", "--truth", "{jsonl}"), 1),
    (("validate", "{jsonl}"), 1),
    (("compare", "{jsonl}", "{sub}", "--truth", "{jsonl}"), 1),
    (("leaderboard", "{jsonl}", "{long}", "{sub}", "--truth", "{jsonl}", "--bootstrap", "0"), 1),
    (("ladder", "--teams", "{teams}", "--truth", "{jsonl}", "--split", "public=0.6"), 1),
    (("ladder", "--teams", "{long}", "--truth", "{jsonl}", "--split", "public=0.6"), 2),
    (("similar", "{long}", "{sub}"), 1),
    (("audit", "--truth", "{jsonl}", "--solution", "{long}"), 1),
])
def test_no_message_quotes_the_truth(truths, argv, code):
    """A truth named where a submission, a teams file or a solution goes: the right exit code, and not one of its label ids
    in anything printed (line 1 of a truth-like file is neither quoted nor read further)."""
    jsonl, long, sub, teams = truths
    got, out, err = run_main(*[a.format(jsonl=jsonl, long=long, sub=sub, teams=teams) for a in argv])
    assert got == code, err
    printed = out + err
    assert not [i for i in label_ids() if i in printed], printed
