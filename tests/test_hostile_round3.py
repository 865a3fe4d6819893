"""Round 3 of the hostile trials (issue 25): wrong scores, exit 3s and hangs, leaks and messages.

Each test reproduces one finding; the contract is exit 0, 1 or 2 with a clear cause, never 3, nothing of the
host revealed, and the same score however the input is encoded.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import scorer
from scorer.cli.main import main
from scorer.errors import ConfigError
from scorer.spec.competition import competition_from_dict

OTTO_SUBMISSION, OTTO_TRUTH = "fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl"


def string_competition(shape="list", metric="map@3", diagnostics=(), k=3, **submission):
    return competition_from_dict({
        "name": f"test-{shape}", "submission": {"shape": shape, "header": ["id", "items"], **submission},
        "scoring": {"k": k, "metric": metric, "diagnostics": list(diagnostics)}})


def write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


# -- wrong scores ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["list", "long"])
def test_coverage_at_several_k_in_one_run_each_counts_its_own_k(tmp_path, shape):
    truth = write(tmp_path / "truth.csv", ["id,items", "a,x y", "b,z", "c,w"])
    rows = {"a": ["y", "q", "x"], "b": ["w", "z"], "c": ["q"]}
    if shape == "list":
        lines = [f"{key},{' '.join(items)}" for key, items in rows.items()]
    else:
        lines = [f"{key},{item}" for key, items in rows.items() for item in items]
    sub = write(tmp_path / "sub.csv", ["id,items", *lines])
    both = scorer.score(sub, truth, string_competition(shape, metric="map@3", diagnostics=["coverage@3", "coverage@1"]))
    alone = {k: scorer.score(sub, truth, string_competition(shape, metric="map@3", diagnostics=[f"coverage@{k}"]))
             for k in (1, 3)}
    assert both.metrics["all"]["coverage@1"] == alone[1].metrics["all"]["coverage@1"] == pytest.approx(2 / 4)  # y, w
    assert both.metrics["all"]["coverage@3"] == alone[3].metrics["all"]["coverage@3"] == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["00000000000000005.025542", "5.025542", "0.000000000000000000005025542e21",
                                  "+0005.0255420000000000000000000", "5025542000000000000000e-21"])
def test_value_parser_reads_leading_and_trailing_zeros_as_any_float_parser(tmp_path, text):
    truth = write(tmp_path / "truth.csv", ["id,rating", "a,5"])
    sub = write(tmp_path / "sub.csv", ["id,rating", f"a,{text}"])
    result = scorer.score(sub, truth, string_competition("value", metric="rmse", header=["id", "rating"]))
    assert result.score == pytest.approx(abs(float(text) - 5), rel=1e-12)


BIG = 2**53 + 1  # the first integer float64 cannot hold


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_long_truth_with_an_empty_aid_keeps_items_above_2_53_exact(tmp_path, form):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    table = pa.table({"session": [1, 2], "type": ["clicks", "carts"], "aid": pa.array([BIG, None], pa.int64())})  # no pandas metadata
    path = tmp_path / f"truth.{form}"
    pcsv.write_csv(table, path) if form == "csv" else pq.write_table(table, path)
    truth = scorer.load_truth(path, use_cache=False)
    assert truth.labels(1, "clicks") == [BIG] and truth.labels(2, "carts") == []
    sub = write(tmp_path / "sub.csv", ["session_type,labels", f"1_clicks,{BIG - 1}"])
    assert scorer.score(sub, truth).metrics["clicks"]["recall@20"] == 0.0  # BIG - 1 is another item


@pytest.mark.parametrize("aid, session, cause", [("ten", "1", "'ten'"), ("5", "1" * 23, "out of range"), ("5", "", "no session")])
def test_csv_truth_with_a_bad_id_is_a_truth_error(tmp_path, capsys, aid, session, cause):
    truth = write(tmp_path / "truth.csv", ["session,type,aid", "2,clicks,4", f"{session},clicks,{aid}"])
    sub = write(tmp_path / "sub.csv", ["session_type,labels", "1_clicks,5"])
    assert main(["score", str(sub), "--truth", str(truth)]) == 2
    assert cause in capsys.readouterr().err


def test_a_type_given_by_its_index_in_a_csv_truth_is_read_as_that_type(tmp_path):
    by_index = write(tmp_path / "index.csv", ["session,type,aid", "1,0,5", "1,2,7"])
    by_name = write(tmp_path / "name.csv", ["session,type,aid", "1,clicks,5", "1,orders,7"])
    a, b = (scorer.load_truth(path, use_cache=False) for path in (by_index, by_name))
    assert (a.indptr == b.indptr).all() and (a.items == b.items).all()
    with pytest.raises(scorer.errors.TruthError, match="unknown type '3'"):
        scorer.load_truth(write(tmp_path / "bad.csv", ["session,type,aid", "1,3,5"]), use_cache=False)


# -- configs --------------------------------------------------------------------------------------------------
def otto_config(**changes) -> dict:
    data = {"name": "t", "submission": {"header": ["session_type", "labels"], "id_pattern": "{session}_{type}"},
            "scoring": {"types": ["clicks", "carts", "orders"], "weights": [0.1, 0.3, 0.6], "k": 20, "metric": "recall@20"},
            "limits": {}}
    for where, (key, value) in changes.items():
        (data[where] if where != "top" else data)[key] = value
    return data


@pytest.mark.parametrize("where, key, guess", [("scoring", "wieghts", "weights"), ("submission", "shap", "shape"),
                                               ("top", "titel", "title"), ("limits", "max_secnds", "max_seconds")])
def test_an_unknown_config_key_anywhere_is_refused_with_a_guess(where, key, guess):
    data = otto_config(**{where: (key, [1, 1, 1])})
    with pytest.raises(ConfigError, match=f"unknown key '[a-z.]*{key}'; did you mean '{guess}'"):
        competition_from_dict(data)


@pytest.mark.parametrize("pattern, cause", [("{session}_{typ}", "unknown field {typ}; did you mean {type}"),
                                            ("{session}_{type}_{day}", "unknown field {day}"),
                                            ("{session}_{type}}", "a stray brace")])
def test_an_id_pattern_with_an_unknown_field_is_a_config_error(pattern, cause):
    data = otto_config(submission=("id_pattern", pattern))
    if "{type}" not in pattern:
        data["scoring"].update(types=["clicks"], weights=[1])
    with pytest.raises(ConfigError, match=re.escape(cause)):
        competition_from_dict(data)


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI in a child process: a hang fails the test instead of stopping the run."""
    return subprocess.run([sys.executable, "-m", "scorer", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "SCORER_DEBUG": ""})


def test_a_fifo_as_truth_or_config_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (["--truth", str(fifo)], ["--truth", str(fifo), "--competition", "hm"], ["--truth", OTTO_TRUTH, "--config", str(fifo)]):
        done = run_cli("score", OTTO_SUBMISSION, *args)
        assert done.returncode == 2 and "a FIFO (named pipe)" in done.stderr, done.stderr


def test_a_config_that_is_a_device_or_huge_is_refused(tmp_path, capsys):
    assert main(["score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--config", "/dev/zero"]) == 2
    assert "a character device" in capsys.readouterr().err
    huge = tmp_path / "huge.toml"
    huge.write_text("# " + "x" * (2 << 20) + "\n")
    assert main(["score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH, "--config", str(huge)]) == 2
    assert "not a competition config" in capsys.readouterr().err


def test_a_truth_file_without_read_permission_is_a_truth_error(tmp_path):
    truth = tmp_path / "truth.jsonl"
    shutil.copy(OTTO_TRUTH, truth)
    truth.chmod(0)
    args = ["score", OTTO_SUBMISSION, "--truth", str(truth)]
    if os.geteuid() != 0:
        done = run_cli(*args)
    elif shutil.which("capsh"):  # root reads any file: drop the capabilities that let it
        command = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "scorer", *args))
        done = subprocess.run(["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", command],
                              capture_output=True, text=True, timeout=120)
    else:
        pytest.skip("running as root without capsh: cannot make a file unreadable")
    assert done.returncode == 2 and "Permission denied" in done.stderr, done.stderr


# -- Kaggle ---------------------------------------------------------------------------------------------------
def kaggle_frames(sessions, labels):
    import pandas as pd

    ids = [f"{s}_{t}" for s in sessions for t in ("clicks", "carts", "orders")]
    return pd.DataFrame({"session_type": ids, "labels": labels}), pd.DataFrame({"session_type": ids, "labels": labels})


def test_kaggle_solution_repeating_a_row_id_is_the_hosts_error():
    from scorer.adapters.kaggle import HostVisibleError, score

    solution, submission = kaggle_frames([1, 2], ["5", "", "", "", "7", ""])
    solution.loc[1, "session_type"] = "1_clicks"  # 1_clicks twice: its labels were merged into one set
    with pytest.raises(HostVisibleError, match="solution rows 1 and 2 have the same id '1_clicks'"):
        score(solution, submission, "session_type")


def test_kaggle_takes_session_2_63_minus_1_as_the_engine_does():
    from scorer.adapters.kaggle import HostVisibleError, score

    solution, submission = kaggle_frames([3, 2**63 - 1], ["", "", "1", "5", "", ""])
    assert score(solution, submission, "session_type") == pytest.approx(0.7)
    solution, submission = kaggle_frames([3, 2**63], ["", "", "1", "5", "", ""])
    with pytest.raises(HostVisibleError, match="does not have the form"):
        score(solution, submission, "session_type")


def test_kaggle_solution_repeating_a_huge_session_id_is_the_hosts_error():
    from scorer.adapters.kaggle import HostVisibleError, score

    solution, submission = kaggle_frames([2**63 - 1, 4], ["5", "", "", "", "7", ""])
    solution.loc[5, "session_type"] = f"{2**63 - 1}_carts"
    with pytest.raises(HostVisibleError, match=f"solution rows 2 and 6 have the same id '{2**63 - 1}_carts'"):
        score(solution, submission, "session_type")


def test_a_repeated_truth_item_counts_once(tmp_path):
    """docs/semantics.md: a row's truth is a set (Kaggle's apk would divide by len(actual) with the repeat)."""
    repeated = write(tmp_path / "repeated.jsonl", ['{"session": 1, "labels": {"carts": [6, 6, 7]}}'])
    once = write(tmp_path / "once.jsonl", ['{"session": 1, "labels": {"carts": [6, 7]}}'])
    sub = write(tmp_path / "sub.csv", ["session_type,labels", "1_carts,6 7"])
    a, b = (scorer.score(sub, truth) for truth in (repeated, once))
    assert a.metrics["carts"] == b.metrics["carts"] and a.metrics["carts"]["map@20"] == 1.0
    long = write(tmp_path / "long.csv", ["session,type,aid", "1,carts,6", "1,carts,6", "1,carts,7"])
    assert scorer.score(sub, long).metrics["carts"] == b.metrics["carts"]


# -- exit 3 or hang -------------------------------------------------------------------------------------------
def nest(folder, depth: int, file_name: str, body: bytes) -> None:
    """A file `depth` folders below `folder` (made through descriptors: os.makedirs itself recurses per level)."""
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = below
    out = os.open(file_name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, body)
    os.close(out)
    os.close(fd)


def test_an_upload_deeper_than_the_recursion_limit_is_refused_in_codabench_and_score_dir(tmp_path, capsys):
    """1000 folders deep broke os.walk and Path.rglob (RecursionError); 500 under a limit of 450 does the same, and
    leaves a tree that pytest's own clean-up (shutil.rmtree, recursive too) can still remove."""
    nest(tmp_path / "res", 500, "sub.csv", b"session_type,labels\n")
    (tmp_path / "ref").mkdir()
    shutil.copy(OTTO_TRUTH, tmp_path / "ref")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(450)
    try:
        codabench = main(["codabench", str(tmp_path), str(tmp_path / "out")])
        score_dir = main(["score", str(tmp_path / "res"), "--truth", OTTO_TRUTH])
    finally:
        sys.setrecursionlimit(limit)
    assert codabench == 1 and score_dir == 2
    assert capsys.readouterr().err.count("nested more than 64 deep") == 2


def test_an_upload_a_few_folders_deep_is_still_found(tmp_path, capsys):
    nest(tmp_path / "res", 5, "sub.csv", Path(OTTO_SUBMISSION).read_bytes())
    (tmp_path / "ref").mkdir()
    shutil.copy(OTTO_TRUTH, tmp_path / "ref")
    assert main(["codabench", str(tmp_path), str(tmp_path / "out")]) == 0
    assert main(["score", str(tmp_path / "res"), "--truth", OTTO_TRUTH, "--format", "json"]) == 0


def test_an_output_encoding_without_the_dash_escapes_it():
    done = subprocess.run([sys.executable, "-m", "scorer", "validate", "fixtures/bad/S021_separator.csv"], capture_output=True,
                          timeout=120, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert b"bad item separator \\u2014 4 in all" in done.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_output_device_is_a_clear_error():
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "scorer", "score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == "scorer: error: cannot write the output: No space left on device (free space, or write somewhere else)\n"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="needs resource limits (POSIX)")
def test_numba_cache_on_a_full_file_system_warns_and_scores(tmp_path):
    """Every file over 4 KiB fails with EFBIG (as on a full disk: ENOSPC), so numba's first cache files cannot be
    written: the kernels are compiled all the same (this compiles them all, about 10-40 s)."""
    import resource

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "SCORER_CACHE_DIR": str(tmp_path / "cache"),
           "SCORER_AOT": "0", "SCORER_DEBUG": ""}
    done = subprocess.run([sys.executable, "-m", "scorer", "score", OTTO_SUBMISSION, "--truth", OTTO_TRUTH],
                          capture_output=True, text=True, timeout=600, env=env, preexec_fn=small_files)
    assert done.returncode == 0, done.stderr
    assert "score  0.340000" in done.stdout
    assert "numba's cache" in done.stderr and "cannot be written (File too large)" in done.stderr


@pytest.mark.parametrize("labels_as", ["list", "text"])
def test_polars_categorical_and_enum_ids_score_as_strings(labels_as):
    pl = pytest.importorskip("polars")
    rows = [line.split(",") for line in Path(OTTO_SUBMISSION).read_text().splitlines()[1:]]
    ids = [row_id for row_id, _ in rows]
    labels = [[int(item) for item in text.split()] for _, text in rows] if labels_as == "list" else [text for _, text in rows]
    plain = pl.DataFrame({"session_type": ids, "labels": labels})
    expected = scorer.score(plain, OTTO_TRUTH)
    assert expected.score == pytest.approx(0.34)
    for dtype in (pl.Categorical, pl.Enum(sorted(set(ids)))):
        frame = plain.with_columns(pl.col("session_type").cast(dtype))
        if labels_as == "text":
            frame = frame.with_columns(pl.col("labels").cast(pl.Categorical))
        result = scorer.score(frame, OTTO_TRUTH)
        assert result.score == expected.score and result.metrics == expected.metrics and not result.problems


def test_a_polars_truth_with_categorical_or_enum_types_is_read():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"session": [1, 1, 2], "type": ["clicks", "orders", "orders"], "aid": [10, 30, 0]})
    expected = scorer.load_truth(frame)
    for dtype in (pl.Categorical, pl.Enum(["clicks", "carts", "orders"])):
        truth = scorer.load_truth(frame.with_columns(pl.col("type").cast(dtype)))
        assert (truth.indptr == expected.indptr).all() and (truth.items == expected.items).all()


# -- leaks and messages ---------------------------------------------------------------------------------------
def corrupt_zip(path, rows: int = 300_000) -> None:
    """A stored zip of one CSV with a byte flipped in its middle: its CRC fails once the member has been read."""
    import zipfile

    body = b"session_type,labels\n" + b"".join(b"%d_clicks,5\n" % session for session in range(rows))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("sub.csv", body)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


def test_evalai_s027_names_only_the_upload_and_how_far_it_was_read(tmp_path):
    from scorer.adapters.evalai import SubmissionRejected, evaluate

    folder = tmp_path / "grader-private-folder"
    folder.mkdir()
    corrupt_zip(folder / "upload.zip")
    for name, said in (("missing.csv", "cannot open submission missing.csv: No such file or directory"),
                       ("upload.zip", "reading upload.zip failed after ")):
        with pytest.raises(SubmissionRejected) as rejected:
            evaluate(OTTO_TRUTH, str(folder / name), "dev")
        message = str(rejected.value)
        assert said in message and "grader-private-folder" not in message and str(tmp_path) not in message, message
    assert re.search(r"after [1-9][0-9,]* bytes of decompressed content: Bad CRC-32", message), message


def test_codabench_s027_names_only_the_upload(tmp_path):
    from scorer.adapters.codabench import grade

    (tmp_path / "res").mkdir()
    (tmp_path / "ref").mkdir()
    shutil.copy(OTTO_TRUTH, tmp_path / "ref")
    corrupt_zip(tmp_path / "res" / "upload.zip")
    outcome = grade(tmp_path, tmp_path / "out")
    assert outcome.exit_code == 1 and "S027" in outcome.message and "upload.zip" in outcome.message
    assert str(tmp_path) not in outcome.message and "after 0 bytes" not in outcome.message


@pytest.mark.parametrize("encoding, named", [("utf-16", "UTF-16 (little-endian)"), ("utf-16-be", "UTF-16 (big-endian)"),
                                             ("utf-16-le", "UTF-16 (little-endian)"), ("utf-32", "UTF-32 (little-endian)")])
def test_a_utf16_upload_is_named_as_such(tmp_path, encoding, named):
    path = tmp_path / "sub.csv"
    path.write_bytes(Path(OTTO_SUBMISSION).read_text().encode(encoding))
    result = scorer.validate(path, OTTO_TRUTH)
    assert [(p.code, p.line) for p in result.problems] == [("S016", 1)]
    assert result.problems[0].message.startswith(f"the file is {named} text, not UTF-8: save it as UTF-8")


def test_cr_only_line_ends_are_named_and_not_called_crlf(tmp_path):
    path = tmp_path / "sub.csv"
    path.write_bytes(Path(OTTO_SUBMISSION).read_bytes().replace(b"\n", b"\r"))
    result = scorer.validate(path, OTTO_TRUTH)
    assert [p.code for p in result.problems] == ["S027"]
    assert result.problems[0].message.startswith("the lines end with a lone CR")  # S019 said "lines end with CRLF"
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(Path(OTTO_SUBMISSION).read_bytes().replace(b"\n", b"\r\n"))
    assert [p.code for p in scorer.validate(crlf, OTTO_TRUTH).problems] == ["S019"]


@pytest.mark.parametrize("packed", ["tar", "tar.gz", "lz4"])
def test_tar_and_lz4_are_named_as_unsupported(tmp_path, packed):
    import tarfile

    path = tmp_path / f"sub.csv.{packed}"
    if packed == "lz4":  # an LZ4 frame: its magic number and a frame header (the content is never read)
        path.write_bytes(b"\x04\x22\x4d\x18\x64\x40\xa7" + bytes(16))
    else:
        with tarfile.open(path, "w:gz" if packed == "tar.gz" else "w") as archive:
            archive.add(OTTO_SUBMISSION, arcname="sub.csv")
    result = scorer.validate(path, OTTO_TRUTH)
    assert [p.code for p in result.problems] == ["S026"]
    assert ("tar archive" if "tar" in packed else "compressed with lz4") in result.problems[0].message


@pytest.mark.parametrize("body", [b"\x00\x00\x00\x00\x00\r\x00\n", b"session_type,labels\r1_clicks,10\r", "session_type,labels\n".encode("utf-16")])
def test_the_content_checks_give_the_same_problems_whatever_the_block_size(tmp_path, body):
    path = tmp_path / "sub.csv"
    path.write_bytes(body)
    seen = {tuple((p.code, p.line, p.message) for p in scorer.validate(path, OTTO_TRUTH, block_bytes=size).problems)
            for size in (7, 64, 1 << 20)}
    assert len(seen) == 1
