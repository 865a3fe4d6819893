"""Round 6 of the hostile trials: a corpus against the newest surfaces (the impression shape, the table reader and its
seven configs, the Python jobs, output paths, the Ladder's state, verify's records, similar), each case run as a grader or
a notebook would run it, one child process each, and judged by the contract of docs/architecture.md "Security model".

    python tools/hostile_round6.py                 # every case (a few minutes on one core)
    python tools/hostile_round6.py parquet truth   # only the cases whose class or name holds one of these words
    python tools/hostile_round6.py --list          # the cases, by class

A command-line case passes when its child ends within its time with an exit code it allows (0, 1 or 2 unless the case
narrows it), prints no traceback and no "internal error", at most one "scorer: error:" line, quotes no line of the truth
and shows neither the planted environment secret nor a host folder where the case forbids it, and its own after-check
holds (an input unchanged, a state kept, the same figures as another spelling of the same content). A Python case
passes when the call returns, or raises a ScorerError subclass, never another exception. Prints a row per case and a
table per class (tried, broke), and exits 1 when a case broke. Kept apart from the tests; the cases that broke and were
fixed have their regression tests in tests/test_hostile_round6.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
SECRET = "round6-secret-77aa"  # in every child's environment: no output may show it
TRUTH_MARK = "T6MARK"  # in the truths this corpus writes: no output may quote a line holding it
HARD_STOP = 90
OK_CODES = (0, 1, 2)


# -- what a case is ---------------------------------------------------------------------------------------------
@dataclass
class Cli:
    """`python -m scorer ARGV` in `folder`, judged by the contract."""

    argv: list
    codes: tuple = OK_CODES
    seconds: float = 30
    after: object = None  # (folder, stdout, stderr) -> str | None: what is wrong after the run
    quoted: tuple = ()  # files none of whose lines (with TRUTH_MARK, or over 12 characters) may appear in the output
    no_paths: tuple = ()  # folders no output may name (a grader's own folders)
    stdin: bytes | None = None
    max_mb: float = 600  # peak resident memory of the child


@dataclass
class Api:
    """A Python snippet run in a child: it must finish or raise a ScorerError (the child prints which)."""

    code: str
    seconds: float = 60
    expect: object = None  # (printed text) -> str | None: what is wrong with what the snippet printed


@dataclass
class Case:
    cls: str
    name: str
    build: object  # (folder) -> Cli | Api


CASES: list[Case] = []


def case(cls: str, name: str):
    def register(build):
        CASES.append(Case(cls, name, build))
        return build
    return register


def cases(cls: str, table: dict):
    """Register a case per entry of `table` (name -> builder)."""
    for name, build in table.items():
        CASES.append(Case(cls, name, build))


def score(submission, truth, competition, *more, codes=OK_CODES, **kw) -> Cli:
    return Cli(["score", submission, "--truth", truth, "--competition", competition, "--no-progress", *more], codes=codes,
               quoted=(truth,) if TRUTH_MARK in _text(truth) else (), **kw)


def grader(submission, truth, competition, *more, **kw) -> Cli:
    run = score(submission, truth, competition, "--strict", "--untrusted", *more, **kw)
    run.no_paths = (str(Path(submission).parent), str(Path(truth).parent))
    return run


def _text(path) -> str:
    try:
        return Path(path).read_text(errors="replace") if Path(path).is_file() and Path(path).stat().st_size < 1 << 20 else ""
    except OSError:
        return ""


def unchanged(*paths):
    """An after-check: these files hold the bytes they held when the case was built."""
    before = {str(p): Path(p).read_bytes() for p in paths}

    def check(folder, out, err):
        for path, data in before.items():
            if not Path(path).exists() or Path(path).read_bytes() != data:
                return f"{Path(path).name} was changed"
        return None
    return check


def same_score_as(reference_argv):
    """An after-check: the case's JSON score equals that of another run (the same content, another spelling)."""
    def check(folder, out, err):
        other = subprocess.run([sys.executable, "-m", "scorer", *map(str, reference_argv)], capture_output=True, text=True,
                               cwd=ROOT, env=child_env(), timeout=HARD_STOP)
        try:
            mine, theirs = json.loads(out), json.loads(other.stdout)
        except ValueError:
            return f"no JSON to compare (exit codes {other.returncode})"
        if mine.get("metrics") != theirs.get("metrics"):
            return f"figures differ: {mine.get('score')} against {theirs.get('score')}"
        return None
    return check


# -- files ------------------------------------------------------------------------------------------------------
def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def parquet(folder: Path, name: str, table) -> Path:
    import pyarrow.parquet as pq

    path = folder / name
    pq.write_table(table, path)
    return path


def zipped(folder: Path, name: str, member: str, data: bytes, mode: int | None = None) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo(member)
        if mode is not None:
            info.external_attr = mode << 16
            info.create_system = 3
        archive.writestr(info, data)
    return path


def fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


MIND_TRUTH = "1 [0,1,0]\n2 [1,0,0,1]\n3 []\n4 [0,1]\n"
MIND_PRED = "1 [2,1,3]\n2 [1,3,2,4]\n3 [1,2,3]\n4 [1,2]\n"


def mind_truth(folder: Path) -> Path:
    return write(folder, "truth.txt", MIND_TRUTH)


def mind(folder: Path, prediction, truth=None, *more, **kw) -> Cli:
    sub = prediction if isinstance(prediction, Path) else write(folder, "prediction.txt", prediction)
    return grader(sub, truth or mind_truth(folder), "mind", *more, **kw)


def behaviors(folder: Path, table, name="behaviors.parquet") -> Cli:
    codes = (0, 1, 2) if table.num_rows == 0 else (1, 2)
    return score(FIX / "ebnerd" / "predictions.txt", parquet(folder, name, table), "ebnerd", codes=codes)


def kdd(folder: Path, table, name="submission.parquet", **kw) -> Cli:
    return grader(parquet(folder, name, table), FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2", **kw)


def copy_truth(folder: Path, source: Path, name: str | None = None) -> Path:
    target = folder / (name or source.name)
    shutil.copy(source, target)
    return target


# -- 1. Parquet submissions whose schema lies or surprises (kdd23-m2; the table reader) -----------------------------
def _pa():
    import pyarrow as pa
    return pa


def _kdd_tables():
    pa = _pa()
    good = {"locale": ["DE", "JP"], "next_item_prediction": [["B0A"], ["B0B"]]}

    def meta(table, pandas: bytes):
        return table.replace_schema_metadata({b"pandas": pandas})

    base = pa.table(good)
    return {
        "prediction a struct column": pa.table({"locale": ["DE", "JP"], "next_item_prediction": [{"a": 1}, {"a": 2}]}),
        "prediction a list of lists": pa.table({"locale": ["DE", "JP"], "next_item_prediction": [[["a"]], [["b"]]]}),
        "prediction a map column": pa.table({"locale": ["DE", "JP"],
                                             "next_item_prediction": pa.array([[("a", 1)], [("b", 2)]], pa.map_(pa.string(), pa.int64()))}),
        "prediction a list of structs": pa.table({"locale": ["DE", "JP"], "next_item_prediction": [[{"x": 1}], [{"x": 2}]]}),
        "prediction binary, not UTF-8": pa.table({"locale": ["DE", "JP"], "next_item_prediction": pa.array([[b"\xff\xfe"], [b"\xc3"]],
                                                                                                             pa.list_(pa.binary()))}),
        "locale a struct column": pa.table({"locale": [{"a": 1}, {"a": 2}], "next_item_prediction": [["B0A"], ["B0B"]]}),
        "locale a timestamp": pa.table({"locale": pa.array([0, 1], pa.timestamp("s")), "next_item_prediction": [["B0A"], ["B0B"]]}),
        "prediction a fixed-size list": pa.table({"locale": ["DE", "JP"], "next_item_prediction": pa.array([["a"], ["b"]], pa.list_(pa.string(), 1))}),
        "prediction a dictionary list": pa.table({"locale": ["DE", "JP"],
                                                  "next_item_prediction": pa.array([["a"], ["b"]], pa.list_(pa.dictionary(pa.int32(), pa.string())))}),
        "null items in a list": pa.table({"locale": ["DE", "JP"], "next_item_prediction": [[None, "B0A"], None]}),
        "zero rows": pa.table({"locale": pa.array([], pa.string()), "next_item_prediction": pa.array([], pa.list_(pa.string()))}),
        "two columns of one name": pa.Table.from_arrays([pa.array(["DE"]), pa.array(["JP"]), pa.array([["a"]])],
                                                        names=["locale", "locale", "next_item_prediction"]),
        "pandas metadata nested 200,000 deep": meta(base, b"[" * 200_000 + b"]" * 200_000),
        "pandas metadata: RangeIndex start 1e400": meta(base, b'{"index_columns":[{"kind":"range","start":1e400,"step":1}]}'),
        "pandas metadata: RangeIndex start a word": meta(base, b'{"index_columns":[{"kind":"range","start":"x","step":1}]}'),
        "pandas metadata: RangeIndex step 0": meta(base, b'{"index_columns":[{"kind":"range","start":0,"step":0}]}'),
        "pandas metadata: RangeIndex start 2^70": meta(base, b'{"index_columns":[{"kind":"range","start":1180591620717411303424,"step":1}]}'),
        "pandas metadata: not JSON": meta(base, b"\xff\xfe{"),
        "pandas metadata: index column a list column": meta(pa.table({**good, "idx": [["a"], ["b"]]}), b'{"index_columns":["idx"]}'),
        "pandas metadata: index column of floats": meta(pa.table({**good, "idx": [0.5, float("nan")]}), b'{"index_columns":["idx"]}'),
        "pandas metadata: index named as the prediction": meta(base, b'{"index_columns":["next_item_prediction"]}'),
    }


for _name in list(_kdd_tables()):
    cases("parquet submission", {_name: (lambda name: lambda folder: kdd(folder, _kdd_tables()[name]))(_name)})


@case("parquet submission", "a Parquet file cut after its first half")
def _(folder):
    path = parquet(folder, "whole.parquet", _pa().table({"locale": ["DE", "JP"], "next_item_prediction": [["a"], ["b"]]}))
    data = path.read_bytes()
    return grader(write(folder, "submission.parquet", data[: len(data) // 2] + b"PAR1"), FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2")


@case("parquet submission", "one row of 300 MB of text compressed to little")
def _(folder):
    pa = _pa()
    import pyarrow.parquet as pq

    path = folder / "submission.parquet"
    pq.write_table(pa.table({"locale": ["DE"], "next_item_prediction": [["x" * (300 << 20)]]}), path, compression="zstd")
    run = grader(path, FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2", codes=(1,))
    run.seconds = 20
    return run


def _bomb(rows, items, length, name):
    def build(folder):
        import pyarrow.parquet as pq

        path = folder / "submission.parquet"
        pq.write_table(_pa().table({"locale": ["DE"] * rows, "next_item_prediction": [["y" * length] * items] * rows}), path)
        run = grader(path, FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2", codes=(1,))
        run.max_mb = 400
        return run
    return build


cases("parquet submission", {
    "20,000 rows naming one 15 KB value (a dictionary)": _bomb(20_000, 1, 15_000, "a"),
    "200 rows of 1,000 items naming one 8 KB value (a 1 KB file: 1.6 GB of text)": _bomb(200, 1000, 8000, "b"),
    "one row of one 100 MB value": _bomb(1, 1, 100 << 20, "c"),
})


@case("parquet submission", "a Parquet file given to a CSV config (trivago19)")
def _(folder):
    return grader(copy_truth(folder, FIX / "kdd23-m2" / "submission.parquet"), FIX / "trivago19" / "ground_truth.csv", "trivago19", codes=(1,))


@case("parquet submission", "a Parquet file given to the impression shape (mind)")
def _(folder):
    return mind(folder, copy_truth(folder, FIX / "kdd23-m2" / "submission.parquet"), codes=(1,))


@case("parquet submission", "a Parquet submission as a FIFO")
def _(folder):
    return grader(fifo(folder, "submission.parquet"), FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2", codes=(1,))


# -- 2. EB-NeRD behaviors.parquet truths ---------------------------------------------------------------------------
def _behaviors():
    pa = _pa()
    ok_ids = [1, 2]
    return {
        "inview an integer column": {"impression_id": ok_ids, "article_ids_inview": [5, 6], "article_ids_clicked": [[5], [6]]},
        "clicked an integer column": {"impression_id": ok_ids, "article_ids_inview": [[5, 7], [6, 8]], "article_ids_clicked": [5, 6]},
        "inview text, clicked integers": {"impression_id": ok_ids, "article_ids_inview": [["a", "b"], ["c", "d"]], "article_ids_clicked": [[5], [6]]},
        "inview integers, clicked text": {"impression_id": ok_ids, "article_ids_inview": [[5, 7], [6, 8]], "article_ids_clicked": [["5"], ["6"]]},
        "inview lists of lists": {"impression_id": ok_ids, "article_ids_inview": [[[5], [7]], [[6], [8]]], "article_ids_clicked": [[[5]], [[6]]]},
        "ids past 2^63 (uint64)": {"impression_id": pa.array([2**63 + 5, 2**63 + 6], pa.uint64()), "article_ids_inview": [[1, 2], [3, 4]],
                                   "article_ids_clicked": [[1], [4]]},
        "ids of 19 digits": {"impression_id": [10**18 + 1, 10**18 + 2], "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]]},
        "null ids": {"impression_id": [1, None], "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]]},
        "float ids": {"impression_id": [1.0, 2.5], "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]]},
        "text ids": {"impression_id": ["1", "2"], "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]]},
        "null items inside the lists": {"impression_id": ok_ids, "article_ids_inview": [[1, None], [3, 4]], "article_ids_clicked": [[None], [4]]},
        "no rows (scored against nothing: exit 0)": {"impression_id": pa.array([], pa.int64()), "article_ids_inview": pa.array([], pa.list_(pa.int64())),
                    "article_ids_clicked": pa.array([], pa.list_(pa.int64()))},
        "is_beyond_accuracy a text column": {"impression_id": ok_ids, "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]],
                                             "is_beyond_accuracy": ["false", "no"]},
        "is_beyond_accuracy a list column": {"impression_id": ok_ids, "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]],
                                             "is_beyond_accuracy": [[True], [False]]},
        "one click list of 50,000 items": {"impression_id": ok_ids, "article_ids_inview": [[1, 2], [3, 4]],
                                           "article_ids_clicked": [list(range(50_000)), [4]]},
    }


for _name in list(_behaviors()):
    cases("behaviors.parquet truth", {_name: (lambda name: lambda folder: behaviors(folder, _pa().table(_behaviors()[name])))(_name)})


@case("behaviors.parquet truth", "a behaviors.parquet cut short")
def _(folder):
    pa = _pa()
    path = parquet(folder, "whole.parquet", pa.table(_behaviors()["ids of 19 digits"]))
    data = path.read_bytes()
    write(folder, "behaviors.parquet", data[: len(data) - 40])
    return score(FIX / "ebnerd" / "predictions.txt", folder / "behaviors.parquet", "ebnerd", codes=(2,))


# -- 3. MIND's truth.txt ------------------------------------------------------------------------------------------
def _mind_truths():
    return {
        "an id past 2^63": "9223372036854775808 [0,1]\n",
        "a label 2": "1 [0,2]\n",
        "a list left open": "1 [0,1\n",
        "an empty file": "",
        "only a line end": "\n",
        "CRLF line ends": "1 [0,1]\r\n2 [1,0]\r\n",
        "a byte-order mark": "\ufeff1 [0,1]\n",
        "tabs between the fields": "1\t[0,1]\n",
        "Latin-1 bytes": b"1 [0,1]\n2 [1,0] \xe9\n",
        "UTF-16": "1 [0,1]\n".encode("utf-16"),
        "NUL bytes": b"1 [0,1]\x00\n",
        "a line of 2,000,000 labels": "1 [" + ",".join(["0", "1"] * 1_000_000) + "]\n",
        "spaces inside the list": "1 [0, 1]\n",
        "a label list of JSON floats": "1 [0.0,1.0]\n",
        "an id with a sign": "+1 [0,1]\n",
        "a Windows path": "C:\\truth [0,1]\n",
    }


for _name in list(_mind_truths()):
    cases("MIND truth.txt", {_name: (lambda name: lambda folder: score(write(folder, "prediction.txt", "1 [1,2]\n"),
                                                                        write(folder, "truth.txt", _mind_truths()[name]), "mind"))(_name)})


@case("MIND truth.txt", "a gzip bomb")
def _(folder):
    return score(write(folder, "prediction.txt", "1 [1,2]\n"), write(folder, "truth.txt.gz", gzip.compress(b"\n" * (200 << 20))), "mind",
                 codes=(2,))


@case("MIND truth.txt", "a FIFO")
def _(folder):
    return score(write(folder, "prediction.txt", "1 [1,2]\n"), fifo(folder, "truth.txt"), "mind", codes=(2,))


@case("MIND truth.txt", "a folder")
def _(folder):
    (folder / "truth.txt").mkdir()
    return score(write(folder, "prediction.txt", "1 [1,2]\n"), folder / "truth.txt", "mind", codes=(2,))


# -- 4. MIND's prediction.txt ----------------------------------------------------------------------------------------
def _mind_predictions():
    return {
        "an id past 2^63": "9223372036854775808 [2,1,3]\n",
        "an id of 25 digits": "1000000000000000000000001 [2,1,3]\n",
        "a rank past 2^63": "1 [99999999999999999999999,1,3]\n",
        "a rank of 2^63 - 1": "1 [9223372036854775807,1,3]\n",
        "a rank 0": "1 [0,1,3]\n",
        "a negative rank": "1 [-1,1,3]\n",
        "a fractional rank": "1 [1.5,1,3]\n",
        "a rank in exponent form": "1 [1e3,1,3]\n",
        "a rank NaN": "1 [NaN,1,3]\n",
        "an empty list": "1 []\n",
        "100,000 ranks on a line": "1 [" + ",".join(map(str, range(1, 100_001))) + "]\n",
        "CRLF line ends": MIND_PRED.replace("\n", "\r\n"),
        "a byte-order mark": "\ufeff" + MIND_PRED,
        "Latin-1 bytes": MIND_PRED.encode() + b"5 [1,\xe9]\n",
        "NUL bytes": b"1 [2,1,3]\x00\n",
        "an escape sequence in a line": "1 [2,1,3]\x1b[2J\x1b]0;owned\x07\n",
        "only spaces": "   \n  \n",
        "a header line": "impression_id ranks\n" + MIND_PRED,
        "ranks as a JSON object": '1 {"a": 1}\n',
        "a line of 70,000 bytes": "1 [" + "1," * 35_000 + "1]\n",
    }


for _name in list(_mind_predictions()):
    cases("MIND prediction.txt", {_name: (lambda name: lambda folder: mind(folder, _mind_predictions()[name], codes=(0, 1)))(_name)})


@case("MIND prediction.txt", "a zip whose member is a symbolic link")
def _(folder):
    return mind(folder, zipped(folder, "prediction.zip", "prediction.txt", b"/etc/passwd", stat.S_IFLNK | 0o777), codes=(1,))


@case("MIND prediction.txt", "a zip whose member is a character device")
def _(folder):
    return mind(folder, zipped(folder, "prediction.zip", "prediction.txt", MIND_PRED.encode(), stat.S_IFCHR | 0o666), codes=(1,))


@case("MIND prediction.txt", "a zip of a zip")
def _(folder):
    inner = zipped(folder, "inner.zip", "prediction.txt", MIND_PRED.encode())
    return mind(folder, zipped(folder, "prediction.zip", "inner.zip", inner.read_bytes()), codes=(1,))


@case("MIND prediction.txt", "a zip member named ../../etc/passwd")
def _(folder):
    return mind(folder, zipped(folder, "prediction.zip", "../../x/prediction.txt", MIND_PRED.encode()), codes=(0,))


@case("MIND prediction.txt", "a zip and its content score alike")
def _(folder):
    truth = mind_truth(folder)
    plain = write(folder, "plain.txt", MIND_PRED)
    run = score(zipped(folder, "prediction.zip", "prediction.txt", MIND_PRED.encode()), truth, "mind", "--format", "json", codes=(0,))
    run.after = same_score_as(["score", plain, "--truth", truth, "--competition", "mind", "--format", "json"])
    return run


@case("MIND prediction.txt", "a gzip and its content score alike")
def _(folder):
    truth = mind_truth(folder)
    plain = write(folder, "plain.txt", MIND_PRED)
    run = score(write(folder, "prediction.txt.gz", gzip.compress(MIND_PRED.encode())), truth, "mind", "--format", "json", codes=(0,))
    run.after = same_score_as(["score", plain, "--truth", truth, "--competition", "mind", "--format", "json"])
    return run


@case("MIND prediction.txt", "the truth given as the prediction")
def _(folder):
    truth = write(folder, "truth.txt", "1 [0,1,0]\n2 [1,0,0,1]\n")
    return grader(truth, truth, "mind", codes=(1,))


# -- 5. compiled truths handed to another shape, or crafted ----------------------------------------------------
def _compiled(folder: Path, source: Path, competition: str, name: str) -> Path:
    out = folder / name
    subprocess.run([sys.executable, "-m", "scorer", "compile-truth", str(source), "--competition", competition, "-o", str(out)],
                   capture_output=True, cwd=ROOT, env=child_env(), timeout=HARD_STOP)
    return out


CROSSED = {
    "a MIND .impressions.npz given to otto": (FIX / "mind" / "truth.txt", "mind", "t.impressions.npz", FIX / "otto_submission.csv", "otto"),
    "a MIND .impressions.npz given to trivago19": (FIX / "mind" / "truth.txt", "mind", "t.impressions.npz", FIX / "trivago19" / "submission.csv", "trivago19"),
    "an OTTO .truth.npz given to mind": (FIX / "otto_truth.jsonl", "otto", "t.truth.npz", FIX / "mind" / "prediction.txt", "mind"),
    "a trivago19 .strings.npz given to mind": (FIX / "trivago19" / "ground_truth.csv", "trivago19", "t.strings.npz", FIX / "mind" / "prediction.txt", "mind"),
    "a twitter20 .strings.npz (value shape) given to trivago19": (FIX / "twitter20" / "truth.csv", "twitter20", "t.strings.npz",
                                                                  FIX / "trivago19" / "submission.csv", "trivago19"),
    "a trivago19 .strings.npz given to twitter20": (FIX / "trivago19" / "ground_truth.csv", "trivago19", "t.strings.npz",
                                                    FIX / "twitter20" / "submission.csv", "twitter20"),
    "a dressipi22 .strings.npz given to kdd23-m2": (FIX / "dressipi22" / "test_purchases.csv", "dressipi22", "t.strings.npz",
                                                    FIX / "kdd23-m2" / "submission.parquet", "kdd23-m2"),
    "an expedia13 .strings.npz (grades) given to spotify-mpd": (FIX / "expedia13" / "train.csv", "expedia13", "t.strings.npz",
                                                               FIX / "spotify-mpd" / "submission.csv", "spotify-mpd"),
    "an ebnerd .impressions.npz given to mind": (FIX / "ebnerd" / "behaviors.parquet", "ebnerd", "t.impressions.npz",
                                                 FIX / "mind" / "prediction.txt", "mind"),
}
for _name, (_src, _comp, _out, _sub, _target) in CROSSED.items():
    cases("compiled truth of another shape", {_name: (lambda s, c, o, sub, t: lambda folder: score(sub, _compiled(folder, s, c, o), t,
                                                                                                    codes=(0, 1, 2)))(_src, _comp, _out, _sub, _target)})


def _crafted_impressions(folder: Path, change) -> Path:
    import numpy as np

    meta = {"version": None, "kind": "impressions", "types": ["all"], "source": "x"}
    good = _compiled(folder, FIX / "mind" / "truth.txt", "mind", "good.impressions.npz")
    with np.load(good) as data:
        arrays = {name: data[name] for name in data.files}
    meta.update(json.loads(bytes(arrays["meta"]).decode()))
    change(meta, arrays)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    out = folder / "crafted.impressions.npz"
    np.savez(out, **arrays)
    return out


CRAFTED = {
    "types a number": lambda meta, arrays: meta.update(types=5),
    "types two types": lambda meta, arrays: meta.update(types=["all", "more"]),
    "source a list": lambda meta, arrays: meta.update(source=["a"]),
    "meta a JSON list": lambda meta, arrays: (meta.clear(), None),
    "ids negative": lambda meta, arrays: arrays.update(sessions=-arrays["sessions"]),
    "ids uint64": lambda meta, arrays: arrays.update(sessions=arrays["sessions"].astype("uint64")),
    "indptr int64": lambda meta, arrays: arrays.update(indptr=arrays["indptr"].astype("int64")),
    "items longer than the labels": lambda meta, arrays: arrays.update(items=__import__("numpy").concatenate([arrays["items"], arrays["items"]])),
    "indptr 2-D": lambda meta, arrays: arrays.update(indptr=arrays["indptr"].reshape(1, -1)),
}
for _name, _change in CRAFTED.items():
    cases("compiled truth crafted", {_name: (lambda change: lambda folder: score(FIX / "mind" / "prediction.txt",
                                                                                _crafted_impressions(folder, change), "mind",
                                                                                codes=(0, 2)))(_change)})


# -- 6. the table reader's CSV submissions ----------------------------------------------------------------------
TRIVAGO_HEAD = "user_id,session_id,timestamp,step,platform,item_recommendations\n"
TRIVAGO_ROW = "00RL8Z82B2Z1,aff3928535f48,1541037543,2,DE,"


def bodies(competition: str, table: dict, truth: Path, name: str = "submission.csv") -> None:
    """A case per (name, file body) of `table`: the body graded against the truth as a grader does."""
    for label, body in table.items():
        cases("table reader CSV", {f"{competition}: {label}": (lambda body: lambda folder: grader(write(folder, name, body), truth,
                                                                                                   competition))(body)})


TRIVAGO = {
    "an item of 5,000 digits": TRIVAGO_HEAD + TRIVAGO_ROW + "1" * 5000 + " 5001\n",
    "an item past 2^64": TRIVAGO_HEAD + TRIVAGO_ROW + "18446744073709551617 5001\n",
    "an item with a plus sign": TRIVAGO_HEAD + TRIVAGO_ROW + "+5001\n",
    "an item -0": TRIVAGO_HEAD + TRIVAGO_ROW + "-0 5001\n",
    "an item of full-width digits": TRIVAGO_HEAD + TRIVAGO_ROW + "５００１\n",
    "a key column quoted with the separator inside": TRIVAGO_HEAD + '"00RL8Z82B2Z1,x",aff3928535f48,1541037543,2,DE,5001\n',
    "a header with a byte-order mark": "\ufeff" + TRIVAGO_HEAD + TRIVAGO_ROW + "5001\n",
    "a header naming a column twice": "user_id,user_id,session_id,timestamp,step,item_recommendations\nx,00RL8Z82B2Z1,aff3928535f48,1541037543,2,5001\n",
    "a header of 5,000 columns": ",".join(["user_id", "session_id", "timestamp", "step", "item_recommendations"] + [f"c{i}" for i in range(5000)]) + "\n",
    "a line of separators only": TRIVAGO_HEAD + ",,,,,\n",
    "only the header": TRIVAGO_HEAD,
    "items separated by tabs": TRIVAGO_HEAD + TRIVAGO_ROW + "5002\t5001\n",
    "a header in Cyrillic look-alikes": TRIVAGO_HEAD.replace("user_id", "usеr_id") + TRIVAGO_ROW + "5001\n",
    "an escape sequence in the header": TRIVAGO_HEAD.replace("platform", "\x1b]0;owned\x07") + TRIVAGO_ROW + "5001\n",
    "a key with an escape sequence": TRIVAGO_HEAD + "\x1b[2J,aff3928535f48,1541037543,2,DE,5001\n",
    "a timestamp of 5,000 digits": TRIVAGO_HEAD + "00RL8Z82B2Z1,aff3928535f48," + "9" * 5000 + ",2,DE,5001\n",
    "1,000 items on a row": TRIVAGO_HEAD + TRIVAGO_ROW + " ".join(str(i) for i in range(1, 1001)) + "\n",
    "1,001 items on a row": TRIVAGO_HEAD + TRIVAGO_ROW + " ".join(str(i) for i in range(1, 1002)) + "\n",
}
bodies("trivago19", TRIVAGO, FIX / "trivago19" / "ground_truth.csv")

SPOTIFY_HEAD = "team_info,main,team,a@b.c\n"
SPOTIFY_ROW = "1000, " + ", ".join(f"spotify:track:{i:022d}" for i in range(500)) + "\n"
SPOTIFY = {
    "the metadata line only": SPOTIFY_HEAD,
    "a metadata line with an escape sequence and HTML": "team_info,main,\x1b[31m<script>alert(1)</script>,a@b.c\n" + SPOTIFY_ROW,
    "no metadata line": SPOTIFY_ROW,
    "a metadata line of 70,000 bytes": "team_info," + "x" * 70_000 + "\n" + SPOTIFY_ROW,
    "comment lines only": SPOTIFY_HEAD + "#\n# x\n",
    "a pid of 25 digits": SPOTIFY_HEAD + "1000000000000000000000001, spotify:track:1\n",
    "tracks with quotes": SPOTIFY_HEAD + '1000, "spotify:track:1", "spotify:track:2"\n',
    "CRLF line ends": (SPOTIFY_HEAD + SPOTIFY_ROW).replace("\n", "\r\n"),
}
bodies("spotify-mpd", SPOTIFY, FIX / "spotify-mpd" / "challenge_truth.json")

DRESSIPI_HEAD = "session_id,item_id,rank\n"
DRESSIPI = {
    "a rank that is a word": DRESSIPI_HEAD + "26,4011,abc\n",
    "a negative rank": DRESSIPI_HEAD + "26,4011,-1\n26,19185,1\n",
    "a rank 0": DRESSIPI_HEAD + "26,4011,0\n",
    "a rank past 2^63": DRESSIPI_HEAD + "26,4011,99999999999999999999\n26,19185,1\n",
    "a rank of 2^63 - 1 and one of -2^63": DRESSIPI_HEAD + "26,4011,9223372036854775807\n26,19185,-9223372036854775808\n",
    "a rank NaN": DRESSIPI_HEAD + "26,4011,nan\n",
    "a rank 1.5": DRESSIPI_HEAD + "26,4011,1.5\n26,19185,1\n",
    "a rank 1e3": DRESSIPI_HEAD + "26,4011,1e3\n26,19185,1\n",
    "an empty rank": DRESSIPI_HEAD + "26,4011,\n",
    "101 rows of one session, ranks equal": DRESSIPI_HEAD + "".join(f"26,{i},1\n" for i in range(101)),
    "the header in another order": "rank,item_id,session_id\n1,19185,26\n",
}
bodies("dressipi22", DRESSIPI, FIX / "dressipi22" / "test_purchases.csv")

TWITTER_KEY = "E7D6C5094767223F6F8789A87A1937AB,00000776B07587ECA9717BFC301F2D6E,"
TWITTER = {
    "a prediction NaN": TWITTER_KEY + "nan\n",
    "a prediction inf": TWITTER_KEY + "inf\n",
    "a prediction -inf": TWITTER_KEY + "-inf\n",
    "a prediction 1e999": TWITTER_KEY + "1e999\n",
    "a prediction of 5,000 digits": TWITTER_KEY + "1" * 5000 + "\n",
    "a prediction -0": TWITTER_KEY + "-0\n",
    "a prediction empty": TWITTER_KEY + "\n",
    "a prediction 0x1p-3": TWITTER_KEY + "0x1p-3\n",
    "a prediction with underscores": TWITTER_KEY + "0.1_0\n",
    "a prediction of full-width digits": TWITTER_KEY + "０.５\n",
    "a prediction above 1 and one below 0": TWITTER_KEY + "7\n129F0A3F7D6A2E2E1B35C0D6A1B5F1E2,00000860E80C67D8C46CE57C64DE9444,-3\n",
    "a header line": "tweet_id,engaging_user_id,prediction\n" + TWITTER_KEY + "0.5\n",
}
bodies("twitter20", TWITTER, FIX / "twitter20" / "truth.csv")

YOOCHOOSE = {
    "a line without ';'": "11\n",
    "a line of ';' only": ";\n",
    "a session of 25 digits": "1000000000000000000000001;1\n",
    "an empty item list": "11;\n",
    "items with spaces": "11; 214536502 , 214536506\n",
}
bodies("yoochoose15", YOOCHOOSE, FIX / "yoochoose15" / "yoochoose-solution.dat", "submission.dat")


# -- 7. published truths ([truth]) --------------------------------------------------------------------------------
def _published(folder: Path, name: str, data, submission: Path, competition: str, codes=OK_CODES) -> Cli:
    return score(submission, write(folder, name, data), competition, codes=codes)


PUBLISHED = {
    "playlists nested 100,000 deep": ("truth.json", "[" * 100_000 + "]" * 100_000, "spotify-mpd", (2,)),
    "playlists: a pid true": ("truth.json", '{"playlists": [{"pid": true, "tracks": [{"track_uri": "a"}]}]}', "spotify-mpd", (2,)),
    "playlists: a pid 1e400": ("truth.json", '{"playlists": [{"pid": 1e400, "tracks": [{"track_uri": "a"}]}]}', "spotify-mpd", OK_CODES),
    "playlists: a pid of 5,000 digits": ("truth.json", '{"playlists": [{"pid": ' + "1" * 5000 + ', "tracks": [{"track_uri": "a"}]}]}',
                                         "spotify-mpd", OK_CODES),
    "playlists: tracks an object": ("truth.json", '{"playlists": [{"pid": 1, "tracks": {"track_uri": "a"}}]}', "spotify-mpd", (2,)),
    "playlists: UTF-16": ("truth.json", '{"playlists": []}'.encode("utf-16"), "spotify-mpd", OK_CODES),
    "playlists: empty file": ("truth.json", "", "spotify-mpd", (2,)),
    "playlists: no playlists": ("truth.json", '{"playlists": []}', "spotify-mpd", OK_CODES),
    "trivago: an item of 5,000 digits": ("truth.csv", "user_id,session_id,timestamp,step,action_type,reference\nu,s,1,2,clickout item," + "1" * 5000 + "\n",
                                         "trivago19", OK_CODES),
    "trivago: a timestamp of 5,000 digits": ("truth.csv", "user_id,session_id,timestamp,step,action_type,reference\nu,s," + "1" * 5000 + ",2,clickout item,5\n",
                                             "trivago19", OK_CODES),
    "trivago: an empty file": ("truth.csv", "", "trivago19", (2,)),
    "trivago: a header only": ("truth.csv", "user_id,session_id,timestamp,step,action_type,reference\n", "trivago19", OK_CODES),
    "trivago: a quote left open": ("truth.csv", 'user_id,session_id,timestamp,step,action_type,reference\nu,"s,1,2,clickout item,5\n', "trivago19", OK_CODES),
    "trivago: Latin-1": ("truth.csv", b"user_id,session_id,timestamp,step,action_type,reference\nu\xe9,s,1,2,clickout item,5\n", "trivago19", OK_CODES),
    "trivago: a header of 5,000 columns": ("truth.csv", ",".join(f"c{i}" for i in range(5000)) + "\n", "trivago19", (2,)),
    "twitter: a label NaN": ("truth.csv", "tweet_id,engaging_user_id,label\na,b,nan\n", "twitter20", (2,)),
    "twitter: a label 1e999": ("truth.csv", "tweet_id,engaging_user_id,label\na,b,1e999\n", "twitter20", (2,)),
    "twitter: a label 2": ("truth.csv", "tweet_id,engaging_user_id,label\na,b,2\nc,d,0\n", "twitter20", OK_CODES),
    "twitter: a key twice": ("truth.csv", "tweet_id,engaging_user_id,label\na,b,1\na,b,0\n", "twitter20", (2,)),
    "twitter: every label 0": ("truth.csv", "tweet_id,engaging_user_id,label\n" + "".join(f"t{i},u,0\n" for i in range(5)), "twitter20", OK_CODES),
    "expedia: NULL everywhere": ("train.csv", "srch_id,prop_id,click_bool,booking_bool\nNULL,NULL,NULL,NULL\n", "expedia13", OK_CODES),
    "expedia: click_bool 1.0": ("train.csv", "srch_id,prop_id,click_bool,booking_bool\n1,2,1.0,0\n", "expedia13", OK_CODES),
    "yoochoose: a session twice": ("truth.dat", "11;1\n11;2\n", "yoochoose15", OK_CODES),
    "yoochoose: no ';' at all": ("truth.dat", "11\n12\n", "yoochoose15", OK_CODES),
    "kdd: next_item empty": ("truth.csv", "prev_items,locale,next_item\n['a'],DE,\n", "kdd23-m2", OK_CODES),
}
_SUBMISSION_OF = {"spotify-mpd": FIX / "spotify-mpd" / "submission.csv", "trivago19": FIX / "trivago19" / "submission.csv",
                  "twitter20": FIX / "twitter20" / "submission.csv", "expedia13": FIX / "expedia13" / "submission.csv",
                  "yoochoose15": FIX / "yoochoose15" / "submission.dat", "kdd23-m2": FIX / "kdd23-m2" / "submission.parquet",
                  "dressipi22": FIX / "dressipi22" / "submission.csv", "mind": FIX / "mind" / "prediction.txt"}
for _name, (_file, _data, _comp, _codes) in PUBLISHED.items():
    cases("published truth", {_name: (lambda f, d, c, k: lambda folder: _published(folder, f, d, _SUBMISSION_OF[c], c, k))(_file, _data, _comp, _codes)})


@case("published truth", "trivago: a gzip bomb")
def _(folder):
    return score(FIX / "trivago19" / "submission.csv", write(folder, "truth.csv.gz", gzip.compress(b"a" * (300 << 20))), "trivago19", codes=(2,))


@case("published truth", "spotify: a FIFO")
def _(folder):
    return score(FIX / "spotify-mpd" / "submission.csv", fifo(folder, "truth.json"), "spotify-mpd", codes=(2,))


@case("published truth", "twitter: a Parquet truth with a struct label")
def _(folder):
    pa = _pa()
    path = parquet(folder, "truth.parquet", pa.table({"tweet_id": ["a"], "engaging_user_id": ["b"], "label": [{"x": 1}]}))
    return score(FIX / "twitter20" / "submission.csv", path, "twitter20", codes=(2,))


# -- 8. configs: the new keys at their bounds ---------------------------------------------------------------------
def _config(folder: Path, base: str, edit) -> Path:
    text = (ROOT / "scorer" / "spec" / "configs" / f"{base}.toml").read_text()
    text = edit(text)
    return write(folder, f"{base}-edited.toml", text)


def sub(pattern: str, replacement: str):
    return lambda text: re.sub(pattern, lambda _: replacement, text, count=1, flags=re.M)


def add(section: str, line: str):
    return lambda text: re.sub(rf"^\[{section}\]\n", lambda _: f"[{section}]\n{line}\n", text, count=1, flags=re.M)


CONFIGS = {
    "spotify: list_length = 2^70": ("spotify-mpd", sub(r"^list_length = .*$", "list_length = 1180591620717411303424")),
    "spotify: list_length = -1": ("spotify-mpd", sub(r"^list_length = .*$", "list_length = -1")),
    "trivago: k = 2^70": ("trivago19", sub(r"^k = .*$", "k = 1180591620717411303424")),
    "trivago: k = 1,000,000,000": ("trivago19", sub(r"^k = .*$", "k = 1000000000")),
    "trivago: k = 0": ("trivago19", sub(r"^k = .*$", "k = 0")),
    "trivago: max_line_bytes = 2^70": ("trivago19", sub(r"^max_line_bytes = .*$", "max_line_bytes = 1180591620717411303424")),
    "trivago: max_line_bytes = 0": ("trivago19", sub(r"^max_line_bytes = .*$", "max_line_bytes = 0")),
    "trivago: max_line_bytes = 2^40": ("trivago19", sub(r"^max_line_bytes = .*$", "max_line_bytes = 1099511627776")),
    "trivago: max_seconds = nan": ("trivago19", add("limits", "max_seconds = nan")),
    "trivago: max_seconds = 1e308": ("trivago19", add("limits", "max_seconds = 1e308")),
    "trivago: max_per_code in limits": ("trivago19", add("limits", "max_per_code = 1180591620717411303424")),
    "trivago: field_separator empty": ("trivago19", add("submission", 'field_separator = ""')),
    "trivago: field_separator of two characters": ("trivago19", add("submission", 'field_separator = ";;"')),
    "trivago: field_separator a line end": ("trivago19", add("submission", 'field_separator = "\\n"')),
    "trivago: field_separator é": ("trivago19", add("submission", 'field_separator = "é"')),
    "trivago: field_separator NUL": ("trivago19", add("submission", 'field_separator = "\\u0000"')),
    "trivago: item_separator a digit": ("trivago19", add("submission", 'item_separator = "5"')),
    "trivago: comment the field separator": ("trivago19", add("submission", 'comment = ","')),
    "trivago: comment of two characters": ("trivago19", add("submission", 'comment = "//"')),
    "trivago: a key column not in the header": ("trivago19", sub(r'^key = .*$', 'key = ["user_id", "nothere"]')),
    "trivago: the key empty": ("trivago19", sub(r'^key = .*$', 'key = []')),
    "trivago: the key of 300 columns": ("trivago19", sub(r'^key = .*$', "key = [" + ", ".join(['"user_id"'] * 300) + "]")),
    "trivago: prediction is a key column": ("trivago19", sub(r'^prediction = .*$', 'prediction = "user_id"')),
    "trivago: rank names the prediction": ("trivago19", add("submission", 'rank = "item_recommendations"')),
    "trivago: item_type a number": ("trivago19", sub(r'^item_type = .*$', 'item_type = 5')),
    "trivago: [truth] where a number": ("trivago19", sub(r'^where = .*$', 'where = { action_type = 5 }')),
    "trivago: [truth] where a table in a table": ("trivago19", sub(r'^where = .*$', 'where = { action_type = { a = 1 } }')),
    "trivago: [rules] missing bogus": ("trivago19", sub(r'^missing = .*$', 'missing = "bogus"')),
    "trivago: [rules] repeated_key a list": ("trivago19", sub(r'^repeated_key = .*$', 'repeated_key = ["all"]')),
    "expedia13: grade weight nan": ("expedia13", sub(r'^grade = .*$', 'grade = { booking_bool = nan, click_bool = 1 }')),
    "expedia13: grade weight inf": ("expedia13", sub(r'^grade = .*$', 'grade = { booking_bool = inf, click_bool = 1 }')),
    "expedia13: grade weight -5": ("expedia13", sub(r'^grade = .*$', 'grade = { booking_bool = -5, click_bool = 1 }')),
    "expedia13: grade weight 2^70": ("expedia13", sub(r'^grade = .*$', 'grade = { booking_bool = 1180591620717411303424, click_bool = 1 }')),
    "expedia13: grade weight a word": ("expedia13", sub(r'^grade = .*$', 'grade = { booking_bool = "five", click_bool = 1 }')),
    "mind: [rules] ties bogus": ("mind", sub(r'^ties = .*$', 'ties = "bogus"')),
    "mind: [rules] repeated_key on the impression shape": ("mind", add("rules", 'repeated_key = "all"')),
    "mind: k = 2^70": ("mind", sub(r"^k = .*$", "k = 1180591620717411303424")),
    "mind: max_line_bytes = 2^62": ("mind", sub(r"^max_line_bytes = .*$", "max_line_bytes = 4611686018427387904")),
    "spotify: metadata a number": ("spotify-mpd", sub(r'^metadata = .*$', 'metadata = 5')),
    "spotify: first_line bogus": ("spotify-mpd", sub(r'^first_line = .*$', 'first_line = "bogus"')),
    "twitter20: header of one column": ("twitter20", sub(r'^header = .*$', 'header = ["prediction"]')),
    "yoochoose15: [truth] columns empty": ("yoochoose15", sub(r'^columns = .*$', 'columns = []')),
}
for _name, (_base, _edit) in CONFIGS.items():
    def _build(folder, base=_base, edit=_edit):
        config = _config(folder, base, edit)
        truth = {"spotify-mpd": FIX / "spotify-mpd" / "challenge_truth.json", "trivago19": FIX / "trivago19" / "ground_truth.csv",
                 "expedia13": FIX / "expedia13" / "train.csv", "mind": FIX / "mind" / "truth.txt", "twitter20": FIX / "twitter20" / "truth.csv",
                 "yoochoose15": FIX / "yoochoose15" / "yoochoose-solution.dat"}[base]
        return Cli(["score", _SUBMISSION_OF.get(base, FIX / "twitter20" / "submission.csv"), "--truth", truth, "--config", config,
                    "--no-progress"], codes=OK_CODES, seconds=30)
    cases("config keys at their bounds", {_name: _build})


# -- 9. the Python API: frames in --------------------------------------------------------------------------------
API_PRELUDE = """
import math, sys, json
import numpy as np, pandas as pd, pyarrow as pa, polars as pl
import scorer
from scorer.errors import ScorerError
FIX = {fix!r}
def run(call):
    try:
        value = call()
    except ScorerError as error:
        print("SCORER_ERROR", type(error).__name__, str(error).splitlines()[0][:300])
        return None
    except BaseException as error:
        print("BARE", type(error).__name__, str(error).splitlines()[0][:300] if str(error) else "")
        return None
    print("OK", repr(value)[:200].replace(chr(10), " "))
    return value
"""


def api(code: str, expect=None, seconds: float = 60) -> object:
    return lambda folder: Api(API_PRELUDE.format(fix=str(FIX)) + textwrap.dedent(code).replace("{folder}", str(folder)), seconds, expect)


def printed(check):
    return check


FRAMES = {
    "twitter20: a frame with NaN predictions": """
        f = pd.DataFrame({"tweet_id": ["E7D6C5094767223F6F8789A87A1937AB"], "engaging_user_id": ["00000776B07587ECA9717BFC301F2D6E"],
                          "prediction": [float("nan")]})
        run(lambda: scorer.score(f, FIX + "/twitter20/truth.csv", "twitter20").score)""",
    "twitter20: a frame with inf predictions": """
        f = pd.DataFrame({"tweet_id": ["E7D6C5094767223F6F8789A87A1937AB"], "engaging_user_id": ["00000776B07587ECA9717BFC301F2D6E"],
                          "prediction": [float("inf")]})
        run(lambda: scorer.score(f, FIX + "/twitter20/truth.csv", "twitter20").score)""",
    "twitter20: a frame and its file score alike, NaN included": """
        import tempfile, os
        rows = pd.read_csv(FIX + "/twitter20/submission.csv", header=None, names=["tweet_id", "engaging_user_id", "prediction"])
        rows.loc[0, "prediction"] = float("nan")
        path = "{folder}/s.csv"; rows.to_csv(path, header=False, index=False)
        a = run(lambda: scorer.score(rows, FIX + "/twitter20/truth.csv", "twitter20"))
        b = run(lambda: scorer.score(path, FIX + "/twitter20/truth.csv", "twitter20"))
        print("SAME" if (a is None) == (b is None) and (a is None or a.metrics == b.metrics or str(a.metrics) == str(b.metrics)) else "DIFFER", a and a.metrics, b and b.metrics)""",
    "mind: a frame of scores with NaN": """
        f = pl.DataFrame({"impression_id": [1, 2, 4], "scores": [[0.1, float("nan"), 0.3], [1.0, 2.0, 3.0, 4.0], [0.5, 0.2]]})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame of scores with inf": """
        f = pl.DataFrame({"impression_id": [1, 2, 4], "scores": [[0.1, float("inf"), -float("inf")], [1.0, 2.0, 3.0, 4.0], [0.5, 0.2]]})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame with uint64 ids past 2^63": """
        f = pa.table({"impression_id": pa.array([2**63 + 1, 2**64 - 1], pa.uint64()), "ranks": [[1, 2, 3], [1, 2, 3, 4]]})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame with rank lists of nulls": """
        f = pa.table({"impression_id": [1, 2], "ranks": pa.array([[None, 1, 2], None], pa.list_(pa.int64()))})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame and its file score alike with a rank past 2^53": """
        path = "{folder}/p.txt"; open(path, "w").write("1 [9007199254740993,1,3]\\n2 [1,2,3,4]\\n")
        f = pa.table({"impression_id": [1, 2], "ranks": [[9007199254740993, 1, 3], [1, 2, 3, 4]]})
        a = run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind"))
        b = run(lambda: scorer.score(path, FIX + "/mind/truth.txt", "mind"))
        print("SAME" if a and b and a.metrics == b.metrics else "DIFFER", a and a.metrics, b and b.metrics)""",
    "mind: a frame with ranks as strings": """
        f = pa.table({"impression_id": [1, 2], "ranks": [["1", "2", "3"], ["1", "2", "3", "4"]]})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame with ranks as a struct": """
        f = pa.table({"impression_id": [1, 2], "ranks": [{"a": 1}, {"a": 2}]})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame with rank 2^63 - 1 and -2^63": """
        f = pa.table({"impression_id": [1, 2], "ranks": [[2**63 - 1, 1, 2], [-2**63, 1, 2, 3]]})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame of uint64 ranks past 2^63": """
        f = pa.table({"impression_id": [1, 2], "ranks": pa.array([[2**64 - 1, 1, 2], [1, 2, 3, 4]], pa.list_(pa.uint64()))})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: an empty frame": """
        f = pa.table({"impression_id": pa.array([], pa.int64()), "ranks": pa.array([], pa.list_(pa.int64()))})
        run(lambda: scorer.score(f, FIX + "/mind/truth.txt", "mind").score)""",
    "mind: a frame of no columns": """
        run(lambda: scorer.score(pd.DataFrame(), FIX + "/mind/truth.txt", "mind").score)""",
    "otto: a pandas frame of uint64 sessions past 2^63": """
        f = pd.DataFrame({"session_type": ["18446744073709551615_clicks"], "labels": ["1 2 3"]})
        run(lambda: scorer.score(f, FIX + "/otto_truth.jsonl").score)
        f = pd.DataFrame({"session": np.array([2**64 - 1], np.uint64), "type": ["clicks"], "labels": ["1 2"]})
        run(lambda: scorer.score(f, FIX + "/otto_truth.jsonl").score)""",
    "otto: integer column names": """
        run(lambda: scorer.score(pd.DataFrame({0: ["1_clicks"], 1: ["1 2"]}), FIX + "/otto_truth.jsonl").score)""",
    "otto: MultiIndex columns": """
        f = pd.DataFrame([["1_clicks", "1 2"]], columns=pd.MultiIndex.from_tuples([("session_type", "a"), ("labels", "b")]))
        run(lambda: scorer.score(f, FIX + "/otto_truth.jsonl").score)""",
    "otto: an object column of ints and text": """
        run(lambda: scorer.score(pd.DataFrame({"session_type": ["1_clicks", 5], "labels": ["1 2", 3]}), FIX + "/otto_truth.jsonl").score)""",
    "otto: a polars Object column": """
        f = pl.DataFrame({"session_type": pl.Series(["1_clicks"], dtype=pl.Object), "labels": ["1 2"]})
        run(lambda: scorer.score(f, FIX + "/otto_truth.jsonl").score)""",
    "otto: a RecordBatchReader that raises midway": """
        schema = pa.schema([("session_type", pa.string()), ("labels", pa.string())])
        def batches():
            yield pa.record_batch([pa.array(["1_clicks"]), pa.array(["1 2"])], schema=schema)
            raise ValueError("the source broke")
        run(lambda: scorer.score(pa.RecordBatchReader.from_batches(schema, batches()), FIX + "/otto_truth.jsonl").score)""",
    "otto: a RecordBatchReader whose batch lies about its schema": """
        schema = pa.schema([("session_type", pa.string()), ("labels", pa.string())])
        other = pa.schema([("session_type", pa.int64()), ("labels", pa.string())])
        def batches():
            yield pa.record_batch([pa.array([1]), pa.array(["1 2"])], schema=other)
        run(lambda: scorer.score(pa.RecordBatchReader.from_batches(schema, batches()), FIX + "/otto_truth.jsonl").score)""",
    "otto: a LazyFrame whose schema lies": """
        path = "{folder}/s.csv"; open(path, "w").write("session_type,labels\\n1_clicks,1 2\\nx_clicks,3\\n")
        lf = pl.scan_csv(path, schema={"session_type": pl.Int64, "labels": pl.Utf8})
        run(lambda: scorer.score(lf, FIX + "/otto_truth.jsonl").score)""",
    "otto: a LazyFrame whose query divides by zero in a cast": """
        lf = pl.LazyFrame({"session_type": ["1_clicks"], "labels": ["1 2"]}).with_columns(pl.col("labels").str.to_integer().alias("x"))
        run(lambda: scorer.score(lf, FIX + "/otto_truth.jsonl").score)""",
    "otto: a pyarrow ChunkedArray": """
        run(lambda: scorer.score(pa.chunked_array([["1_clicks"]]), FIX + "/otto_truth.jsonl").score)""",
    "otto: a numpy array": """
        run(lambda: scorer.score(np.array([["1_clicks", "1 2"]]), FIX + "/otto_truth.jsonl").score)""",
    "kdd23-m2: a frame and its Parquet file score alike": """
        import pyarrow.parquet as pq
        t = pq.read_table(FIX + "/kdd23-m2/submission.parquet")
        a = run(lambda: scorer.score(t, FIX + "/kdd23-m2/sessions_test_task1.csv", "kdd23-m2"))
        b = run(lambda: scorer.score(FIX + "/kdd23-m2/submission.parquet", FIX + "/kdd23-m2/sessions_test_task1.csv", "kdd23-m2"))
        c = run(lambda: scorer.score(t.to_pandas(), FIX + "/kdd23-m2/sessions_test_task1.csv", "kdd23-m2"))
        print("SAME" if a and b and c and a.metrics == b.metrics == c.metrics else "DIFFER", a and a.metrics, b and b.metrics, c and c.metrics)""",
    "kdd23-m2: a frame with a struct prediction": """
        f = pa.table({"locale": ["DE"], "next_item_prediction": [{"a": 1}]})
        run(lambda: scorer.score(f, FIX + "/kdd23-m2/sessions_test_task1.csv", "kdd23-m2").score)""",
    "kdd23-m2: frames of bytes not UTF-8, Categorical, Enum and lists of Categorical": """
        K = FIX + "/kdd23-m2/sessions_test_task1.csv"
        run(lambda: scorer.score(pa.table({"locale": ["DE"], "next_item_prediction": pa.array([[b"\\xff"]], pa.list_(pa.binary()))}), K, "kdd23-m2").score)
        run(lambda: scorer.score(pl.DataFrame({"locale": pl.Series(["DE"], dtype=pl.Categorical), "next_item_prediction": [["a"]]}), K, "kdd23-m2").score)
        run(lambda: scorer.score(pl.DataFrame({"locale": pl.Series(["DE"], dtype=pl.Enum(["DE", "JP"])), "next_item_prediction": [["a"]]}), K, "kdd23-m2").score)
        run(lambda: scorer.score(pl.DataFrame({"locale": ["DE"], "next_item_prediction": pl.Series([["a", None]], dtype=pl.List(pl.Categorical))}), K, "kdd23-m2").score)""",
    "dressipi22: a pandas frame with two columns of one name": """
        f = pd.DataFrame([[26, 4011, 1, 2]], columns=["session_id", "item_id", "rank", "rank"])
        run(lambda: scorer.score(f, FIX + "/dressipi22/test_purchases.csv", "dressipi22").score)""",
    "dressipi22: a frame with a float rank column": """
        f = pd.DataFrame({"session_id": [26, 26], "item_id": [4011, 19185], "rank": [1.5, float("nan")]})
        run(lambda: scorer.score(f, FIX + "/dressipi22/test_purchases.csv", "dressipi22").score)""",
    "dressipi22: a frame with ranks past 2^63 (uint64)": """
        f = pd.DataFrame({"session_id": [26, 26], "item_id": [4011, 19185], "rank": np.array([2**64 - 1, 1], np.uint64)})
        run(lambda: scorer.score(f, FIX + "/dressipi22/test_purchases.csv", "dressipi22").score)""",
    "trivago19: a frame and its file score alike": """
        f = pd.read_csv(FIX + "/trivago19/submission.csv", dtype=str)
        a = run(lambda: scorer.score(f, FIX + "/trivago19/ground_truth.csv", "trivago19"))
        b = run(lambda: scorer.score(FIX + "/trivago19/submission.csv", FIX + "/trivago19/ground_truth.csv", "trivago19"))
        print("SAME" if a and b and a.metrics == b.metrics else "DIFFER", a and a.metrics, b and b.metrics)""",
    "trivago19: a frame with integer columns, not text": """
        f = pd.DataFrame({"user_id": [1], "session_id": [2], "timestamp": [3], "step": [4], "item_recommendations": [5001]})
        run(lambda: scorer.score(f, FIX + "/trivago19/ground_truth.csv", "trivago19").score)""",
    "spotify-mpd: a frame (no metadata line)": """
        f = pd.DataFrame({"pid": [1000], "tracks": [", ".join("spotify:track:%d" % i for i in range(500))]})
        r = run(lambda: scorer.score(f, FIX + "/spotify-mpd/challenge_truth.json", "spotify-mpd"))
        r and run(lambda: r._repr_html_())""",
    "per_session on each new config sums to the score": """
        import math
        for comp, sub, truth in [("trivago19", "trivago19/submission.csv", "trivago19/ground_truth.csv"),
                                 ("spotify-mpd", "spotify-mpd/submission.csv", "spotify-mpd/challenge_truth.json"),
                                 ("kdd23-m2", "kdd23-m2/submission.parquet", "kdd23-m2/sessions_test_task1.csv"),
                                 ("dressipi22", "dressipi22/submission.csv", "dressipi22/test_purchases.csv"),
                                 ("twitter20", "twitter20/submission.csv", "twitter20/truth.csv"),
                                 ("yoochoose15", "yoochoose15/submission.dat", "yoochoose15/yoochoose-solution.dat"),
                                 ("expedia13", "expedia13/submission.csv", "expedia13/train.csv"),
                                 ("mind", "mind/prediction.txt", "mind/truth.txt")]:
            r = run(lambda: scorer.score(FIX + "/" + sub, FIX + "/" + truth, comp, per_session=True))
            if r is not None:
                run(lambda: (r.sessions.num_rows, r.to_pandas().shape, r.to_polars().shape, len(r._repr_html_())))""",
}
cases("Python API: frames", {name: api(code) for name, code in FRAMES.items()})

OPTIONS = {
    "score: threads 0, -1, 2^40, '2', 1.5": """
        for t in (0, -1, 2**40, "2", 1.5, None):
            run(lambda: scorer.score(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", "mind", threads=t).score)""",
    "score: max_per_code -1, 2^70, 'x'": """
        for m in (-1, 2**70, "x", None):
            run(lambda: scorer.score(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", "mind", max_per_code=m).score)""",
    "score: block_bytes 0, -5, 2^70, 'x'": """
        for b in (0, -5, 2**70, "x", 1.5):
            run(lambda: scorer.score(FIX + "/trivago19/submission.csv", FIX + "/trivago19/ground_truth.csv", "trivago19", block_bytes=b).score)""",
    "score: competition a number, a path, None": """
        for c in (5, None, FIX + "/mind/truth.txt", "../../etc/passwd", ""):
            run(lambda: scorer.score(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", c).score)""",
    "score: config a number, a folder, a FIFO": """
        import os
        os.mkfifo("{folder}/c.toml")
        for c in (5, FIX, "{folder}/c.toml"):
            run(lambda: scorer.score(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", config=c).score)""",
    "score: per_session and untrusted not booleans": """
        run(lambda: scorer.score(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", "mind", per_session="yes").score)
        run(lambda: scorer.score(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", "mind", untrusted="no").score)""",
    "score: a truth given as a dict, bytes, a frame of the wrong shape": """
        for t in ({"a": 1}, b"1 [0,1]", pd.DataFrame({"x": [1]})):
            run(lambda: scorer.score(FIX + "/mind/prediction.txt", t, "mind").score)""",
    "compare: bootstrap 2^40, level nan, seed -1, seed 2^64": """
        a, b, t = FIX + "/mind/prediction.txt", FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt"
        for kw in ({"bootstrap": 2**40}, {"level": float("nan")}, {"seed": -1}, {"seed": 2**64}, {"bootstrap": True}, {"split": "public=2"},
                   {"split": "public=nan"}, {"metrics": "ndcg@99999999999999999999"}, {"metrics": "clicks@5"}):
            run(lambda: scorer.compare(a, b, t, competition="mind", **kw).to_dict()["verdict"] if False else scorer.compare(a, b, t, competition="mind", **kw))""",
    "leaderboard: top -1, method 'x', mde 2^70, engine 'x', workers 0": """
        subs, t = [FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt"], FIX + "/mind/truth.txt"
        for kw in ({"top": -1}, {"method": "x"}, {"mde": 2**70}, {"mde": -1}, {"engine": "x"}, {"workers": 0}, {"bootstrap": 2**40},
                   {"threads": 0}, {"level": 1.0}, {"seed": 2**63}):
            run(lambda: scorer.leaderboard(subs, t, competition="mind", bootstrap=kw.pop("bootstrap", 10), **kw))""",
    "explain: against bogus, show -1, show 2^70": """
        for kw in ({"against": "bogus"}, {"against": "ties=bogus"}, {"against": "missing=" + "x" * 100000}, {"show": -1}, {"show": 2**70},
                   {"all": "x"}, {"against": "=,=,="}, {"against": 5}):
            run(lambda: scorer.explain(FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", competition="mind", **kw))
        for kw in ({"against": "repeated_key=bogus"}, {"against": "repeated_key=first,repeated_key=last"}, {"against": "truth=multiset"}):
            run(lambda: scorer.explain(FIX + "/trivago19/submission.csv", FIX + "/trivago19/ground_truth.csv", competition="trivago19", **kw))""",
    "similar: k 0, sample 2^40, z nan, top -1": """
        subs = [FIX + "/trivago19/submission.csv", FIX + "/trivago19/ground_truth.csv"]
        for kw in ({"k": 0}, {"sample": 2**40}, {"z": float("nan")}, {"top": -1}, {"threads": 2**40}, {"k": 2**70}):
            run(lambda: scorer.similar(subs, competition="trivago19", **kw))""",
    "ladder: a state path that is a folder, a FIFO": """
        import os
        os.mkfifo("{folder}/state")
        for s in (FIX, "{folder}/state", "{folder}/missing/state"):
            run(lambda: scorer.ladder({"a": FIX + "/otto_submission.csv"}, truth=FIX + "/otto_truth.jsonl", split="public=0.5", state=s))""",
    "candidates: k (0,), (2^70,), '20', ()": """
        for k in ((0,), (2**70,), "20", (), (20, 20), (1.5,)):
            run(lambda: scorer.candidates(FIX + "/otto_submission.csv", FIX + "/otto_truth.jsonl", k=k))""",
    "validate, load_truth, compare, ladder, similar: arguments of the wrong type": """
        run(lambda: scorer.validate(FIX + "/mind/prediction.txt", competition=5))
        run(lambda: scorer.validate(FIX + "/mind/prediction.txt", competition="mind", strict="x"))
        run(lambda: scorer.load_truth({"a": 1}))
        run(lambda: scorer.load_truth(FIX + "/mind/truth.txt", competition=["mind"]))
        run(lambda: scorer.compare(FIX + "/mind/prediction.txt", FIX + "/mind/prediction.txt", 5, competition="mind", bootstrap=10))
        run(lambda: scorer.ladder(5, truth=FIX + "/otto_truth.jsonl", split="public=0.5"))
        run(lambda: scorer.similar([FIX + "/otto_submission.csv", FIX + "/otto_submission.csv"], teams=5))
        run(lambda: scorer.leaderboard(5, FIX + "/otto_truth.jsonl", bootstrap=10))
        run(lambda: scorer.explain(5, FIX + "/otto_truth.jsonl"))
        run(lambda: scorer.candidates(FIX + "/otto_submission.csv", 5))""",
    "score: a path of undecodable bytes and one with a NUL": """
        import os, shutil
        bad = "{folder}/" + os.fsdecode(b"s\\xff.txt"); shutil.copy(FIX + "/mind/prediction.txt", bad)
        run(lambda: scorer.score(bad, FIX + "/mind/truth.txt", "mind").score)
        run(lambda: scorer.score("{folder}/a\\x00b", FIX + "/mind/truth.txt", "mind").score)
        run(lambda: scorer.score(FIX + "/mind/prediction.txt", "{folder}/t\\x00", "mind").score)""",
}
cases("Python API: options", {name: api(code) for name, code in OPTIONS.items()})


# -- 10. text others chose, drawn in HTML and text ------------------------------------------------------------------
HOSTILE_NAME = "<img src=x onerror=alert(1)>\x1b]0;x\x07\u202e"


def _no_raw():
    """A check of what a snippet SHOWed: no raw tag in its HTML, no control or bidirectional character in either."""
    def check(out: str):
        for line in out.splitlines():
            if line.startswith("SHOWN "):
                html, text = json.loads(line[6:])
                if "<img src=x" in html:
                    return "a name others chose reached the HTML as a tag"
                if any(c in html + text for c in "\x1b\x07\u202e"):
                    return "a name others chose was shown with a control or bidirectional character"
        return None
    return check


INJECTION = {
    "leaderboard: names with HTML and escapes, in _repr_html_ and to_text": f"""
        name = {HOSTILE_NAME!r}
        b = run(lambda: scorer.leaderboard({{name: FIX + "/mind/prediction.txt", "b": FIX + "/mind/truth.txt"}}, FIX + "/mind/truth.txt",
                                           competition="mind", bootstrap=10))
        if b is not None:
            print("SHOWN", json.dumps([b._repr_html_(), b.to_text()]))""",
    "compare: frames named by dict keys with HTML": f"""
        name = {HOSTILE_NAME!r}
        c = run(lambda: scorer.compare(FIX + "/mind/prediction.txt", FIX + "/mind/prediction.txt", FIX + "/mind/truth.txt", competition="mind", bootstrap=10))
        if c is not None:
            print("SHOWN", json.dumps([c._repr_html_(), c.to_text()]))""",
    "similar: teams with HTML names": f"""
        name = {HOSTILE_NAME!r}
        subs = [FIX + "/trivago19/submission.csv", "{{folder}}/b.csv"]
        open(subs[1], "w").write(open(subs[0]).read())
        s = run(lambda: scorer.similar(subs, competition="trivago19", teams={{subs[0]: name, subs[1]: name + "2"}}))
        if s is not None:
            print("SHOWN", json.dumps([s._repr_html_(), s.to_text()]))""",
    "score: spotify's metadata line in HTML and text": f"""
        path = "{{folder}}/s.csv"
        open(path, "w").write("team_info,main," + {HOSTILE_NAME!r} + ",a@b.c\\n" + open(FIX + "/spotify-mpd/submission.csv").read().split("\\n", 1)[1])
        r = run(lambda: scorer.score(path, FIX + "/spotify-mpd/challenge_truth.json", "spotify-mpd"))
        if r is not None:
            print("SHOWN", json.dumps([r._repr_html_(), r.to_text()]))""",
    "explain: a table config's problems with HTML in the row": f"""
        path = "{{folder}}/s.csv"
        open(path, "w").write("user_id,session_id,timestamp,step,item_recommendations\\n" + {HOSTILE_NAME!r} + ",s,1,2,5 6\\n")
        e = run(lambda: scorer.explain(path, FIX + "/trivago19/ground_truth.csv", competition="trivago19"))
        if e is not None:
            print("SHOWN", json.dumps([e._repr_html_(), e.to_text()]))""",
}
cases("text others chose", {name: api(code, expect=_no_raw()) for name, code in INJECTION.items()})


@case("text others chose", "score --format text: spotify's metadata line with an escape sequence")
def _(folder):
    body = "team_info,main,\x1b]0;owned\x07\x1b[2J,a@b.c\n" + SPOTIFY_ROW
    run = grader(write(folder, "submission.csv", body), FIX / "spotify-mpd" / "challenge_truth.json", "spotify-mpd")
    run.after = lambda folder, out, err: "an escape sequence was printed raw" if "\x1b" in out + err else None
    return run


@case("text others chose", "score --report: a file name of undecodable bytes")
def _(folder):
    name = os.fsdecode(b"sub\xff\xfe.csv")
    path = folder / name
    shutil.copy(FIX / "otto_submission.csv", path)
    return Cli(["score", path, "--truth", FIX / "otto_truth.jsonl", "--report", folder / "r.html", "--format", "json", "--no-progress"],
               codes=(0,))


def _undecodable_report(command):
    def build(folder):
        a = folder / os.fsdecode(b"a\xff.csv")
        shutil.copy(FIX / "otto_submission.csv", a)
        b = write(folder, "b.csv", (FIX / "otto_submission.csv").read_text().replace(" ", " 7 ", 3))
        out = folder / os.fsdecode(b"r\xfe.html")
        argv = {"compare": ["compare", a, b, "--truth", FIX / "otto_truth.jsonl", "--bootstrap", "10", "--report", out],
                "leaderboard": ["leaderboard", a, b, "--truth", FIX / "otto_truth.jsonl", "--bootstrap", "10", "--report", out],
                "similar": ["similar", a, b, "--report", out],
                "score json": ["score", a, "--truth", FIX / "otto_truth.jsonl", "--format", "json"],
                "validate json": ["validate", a, "--format", "json"],
                "compile-truth -o": ["compile-truth", FIX / "mind" / "truth.txt", "--competition", "mind", "-o",
                                     folder / os.fsdecode(b"t\xff.impressions.npz")]}[command]
        return Cli(argv, codes=(0,))
    return build


cases("text others chose", {f"{name}: names of undecodable bytes": _undecodable_report(name)
                            for name in ("compare", "leaderboard", "similar", "score json", "validate json", "compile-truth -o")})


@case("text others chose", "grade -o: a file name of undecodable bytes")
def _(folder):
    path = folder / os.fsdecode(b"sub\xff.csv")
    shutil.copy(FIX / "otto_submission.csv", path)
    return Cli(["grade", path, "--truth", FIX / "otto_truth.jsonl", "-o", folder / "results.jsonl", "--workers", "1"], codes=(0, 1, 2),
               seconds=60)


# -- 11. outputs that would overwrite an input ---------------------------------------------------------------------
@case("output over an input", "compile-truth truth.txt -o the same file through a hard link")
def _(folder):
    truth = mind_truth(folder)
    os.link(truth, folder / "t.impressions.npz")
    return Cli(["compile-truth", truth, "--competition", "mind", "-o", folder / "t.impressions.npz"], codes=(2,), after=unchanged(truth))


@case("output over an input", "compile-truth a published truth -o itself")
def _(folder):
    truth = copy_truth(folder, FIX / "trivago19" / "ground_truth.csv")
    return Cli(["compile-truth", truth, "--competition", "trivago19", "-o", truth], codes=(2,), after=unchanged(truth))


@case("output over an input", "compile-truth behaviors.parquet -o itself by a symbolic link")
def _(folder):
    truth = copy_truth(folder, FIX / "ebnerd" / "behaviors.parquet")
    os.symlink(truth, folder / "b.impressions.npz")
    return Cli(["compile-truth", truth, "--competition", "ebnerd", "-o", folder / "b.impressions.npz"], codes=(2,), after=unchanged(truth))


@case("output over an input", "compare --report the truth (mind)")
def _(folder):
    truth = mind_truth(folder)
    return Cli(["compare", FIX / "mind" / "prediction.txt", FIX / "mind" / "prediction.txt", "--truth", truth, "--competition", "mind",
                "--bootstrap", "10", "--report", truth], codes=(2,), after=unchanged(truth))


@case("output over an input", "leaderboard --report a submission by a hard link")
def _(folder):
    a = copy_truth(folder, FIX / "trivago19" / "submission.csv", "a.csv")
    os.link(a, folder / "r.html")
    return Cli(["leaderboard", a, FIX / "trivago19" / "submission.csv", "--truth", FIX / "trivago19" / "ground_truth.csv", "--competition",
                "trivago19", "--bootstrap", "10", "--report", folder / "r.html"], codes=(2,), after=unchanged(a))


@case("output over an input", "score --report a FIFO")
def _(folder):
    return Cli(["score", FIX / "mind" / "prediction.txt", "--truth", FIX / "mind" / "truth.txt", "--competition", "mind", "--report",
                fifo(folder, "r.html")], codes=(2,), seconds=20)


@case("output over an input", "score --report a folder")
def _(folder):
    (folder / "r.html").mkdir()
    return Cli(["score", FIX / "mind" / "prediction.txt", "--truth", FIX / "mind" / "truth.txt", "--competition", "mind", "--report",
                folder / "r.html"], codes=(2,))


@case("output over an input", "score --report in a folder that does not exist")
def _(folder):
    return Cli(["score", FIX / "mind" / "prediction.txt", "--truth", FIX / "mind" / "truth.txt", "--competition", "mind", "--report",
                folder / "no" / "r.html"], codes=(0, 2))


@case("output over an input", "compile-truth -o a FIFO")
def _(folder):
    return Cli(["compile-truth", FIX / "mind" / "truth.txt", "--competition", "mind", "-o", fifo(folder, "t.impressions.npz")], codes=(2,),
               seconds=20)


@case("output over an input", "grade -o the truth")
def _(folder):
    truth = copy_truth(folder, FIX / "mind" / "truth.txt")
    return Cli(["grade", FIX / "mind" / "prediction.txt", "--truth", truth, "--competition", "mind", "-o", truth, "--workers", "1"], codes=(2,),
               after=unchanged(truth), seconds=60)


@case("output over an input", "export hf-solution of a mind truth -o the truth")
def _(folder):
    truth = mind_truth(folder)
    return Cli(["export", "hf-solution", truth, "--competition", "mind", "-o", truth], codes=(2,), after=unchanged(truth))


@case("output over an input", "bundles/build.py mind -o over the truth")
def _(folder):
    truth = mind_truth(folder)
    return Cli(["-c", "import runpy,sys; sys.argv=['build.py','codabench',sys.argv[1],'--competition','mind','--truth',sys.argv[1]]; "
                f"runpy.run_path({str(ROOT / 'bundles' / 'build.py')!r}, run_name='__main__')", truth], codes=(1, 2),
               after=unchanged(truth))


@case("output over an input", "ladder --state the truth")
def _(folder):
    truth = copy_truth(folder, FIX / "otto_truth.jsonl")
    teams = write(folder, "teams.csv", f"file,team,time\n{FIX / 'otto_submission.csv'},a,1\n")
    return Cli(["ladder", "--teams", teams, "--truth", truth, "--split", "public=0.5", "--state", truth], codes=(2,), after=unchanged(truth))


# -- 12. the Ladder's state, crafted ----------------------------------------------------------------------------
LADDER_FEED = """
import sys
from scorer.adapters import evalai
truth, state, competition = sys.argv[1:4]
for at, (path, team) in enumerate(zip(sys.argv[4::2], sys.argv[5::2])):
    try:
        evalai.evaluate(truth, path, "test", competition=competition, ladder_state=state, ladder_split="public=0.5", team=team,
                        submitted_at=f"2024-03-0{at + 1}")
    except Exception as error:
        print("REFUSED", type(error).__name__, error)
"""


def _feed_ladder(folder: Path, truth: Path, competition: str, entries, state: Path | None = None) -> tuple[Path, str]:
    """A live Ladder state the EvalAI adapter writes, fed these (file, team) entries one after another."""
    state = state or folder / "state.ladder"
    flat = [str(part) for entry in entries for part in entry]
    done = subprocess.run([sys.executable, "-c", LADDER_FEED, str(truth), str(state), competition, *flat], capture_output=True, text=True,
                          cwd=ROOT, env=child_env(), timeout=HARD_STOP)
    return state, done.stdout + done.stderr


def _ladder_state(folder: Path) -> Path:
    other = write(folder, "b.csv", (FIX / "otto_submission.csv").read_text().replace(" ", " 7 ", 3))
    state, _ = _feed_ladder(folder, FIX / "otto_truth.jsonl", "otto", [(copy_truth(folder, FIX / "otto_submission.csv", "a.csv"), "red"),
                                                                       (other, "blue")])
    return state


def _state_case(change):
    def build(folder):
        state = _ladder_state(folder)
        if state.exists():
            data = bytearray(state.read_bytes())
            state.write_bytes(change(bytes(data)))
        else:
            state.write_bytes(change(b""))
        before = state.read_bytes()
        return Cli(["ladder", "--state", state], codes=(0, 2),
                   after=lambda f, o, e: "the state file was changed" if state.read_bytes() != before else None)
    return build


STATES = {
    "a state of no bytes": lambda data: b"",
    "a state of 1 MB of zeros": lambda data: bytes(1 << 20),
    "a state whose first line is JSON nested 100,000 deep": lambda data: b"[" * 100_000 + b"]" * 100_000 + b"\n" + data,
    "a state whose version is 3": lambda data: data.replace(b'"version": 2', b'"version": 3', 1).replace(b'"version":2', b'"version":3', 1),
    "a state whose every byte 0x41 became 0x42": lambda data: data.replace(b"A", b"B"),
    "a state of a line of 10 MB": lambda data: b"x" * (10 << 20) + b"\n",
    "a state with NaN written in its first line": lambda data: data.replace(b"0.5", b"NaN", 1),
    "a state whose last record lost its last 3 bytes": lambda data: data[:-3],
    "a state whose first record's vector size is doubled": lambda data: re.sub(rb'"vector": (\d+)', lambda m: b'"vector": %d' % (2 * int(m.group(1))), data, count=1),
    "a state whose header names the truth's key as a list": lambda data: re.sub(rb'"truth": "[^"]*"', b'"truth": ["x"]', data, count=1),
}
cases("Ladder state", {name: _state_case(change) for name, change in STATES.items()})


LIVE = {"mind": (FIX / "mind" / "truth.txt", FIX / "mind" / "prediction.txt"),
        "trivago19": (FIX / "trivago19" / "ground_truth.csv", FIX / "trivago19" / "submission.csv"),
        "twitter20": (FIX / "twitter20" / "truth.csv", FIX / "twitter20" / "submission.csv"),
        "yoochoose15": (FIX / "yoochoose15" / "yoochoose-solution.dat", FIX / "yoochoose15" / "submission.dat"),
        "kdd23-m2": (FIX / "kdd23-m2" / "sessions_test_task1.csv", FIX / "kdd23-m2" / "submission.parquet")}


def _live(competition):
    def build(folder):
        truth, submission = LIVE[competition]
        first = copy_truth(folder, submission, "a" + submission.suffix)
        second = copy_truth(folder, submission, "b" + submission.suffix)
        state, said = _feed_ladder(folder, truth, competition, [(first, "red"), (second, "blue")])

        def after(f, out, err):
            refusals = ("cannot be resampled", "weigh each file's rows", "public part holds")  # the host's sentence: no Ladder here
            if "REFUSED" in said and "EvaluationFailed" in said and not any(words in said for words in refusals):
                return f"the live Ladder failed on a valid file: {said.strip().splitlines()[-1][:200]}"
            return None
        return Cli(["ladder", "--state", state], codes=(0, 2), after=after)
    return build


cases("Ladder state", {f"the live Ladder on {name}, then its board": _live(name) for name in LIVE})


# -- 13. verify's records ---------------------------------------------------------------------------------------
def _records(folder: Path) -> tuple[Path, Path]:
    sub_path = copy_truth(folder, FIX / "mind" / "prediction.txt")
    results = folder / "results.jsonl"
    subprocess.run([sys.executable, "-m", "scorer", "grade", str(sub_path), "--truth", str(FIX / "mind" / "truth.txt"), "--competition", "mind",
                    "-o", str(results), "--workers", "1"], capture_output=True, cwd=ROOT, env=child_env(), timeout=HARD_STOP)
    return sub_path, results


def _records_case(change):
    def build(folder):
        sub_path, results = _records(folder)
        text = results.read_text() if results.exists() else ""
        results.write_bytes(change(text, str(sub_path)).encode("utf-8", "surrogateescape"))
        return Cli(["verify", results, sub_path, "--truth", FIX / "mind" / "truth.txt", "--config", ROOT / "scorer" / "spec" / "configs" / "mind.toml"],
                   codes=(0, 1, 2), seconds=40)
    return build


RECORDS = {
    "no records": lambda text, path: "",
    "a record nested 100,000 deep": lambda text, path: "[" * 100_000 + "]" * 100_000 + "\n" + text,
    "a record line of 20 MB": lambda text, path: '{"a": "' + "x" * (20 << 20) + '"}\n' + text,
    "the path a list": lambda text, path: text.replace(json.dumps(path), json.dumps([path])),
    "the path with an escape sequence": lambda text, path: text.replace(json.dumps(path), json.dumps(path + "\x1b]0;x\x07")),
    "a score NaN": lambda text, path: re.sub(r'"score": [0-9.e-]+', '"score": NaN', text),
    "a score 1e999": lambda text, path: re.sub(r'"score": [0-9.e-]+', '"score": 1e999', text),
    "the same record 20,000 times": lambda text, path: text * 20_000,
    "invalid UTF-8": lambda text, path: text + "\udcff",
    "unchanged (the control)": lambda text, path: text,
}
cases("verify records", {name: _records_case(change) for name, change in RECORDS.items()})


# -- 14. similar -------------------------------------------------------------------------------------------------
@case("similar", "two files of zero rows")
def _(folder):
    a = write(folder, "a.csv", "session_type,labels\n")
    b = write(folder, "b.csv", "session_type,labels\n")
    return Cli(["similar", a, b], codes=(0, 1, 2))


@case("similar", "sessions past 2^63")
def _(folder):
    a = write(folder, "a.csv", "session_type,labels\n9223372036854775808_clicks,1 2\n")
    b = write(folder, "b.csv", "session_type,labels\n99999999999999999999_clicks,1 2\n")
    return Cli(["similar", a, b], codes=(0, 1, 2))


@case("similar", "mind predictions")
def _(folder):
    a = write(folder, "a.txt", MIND_PRED)
    b = write(folder, "b.txt", MIND_PRED.replace("[2,1,3]", "[1,2,3]"))
    return Cli(["similar", a, b, "--competition", "mind"], codes=(0, 2))


@case("similar", "kdd23-m2 Parquet files")
def _(folder):
    a = copy_truth(folder, FIX / "kdd23-m2" / "submission.parquet", "a.parquet")
    b = copy_truth(folder, FIX / "kdd23-m2" / "submission.parquet", "b.parquet")
    return Cli(["similar", a, b, "--competition", "kdd23-m2"], codes=(0, 2))


@case("similar", "twitter20 value files")
def _(folder):
    a = copy_truth(folder, FIX / "twitter20" / "submission.csv", "a.csv")
    b = copy_truth(folder, FIX / "twitter20" / "submission.csv", "b.csv")
    return Cli(["similar", a, b, "--competition", "twitter20"], codes=(0, 1, 2))


@case("similar", "spotify-mpd files with a metadata line")
def _(folder):
    a = copy_truth(folder, FIX / "spotify-mpd" / "submission.csv", "a.csv")
    b = copy_truth(folder, FIX / "spotify-mpd" / "submission.csv", "b.csv")
    return Cli(["similar", a, b, "--competition", "spotify-mpd"], codes=(0, 2))


def _similar_valid(competition, submission):
    def build(folder):
        a = copy_truth(folder, submission, "a" + submission.suffix)
        b = copy_truth(folder, submission, "b" + submission.suffix)
        return Cli(["similar", a, b, "--competition", competition], codes=(0, 2))  # compared, or refused as a usage: never blamed
    return build


cases("similar", {f"{name}'s own fixtures": _similar_valid(name, _SUBMISSION_OF[name])
                  for name in ("trivago19", "yoochoose15", "dressipi22", "expedia13")})


@case("similar", "3,000 files of one row")
def _(folder):
    paths = [write(folder, f"s{i}.csv", f"session_type,labels\n1_clicks,{i} {i + 1}\n") for i in range(3000)]
    listing = write(folder, "teams.csv", "file,team\n" + "".join(f"{p},t{i}\n" for i, p in enumerate(paths)))
    return Cli(["similar", "--teams", listing, *paths[:2]], codes=(0, 1, 2), seconds=60)


# -- 15. commands on the new shapes -----------------------------------------------------------------------------
COMMANDS = {
    "validate mind without truth": ["validate", FIX / "mind" / "prediction.txt", "--competition", "mind"],
    "validate spotify-mpd without truth": ["validate", FIX / "spotify-mpd" / "submission.csv", "--competition", "spotify-mpd"],
    "validate kdd23-m2 Parquet without truth": ["validate", FIX / "kdd23-m2" / "submission.parquet", "--competition", "kdd23-m2"],
    "validate twitter20 without truth": ["validate", FIX / "twitter20" / "submission.csv", "--competition", "twitter20"],
    "explain expedia13": ["explain", FIX / "expedia13" / "submission.csv", "--truth", FIX / "expedia13" / "train.csv", "--competition", "expedia13"],
    "explain twitter20": ["explain", FIX / "twitter20" / "submission.csv", "--truth", FIX / "twitter20" / "truth.csv", "--competition", "twitter20"],
    "explain kdd23-m2": ["explain", FIX / "kdd23-m2" / "submission.parquet", "--truth", FIX / "kdd23-m2" / "sessions_test_task1.csv",
                         "--competition", "kdd23-m2"],
    "explain yoochoose15 --all": ["explain", FIX / "yoochoose15" / "submission.dat", "--truth", FIX / "yoochoose15" / "yoochoose-solution.dat",
                                  "--competition", "yoochoose15", "--all"],
    "compare twitter20 with a split": ["compare", FIX / "twitter20" / "submission.csv", FIX / "twitter20" / "submission.csv", "--truth",
                                       FIX / "twitter20" / "truth.csv", "--competition", "twitter20", "--split", "public=0.5", "--bootstrap", "10"],
    "leaderboard yoochoose15 (a sum, not a mean)": ["leaderboard", FIX / "yoochoose15" / "submission.dat", FIX / "yoochoose15" / "yoochoose-solution.dat",
                                                    "--truth", FIX / "yoochoose15" / "yoochoose-solution.dat", "--competition", "yoochoose15", "--bootstrap", "10"],
    "leaderboard --borda with one metric twice": ["leaderboard", FIX / "spotify-mpd" / "submission.csv", FIX / "spotify-mpd" / "challenge_truth.json",
                                                  "--truth", FIX / "spotify-mpd" / "challenge_truth.json", "--competition", "spotify-mpd",
                                                  "--borda", "r_precision,r_precision", "--bootstrap", "10"],
    "leaderboard --borda with a metric not scored": ["leaderboard", FIX / "spotify-mpd" / "submission.csv", FIX / "spotify-mpd" / "submission.csv",
                                                     "--truth", FIX / "spotify-mpd" / "challenge_truth.json", "--competition", "spotify-mpd",
                                                     "--borda", "recall@20,mrr", "--bootstrap", "10"],
    "leaderboard --borda empty": ["leaderboard", FIX / "spotify-mpd" / "submission.csv", FIX / "trivago19" / "submission.csv",
                                  "--truth", FIX / "spotify-mpd" / "challenge_truth.json", "--competition", "spotify-mpd", "--borda", ",",
                                  "--bootstrap", "10"],
    "leaderboard mind --mde": ["leaderboard", FIX / "mind" / "prediction.txt", FIX / "mind" / "truth.txt", "--truth", FIX / "mind" / "truth.txt",
                               "--competition", "mind", "--mde", "--bootstrap", "10"],
    "audit mind": ["audit", "--truth", FIX / "mind" / "truth.txt", "--competition", "mind"],
    "audit twitter20": ["audit", "--truth", FIX / "twitter20" / "truth.csv", "--competition", "twitter20"],
    "audit kdd23-m2": ["audit", "--truth", FIX / "kdd23-m2" / "sessions_test_task1.csv", "--competition", "kdd23-m2"],
    "candidates on mind": ["candidates", FIX / "mind" / "prediction.txt", "--truth", FIX / "mind" / "truth.txt", "--competition", "mind"],
    "export kaggle-solution of mind": ["export", "kaggle-solution", FIX / "mind" / "truth.txt", "--competition", "mind", "-o", "{folder}/s.csv"],
    "export hf-solution of trivago19": ["export", "hf-solution", FIX / "trivago19" / "ground_truth.csv", "--competition", "trivago19", "-o",
                                        "{folder}/s.csv"],
    "score twitter20 --bootstrap (figures of all rows)": ["score", FIX / "twitter20" / "submission.csv", "--truth", FIX / "twitter20" / "truth.csv",
                                                          "--competition", "twitter20", "--bootstrap", "20", "--split", "public=0.5"],
    "score mind --engine dask": ["score", FIX / "mind" / "prediction.txt", "--truth", FIX / "mind" / "truth.txt", "--competition", "mind",
                                 "--engine", "dask", "--workers", "1"],
    "codabench mind with a zip res": None,
}


def _command(argv):
    return lambda folder: Cli([str(a).replace("{folder}", str(folder)) for a in argv], codes=OK_CODES, seconds=60)


cases("commands on the new shapes", {name: _command(argv) for name, argv in COMMANDS.items() if argv is not None})


@case("commands on the new shapes", "codabench mind with a zip res and a symlinked member")
def _(folder):
    (folder / "input" / "ref").mkdir(parents=True)
    (folder / "input" / "res").mkdir()
    _compiled(folder / "input" / "ref", FIX / "mind" / "truth.txt", "mind", "truth.impressions.npz")
    zipped(folder / "input" / "res", "prediction.zip", "prediction.txt", b"../ref/truth.impressions.npz", stat.S_IFLNK | 0o777)
    return Cli(["codabench", folder / "input", folder / "output", "--competition", "mind"], codes=(1,), no_paths=(str(folder),))


# -- 16. empty everything ----------------------------------------------------------------------------------------
EMPTY = {}
for _comp, _sub_name in (("mind", "prediction.txt"), ("trivago19", "s.csv"), ("spotify-mpd", "s.csv"), ("dressipi22", "s.csv"),
                         ("twitter20", "s.csv"), ("yoochoose15", "s.dat"), ("expedia13", "s.csv"), ("ebnerd", "p.txt")):
    EMPTY[f"{_comp}: an empty submission"] = (_comp, _sub_name, b"")
    EMPTY[f"{_comp}: a submission of one line end"] = (_comp, _sub_name, b"\n")


def _empty_case(comp, name, data):
    def build(folder):
        truth = _SUBMISSION_OF.get(comp)
        truth = {"mind": FIX / "mind" / "truth.txt", "trivago19": FIX / "trivago19" / "ground_truth.csv",
                 "spotify-mpd": FIX / "spotify-mpd" / "challenge_truth.json", "dressipi22": FIX / "dressipi22" / "test_purchases.csv",
                 "twitter20": FIX / "twitter20" / "truth.csv", "yoochoose15": FIX / "yoochoose15" / "yoochoose-solution.dat",
                 "expedia13": FIX / "expedia13" / "train.csv", "ebnerd": FIX / "ebnerd" / "behaviors.parquet"}[comp]
        filled = comp in ("mind", "ebnerd") and not data.strip()  # MIND's fill: S038 is a warning in strict mode too
        blank = comp == "yoochoose15" and data == b"\n"  # no header line: a blank line, and nobody predicted to buy
        return grader(write(folder, name, data), truth, comp, codes=(0, 1) if filled or blank else (1,))
    return build


cases("empty everything", {name: _empty_case(*spec) for name, spec in EMPTY.items()})


@case("empty everything", "kdd23-m2: an empty file named .parquet")
def _(folder):
    return grader(write(folder, "s.parquet", b""), FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2", codes=(1,))


@case("empty everything", "kdd23-m2: a Parquet of no columns")
def _(folder):
    return grader(parquet(folder, "s.parquet", _pa().table({})), FIX / "kdd23-m2" / "sessions_test_task1.csv", "kdd23-m2", codes=(1,))


@case("empty everything", "leaderboard of two empty mind files")
def _(folder):
    return Cli(["leaderboard", write(folder, "a.txt", ""), write(folder, "b.txt", ""), "--truth", FIX / "mind" / "truth.txt",
                "--competition", "mind", "--bootstrap", "10"], codes=(0, 1, 2))


@case("empty everything", "compare two empty twitter20 files")
def _(folder):
    return Cli(["compare", write(folder, "a.csv", ""), write(folder, "b.csv", ""), "--truth", FIX / "twitter20" / "truth.csv",
                "--competition", "twitter20", "--bootstrap", "10"], codes=(0, 1, 2))


@case("empty everything", "explain an empty trivago19 file")
def _(folder):
    return Cli(["explain", write(folder, "a.csv", ""), "--truth", FIX / "trivago19" / "ground_truth.csv", "--competition", "trivago19"],
               codes=(0, 1, 2))


# -- 17. concurrency ---------------------------------------------------------------------------------------------
@case("concurrency", "two graders write one results file")
def _(folder):
    subs = [copy_truth(folder, FIX / "mind" / "prediction.txt", f"p{i}.txt") for i in range(2)]
    script = (
        "import subprocess, sys\n"
        "procs = [subprocess.Popen([sys.executable, '-m', 'scorer', 'grade', s, '--truth', sys.argv[1], '--competition', 'mind', '-o',"
        " sys.argv[2], '--workers', '1']) for s in sys.argv[3:]]\n"
        "print([p.wait() for p in procs])\n")
    results = folder / "results.jsonl"

    def after(f, out, err):
        if not results.exists():
            return "no results file"
        lines = results.read_text().splitlines()
        try:
            records = [json.loads(line) for line in lines if line.strip()]
        except ValueError:
            return "the results file holds a torn record"
        if "another scorer grade is writing" not in err and len(records) < 2:
            return f"{len(records)} records for 2 graded files, and neither grader refused"
        return None
    return Cli(["-c", script, FIX / "mind" / "truth.txt", results, *subs], codes=(0,), after=after, seconds=90)


# -- the runner ---------------------------------------------------------------------------------------------------
CACHE = {"dir": None}  # each case's own truth cache: a truth an older build compiled is not served to this one


def child_env() -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("SCORER_DEBUG",)}
    if CACHE["dir"]:
        env["SCORER_CACHE_DIR"] = CACHE["dir"]
    env["ROUND6_SECRET"] = SECRET
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@dataclass
class Outcome:
    case: Case
    code: int | None = None
    seconds: float = 0.0
    rss_mb: float = 0.0
    faults: list = field(default_factory=list)
    tail: str = ""


TIME = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)  # GNU time: the child's peak RSS


def _run(argv: list, cwd: Path, seconds: float, stdin=None) -> tuple[int | None, str, str, float, float]:
    started = time.monotonic()
    peak = Path(tempfile.mkstemp(prefix="round6-rss-")[1])
    if TIME:
        argv = [TIME, "-q", "-f", "%M", "-o", str(peak), *argv]
    proc = subprocess.Popen(argv, cwd=cwd, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    try:
        out, err = proc.communicate(stdin, timeout=max(seconds, 1) + 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - started, 0.0
    try:
        rss = float(peak.read_text().split()[-1]) / 1024
    except (OSError, ValueError, IndexError):
        rss = 0.0
    peak.unlink(missing_ok=True)
    return proc.returncode, out.decode("utf-8", "surrogateescape"), err.decode("utf-8", "surrogateescape"), time.monotonic() - started, rss


def _quoted_lines(files) -> list[str]:
    lines = []
    for path in files:
        for line in _text(path).splitlines():
            if TRUTH_MARK in line or len(line.strip()) > 12:
                lines.append(line.strip())
    return lines


def judge(case_: Case, folder: Path) -> Outcome:
    outcome = Outcome(case_)
    CACHE["dir"] = str(folder / ".cache")
    try:
        attempt = case_.build(folder)
    except Exception as error:  # the corpus's own bug: say so, do not count it as the scorer's
        outcome.faults.append(f"the case could not be built: {type(error).__name__}: {error}")
        return outcome
    if isinstance(attempt, Api):
        script = folder / "case.py"
        script.write_text(attempt.code)
        code, out, err, outcome.seconds, outcome.rss_mb = _run([sys.executable, str(script)], ROOT, attempt.seconds)
        outcome.code = code
        outcome.tail = (out + err)[-600:]
        if code is None:
            outcome.faults.append(f"still running after {attempt.seconds + 10:.0f} s")
        elif code != 0 or "Traceback" in err:
            outcome.faults.append(f"the snippet itself failed (exit {code}): {err.strip().splitlines()[-1] if err.strip() else ''}")
        for line in out.splitlines():
            if line.startswith("BARE"):
                outcome.faults.append(f"raised a bare {line.split()[1]}: {line[5:][:200]}")
            if line.startswith("DIFFER"):
                outcome.faults.append(f"the same content scored differently: {line[:200]}")
        if attempt.expect is not None:
            why = attempt.expect(out)
            if why:
                outcome.faults.append(why)
        return outcome
    argv = [sys.executable] + (attempt.argv if attempt.argv and attempt.argv[0] == "-c" else ["-m", "scorer", *attempt.argv])
    code, out, err, outcome.seconds, outcome.rss_mb = _run([str(a) for a in argv], ROOT, attempt.seconds, attempt.stdin)
    outcome.code = code
    outcome.tail = (out[-300:] + " || " + err[-500:])
    text = out + err
    if code is None:
        outcome.faults.append(f"still running after {attempt.seconds + 10:.0f} s")
        return outcome
    if code not in attempt.codes:
        outcome.faults.append(f"exit {code}, wanted one of {attempt.codes}")
    if "Traceback (most recent call last)" in text:
        outcome.faults.append("a traceback")
    if "internal error" in err:
        outcome.faults.append("an internal error: " + next((line for line in err.splitlines() if "internal error" in line), "")[:220])
    if sum(1 for line in err.splitlines() if line.startswith("scorer: error:")) > 1:
        outcome.faults.append("more than one error line")
    if SECRET in text:
        outcome.faults.append("shows the environment")
    for line in _quoted_lines(attempt.quoted):
        if line and line in text:
            outcome.faults.append(f"quotes the truth: {line[:60]!r}")
            break
    for path in attempt.no_paths:
        if path in text:
            outcome.faults.append(f"names a host folder {path!r}")
            break
    if outcome.seconds > attempt.seconds:
        outcome.faults.append(f"took {outcome.seconds:.1f} s, over {attempt.seconds:g}")
    if outcome.rss_mb > attempt.max_mb:
        outcome.faults.append(f"peaked at {outcome.rss_mb:.0f} MB, over {attempt.max_mb:g}")
    if attempt.after is not None:
        try:
            why = attempt.after(folder, out, err)
        except Exception as error:
            why = f"the after-check failed: {type(error).__name__}: {error}"
        if why:
            outcome.faults.append(why)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("words", nargs="*", help="only the cases whose class or name holds one of these words")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument("--json", metavar="FILE", help="also write the outcomes as JSON lines to FILE")
    args = parser.parse_args(argv)
    chosen = [c for c in CASES if not args.words or any(w.lower() in (c.cls + " " + c.name).lower() for w in args.words)]
    if args.list:
        for c in chosen:
            print(f"{c.cls:34} {c.name}")
        print(f"{len(chosen)} cases")
        return 0
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    broke = 0
    sink = open(args.json, "w") if args.json else None
    for c in chosen:
        with tempfile.TemporaryDirectory(prefix="round6-") as tmp:
            outcome = judge(c, Path(tmp))
        tally[c.cls][0] += 1
        status = "ok" if not outcome.faults else "BROKE"
        if outcome.faults:
            tally[c.cls][1] += 1
            broke += 1
        print(f"{status:5} {c.cls[:28]:28} {c.name[:70]:70} exit {outcome.code} {outcome.seconds:5.1f}s {outcome.rss_mb:5.0f}MB  "
              f"{'; '.join(outcome.faults)[:400]}",
              flush=True)
        if sink:
            sink.write(json.dumps({"class": c.cls, "name": c.name, "code": outcome.code, "seconds": round(outcome.seconds, 2),
                                   "faults": outcome.faults, "tail": outcome.tail}) + "\n")
    print()
    print(f"{'class':36} {'tried':>6} {'broke':>6}")
    for cls, (tried, broken) in tally.items():
        print(f"{cls:36} {tried:6} {broken:6}")
    print(f"{len(chosen) - broke} of {len(chosen)} cases met the contract")
    return 1 if broke else 0


if __name__ == "__main__":
    sys.exit(main())
