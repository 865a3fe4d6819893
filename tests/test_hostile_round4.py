"""Round 4 of the hostile trials (issue 29): the newer commands held to the core's contract.

Exit 0, 1 or 2 with one sentence that names the cause; never exit 3, a traceback, a hang or unbounded memory;
nothing lost; the same figures for the same content. Files a user hands back to us (receipts, grade records,
bundles, compiled truths) are inputs like submissions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

import pytest

from scorer.cli.main import main

OTTO_SUBMISSION, OTTO_TRUTH = "fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl"


def run_cli(*argv) -> tuple[int, str, str]:
    """`scorer ARGV` in this process: (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(map(str, argv)))
    return code, out.getvalue(), err.getvalue()


def run_process(*args: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in a child process: a hang fails the test instead of stopping the run."""
    return subprocess.run([sys.executable, "-m", "scorer", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "SCORER_DEBUG": "", **(env or {})})


def one_sentence(stderr: str) -> str:
    """The error line of a refusal: exactly one, and no traceback."""
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("scorer: error:")]
    assert len(errors) == 1, stderr
    return errors[0]


# -- receipts -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def receipt() -> dict:
    code, out, _ = run_cli("score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--format", "json", "--split", "public=0.5",
                           "--bootstrap", "5")
    assert code == 0
    return json.loads(out)["receipt"]


def changed(document: dict, where: str, value) -> dict:
    """A deep copy of the document with the field at the dotted path set to value."""
    document = json.loads(json.dumps(document))
    *outer, last = where.split(".")
    inner = document
    for key in outer:
        inner = inner[key]
    inner[last] = value
    return document


@pytest.mark.parametrize("where, value, expected", [
    ("split", "half", "field 'split' is 'half'"),
    ("bootstrap.resamples", "many", "field 'bootstrap.resamples' is 'many', expected a whole number from 1 to 100,000"),
    ("bootstrap.resamples", 10**12, "field 'bootstrap.resamples' is 1,000,000,000,000"),
    ("bootstrap.level", float("nan"), "field 'bootstrap.level' is NaN"),
    ("bootstrap", [1, 2], "field 'bootstrap' is a list"),
    ("split.public", 7, "field 'split.public' is 7"),
    ("split.seed", -1, "field 'split.seed' is -1"),
    ("mode", None, "field 'mode' is null"),
    ("figures.score", "0.3", "field 'figures.score' is '0.3'"),
    ("figures.metrics", {"clicks": {"recall@20": float("inf")}}, "field 'figures.metrics.clicks.recall@20' is Infinity"),
    ("competition", "otto", "field 'competition' is 'otto'"),
    ("competition.metrics", {"a": 1}, "field 'competition.metrics' is an object"),
    ("scorer.version", 3, "field 'scorer.version' is 3"),
    ("receipt", True, "field 'receipt' is true"),
    ("extra", 1, "field 'extra' is unknown"),
])
def test_a_receipt_field_of_the_wrong_type_or_range_is_named(tmp_path, receipt, where, value, expected):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(changed(receipt, where, value)))
    code, _, err = run_cli("verify", path, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2, err
    assert expected in one_sentence(err) and "r.json" in err


def test_a_receipt_nested_100000_deep_or_not_json_is_refused(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run_cli("verify", deep, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2 and "more than 64 deep" in one_sentence(err)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run_cli("verify", binary, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2 and "not JSON" in one_sentence(err)


def test_a_receipt_naming_a_path_as_its_competition_reads_no_file_outside_the_configs(tmp_path, receipt):
    config = tmp_path / "evil.toml"
    config.write_text("this is not read")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(changed(receipt, "competition.name", os.path.relpath(tmp_path / "evil", "scorer/spec/configs"))))
    code, _, err = run_cli("verify", path, OTTO_SUBMISSION, "--truth", OTTO_TRUTH)
    assert code == 2 and "unknown competition" in one_sentence(err)


@pytest.mark.parametrize("kind", ["fifo", "zero", "folder"])
def test_a_receipt_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    path = {"zero": "/dev/zero", "folder": str(tmp_path)}.get(kind, str(tmp_path / "fifo"))
    if kind == "fifo":
        os.mkfifo(path)
    elif not os.path.exists(path):
        pytest.skip(f"no {path} here")
    done = run_process("verify", path, OTTO_SUBMISSION, "--truth", OTTO_TRUTH, timeout=60)
    assert done.returncode == 2 and "not a regular file" in one_sentence(done.stderr)


# -- grade's results file -------------------------------------------------------------------------------------
def grade_record(name: str, score, **fields) -> dict:
    return {"file": name, "path": f"/data/{name}", "content_key": f"key-{name}", "valid": score is not None, "score": score,
            "metrics": {"clicks": {"recall@20": score}}, "status": "scored" if score is not None else "invalid", **fields}


def results_file(tmp_path, *records) -> str:
    path = tmp_path / "results.jsonl"
    path.write_text("".join((record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records))
    return str(path)


@pytest.mark.parametrize("truth", [False, True])
@pytest.mark.parametrize("score, reason", [("0.99", "field 'score' is '0.99'"), (float("inf"), "its score is Infinity"),
                                           (float("-inf"), "its score is -Infinity")])
def test_a_record_whose_score_is_no_finite_number_is_listed_unranked(tmp_path, truth, score, reason):
    path = results_file(tmp_path, grade_record("good.csv", 0.5), grade_record("bad.csv", score))
    extra = ["--truth", OTTO_TRUTH, "--bootstrap", "10"] if truth else []
    code, out, err = run_cli("leaderboard", "--results", path, *extra)
    assert code == 1, err
    text = out + err
    assert "bad.csv" in text and reason in text and "line 2" in text and "Traceback" not in text
    if not truth:
        ranked = [line for line in out.splitlines() if line.strip().startswith("1 ")]
        assert len(ranked) == 1 and "good.csv" in ranked[0]


@pytest.mark.parametrize("field, value", [("metrics", [1]), ("status", "done"), ("problems", {"a": 1}), ("attempts", "2"),
                                          ("seconds", -1)])
def test_a_record_with_a_field_of_the_wrong_type_is_listed_unranked_naming_it(tmp_path, field, value):
    path = results_file(tmp_path, grade_record("a.csv", 0.5), grade_record("b.csv", 0.4, **{field: value}))
    code, out, err = run_cli("leaderboard", "--results", path)
    assert code == 1 and f"field '{field}" in out + err and "b.csv" in out + err


def test_resume_leaves_a_record_of_the_wrong_types_alone_and_grades_its_file_again(tmp_path):
    from scorer.dask.results_file import open_results, resume_key

    bad = [grade_record("a.csv", "0.99"), grade_record("b.csv", 0.5, problems=[{"code": 5}]), dict(grade_record("c.csv", None), status="scored")]
    path = results_file(tmp_path, *bad, grade_record("d.csv", 0.7))
    opened = open_results(path)
    opened.close()
    assert opened.unreadable_lines == [1, 2, 3] and "field 'score' is '0.99'" in opened.first_unreadable
    assert [resume_key(r) for r in opened.records] == [("/data/d.csv", "key-d.csv")]
    assert [json.loads(line) for line in open(path)][:3] == bad  # left as they are


def test_grade_refuses_a_fifo_as_its_results_file_before_any_work(tmp_path):
    pytest.importorskip("distributed")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = run_process("grade", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "-o", str(fifo), "--workers", "1", "--no-progress")
    assert done.returncode == 2 and "it is a FIFO (named pipe), not a regular file" in one_sentence(done.stderr)
    assert "dashboard" not in done.stderr  # no cluster was started


def test_grade_makes_the_folder_of_its_results_file(tmp_path):
    pytest.importorskip("distributed")
    results = tmp_path / "results" / "run1" / "r.jsonl"
    done = run_process("grade", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "-o", str(results), "--workers", "1", "--no-progress", timeout=120)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["status"] for line in results.read_text().splitlines()] == ["scored"]


# -- output paths ---------------------------------------------------------------------------------------------
def blocked(tmp_path, name: str) -> str:
    """A path whose folder cannot be made, whoever runs the test (root too): it lies under a regular file."""
    (tmp_path / "file").write_text("")
    return str(tmp_path / "file" / "sub" / name)


OUTPUTS = [
    ("score", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--report"], "r.html"),
    ("compare", [OTTO_SUBMISSION, OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--report"], "c.png"),
    ("leaderboard", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--report"], "board.html"),
    ("candidates", ["fixtures/otto_truth.jsonl", "--truth", OTTO_TRUTH, "--plot"], "c.png"),
    ("export", ["kaggle-solution", OTTO_TRUTH, "-o"], "solution.csv"),
    ("compile-truth", [OTTO_TRUTH, "-o"], "t.truth.npz"),
    ("prepare", ["fixtures/otto_truth.jsonl", "-o"], "split"),
]


@pytest.mark.parametrize("command, args, name", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_every_output_that_cannot_be_written_is_refused_before_the_work(tmp_path, command, args, name):
    if command == "candidates":
        pytest.importorskip("matplotlib")
    code, out, err = run_cli(command, *args, blocked(tmp_path, name))
    assert code == 2 and out == "", (out, err)
    assert "Not a directory" in one_sentence(err) or "not a folder" in err


@pytest.mark.parametrize("command, args, name", OUTPUTS[:-1], ids=[o[0] for o in OUTPUTS[:-1]])
def test_an_output_that_is_a_fifo_or_folder_is_refused(tmp_path, command, args, name):
    if command == "candidates":
        pytest.importorskip("matplotlib")
    fifo = tmp_path / name
    os.mkfifo(fifo)
    done = run_process(command, *args, str(fifo))
    assert done.returncode == 2 and "FIFO (named pipe), not a regular file" in one_sentence(done.stderr)
    fifo.unlink()
    fifo.mkdir()
    code, _, err = run_cli(command, *args, fifo)
    assert code == 2 and "a folder, not a regular file" in one_sentence(err)


def test_a_report_into_a_folder_that_does_not_exist_is_written_there(tmp_path):
    pytest.importorskip("matplotlib")
    report = tmp_path / "reports" / "today" / "board.html"
    code, out, err = run_cli("leaderboard", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--bootstrap", "10", "--report", report)
    assert code == 0, err
    assert report.read_text().startswith("<!doctype html>")


# -- numeric options ------------------------------------------------------------------------------------------
NUMERIC = [
    ("audit", ["--truth", OTTO_TRUTH, "--time-limit"], ["nan", "-5", "0", "inf", "1e300"]),
    ("audit", ["--truth", OTTO_TRUTH, "--split", "public=0.5", "--seed"], ["-1", "1e3"]),
    ("export", ["kaggle-solution", OTTO_TRUTH, "-o", "{tmp}/s.csv", "--public"], ["nan", "-0.1", "1.5", "inf"]),
    ("export", ["kaggle-solution", OTTO_TRUTH, "-o", "{tmp}/s.csv", "--seed"], ["-1"]),
    ("prepare", [OTTO_TRUTH, "-o", "{tmp}/p", "--days"], ["nan", "inf", "0", "-1"]),
    ("prepare", [OTTO_TRUTH, "-o", "{tmp}/p", "--chunk-mb"], ["0", "-3", "10000000"]),
    ("grade", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--retries"], ["-1", "1000000"]),
    ("grade", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--max-per-code"], ["-1", "1000000000000"]),  # 0: only the counts
    ("grade", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--wait-workers"], ["0", "1000000000000"]),
    ("grade", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--workers"], ["0", "1000000"]),
    ("score", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--engine", "dask", "--partitions"], ["0", "1000000000"]),
    ("codabench", ["{tmp}/in", "{tmp}/out", "--max-seconds"], ["0", "1e300", "100000000000000000000"]),
    ("leaderboard", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--mde"], ["0", "1000000000000000000000"]),  # was exit 3
    ("explain", [OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--show"], ["-1", "1000000000000"]),  # was a MemoryError; 0: no rows
]


@pytest.mark.parametrize("command, args, values", NUMERIC, ids=[f"{c}{a[-1]}" for c, a, _ in NUMERIC])
def test_a_numeric_option_that_means_nothing_is_a_usage_error(tmp_path, command, args, values):
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    for value in values:
        code, out, err = run_cli(command, *args, value)
        assert code == 2 and out == "" and f"argument {args[-1]}" in err and value in err.splitlines()[-1], (value, err)


def test_audit_time_limit_nan_no_longer_passes_every_check():
    code, out, err = run_cli("audit", "--truth", OTTO_TRUTH, "--time-limit", "nan")
    assert code == 2 and "of the nan s limit" not in out


# -- checks that pass, warn or fail ---------------------------------------------------------------------------
def test_audit_of_the_fixture_warns_about_sessions_without_truth_and_passes():
    code, out, err = run_cli("audit", "--truth", OTTO_TRUTH)
    assert code == 0, out + err
    truth_line = next(line for line in out.splitlines() if line.strip().split()[1:2] == ["truth"])
    assert truth_line.split()[0] == "warn" and "1 without any truth item" in truth_line and "consider:" in truth_line
    assert "(1 with a warning)" in out.splitlines()[-1]
    code, out, _ = run_cli("audit", "--truth", OTTO_TRUTH, "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["warnings"] == 1
    assert [check["state"] for check in report["checks"] if check["name"] == "truth"] == ["warn"]


def test_audit_still_fails_a_weighted_type_without_any_truth(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text("".join(json.dumps({"session": s, "labels": {"clicks": 5, "carts": [6]}}) + "\n" for s in range(1, 4)))
    code, out, _ = run_cli("audit", "--truth", truth, "--format", "json")
    checks = {check["name"]: check for check in json.loads(out)["checks"]}
    assert code == 1 and checks["truth"]["state"] == "fail" and "no truth at all for orders" in checks["truth"]["detail"]


# -- bundles --------------------------------------------------------------------------------------------------
CODALAB_YAML = """title: t
phases:
  1:
    phasenumber: 1
    execution_time_limit: {limit}
    scoring_program: scoring_program.zip
    reference_data: reference_data.zip
leaderboard:
  columns:
    score: {{label: Score}}
"""


def bundle(tmp_path, members: dict[str, bytes], name: str = "bundle.zip") -> str:
    import zipfile

    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return str(path)


def zipped(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return buffer.getvalue()


def codalab(limit="600", program: bytes | None = None, **extra: bytes) -> dict[str, bytes]:
    truth = open(OTTO_TRUTH, "rb").read()
    return {"competition.yaml": CODALAB_YAML.format(limit=limit).encode(),
            "scoring_program.zip": program if program is not None else zipped({"metadata": b"command: codabench $input $output\n"}),
            "reference_data.zip": zipped({"truth.jsonl": truth}), **extra}


def audit_bundle(path) -> tuple[int, str, str]:
    return run_cli("audit", "--truth", OTTO_TRUTH, "--sample", OTTO_SUBMISSION, "--bundle", path)


def test_the_crafted_bundle_passes_its_checks(tmp_path):
    """The bundles below are this one with one thing wrong: it passes as it is."""
    code, out, err = run_cli("audit", "--truth", OTTO_TRUTH, "--sample", OTTO_SUBMISSION, "--bundle", bundle(tmp_path, codalab()),
                             "--format", "json")
    states = {check["name"]: check["state"] for check in json.loads(out)["checks"]}
    assert {name: states[name] for name in ("bundle files", "bundle truth", "bundle program")} == dict.fromkeys(
        ("bundle files", "bundle truth", "bundle program"), "pass"), out


@pytest.mark.parametrize("limit, shown", [(".nan", "NaN"), ("-5", "-5"), ("0", "0"), (".inf", "Infinity"), ("1.0e+300", "1e+300"),
                                          ("'ten'", "'ten'"), ("true", "true"), ("[600]", "a list")])
def test_a_bundle_time_limit_that_means_nothing_is_named(tmp_path, limit, shown):
    code, out, err = audit_bundle(bundle(tmp_path, codalab(limit)))
    assert code == 2 and out == ""
    assert f"field 'phases[1].execution_time_limit' is {shown}, expected a finite number strictly between 0 and 604,800" in one_sentence(err)


@pytest.mark.parametrize("line, field", [("scoring_program: [1, 2]", "phases[1].scoring_program"),
                                         ("reference_data: {a: 1}", "phases[1].reference_data")])
def test_a_bundle_field_of_the_wrong_type_is_named(tmp_path, line, field):
    members = codalab()
    key = line.split(":")[0]
    members["competition.yaml"] = members["competition.yaml"].replace(f"{key}: {key}.zip".encode(), b"").replace(
        b"phasenumber: 1", f"phasenumber: 1\n    {line}".encode())
    code, _, err = audit_bundle(bundle(tmp_path, members))
    assert code == 2 and f"field '{field}'" in one_sentence(err)


def test_an_inner_program_zip_that_is_no_zip_is_named(tmp_path):
    code, out, err = audit_bundle(bundle(tmp_path, codalab(program=b"this is not a zip")))
    assert code == 2 and "scoring_program.zip" in one_sentence(err)


def billion_laughs(levels: int = 9) -> bytes:
    lines = ["lol0: &lol0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return ("\n".join(lines) + "\n").encode()


def test_a_billion_laughs_competition_yaml_is_refused_at_once(tmp_path):
    members = codalab()
    members["competition.yaml"] += billion_laughs()
    done = run_process("audit", "--truth", OTTO_TRUTH, "--bundle", bundle(tmp_path, members), timeout=60)
    assert done.returncode == 2 and "expands to over" in one_sentence(done.stderr)


def test_a_billion_laughs_metadata_fails_the_program_check_without_hanging(tmp_path):
    program = zipped({"metadata": b"command: codabench $input $output\n" + billion_laughs()})
    done = run_process("audit", "--truth", OTTO_TRUTH, "--sample", OTTO_SUBMISSION, "--bundle",
                       bundle(tmp_path, codalab(program=program)), "--format", "json", timeout=120)
    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert done.returncode == 1 and checks["bundle program"]["state"] == "fail"
    assert "expands to over" in checks["bundle program"]["detail"]


def test_a_command_with_an_unpaired_quote_fails_the_program_check(tmp_path):
    program = zipped({"metadata": b'command: codabench "$input $output\n'})
    code, out, _ = run_cli("audit", "--truth", OTTO_TRUTH, "--sample", OTTO_SUBMISSION, "--bundle",
                           bundle(tmp_path, codalab(program=program)), "--format", "json")
    checks = {check["name"]: check for check in json.loads(out)["checks"]}
    assert code == 1 and "cannot be split into words" in checks["bundle program"]["detail"]


PEAK = """import os, sys
from scorer.cli.main import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status, open(os.environ["SCORER_TEST_PEAK"], "w") as out:
    out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
sys.exit(code)
"""


def peak_rss_mb(*args: str, timeout: float = 300, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    """Run the CLI in a child and read its own peak resident memory (MB): VmHWM at its end (ru_maxrss would carry
    this test process's peak over fork and exec)."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc/self/status (Linux)")
    import tempfile

    with tempfile.NamedTemporaryFile("r") as peak:
        done = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "SCORER_DEBUG": "", "SCORER_TEST_PEAK": peak.name, **(env or {})})
        return done, int(peak.read() or 0) / 1024


def test_a_zip_bomb_member_is_refused_before_it_is_inflated(tmp_path):
    size = 64 << 20  # packs to 64 KB
    members = codalab()
    members["pages/blank.html"] = bytes(size)
    path = bundle(tmp_path, members)
    done = run_process("audit", "--truth", OTTO_TRUTH, "--bundle", path)
    assert done.returncode == 2 and "a zip bomb?" in one_sentence(done.stderr)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_bundle_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    path = "/dev/zero" if kind == "zero" else str(tmp_path / "fifo")
    if kind == "fifo":
        os.mkfifo(path)
    done = run_process("audit", "--truth", OTTO_TRUTH, "--bundle", path)
    assert done.returncode == 2 and "not a regular file" in one_sentence(done.stderr)


@pytest.mark.slow
def test_a_large_bundle_member_is_streamed_not_read_whole(tmp_path):
    import zipfile

    import numpy as np

    size = 384 << 20  # packs about 100 times (under the bomb limit): 4 MB
    block = np.random.default_rng(0).integers(0, 256, 8 << 10, dtype=np.uint8).tobytes()  # repeats within deflate's window
    members = codalab()
    members["competition.yaml"] = members["competition.yaml"].replace(b"reference_data.zip", b"reference_data")
    del members["reference_data.zip"]
    members["reference_data/truth.jsonl"] = open(OTTO_TRUTH, "rb").read()
    path = bundle(tmp_path, members)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive, \
            archive.open("reference_data/filler.bin", "w", force_zip64=True) as member:
        for _ in range(size // len(block)):
            member.write(block)
    assert (tmp_path / "bundle.zip").stat().st_size < size / 50
    _, baseline = peak_rss_mb("audit", "--truth", OTTO_TRUTH, "--bundle", bundle(tmp_path, codalab(), "small.zip"))
    done, peak = peak_rss_mb("audit", "--truth", OTTO_TRUTH, "--bundle", path)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert peak - baseline < size / 2**20 / 4, f"peak RSS {peak:.0f} MB, {baseline:.0f} MB with a small bundle, for a member of {size >> 20} MB"


# -- other inputs that could be a FIFO ------------------------------------------------------------------------
FIFO_INPUTS = [
    (["audit", "--truth", OTTO_TRUTH, "--solution"], 2, "the solution"),
    (["score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--sessions"], 2, "the sessions file"),
    (["score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--metrics", "novelty@20", "--items"], 2, "the item table"),
    (["score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--metrics", "novelty@20", "--train"], 2, "the session log"),
    (["prepare", "-o", "{tmp}/p"], 2, "the session log"),
    (["candidates", "--truth", OTTO_TRUTH], 1, "the candidates"),
]


@pytest.mark.parametrize("args, code, what", FIFO_INPUTS, ids=[f"{a[0]} {w}" for a, _, w in FIFO_INPUTS])
def test_an_input_that_is_a_fifo_is_named_at_once(tmp_path, args, code, what):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    where = 1 if args[0] in ("prepare", "candidates") else len(args)
    done = run_process(*args[:where], str(fifo), *args[where:], timeout=60)
    assert done.returncode == code and f"{what} {fifo} is a FIFO (named pipe), not a regular file" in one_sentence(done.stderr)


# -- compiled truths ------------------------------------------------------------------------------------------
@pytest.fixture
def compiled(tmp_path) -> str:
    path = tmp_path / "t.truth.npz"
    assert run_cli("compile-truth", OTTO_TRUTH, "-o", path)[0] == 0
    return str(path)


def rewritten(compiled: str, out, member: str, header: dict, body, deflated: bool = True) -> str:
    """The compiled truth with `member` replaced: an npy header, then the body's chunks (deflated, or stored)."""
    import io
    import zipfile

    from numpy.lib import format as npy_format

    with zipfile.ZipFile(compiled) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            if info.filename != member:
                target.writestr(info.filename, source.read(info))
                continue
            with target.open(member, "w", force_zip64=True) as written:
                buffer = io.BytesIO()
                npy_format.write_array_header_2_0(buffer, header)
                written.write(buffer.getvalue())
                for chunk in body:
                    written.write(chunk)
    return str(out)


def test_a_compiled_truth_declaring_a_huge_array_is_refused_before_it_is_inflated(tmp_path, compiled):
    size = 256 << 20  # zeros: deflate packs them about 1,000 times
    bomb = rewritten(compiled, tmp_path / "bomb.truth.npz", "sessions.npy",
                     {"descr": "<i8", "fortran_order": False, "shape": (size // 8,)}, (bytes(1 << 20) for _ in range(size >> 20)))
    done, peak = peak_rss_mb("score", OTTO_SUBMISSION, "--truth", bomb, timeout=120)
    assert done.returncode == 2 and "over 100 times the file's" in one_sentence(done.stderr)
    assert peak < size / 2**20 / 2, f"peak RSS {peak:.0f} MB for an array of {size >> 20} MB"


@pytest.mark.parametrize("member, header, cause", [
    ("sessions.npy", {"descr": "<i8", "fortran_order": False, "shape": (1000,)}, "indptr declares 10 entries for 1,000 sessions"),
    ("usage.npy", {"descr": "|i1", "fortran_order": False, "shape": (7,)}, "usage declares 7 entries for 3 sessions"),
    ("items.npy", {"descr": "|O", "fortran_order": False, "shape": (8,)}, "holds Python objects"),
    ("items.npy", {"descr": "<i8", "fortran_order": False, "shape": (10**6,)}, "declares 8,000,000 bytes of data in a member of"),
])
def test_a_compiled_truth_whose_headers_disagree_is_named(tmp_path, compiled, member, header, cause):
    import numpy as np

    if member == "usage.npy":  # a truth with a Usage column: one code per session
        import zipfile

        with zipfile.ZipFile(compiled, "a") as archive:
            archive.writestr("usage.npy", b"")
    count = int(np.prod(header["shape"])) if "O" not in header["descr"] else 0
    size = count * np.dtype(header["descr"]).itemsize if "O" not in header["descr"] else 64
    body = [bytes(size if "items" not in member or "O" in header["descr"] else 64)]
    path = rewritten(compiled, tmp_path / "bad.truth.npz", member, header, body, deflated=False)
    code, _, err = run_cli("score", OTTO_SUBMISSION, "--truth", path)
    assert code == 2 and cause in one_sentence(err) and "bad.truth.npz" in err


# -- memory ---------------------------------------------------------------------------------------------------
def long_files(tmp_path, ids: int, repeats: int) -> tuple[str, str]:
    """An Airbnb truth of `ids` ids and a gzip long submission cycling through them `repeats` times (each id's rows
    scattered over the file, all but its first five past K)."""
    import gzip

    truth = tmp_path / "truth.csv"
    truth.write_text("id,country\n" + "".join(f"u{i},NDF\n" for i in range(ids)))
    rows = "".join(f"u{i},US\n" for i in range(ids))
    submission = tmp_path / f"sub{repeats}.csv.gz"
    with gzip.open(submission, "wt", compresslevel=1) as out:
        out.write("id,country\n")
        for _ in range(repeats):
            out.write(rows)
    return str(submission), str(truth)


@pytest.mark.slow
def test_the_long_shape_keeps_a_bounded_share_of_an_upload_with_many_rows_per_id(tmp_path):
    ids, repeats = 20_000, 200  # 4M rows, then 8M: what the pass holds is its blocks' (the same), not the rows'
    small, truth = long_files(tmp_path, ids, repeats)
    big, _ = long_files(tmp_path, ids, 2 * repeats)
    _, baseline = peak_rss_mb("score", small, "--truth", truth, "--competition", "airbnb", "--strict")
    done, peak = peak_rss_mb("score", big, "--truth", truth, "--competition", "airbnb", "--strict")
    assert done.returncode == 0 and "more than 5 rows" in done.stdout
    more = ids * repeats  # the rows the big file has more
    assert peak - baseline < more * 8 / 2**20, f"{peak:.0f} MB, {baseline:.0f} MB with half the rows"  # it kept 16-32 bytes a row


def test_the_long_shape_scores_the_same_with_rows_past_k_dropped(tmp_path):
    import scorer

    truth = tmp_path / "truth.csv"
    truth.write_text("id,country\na,FR\nb,US\nc,NDF\n")
    rows = ["a,US", "b,US", "a,FR", "c,DE", "b,US", "a,IT", "a,ES", "a,GB", "a,FR", "c,NDF", "b,FR"] + ["a,PT", "c,IT"] * 5
    sub = tmp_path / "sub.csv"
    sub.write_text("id,country\n" + "\n".join(rows) + "\n")
    result = scorer.score(sub, truth, "airbnb")
    # a: US FR IT ES GB (FR at rank 2); b: US US(repeat) FR (FR not its truth; US at 1); c: DE NDF IT IT(repeat) IT (NDF at 2)
    assert result.metrics["all"]["ndcg@5(gain=exp)"] == pytest.approx((1 / 1.5849625007211562 + 1 + 1 / 1.5849625007211562) / 3)
    counts = {row["code"]: row["count"] for row in result.report.summary()}
    assert counts == {"S013": 2, "S014": 3}  # a and c past K (once each); b's, and c's two repeated items


def test_a_memory_error_while_scoring_an_upload_is_a_refusal(monkeypatch):
    from scorer.engine.file_pass import Pass

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(Pass, "run", exhausted)
    code, out, err = run_cli("score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--untrusted")
    assert code == 1 and "S027" in out and "needs more memory to be scored than this process may use" in out
    assert "internal error" not in err


def test_a_memory_error_anywhere_else_is_a_clear_exit_2(monkeypatch):
    import scorer.cli.audit

    def exhausted(args):
        raise MemoryError

    monkeypatch.setattr(scorer.cli.audit, "run", exhausted)
    code, _, err = run_cli("audit", "--truth", OTTO_TRUTH)
    assert code == 2 and "out of memory" in one_sentence(err)


def test_validate_keeps_a_bounded_excerpt_of_each_problem(tmp_path):
    lines = 4_000
    path = tmp_path / "long.csv"
    path.write_text("session_type,labels\n" + "".join(f"{'x' * 6_000}_clicks,1 2\n" for _ in range(lines)))
    _, few = peak_rss_mb("validate", str(path), "--max-per-code", "20")
    done, many = peak_rss_mb("validate", str(path), "--max-per-code", "10000", "--format", "json")
    assert done.returncode == 1 and len(json.loads(done.stdout)["problems"]) == lines
    assert many - few < lines * 2_000 / 2**20, f"{many:.0f} MB keeping {lines:,} problems, {few:.0f} MB keeping 20"
    code, out, _ = run_cli("validate", path, "--max-per-code", "1")
    excerpt = next(line for line in out.splitlines() if line.strip().startswith("| x"))
    assert code == 1 and len(excerpt) < 200 and excerpt.endswith("…")


# -- the C locale ---------------------------------------------------------------------------------------------
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}


@pytest.mark.parametrize("args, code", [
    (["score", "{bad}", "--truth", OTTO_TRUTH], 1),
    (["validate", "{bad}"], 1),
    (["audit", "--truth", OTTO_TRUTH], 0),  # its warning says "— consider:"
    (["leaderboard", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--split", "public=0.5", "--bootstrap", "10"], 0),  # "E|Δrank|"
])
def test_the_c_locale_without_utf8_escapes_what_it_cannot_print(tmp_path, args, code):
    bad = tmp_path / "bad.csv"
    bad.write_text("session_type,labels\n1_clicks,x\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONIOENCODING"} | C_LOCALE
    env.pop("PYTHONIOENCODING")
    done = subprocess.run([sys.executable, "-m", "scorer", *(arg.replace("{bad}", str(bad)) for arg in args)],
                          capture_output=True, timeout=120, env={**env, "SCORER_DEBUG": ""})
    assert done.returncode == code, done.stderr
    assert b"internal error" not in done.stderr
    assert b"\\u2014" in done.stdout + done.stderr or b"\\u0394" in done.stdout  # escaped, not lost


# -- JSON that pyarrow's reader cannot take -------------------------------------------------------------------
def deep(key: str, depth: int = 100_000) -> str:
    return '{"session": 1, "%s": %s%s}\n' % (key, "[" * depth, "]" * depth)


@pytest.mark.parametrize("option, key, cause", [("--truth", "labels", "nested too deeply"),
                                                ("--sessions", "events", "more than 64 deep")])
def test_json_lines_nested_100000_deep_are_named_not_a_crash(tmp_path, option, key, cause):
    path = tmp_path / "deep.jsonl"
    path.write_text(deep(key))
    args = ["--truth", str(path)] if option == "--truth" else ["--truth", OTTO_TRUTH, "--sessions", str(path)]
    done = run_process("score", OTTO_SUBMISSION, *args)  # in a child: pyarrow's reader crashed the process (SIGSEGV)
    assert done.returncode == 2 and cause in one_sentence(done.stderr) and "line 1" in done.stderr


def test_a_sessions_file_whose_session_is_no_64_bit_integer_is_named(tmp_path):
    path = tmp_path / "sessions.jsonl"
    path.write_text('{"session": 100000000000000000000000, "events": []}\n')  # pyarrow reads it as a float: cast to garbage
    code, _, err = run_cli("score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--sessions", path)
    assert code == 2 and "must be a 64-bit integer" in one_sentence(err)


def test_a_library_this_installation_leaves_out_is_named_with_what_to_do(tmp_path):
    """The grader image holds numpy and xxhash only: a JSONL truth too large for the line reader needs pyarrow, which
    it lacks. That is a sentence naming the library and the fix (compile the truth first), exit 2, never exit 3."""
    truth = tmp_path / "truth.jsonl"
    truth.write_text("".join(f'{{"session": {s}, "labels": {{"clicks": {s}}}}}\n' for s in range(1, 200_001)))  # over 4 MB
    submission = tmp_path / "sub.csv"
    submission.write_text("session_type,labels\n1_clicks,1\n")
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text(
        "import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pyarrow', 'pandas'):\n            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n")
    env = {**os.environ, "PYTHONPATH": str(blocked), "SCORER_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "scorer", "score", str(submission), "--truth", str(truth), "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "this needs pyarrow, which is not installed here" in done.stderr and "compile-truth" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
