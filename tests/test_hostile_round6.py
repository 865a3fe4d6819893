"""Round 6 of the hostile trials: the newest surfaces (the impression shape, the table reader and its configs, the
Python jobs, the live Ladder, similar) held to the contract. tools/hostile_round6.py is the corpus these cases came from.

Exit 0, 1 or 2 with one sentence; never exit 3 or a traceback; from Python a ScorerError, never a library's exception;
memory bounded by the limits, whatever a few bytes of Parquet say; the same figures for the same content.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

import scorer
from scorer.errors import ScorerError, SubmissionError, UsageError
from test_hostile_round4 import one_sentence, run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KDD_TRUTH = FIXTURES / "kdd23-m2" / "sessions_test_task1.csv"
MIND_TRUTH, MIND_PREDICTION = FIXTURES / "mind" / "truth.txt", FIXTURES / "mind" / "prediction.txt"
EBNERD_PREDICTION = FIXTURES / "ebnerd" / "predictions.txt"


def said(out: str, err: str) -> str:
    """What a refused submission prints (its problem on stdout, or one error line), with no traceback."""
    assert "Traceback" not in out + err and "internal error" not in err, err
    return out + err


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """A truth cache of the test's own: a truth compiled before (by another build) is not served instead of read."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))


# -- Parquet submissions whose columns are not text, numbers or lists of them ---------------------------------
ODD_COLUMNS = {
    "a struct": {"locale": ["DE"], "next_item_prediction": [{"a": 1}]},
    "a list of lists": {"locale": ["DE"], "next_item_prediction": [[["a"]]]},
    "a list of structs": {"locale": ["DE"], "next_item_prediction": [[{"x": 1}]]},
    "a struct locale": {"locale": [{"a": 1}], "next_item_prediction": [["a"]]},
}


@pytest.mark.parametrize("kind", ODD_COLUMNS)
def test_a_parquet_column_of_another_type_is_named(tmp_path, kind):
    path = tmp_path / "submission.parquet"
    pq.write_table(pa.table(ODD_COLUMNS[kind]), path)
    code, out, err = run_cli("score", path, "--truth", KDD_TRUTH, "--competition", "kdd23-m2", "--untrusted", "--strict")
    assert code == 1 and "expected text or numbers" in said(out, err), out + err


def test_a_map_and_a_fixed_size_list_are_read_or_named(tmp_path):
    """A map column is no list of items; a fixed-size list is one (pyarrow's cast to text took neither)."""
    mapped, fixed = tmp_path / "map.parquet", tmp_path / "fixed.parquet"
    pq.write_table(pa.table({"locale": ["DE"], "next_item_prediction": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64()))}), mapped)
    pq.write_table(pa.table({"locale": ["DE", "JP"], "next_item_prediction": pa.array([["A"], ["B"]], pa.list_(pa.string(), 1))}), fixed)
    code, out, err = run_cli("score", mapped, "--truth", KDD_TRUTH, "--competition", "kdd23-m2")
    assert code == 1 and "expected text or numbers" in said(out, err), out + err
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"locale": ["DE", "JP"], "next_item_prediction": [["A"], ["B"]]}), plain)
    assert scorer.score(str(fixed), str(KDD_TRUTH), "kdd23-m2").metrics == scorer.score(str(plain), str(KDD_TRUTH), "kdd23-m2").metrics


def test_a_frame_with_a_struct_column_is_a_scorer_error():
    frame = pa.table({"locale": ["DE"], "next_item_prediction": [{"a": 1}]})
    with pytest.raises(SubmissionError, match="expected text or numbers"):
        scorer.score(frame, str(KDD_TRUTH), "kdd23-m2")


def test_frames_of_the_table_reader_of_other_arrow_types_score_or_are_named():
    """Bytes that are not UTF-8 are located (S016) as in a CSV, not ArrowInvalid; polars' Categorical and Enum columns, and
    lists of them, score as their text (pyarrow has no take of string_view); pandas columns of one name are a UsageError."""
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    kdd = str(KDD_TRUTH)
    undecodable = pa.table({"locale": ["DE"], "next_item_prediction": pa.array([[b"\xff"]], pa.list_(pa.binary()))})
    assert scorer.score(undecodable, kdd, "kdd23-m2").report.counts.get("S016") == 1
    plain = scorer.score(pl.DataFrame({"locale": ["DE", "JP"], "next_item_prediction": [["A"], ["B"]]}), kdd, "kdd23-m2").metrics
    for locale, items in ((pl.Categorical, pl.List(pl.String)), (pl.Enum(["DE", "JP"]), pl.List(pl.String)), (pl.String, pl.List(pl.Categorical))):
        frame = pl.DataFrame({"locale": pl.Series(["DE", "JP"], dtype=locale), "next_item_prediction": pl.Series([["A"], ["B"]], dtype=items)})
        assert scorer.score(frame, kdd, "kdd23-m2").metrics == plain
    with pytest.raises(UsageError, match="Duplicate column names"):
        scorer.score(pd.DataFrame([[26, 4011, 1, 2]], columns=["session_id", "item_id", "rank", "rank"]),
                     str(FIXTURES / "dressipi22" / "test_purchases.csv"), "dressipi22")


@pytest.mark.parametrize("metadata", [b"[" * 200_000 + b"]" * 200_000,  # RecursionError
                                      b'{"index_columns": [{"kind": "range", "start": 1e400, "step": 1}]}',  # OverflowError
                                      b'{"index_columns": [{"kind": "range", "start": 0, "step": "x"}]}'])
def test_pandas_metadata_as_a_participant_wrote_it_gets_a_sentence(tmp_path, metadata):
    path = tmp_path / "submission.parquet"
    table = pa.table({"locale": ["DE"], "next_item_prediction": [["a"]]}).replace_schema_metadata({b"pandas": metadata})
    pq.write_table(table, path)
    code, out, err = run_cli("score", path, "--truth", KDD_TRUTH, "--competition", "kdd23-m2")
    said(out, err)
    assert code == (1 if b"range" in metadata else 0), out + err  # metadata that is no JSON pandas wrote: no index, rows by place


# -- Parquet bombs: a few bytes of file, gigabytes of text --------------------------------------------------------
def _blocks(path: Path) -> list[int]:
    """The sizes of the blocks of lines the Parquet reader hands the kernel."""
    from scorer.engine.parquet_rows import ParquetBlocks
    from scorer.spec.competition import load_competition

    return [block.end for block in ParquetBlocks(path, load_competition("kdd23-m2"), 1 << 40, 1 << 40)]


def test_a_row_group_declaring_a_row_far_over_the_line_limit_is_refused_before_it_is_read(tmp_path):
    """One value of 64 MB compresses to a few KB; pyarrow would hold it several times over (2.5 GB for 300 MB)."""
    path = tmp_path / "submission.parquet"
    pq.write_table(pa.table({"locale": ["DE"], "next_item_prediction": [["x" * (64 << 20)]]}), path, compression="zstd")
    assert path.stat().st_size < 1 << 20
    code, out, err = run_cli("validate", path, "--truth", KDD_TRUTH, "--competition", "kdd23-m2")
    assert code == 1 and "S022" in out and "row group 1" in out, out + err


def test_a_long_value_named_in_many_rows_is_never_made_whole(tmp_path):
    """A dictionary: 100 rows of 1,000 items, each the same 8 KB value (a 1 KB file, 800 MB of text as lines). Each row
    is over the line limit and scores as such (S022), and no block of lines holds much more than the limit a row."""
    path = tmp_path / "submission.parquet"
    pq.write_table(pa.table({"locale": ["DE"] * 100, "next_item_prediction": [["y" * 8000] * 1000] * 100}), path)
    assert path.stat().st_size < 1 << 16
    assert sum(_blocks(path)) < 100 * 2 * (8192 + 64)
    result = scorer.validate(str(path), str(KDD_TRUTH), "kdd23-m2")
    assert result.report.counts.get("S022") == 100


def test_lines_within_the_limit_are_made_as_before(tmp_path):
    """Cutting long values leaves every line within the limit unchanged: the same figures as the frame's."""
    path = tmp_path / "submission.parquet"
    rows = {"locale": ["DE", "JP", "UK"], "next_item_prediction": [["B0A", "B0B"], [], ["x" * 9000, "B0C"]]}
    pq.write_table(pa.table(rows), path)
    result = scorer.score(str(path), str(KDD_TRUTH), "kdd23-m2")
    assert result.report.counts.get("S022") == 1
    assert result.metrics == scorer.score(pa.table(rows), str(KDD_TRUTH), "kdd23-m2").metrics


# -- EB-NeRD's behaviors.parquet: columns of other types ----------------------------------------------------------
BEHAVIORS = {
    "inview not a list": ({"impression_id": [1, 2], "article_ids_inview": [5, 6], "article_ids_clicked": [[5], [6]]}, "expected a list"),
    "clicked not a list": ({"impression_id": [1, 2], "article_ids_inview": [[5, 7], [6, 8]], "article_ids_clicked": [5, 6]}, "expected a list"),
    "lists of lists": ({"impression_id": [1, 2], "article_ids_inview": [[[5], [7]], [[6], [8]]], "article_ids_clicked": [[[5]], [[6]]]},
                       "expected a list"),
    "is_beyond_accuracy as text": ({"impression_id": [1, 2], "article_ids_inview": [[1, 2], [3, 4]], "article_ids_clicked": [[1], [4]],
                                    "is_beyond_accuracy": ["false", "no"]}, "true or false"),
    "ids past 2^63": ({"impression_id": pa.array([2**63 + 5, 2**63 + 6], pa.uint64()), "article_ids_inview": [[1, 2], [3, 4]],
                       "article_ids_clicked": [[1], [4]]}, "2^63 - 1"),
}


@pytest.mark.parametrize("kind", BEHAVIORS)
def test_a_behaviors_parquet_of_other_types_is_a_truth_error(tmp_path, kind):
    columns, words = BEHAVIORS[kind]
    path = tmp_path / "behaviors.parquet"
    pq.write_table(pa.table(columns), path)
    code, _, err = run_cli("score", EBNERD_PREDICTION, "--truth", path, "--competition", "ebnerd")
    assert code == 2 and words in one_sentence(err), err


# -- a zip whose member is no file -----------------------------------------------------------------------------
@pytest.mark.parametrize("mode, words", [(stat.S_IFLNK | 0o777, "a symbolic link"), (stat.S_IFCHR | 0o666, "a device")])
def test_a_zip_member_that_is_a_link_or_a_device_is_not_read_as_the_file(tmp_path, mode, words):
    """unzip would make it a link (here to the truth) or a device: its bytes are not the participant's file."""
    path = tmp_path / "prediction.zip"
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo("prediction.txt")
        info.external_attr, info.create_system = mode << 16, 3
        archive.writestr(info, MIND_PREDICTION.read_bytes())
    code, out, err = run_cli("score", path, "--truth", MIND_TRUTH, "--competition", "mind", "--untrusted", "--strict")
    assert code == 1 and "S025" in out + err and words in out + err, out + err


def test_a_zip_member_of_a_regular_file_still_scores(tmp_path):
    path = tmp_path / "prediction.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(MIND_PREDICTION, "prediction.txt")
    assert scorer.score(str(path), str(MIND_TRUTH), "mind").metrics == scorer.score(str(MIND_PREDICTION), str(MIND_TRUTH), "mind").metrics


# -- frames of the impression shape --------------------------------------------------------------------------
def test_an_impression_id_past_2_63_in_a_frame_is_a_usage_error():
    frame = pa.table({"impression_id": pa.array([1, 2**64 - 1], pa.uint64()), "ranks": [[1, 2, 3], [1, 2, 3, 4]]})
    with pytest.raises(UsageError, match="row 1: 18446744073709551615"):
        scorer.score(frame, str(MIND_TRUTH), "mind")


def test_ranks_past_2_53_in_a_frame_score_as_the_file_does(tmp_path):
    """pyarrow's safe cast refused them (ArrowInvalid); the file's reader takes them as float64."""
    path = tmp_path / "prediction.txt"
    path.write_text("1 [9007199254740993,1,3]\n2 [1,2,3,4]\n")
    frame = pa.table({"impression_id": [1, 2], "ranks": [[9007199254740993, 1, 3], [1, 2, 3, 4]]})
    assert scorer.score(frame, str(MIND_TRUTH), "mind").metrics == scorer.score(str(path), str(MIND_TRUTH), "mind").metrics
    unsigned = pa.table({"impression_id": [1, 2], "ranks": pa.array([[2**64 - 1, 1, 2], [1, 2, 3, 4]], pa.list_(pa.uint64()))})
    assert scorer.score(unsigned, str(MIND_TRUTH), "mind").score is not None


def test_a_record_batch_reader_that_fails_midway_is_a_usage_error():
    schema = pa.schema([("session_type", pa.string()), ("labels", pa.string())])

    def batches():
        yield pa.record_batch([pa.array(["1_clicks"]), pa.array(["1 2"])], schema=schema)
        raise ValueError("the source broke")

    with pytest.raises(UsageError, match="RecordBatchReader could not be read: ValueError: the source broke"):
        scorer.score(pa.RecordBatchReader.from_batches(schema, batches()), str(FIXTURES / "otto_truth.jsonl"))


# -- the Python API: arguments of the wrong type --------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: scorer.score(str(MIND_PREDICTION), str(MIND_TRUTH), 5),
    lambda: scorer.score(str(MIND_PREDICTION), str(MIND_TRUTH), config=5),
    lambda: scorer.validate(str(MIND_PREDICTION), competition=["mind"]),
    lambda: scorer.score(str(MIND_PREDICTION), pa.table({"x": [1]}), "mind"),
    lambda: scorer.explain(str(MIND_PREDICTION), str(MIND_TRUTH), competition="mind", against=5),
    lambda: scorer.score("prediction\0.txt", str(MIND_TRUTH), "mind"),
    lambda: scorer.score(str(MIND_PREDICTION), "truth\0.txt", "mind"),
], ids=["competition int", "config int", "competition list", "impression truth frame", "against int", "NUL submission", "NUL truth"])
def test_an_argument_of_the_wrong_type_is_a_usage_error(call):
    with pytest.raises(ScorerError) as caught:
        call()
    assert isinstance(caught.value, UsageError), caught.value


# -- names of undecodable bytes in reports ------------------------------------------------------------------
@pytest.mark.parametrize("command", ["score", "compare", "similar"])
def test_a_report_names_a_file_of_undecodable_bytes(tmp_path, command):
    pytest.importorskip("matplotlib")
    a = tmp_path / os.fsdecode(b"a\xff.csv")
    shutil.copy(FIXTURES / "otto_submission.csv", a)
    b = tmp_path / "b.csv"
    b.write_text((FIXTURES / "otto_submission.csv").read_text().replace(" ", " 7 ", 3))
    report = tmp_path / "report.html"
    argv = {"score": ["score", a, "--truth", FIXTURES / "otto_truth.jsonl", "--report", report],
            "compare": ["compare", a, b, "--truth", FIXTURES / "otto_truth.jsonl", "--bootstrap", "10", "--report", report],
            "similar": ["similar", a, b, "--report", report]}[command]
    code, _, err = run_cli(*argv)
    assert code == 0 and "internal error" not in err, err
    assert "a\\udcff.csv" in report.read_text(encoding="utf-8")


# -- similar on the shapes it does not read ---------------------------------------------------------------------
@pytest.mark.parametrize("competition, submission", [("mind", "mind/prediction.txt"), ("trivago19", "trivago19/submission.csv"),
                                                     ("spotify-mpd", "spotify-mpd/submission.csv"),
                                                     ("kdd23-m2", "kdd23-m2/submission.parquet"),
                                                     ("yoochoose15", "yoochoose15/submission.dat")])
def test_similar_says_it_does_not_read_a_layout_instead_of_blaming_a_valid_file(tmp_path, competition, submission):
    source = FIXTURES / submission
    a, b = tmp_path / f"a{source.suffix}", tmp_path / f"b{source.suffix}"
    shutil.copy(source, a)
    shutil.copy(source, b)
    code, _, err = run_cli("similar", a, b, "--competition", competition)
    assert code == 2 and "scorer similar reads an id and its items in two columns" in one_sentence(err), err


def test_similar_still_reads_the_long_shape_of_two_columns(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    shutil.copy(FIXTURES / "expedia13" / "submission.csv", a)
    b.write_text((FIXTURES / "expedia13" / "submission.csv").read_text())
    assert run_cli("similar", a, b, "--competition", "expedia13")[0] == 0


# -- configs: the new keys at their bounds ----------------------------------------------------------------------
@pytest.mark.parametrize("edit, words", [(("max_line_bytes = 65_536", "max_line_bytes = 1180591620717411303424"), "at most"),
                                         (('key = ["tweet_id", "engaging_user_id"]', "key = []"), "names no column")])
def test_a_config_key_at_its_bound_is_a_config_error(tmp_path, edit, words):
    base = "trivago19" if "max_line" in edit[0] else "twitter20"
    text = (Path(scorer.__file__).parent / "spec" / "configs" / f"{base}.toml").read_text()
    assert edit[0] in text
    config = tmp_path / "edited.toml"
    config.write_text(text.replace(edit[0], edit[1]))
    submission = {"trivago19": FIXTURES / "trivago19" / "submission.csv", "twitter20": FIXTURES / "twitter20" / "submission.csv"}[base]
    truth = {"trivago19": FIXTURES / "trivago19" / "ground_truth.csv", "twitter20": FIXTURES / "twitter20" / "truth.csv"}[base]
    code, _, err = run_cli("score", submission, "--truth", truth, "--config", config)
    assert code == 2 and words in one_sentence(err), err


# -- a published truth's integer items of any length ------------------------------------------------------------
def test_an_integer_item_of_5000_digits_is_read_as_the_kernel_reads_it(tmp_path):
    """int() refuses more than 4,300 digits (ValueError, exit 3); the kernel reads the submission's item as text."""
    long = "1" * 5000
    truth = tmp_path / "truth.csv"
    truth.write_text("user_id,session_id,timestamp,step,action_type,reference\nu,s,1,2,clickout item,00" + long + "\n")
    submission = tmp_path / "submission.csv"
    submission.write_text("user_id,session_id,timestamp,step,item_recommendations\nu,s,1,2,5 +" + long + "\n")
    assert scorer.score(str(submission), str(truth), "trivago19").score == 0.5


# -- the live Ladder: a split it cannot use is said before the state is written ---------------------------------
def test_the_live_ladder_refuses_a_public_part_of_fewer_than_two_sessions_and_writes_no_state(tmp_path):
    from scorer.adapters import evalai

    submission = tmp_path / "red.parquet"
    shutil.copy(FIXTURES / "kdd23-m2" / "submission.parquet", submission)
    state = tmp_path / "state.ladder"
    with pytest.raises(evalai.EvaluationFailed):
        evalai.evaluate(str(KDD_TRUTH), str(submission), "test", competition="kdd23-m2", ladder_state=str(state), ladder_split="public=0.5",
                        team="red")
    assert not state.exists()
