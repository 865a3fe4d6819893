"""Platform adapters called the way each platform calls them; their scores equal `scorer score --strict`."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import TYPES, submission_text, truth_lines
from scorer.adapters import participant_message
from scorer.adapters.codabench import grade
from scorer.adapters.evalai import EvaluationFailed, SubmissionRejected, evaluate
from scorer.adapters.kaggle import MAX_MESSAGE, HostVisibleError, ParticipantVisibleError
from scorer.adapters.kaggle import score as kaggle_score
from scorer.analytics.split import hash_split
from scorer.api import score as api_score
from scorer.cli.main import main
from scorer.engine.problems import ERROR, kind

ROOT = Path(__file__).parent.parent
BAD = ROOT / "fixtures" / "bad"
OTTO_TRUTH = ROOT / "fixtures" / "otto_truth.jsonl"
BUNDLE = ROOT / "bundles" / "codabench"
ROW_ID = "session_type"

rng = np.random.default_rng(7)
TRUTH = {}
for session in range(100, 160):
    labels = {}
    if rng.random() < 0.8:
        labels["clicks"] = int(rng.integers(0, 50))
    if rng.random() < 0.5:
        labels["carts"] = sorted(set(rng.integers(0, 50, rng.integers(1, 5)).tolist()))
    if rng.random() < 0.4:
        labels["orders"] = sorted(set(rng.integers(0, 50, rng.integers(1, 25)).tolist()))
    TRUTH[session] = labels
PREDICTIONS = {(s, t): rng.integers(0, 50, rng.integers(0, 30)).tolist() for s in TRUTH for t in TYPES}


def rows_of(sessions):
    return [(s, t, PREDICTIONS[(s, t)]) for s in sessions for t in TYPES]


@pytest.fixture
def good(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(truth_lines(TRUTH))
    submission = tmp_path / "submission.csv"
    submission.write_text(submission_text(rows_of(TRUTH)))
    return submission, truth


def cli_strict(submission, truth, config=None) -> dict:
    """What `scorer score --strict --format json` says (run in-process)."""
    from contextlib import redirect_stdout
    from io import StringIO

    argv = ["score", str(submission), "--truth", str(truth), "--strict", "--format", "json", "--no-progress"]
    if config:
        argv += ["--config", str(config)]
    out = StringIO()
    with redirect_stdout(out):
        code = main(argv)
    report = json.loads(out.getvalue())
    assert (code == 0) == (report["score"] is not None)
    return report


def leaderboard_of(report: dict) -> dict:
    return {"score": report["score"], **{t: report["metrics"][t]["recall@20"] or 0.0 for t in TYPES}}


# -- the participant message ----------------------------------------------------------------------
def test_message_names_the_first_errors_in_file_order_and_counts_the_rest(files):
    truth = {1: {"clicks": 1}, 2: {"orders": [3]}}
    rows = ["1_clicks,1", "1_carts,x", "1_orders,", "2_click,4", "2_carts,", "9_orders,1", "1_carts,2"]
    sub, tru = files(truth, rows)
    message = participant_message(api_score(sub, tru, strict=True))
    assert message.startswith("Submission rejected: S008 line 3: item 'x' is not an integer; S005 line 5")
    # also S012 (9_orders), S010 (1_carts again) and S011 (2_clicks and 2_orders missing: one problem)
    assert message.endswith("(and 3 more errors).")


def test_message_fits_a_limit_by_cutting_the_text_not_the_code(files):
    truth = {1: {"clicks": 1}}
    sub, tru = files(truth, ["1_clicks,1", "1_carts," + "x" * 400, "1_orders,"])
    message = participant_message(api_score(sub, tru, strict=True), max_chars=120)
    assert len(message) <= 120 and message.startswith("Submission rejected: S008 line 3: item 'xxx")
    assert "…" in message


# -- Kaggle ---------------------------------------------------------------------------------------
def export_solution(truth: Path, folder: Path, public: float = 0.3, seed: int = 5) -> tuple[Path, Path]:
    solution, sample = folder / "solution.csv", folder / "sample_submission.csv"
    assert main(["export", "kaggle-solution", str(truth), "-o", str(solution), "--public", str(public), "--seed", str(seed)]) == 0
    return solution, sample


def kaggle_splits(solution_path: Path):
    """Kaggle's call: per Usage split, that split's solution rows without the Usage column."""
    solution = pd.read_csv(solution_path)
    for usage in ("Public", "Private"):
        part = solution[solution["Usage"] == usage].drop(columns="Usage").reset_index(drop=True)
        if len(part):
            yield usage, part


def test_kaggle_scores_each_split_like_the_cli_on_that_split(good, tmp_path):
    submission, truth = good
    solution, _ = export_solution(truth, tmp_path)
    seen = set()
    for usage, part in kaggle_splits(solution):
        sessions = sorted({int(i.split("_")[0]) for i in part[ROW_ID]})
        seen.add(usage)
        split_truth = tmp_path / f"{usage}.jsonl"
        split_truth.write_text(truth_lines({s: TRUTH[s] for s in sessions}))
        split_sub = tmp_path / f"{usage}.csv"
        split_sub.write_text(submission_text(rows_of(sessions)))
        expected = cli_strict(split_sub, split_truth)["score"]
        frame = pd.read_csv(submission)
        got = kaggle_score(part.copy(), frame.copy(), ROW_ID)
        assert isinstance(got, float) and math.isfinite(got)
        assert got == expected
        # Kaggle may hand over the submission already filtered to the split's ids: same score
        filtered = frame[frame[ROW_ID].isin(part[ROW_ID])]
        assert kaggle_score(part.copy(), filtered, ROW_ID) == expected
    assert seen == {"Public", "Private"}


def test_kaggle_messages_give_the_files_line_numbers_even_on_a_filtered_frame(good, tmp_path):
    submission, truth = good
    solution, _ = export_solution(truth, tmp_path)
    usage, part = next(kaggle_splits(solution))
    lines = submission.read_text().splitlines()
    target = next(n for n, line in enumerate(lines) if line.split(",")[0] == part[ROW_ID].iloc[-1])  # 0-based
    lines[target] = lines[target].split(",")[0] + ",12 x7"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    frame = pd.read_csv(bad)
    for given in (frame, frame[frame[ROW_ID].isin(part[ROW_ID])]):
        with pytest.raises(ParticipantVisibleError, match=f"^Submission rejected: S008 line {target + 1}: item 'x7'"):
            kaggle_score(part.copy(), given, ROW_ID)


def test_kaggle_whole_solution_equals_cli_and_sample_submission_scores(good, tmp_path):
    submission, truth = good
    solution, sample = export_solution(truth, tmp_path, public=1.0)
    frame = pd.read_csv(solution)
    assert set(frame["Usage"]) == {"Public"}
    assert kaggle_score(frame, pd.read_csv(submission), ROW_ID) == cli_strict(submission, truth)["score"]
    assert kaggle_score(frame, pd.read_csv(sample), ROW_ID) == cli_strict(sample, truth)["score"] == 0.0


def test_kaggle_export_keeps_sessions_whole_and_is_seeded(good, tmp_path):
    _, truth = good
    solution, _ = export_solution(truth, tmp_path, public=0.25, seed=3)
    frame = pd.read_csv(solution, dtype=str, keep_default_na=False)
    usage_per_session = frame.groupby(frame[ROW_ID].str.split("_").str[0])["Usage"].nunique()
    assert (usage_per_session == 1).all()
    public = sorted(set(frame.loc[frame["Usage"] == "Public", ROW_ID].str.split("_").str[0].astype(int)))
    sessions = np.array(sorted(TRUTH), np.int64)
    assert public == sessions[hash_split(sessions, 0.25, 3).mask("public")].tolist()  # the same draw as score --split
    assert 0 < len(public) < len(TRUTH)
    again = tmp_path / "again"
    again.mkdir()
    assert export_solution(truth, again, public=0.25, seed=3)[0].read_bytes() == solution.read_bytes()
    assert main(["export", "kaggle-solution", str(truth), "-o", str(tmp_path / "x.csv"), "--public", "1.5"]) == 2


def test_kaggle_reads_numbers_as_pandas_types_them(tmp_path):
    # one item per row: pandas reads the labels as int64 or, with an empty row, float64
    truth = {1: {"clicks": 5, "carts": [6], "orders": [7]}, 2: {"clicks": 8}}
    path = tmp_path / "truth.jsonl"
    path.write_text(truth_lines(truth))
    solution, _ = export_solution(path, tmp_path, public=1.0)
    sub = tmp_path / "sub.csv"
    sub.write_text(submission_text([(1, "clicks", [5]), (1, "carts", [6]), (1, "orders", [9]), (2, "clicks", [8]),
                                    (2, "carts", []), (2, "orders", [1])]))
    frame = pd.read_csv(sub)
    assert pd.api.types.is_float_dtype(frame["labels"])
    assert kaggle_score(pd.read_csv(solution), frame, ROW_ID) == cli_strict(sub, path)["score"] == pytest.approx(0.4)


def test_kaggle_takes_frames_in_several_arrow_chunks(good, tmp_path):
    submission, truth = good
    solution, _ = export_solution(truth, tmp_path, public=1.0)
    whole = pd.read_csv(submission)
    half = len(whole) // 2
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    whole.iloc[:half].to_csv(first, index=False)
    whole.iloc[half:].to_csv(second, index=False)
    chunked = pd.concat([pd.read_csv(first), pd.read_csv(second)], ignore_index=True)
    frame = pd.read_csv(solution)
    assert kaggle_score(pd.concat([frame.iloc[:7], frame.iloc[7:]]), chunked, ROW_ID) == cli_strict(submission, truth)["score"]


@pytest.mark.parametrize("frame, code", [
    (pd.DataFrame(), "S001"),
    (pd.DataFrame({ROW_ID: pd.Series([], dtype=str), "labels": pd.Series([], dtype=str)}), "S011"),
    (pd.DataFrame([["100_clicks", "1", "2"]], columns=[ROW_ID, "labels", "labels"]), "S002"),
    (pd.DataFrame({ROW_ID: ["100_clicks", None], "labels": [[1, 2], {"a": 1}]}), "S008"),
])
def test_kaggle_odd_frames_get_a_participant_message(good, tmp_path, frame, code):
    _, truth = good
    solution = pd.read_csv(export_solution(truth, tmp_path, public=1.0)[0])
    with pytest.raises(ParticipantVisibleError, match=f"^Submission rejected: {code}"):
        kaggle_score(solution, frame, ROW_ID)


def test_kaggle_bad_solution_is_the_hosts_error(good, tmp_path):
    submission, truth = good
    solution, _ = export_solution(truth, tmp_path, public=1.0)
    frame = pd.read_csv(solution)
    broken = frame.copy()
    broken.loc[0, ROW_ID] = "nonsense"
    with pytest.raises(HostVisibleError, match="nonsense"):
        kaggle_score(broken, pd.read_csv(submission), ROW_ID)
    with pytest.raises(ParticipantVisibleError, match="S002 line 1: header is 'id,labels'"):
        kaggle_score(frame, pd.read_csv(submission).rename(columns={ROW_ID: "id"}), ROW_ID)
    other_shape = tmp_path / "value.toml"
    other_shape.write_text('name = "v"\n[submission]\nshape = "value"\nheader = ["id", "rating"]\n[scoring]\nk = 1\nmetric = "rmse"\n')
    with pytest.raises(HostVisibleError, match="shape 'id_type'"):
        kaggle_score(frame, pd.read_csv(submission), ROW_ID, config=str(other_shape))


# -- Codabench / CodaLab --------------------------------------------------------------------------
def metadata_command() -> list[str]:
    text = (BUNDLE / "scoring_program" / "metadata.yaml").read_text()
    command = re.search(r"^command:\s*(.+)$", text, re.M).group(1)
    entrypoint = json.loads(re.search(r"^ENTRYPOINT\s+(\[.*\])\s*$", (ROOT / "docker" / "Dockerfile").read_text(), re.M).group(1))
    return entrypoint + shlex.split(command)


def leaderboard_keys() -> list[str]:
    text = (BUNDLE / "competition.yaml").read_text()
    columns = text[text.index("columns:"):]
    return re.findall(r"^\s+key:\s*(\S+)", columns, re.M)


def run_codabench(root: Path) -> subprocess.CompletedProcess:
    """The container's command, with /app/input and /app/output mapped to folders of `root`."""
    argv = [a.replace("/app/input", str(root / "input")).replace("/app/output", str(root / "output")) for a in metadata_command()]
    assert argv[0] == "scorer"
    argv = [sys.executable, "-m", "scorer.cli", *argv[1:]]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=root)


def codabench_dirs(root: Path, truth: Path, submission: Path, nested: str = "upload") -> None:
    (root / "input" / "ref" / "data").mkdir(parents=True)
    shutil.copy(truth, root / "input" / "ref" / "data" / truth.name)
    (root / "input" / "res" / nested).mkdir(parents=True)
    shutil.copy(submission, root / "input" / "res" / nested / submission.name)
    (root / "input" / "res" / "metadata").write_text("platform file, not the submission\n")
    (root / "output").mkdir()


def test_codabench_command_from_metadata_scores_like_the_cli(good, tmp_path):
    submission, truth = good
    compiled = tmp_path / "test.truth.npz"
    assert main(["compile-truth", str(truth), "-o", str(compiled)]) == 0
    codabench_dirs(tmp_path / "run", compiled, submission)
    done = run_codabench(tmp_path / "run")
    assert done.returncode == 0, done.stderr
    output = tmp_path / "run" / "output"
    scores = json.loads((output / "scores.json").read_text())
    assert list(scores) == leaderboard_keys() == ["score", *TYPES]
    assert scores == leaderboard_of(cli_strict(submission, truth))
    assert all(math.isfinite(v) for v in scores.values())
    txt = dict(line.split(": ") for line in (output / "scores.txt").read_text().splitlines())
    assert {k: float(v) for k, v in txt.items()} == pytest.approx(scores, abs=1e-9)
    assert not list(output.rglob("metadata"))


def test_codabench_invalid_submission_prints_the_message_and_fails(good, tmp_path):
    submission, truth = good
    bad = tmp_path / "bad.csv"
    bad.write_text(submission.read_text().replace("101_carts", "101_cart", 1))
    codabench_dirs(tmp_path / "run", truth, bad)
    done = run_codabench(tmp_path / "run")
    assert done.returncode == 1
    assert "Submission rejected: S005 line" in done.stderr and "'cart'" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "run" / "output" / "scores.json").exists()


def test_codabench_zip_upload_in_a_folder_and_upload_mistakes(good, tmp_path):
    submission, truth = good
    archive = tmp_path / "submission.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.write(submission, "submission.csv")
    codabench_dirs(tmp_path / "a", truth, archive, nested="deep/er")
    outcome = grade(tmp_path / "a" / "input", tmp_path / "a" / "output")
    assert outcome.exit_code == 0 and outcome.scores == leaderboard_of(cli_strict(submission, truth))
    codabench_dirs(tmp_path / "b", truth, submission)
    shutil.copy(submission, tmp_path / "b" / "input" / "res" / "second.csv")
    outcome = grade(tmp_path / "b" / "input", tmp_path / "b" / "output")
    assert outcome.exit_code == 1 and "holds 2 files" in outcome.message
    (tmp_path / "c" / "input" / "res").mkdir(parents=True)
    assert main(["codabench", str(tmp_path / "c" / "input"), str(tmp_path / "c" / "output")]) == 2  # no ref: the host's error


# -- EvalAI ---------------------------------------------------------------------------------------
def test_evalai_evaluate_returns_the_leaderboard_split(good):
    submission, truth = good
    out = evaluate(str(truth), str(submission), "test", split="test_split")
    expected = leaderboard_of(cli_strict(submission, truth))
    receipt = out.pop("receipt")  # the score's receipt: tests/test_receipts.py
    assert out == {"result": [{"test_split": expected}], "submission_result": expected}
    assert receipt["figures"]["score"] == expected["score"] and receipt["mode"] == "strict"


@pytest.fixture
def evalai_script(monkeypatch):
    """bundles/evalai/evaluation_script imported as EvalAI imports it (a package), with PHASE_SPLITS left for it to fill."""
    import scorer.adapters.evalai

    monkeypatch.setattr(scorer.adapters.evalai, "PHASE_SPLITS", {})
    folder = ROOT / "bundles" / "evalai" / "evaluation_script"
    spec = importlib.util.spec_from_file_location("evaluation_script", folder / "__init__.py", submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["evaluation_script"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("evaluation_script", None)


def test_evalai_bundle_script_is_importable_and_maps_phases(good, evalai_script):
    submission, truth = good
    out = evalai_script.evaluate(str(truth), str(submission), "dev", submission_metadata={"id": 1})
    assert list(out["result"][0]) == ["dev_split"] and out["submission_result"]["score"] == cli_strict(submission, truth)["score"]


def test_evalai_bundle_script_takes_the_competition_from_the_environment(good, evalai_script, monkeypatch, capsys):
    submission, truth = good
    monkeypatch.setenv("SCORER_COMPETITION", "no-such-competition")  # the host's mistake, said on the host's stderr
    with pytest.raises(EvaluationFailed):
        evalai_script.evaluate(str(truth), str(submission), "dev")
    assert "unknown competition 'no-such-competition'" in capsys.readouterr().err
    out = evalai_script.evaluate(str(truth), str(submission), "dev", competition="otto")  # the keyword still wins
    assert out["submission_result"]["score"] == cli_strict(submission, truth)["score"]


# -- every bad fixture, through every adapter -----------------------------------------------------
def _ranked_shape(entry: dict) -> bool:
    """Fixtures of other submission shapes (value, long) need truths of their own: not these adapters' tests."""
    if "config" not in entry:
        return True
    return "shape" not in tomllib.loads((BAD / entry["config"]).read_text()).get("submission", {})


TABLE = tomllib.loads((BAD / "expected.toml").read_text())["fixture"] if (BAD / "expected.toml").is_file() else []
WITH_ERRORS = [entry for entry in TABLE if _ranked_shape(entry) and any(kind(p["code"]).severity == ERROR for p in entry["problems"])]
# Problems a Kaggle metric never sees: pandas cannot read the file (Kaggle rejects it before the metric
# runs), or reading it changes the problem (encodings, compression, extra fields become an index),
# or Kaggle's own id check covers it (rows of sessions outside the split are ignored by design: S012).
KAGGLE_ELSEWHERE = {"S001", "S003", "S012", "S016", "S024", "S025", "S026", "S027"}


def first_error(entry: dict) -> dict:
    errors = [p for p in entry["problems"] if kind(p["code"]).severity == ERROR]
    return sorted(errors, key=lambda p: (p.get("line") is None, p.get("line") or 0, p["code"]))[0]


def test_the_bad_fixture_table_is_there():
    assert len(WITH_ERRORS) >= 20, "fixtures/bad/expected.toml is missing or has few invalid fixtures"


@pytest.mark.parametrize("entry", WITH_ERRORS, ids=[e["file"] for e in WITH_ERRORS])
def test_codabench_and_evalai_name_the_problem_of_every_bad_fixture(entry, tmp_path, capsys):
    wanted = first_error(entry)
    config = str(BAD / entry["config"]) if "config" in entry else None
    codabench_dirs(tmp_path, OTTO_TRUTH, BAD / entry["file"])
    argv = ["codabench", str(tmp_path / "input"), str(tmp_path / "output")] + (["--config", config] if config else [])
    assert main(argv) == 1
    err = capsys.readouterr().err
    with pytest.raises(SubmissionRejected) as raised:
        evaluate(str(OTTO_TRUTH), str(BAD / entry["file"]), "test", config=config)
    for message in (err, str(raised.value)):
        assert f"Submission rejected: {wanted['code']}" in message
        if "line" in wanted:
            assert f"line {wanted['line']}:" in message
        assert wanted.get("says", "") in message


@pytest.mark.parametrize("entry", WITH_ERRORS, ids=[e["file"] for e in WITH_ERRORS])
def test_kaggle_names_the_problem_of_every_bad_fixture_pandas_can_read(entry, tmp_path):
    wanted = first_error(entry)
    solution = pd.read_csv(export_solution(OTTO_TRUTH, tmp_path, public=1.0)[0]).drop(columns="Usage")
    try:
        frame = pd.read_csv(BAD / entry["file"])
    except Exception:  # Kaggle cannot read it either and rejects the file before the metric runs
        assert wanted["code"] in KAGGLE_ELSEWHERE
        return
    config = str(BAD / entry["config"]) if "config" in entry else ""
    try:
        kaggle_score(solution, frame, ROW_ID, config=config)
    except ParticipantVisibleError as error:
        message = str(error)
        assert len(message) <= MAX_MESSAGE and message.startswith("Submission rejected: ")
        if wanted["code"] not in KAGGLE_ELSEWHERE:
            assert f"Submission rejected: {wanted['code']}" in message, message
        return
    assert wanted["code"] in KAGGLE_ELSEWHERE, "the Kaggle metric scored a submission with an error"


# -- limits ---------------------------------------------------------------------------------------
TINY = """
name = "otto-tiny"
[submission]
header = ["session_type", "labels"]
id_pattern = "{{session}}_{{type}}"
[scoring]
types = ["clicks", "carts", "orders"]
weights = [0.10, 0.30, 0.60]
k = 20
metric = "recall@20"
[limits]
{limit}
"""


@pytest.mark.parametrize("limit, code, says", [
    ("max_file_bytes = 200", "S023", "over the limit of 200"),
    ("max_seconds = 1e-9", "S028", "longer than the limit"),
    ("max_line_bytes = 40", "S022", "over the limit of 40"),
])
def test_every_adapter_tells_the_participant_about_a_limit(good, tmp_path, limit, code, says):
    submission, truth = good
    config = tmp_path / "tiny.toml"
    config.write_text(TINY.format(limit=limit))
    codabench_dirs(tmp_path / "run", truth, submission)
    outcome = grade(tmp_path / "run" / "input", tmp_path / "run" / "output", config=str(config))
    with pytest.raises(SubmissionRejected) as evalai_error:
        evaluate(str(truth), str(submission), "test", config=str(config))
    with pytest.raises(ParticipantVisibleError) as kaggle_error:
        solution = pd.read_csv(export_solution(truth, tmp_path, public=1.0)[0])
        kaggle_score(solution, pd.read_csv(submission), ROW_ID, config=str(config))
    assert outcome.exit_code == 1
    for message in (outcome.message, str(evalai_error.value), str(kaggle_error.value)):
        assert code in message and says in message, message
    assert len(str(kaggle_error.value)) <= MAX_MESSAGE


# -- compile-truth --------------------------------------------------------------------------------
def test_compile_truth_gives_the_same_scores_and_checks_the_name(good, tmp_path, capsys):
    submission, truth = good
    compiled = tmp_path / "t.truth.npz"
    assert main(["compile-truth", str(truth), "-o", str(compiled)]) == 0
    from_compiled, from_source = cli_strict(submission, compiled), cli_strict(submission, truth)
    assert from_compiled["score"] == from_source["score"] and from_compiled["metrics"] == from_source["metrics"]
    assert main(["compile-truth", str(truth), "-o", str(tmp_path / "t.npz")]) == 2
    assert ".truth.npz" in capsys.readouterr().err


def test_codabench_and_evalai_take_other_shapes(tmp_path):
    hm = ROOT / "fixtures" / "hm"
    codabench_dirs(tmp_path, hm / "truth.csv", hm / "submission.csv")
    outcome = grade(tmp_path / "input", tmp_path / "output", competition="hm")
    expected = api_score(hm / "submission.csv", hm / "truth.csv", "hm", strict=True)
    assert outcome.exit_code == 0 and outcome.scores == {"score": expected.score, "all": expected.score}
    assert evaluate(str(hm / "truth.csv"), str(hm / "submission.csv"), "test", competition="hm")["submission_result"] == outcome.scores
    assert main(["compile-truth", str(hm / "truth.csv"), "-o", str(tmp_path / "x.truth.npz"), "--competition", "hm"]) == 2
    compiled = tmp_path / "input" / "ref" / "truth.strings.npz"  # compiled, it wins over the CSV beside it
    assert main(["compile-truth", str(hm / "truth.csv"), "-o", str(compiled), "--competition", "hm"]) == 0
    (tmp_path / "input" / "ref" / "truth.csv").write_text("customer_id,prediction\n")  # would score nothing
    assert grade(tmp_path / "input", tmp_path / "output2", competition="hm").scores == outcome.scores
