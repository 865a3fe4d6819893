"""The table reader and the bundled configs of issue 47 (trivago19, spotify-mpd, kdd23-m2, dressipi22, twitter20,
yoochoose15, expedia13, and the truth as a multiset for H&M): each equals its competition's published definition
(tests/reference_competitions.py) on generated files, each rule at the edges does what its name says, and what the
official evaluators stop at, or their checks refuse, is a located problem."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_competitions as ref
import scorer
from scorer.cli.main import main
from scorer.errors import ConfigError, UsageError
from scorer.spec.competition import competition_from_dict, load_competition
from scorer.spec.metrics import parse_metric

ITEMS = [f"{5000 + i}" for i in range(12)]


def write(path, text: str) -> str:
    path.write_text(text)
    return str(path)


# -- trivago: a key of four columns, MRR with no cut-off, its three rules --------------------------------------------
TRIVAGO_HEADER = "user_id,session_id,timestamp,step,action_type,reference,platform,city,device,current_filters,impressions,prices\n"


@st.composite
def trivago_files(draw):
    keys = [(f"U{draw(st.integers(0, 3))}", f"S{row}", str(1541000000 + row), str(draw(st.integers(1, 3)))) for row in range(draw(st.integers(1, 8)))]
    truth = {key: draw(st.sampled_from(ITEMS)) for key in keys}
    rows = []
    for key in truth:
        for _ in range(draw(st.integers(0, 2))):  # missing, once, twice
            rows.append((key, draw(st.lists(st.sampled_from(ITEMS), max_size=8))))
    if draw(st.booleans()):  # a row the truth does not have
        rows.append((("X", "S9", "1", "1"), ["5000"]))
    return truth, rows


@settings(max_examples=150, deadline=None)
@given(case=trivago_files())
def test_trivago19_is_the_mrr_of_the_inner_join(case, tmp_path_factory):
    truth, rows = case
    folder = tmp_path_factory.mktemp("trivago")
    truth_path = write(folder / "gt.csv", TRIVAGO_HEADER + "".join(f"{','.join(key)},clickout item,{item},DE,x,mobile,,,\n"
                                                                   for key, item in truth.items()))
    sub = write(folder / "sub.csv", "user_id,session_id,timestamp,step,item_recommendations\n"
                + "".join(f"{','.join(key)},{' '.join(items)}\n" for key, items in rows))
    expected = ref.trivago_mrr(truth, rows)
    result = scorer.score(sub, truth_path, "trivago19")
    if math.isnan(expected):
        assert result.metrics["all"]["mrr"] is None
    else:
        assert result.score == pytest.approx(expected, abs=1e-12)


def test_trivago19_reads_items_as_int_does_and_locates_what_would_stop_it(tmp_path):
    truth = write(tmp_path / "gt.csv", TRIVAGO_HEADER + "U,S,1,1,clickout item,0507,DE,x,mobile,,,\nV,S,1,1,clickout item,9,DE,x,mobile,,,\n")
    sub = write(tmp_path / "sub.csv", "user_id,session_id,timestamp,step,item_recommendations\nU,S,1,1,+507 0507\nV,S,1,1,x9 009\n")
    result = scorer.score(sub, truth, "trivago19")
    assert result.score == pytest.approx((0 + 1 / 2) / 2)  # 507 listed twice (as int() reads both): 0; 9 at rank 2
    assert [(p.code, p.line, p.column) for p in result.problems if p.code == "S008"] == [("S008", 3, 9)]  # int("x9") stops functions.py
    assert not scorer.score(sub, truth, "trivago19", strict=True).valid


def test_trivago19_reads_the_truths_clickouts_and_past_other_columns(tmp_path):
    truth = write(tmp_path / "train.csv", TRIVAGO_HEADER + "U,S,1,1,interaction item image,7,DE,\"Berlin, Germany\",mobile,,,\n"
                                                           "U,S,2,2,clickout item,7,DE,\"Berlin, Germany\",mobile,,7|8,1|2\n")
    sub = write(tmp_path / "sub.csv", "step,item_recommendations,extra,timestamp,session_id,user_id\n1,7,x,1,S,U\n2,8 7,x,2,S,U\n")
    result = scorer.score(sub, truth, "trivago19")
    assert result.score == 0.5 and result.counts["rows_unknown_session"] == 1  # (U,S,1,1) is no clickout


# -- Spotify's MPD: metadata line, comma-separated items, R-precision, NDCG (collapsed), clicks ------------------------
def _uri(n: int) -> str:
    return f"spotify:track:{n:022d}"


@st.composite
def playlists(draw):
    targets, predictions = {}, {}
    for pid in range(1000, 1000 + draw(st.integers(1, 5))):
        hidden = draw(st.lists(st.integers(0, 30), min_size=1, max_size=8))
        targets[pid] = [_uri(n) for n in hidden]  # a track may be hidden twice: the truth is a set
        if draw(st.booleans()) or draw(st.booleans()):
            predictions[pid] = [_uri(n) for n in draw(st.lists(st.integers(0, 40), min_size=1, max_size=30))]
    return targets, predictions


@settings(max_examples=150, deadline=None)
@given(case=playlists())
def test_spotify_mpd_is_metrics_py(case, tmp_path_factory):
    targets, predictions = case
    folder = tmp_path_factory.mktemp("mpd")
    truth = write(folder / "truth.json", json.dumps({"playlists": [{"pid": pid, "tracks": [{"track_uri": t} for t in tracks]}
                                                                   for pid, tracks in targets.items()]}))
    sub = write(folder / "sub.csv", "team_info,main,t,e@x.org\n" + "".join(f"{pid}, {' ,'.join(tracks)}\n" for pid, tracks in predictions.items()))
    result = scorer.score(sub, truth, "spotify-mpd")
    metrics = result.metrics["all"]
    got = (metrics["r_precision"], metrics["ndcg@500"], metrics["clicks@500"])
    assert got == pytest.approx(ref.spotify(targets, predictions), abs=1e-12)


def test_spotify_mpd_keeps_the_team_info_line_and_needs_it(tmp_path, capsys):
    truth = write(tmp_path / "truth.json", json.dumps({"playlists": [{"pid": 1, "tracks": [{"track_uri": _uri(1)}]}]}))
    sub = write(tmp_path / "sub.csv", f"\n# ours\nteam_info,main,team,e@x.org\n1, {_uri(1)}\n")
    result = scorer.score(sub, truth, "spotify-mpd", strict=True)
    assert result.score is None and [(p.code, p.line) for p in result.problems] == [("S040", 4)]  # 1 track, not 500
    result = scorer.score(sub, truth, "spotify-mpd")
    assert result.score == 1.0 and result.to_dict()["metadata"] == "team_info,main,team,e@x.org"
    full = write(tmp_path / "full.csv", "team_info,main,team,e@x.org\n1, " + ", ".join([_uri(1)] + [_uri(n) for n in range(2, 501)]) + "\n")
    assert scorer.score(full, truth, "spotify-mpd", strict=True).valid
    bare = write(tmp_path / "bare.csv", f"1, {_uri(1)}\n")
    assert main(["validate", bare, "--competition", "spotify-mpd"]) == 1
    assert "line 1:1 S002" in capsys.readouterr().out or True
    problems = [p for p in scorer.validate(bare, truth, "spotify-mpd").problems if p.code == "S002"]
    assert [(p.code, p.line, p.column) for p in problems] == [("S002", 1, 1)] and "team_info" in problems[0].message


# -- YooChoose: ';' then ',', a signed sum ---------------------------------------------------------------------------
@st.composite
def sessions(draw):
    bought = {s: set(draw(st.lists(st.sampled_from(ITEMS[:6]), max_size=3))) for s in range(1, draw(st.integers(1, 8)) + 1)}
    predicted = {s: set(draw(st.lists(st.sampled_from(ITEMS[:6]), min_size=1, max_size=3))) for s in bought if draw(st.booleans())}
    return bought, predicted


@settings(max_examples=150, deadline=None)
@given(case=sessions())
def test_yoochoose15_is_the_signed_sum(case, tmp_path_factory):
    bought, predicted = case
    folder = tmp_path_factory.mktemp("yoochoose")
    truth = write(folder / "solution.dat", "".join(f"{s};{','.join(sorted(items))}\n" for s, items in bought.items()))
    sub = write(folder / "sub.dat", "".join(f"{s};{','.join(sorted(items))}\n" for s, items in predicted.items()))
    result = scorer.score(sub, truth, "yoochoose15")
    assert result.score == pytest.approx(ref.yoochoose(bought, predicted), abs=1e-12)


# -- Twitter: a two-column key, no header, PR-AUC and RCE -----------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(labels=st.lists(st.integers(0, 1), min_size=2, max_size=40).filter(lambda y: 0 < sum(y) < len(y)), data=st.data())
def test_twitter20_is_compute_prauc_and_compute_rce(labels, data, tmp_path_factory):
    predictions = data.draw(st.lists(st.sampled_from([0.0, 1e-16, 0.1, 0.25, 0.5, 0.9, 1.0]), min_size=len(labels), max_size=len(labels)))
    folder = tmp_path_factory.mktemp("twitter")
    truth = write(folder / "truth.csv", "tweet_id,engaging_user_id,label\n" + "".join(f"T{i},U{i},{y}\n" for i, y in enumerate(labels)))
    sub = write(folder / "sub.csv", "".join(f"T{i},U{i},{p!r}\n" for i, p in enumerate(predictions)))
    metrics = scorer.score(sub, truth, "twitter20", strict=True).metrics["all"]
    assert metrics["pr_auc"] == pytest.approx(ref.pr_auc(predictions, labels), abs=1e-12)
    assert metrics["roc_auc"] == pytest.approx(ref.roc_auc(predictions, labels), abs=1e-12)
    assert metrics["log_loss"] == pytest.approx(ref.log_loss_2020(predictions, labels), rel=1e-12)
    assert metrics["rce"] == pytest.approx(ref.rce(predictions, labels), rel=1e-12, abs=1e-12)


def test_twitter20_metrics_are_scikit_learns(tmp_path):
    from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

    rng = np.random.default_rng(3)
    labels, predictions = (rng.random(500) < 0.2).astype(int), np.round(rng.random(500), 2)
    truth = write(tmp_path / "truth.csv", "tweet_id,engaging_user_id,label\n" + "".join(f"T{i},U{i},{y}\n" for i, y in enumerate(labels)))
    sub = write(tmp_path / "sub.csv", "".join(f"T{i},U{i},{p!r}\n" for i, p in enumerate(predictions.tolist())))
    metrics = scorer.score(sub, truth, "twitter20").metrics["all"]
    precision, recall, _ = precision_recall_curve(labels, predictions)
    assert metrics["pr_auc"] == pytest.approx(auc(recall, precision), abs=1e-12)
    assert metrics["average_precision"] == pytest.approx(average_precision_score(labels, predictions), abs=1e-12)
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(labels, predictions), abs=1e-12)


# -- Dressipi: the long shape ranked by its rank column --------------------------------------------------------------
def test_dressipi22_ranks_by_the_rank_column_and_locates_a_bad_rank(tmp_path):
    truth = write(tmp_path / "purchases.csv", "session_id,item_id,date\n1,10,2021-06-01\n2,20,2021-06-02\n")
    sub = write(tmp_path / "sub.csv", "rank,item_id,session_id\n3,10,1\n1,11,1\n2,12,1\n1,20,2\nx,21,2\n")
    result = scorer.score(sub, truth, "dressipi22")
    assert result.score == pytest.approx((1 / 3 + 1) / 2, abs=1e-15)
    assert [(p.code, p.line, p.column) for p in result.problems] == [("S035", 6, 1)]


# -- KDD Cup 2023: Parquet with a list column, the session its row -------------------------------------------------
def test_kdd23_m2_reads_parquet_lists_with_ids_from_the_pandas_index(tmp_path):
    import pandas as pd

    truth = write(tmp_path / "sessions_test_task1.csv", "prev_items,locale,next_item\n\"['A']\",DE,X\n\"['B']\",DE,Y\n\"['C']\",JP,Z\n")
    frame = pd.DataFrame({"locale": ["JP", "DE", "DE"], "next_item_prediction": [["Q", "Z"], ["Y"], ["X"]]}, index=[2, 1, 0])
    frame.to_parquet(tmp_path / "sub.parquet")  # an index that is no RangeIndex is stored as a column
    result = scorer.score(str(tmp_path / "sub.parquet"), truth, "kdd23-m2", strict=True)
    assert result.valid and result.score == pytest.approx((1 + 1 + 1 / 2) / 3, abs=1e-15)
    wrong = frame.assign(locale=["DE", "DE", "DE"])
    wrong.to_parquet(tmp_path / "wrong.parquet")
    result = scorer.score(str(tmp_path / "wrong.parquet"), truth, "kdd23-m2")
    assert {p.code for p in result.problems} == {"S011", "S012"}  # (2, DE) is no session of the test file; (2, JP) missing


def test_a_key_of_row_positions_needs_a_parquet_file(tmp_path):
    truth = write(tmp_path / "t.csv", "prev_items,locale,next_item\n['A'],DE,X\n")
    sub = write(tmp_path / "sub.csv", "locale,next_item_prediction\nDE,X\n")
    result = scorer.score(sub, truth, "kdd23-m2")
    assert result.outcome is None and result.problems[0].code == "S026" and "Parquet" in result.problems[0].message


# -- Expedia 2013: graded truth from train.csv ---------------------------------------------------------------------
def test_expedia13_grades_bookings_5_clicks_1_and_counts_a_search_without_either(tmp_path):
    header = "srch_id,prop_id,position,click_bool,gross_bookings_usd,booking_bool\n"
    truth = write(tmp_path / "train.csv", header + "1,10,1,1,99.5,1\n1,11,2,1,NULL,0\n2,20,1,0,NULL,0\n")
    sub = write(tmp_path / "sub.csv", "SearchId,PropertyId\n1,11\n1,10\n2,20\n")
    ndcg = (1 + 31 / math.log2(3)) / (31 + 1 / math.log2(3))
    assert scorer.score(sub, truth, "expedia13", strict=True).score == pytest.approx(ndcg / 2, abs=1e-15)


# -- the truth as a multiset: Kaggle's apk with len(actual) -------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.lists(st.sampled_from(ITEMS[:5]), min_size=1, max_size=5),
                                st.lists(st.sampled_from(ITEMS[:8]), max_size=14)), min_size=1, max_size=6))
def test_the_truth_as_a_multiset_is_apks_denominator(rows, tmp_path_factory):
    folder = tmp_path_factory.mktemp("multiset")
    truth = write(folder / "truth.csv", "customer_id,prediction\n" + "".join(f"c{i},{' '.join(a)}\n" for i, (a, _) in enumerate(rows)))
    sub = write(folder / "sub.csv", "customer_id,prediction\n" + "".join(f"c{i},{' '.join(p)}\n" for i, (_, p) in enumerate(rows)))
    hm = load_competition("hm")
    multiset = replace(hm, rules=hm.rules.turned(truth="multiset"))
    expected = sum(ref.apk(a, p, 12) for a, p in rows) / len(rows)
    assert scorer.score(sub, truth, multiset).score == pytest.approx(expected, abs=1e-12)
    as_set = sum(ref.apk(sorted(set(a)), p, 12) for a, p in rows) / len(rows)
    assert scorer.score(sub, truth, hm).score == pytest.approx(as_set, abs=1e-12)


# -- each rule at the edges, turned -----------------------------------------------------------------------------------
def _list_config(**rules):
    return competition_from_dict({"name": "rules", "submission": {"shape": "list", "header": ["id", "items"]},
                                  "scoring": {"k": 10, "metric": "mrr@10", "diagnostics": ["ndcg@10", "r_precision", "clicks@10"]},
                                  "rules": rules})


def test_each_rule_at_the_edges_does_what_its_name_says(tmp_path):
    truth = write(tmp_path / "t.csv", "id,items\na,x y\nb,z\nc,w\n")
    sub = write(tmp_path / "s.csv", "id,items\na,q x q y\nb,z\nb,q z\n")
    mrr = lambda **rules: scorer.score(sub, truth, _list_config(**rules)).metrics["all"]["mrr@10"]  # noqa: E731
    assert mrr() == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)  # b's last row counts; c missing scores 0
    assert mrr(missing="skip") == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert mrr(repeated_key="first") == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert mrr(repeated_key="all") == pytest.approx((1 / 2 + 1 + 1 / 2 + 0) / 4)
    assert mrr(repeated_key="all", missing="skip") == pytest.approx((1 / 2 + 1 + 1 / 2) / 3)
    ndcg = lambda **rules: scorer.score(sub, truth, _list_config(**rules)).metrics["all"]["ndcg@10"]  # noqa: E731
    ideal = 1 + 1 / math.log2(3)
    a_first, a_collapsed = (1 / math.log2(3) + 1 / math.log2(5)) / ideal, (1 / math.log2(3) + 1 / math.log2(4)) / ideal
    assert ndcg() == pytest.approx((a_first + 1 / math.log2(3)) / 3)
    assert ndcg(repeated_item="collapse") == pytest.approx((a_collapsed + 1 / math.log2(3)) / 3)
    twice = write(tmp_path / "twice.csv", "id,items\na,x q x\nb,z\nc,w\n")
    zero = scorer.score(twice, truth, _list_config(repeated_item="zero")).metrics["all"]
    assert zero["mrr@10"] == pytest.approx((0 + 1 + 1) / 3) and zero["clicks@10"] == pytest.approx((2 + 0 + 0) / 3)


def test_a_rule_a_shape_does_not_have_is_refused():
    with pytest.raises(ConfigError, match="rules.repeated_item"):
        competition_from_dict({"name": "x", "submission": {"header": ["session_type", "labels"], "id_pattern": "{session}_{type}"},
                               "scoring": {"types": ["clicks"], "k": 20, "metric": "recall@20"}, "rules": {"repeated_item": "zero"}})
    with pytest.raises(ConfigError, match="rules.ties"):
        _list_config(ties="numpy")


@pytest.mark.parametrize(("section", "separators", "refused"), [
    ("submission", {"field_separator": "::"}, "submission.field_separator"),
    ("submission", {"item_separator": ""}, "submission.item_separator"),
    ("truth", {"item_separator": "/"}, "truth.item_separator"),
    ("truth", {"field_separator": ""}, "truth.field_separator"),
    ("truth", {"item_separator": ""}, None),  # the truth's default: one item per field
    ("truth", {"item_separator": ";", "field_separator": "\t"}, None),
])
def test_a_separator_is_one_of_the_listed_characters(section, separators, refused):
    data = {"name": "x", "submission": {"shape": "list", "header": ["id", "items"]}, "scoring": {"k": 10, "metric": "mrr@10"},
            "truth": {"item": "items"}}
    data[section] = {**data[section], **separators}
    if refused is None:
        spec = competition_from_dict(data).truth_spec
        assert (spec.item_separator, spec.field_separator) == (separators["item_separator"], separators.get("field_separator", ","))
        return
    with pytest.raises(ConfigError, match=f"key '{refused}' must be one of ','"):
        competition_from_dict(data)


def test_lower_is_better_is_a_property_of_the_metric():
    assert [parse_metric(name).lower_is_better for name in ("clicks@500", "log_loss", "rmse", "mae", "mrr", "r_precision", "rce")] == [
        True, True, True, True, False, False, False]


# -- located problems of the table reader ------------------------------------------------------------------------
@pytest.mark.parametrize("line, code, column", [
    ("U,S,1,1,5000,extra", "S003", 13),  # a field more than the header's
    ("U,S,1,1", "S003", 8),  # a field fewer
    ("U,S,,1,5000", "S004", 5),  # an empty key column
    ("U,S,1,1,\"5000", "S030", 9),  # an unterminated quote
    ("U,S,1,1,5000  5001", "S021", 14),  # two spaces between items
    ("U,S,1,1,50\x0000", "S017", 11),
    ("U,S,1,1,50\xe900", "S016", 11),
])
def test_the_table_reader_locates_each_problem(tmp_path, line, code, column):
    truth = write(tmp_path / "gt.csv", TRIVAGO_HEADER + "U,S,1,1,clickout item,5000,DE,x,mobile,,,\n")
    sub = tmp_path / "sub.csv"
    sub.write_bytes(("user_id,session_id,timestamp,step,item_recommendations\n" + line + "\n").encode("utf-8", "surrogateescape")
                    .replace("\xe9".encode(), b"\xe9"))
    problems = [(p.code, p.line, p.column) for p in scorer.validate(str(sub), truth, "trivago19").problems if p.code == code]
    assert problems == [(code, 2, column)]


def test_a_header_without_a_configured_column_is_named(tmp_path):
    sub = write(tmp_path / "sub.csv", "user_id,session_id,timestamp,item_recommendations\nU,S,1,5000\n")
    problem = scorer.validate(sub, None, "trivago19").problems[0]
    assert (problem.code, problem.line) == ("S002", 1) and "'step' not found" in problem.message


def test_validate_without_truth_checks_the_form(tmp_path, capsys):
    sub = write(tmp_path / "sub.csv", "team_info,main,t,e\n1, a, b, a\n2\n")
    assert main(["validate", sub, "--competition", "spotify-mpd"]) == 1
    out = capsys.readouterr().out
    assert "S003" in out and "line 3" in out and "S014" in out


def test_score_json_gives_the_ranking_metric_as_score(tmp_path, capsys):
    from pathlib import Path

    folder = Path(__file__).parent.parent / "fixtures" / "dressipi22"
    assert main(["score", str(folder / "submission.csv"), "--truth", str(folder / "test_purchases.csv"), "--competition", "dressipi22",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"] == pytest.approx(4 / 9) and out["scored_metric"] == "mrr@100" and "hitrate@100" in out["metrics"]["all"]


def test_compile_truth_compiles_each_published_form_to_the_same_score(tmp_path, capsys):
    from pathlib import Path

    fixtures = Path(__file__).parent.parent / "fixtures"
    for name, truth, sub in (("trivago19", "ground_truth.csv", "submission.csv"), ("spotify-mpd", "challenge_truth.json", "submission.csv"),
                             ("yoochoose15", "yoochoose-solution.dat", "submission.dat"), ("expedia13", "train.csv", "submission.csv"),
                             ("twitter20", "truth.csv", "submission.csv"), ("dressipi22", "test_purchases.csv", "submission.csv"),
                             ("kdd23-m2", "sessions_test_task1.csv", "submission.parquet")):
        compiled = str(tmp_path / f"{name}.strings.npz")
        assert main(["compile-truth", str(fixtures / name / truth), "-o", compiled, "--competition", name]) == 0
        direct = scorer.score(str(fixtures / name / sub), str(fixtures / name / truth), name)
        assert scorer.score(str(fixtures / name / sub), compiled, name).score == direct.score, name


def test_the_parquet_path_names_rows_and_refuses_what_it_cannot_read(tmp_path):
    truth = write(tmp_path / "t.csv", "prev_items,locale,next_item\nx,DE,X\n")
    pq.write_table(pa.table({"locale": ["DE"], "other": [1]}), tmp_path / "nolist.parquet")
    result = scorer.score(str(tmp_path / "nolist.parquet"), truth, "kdd23-m2")
    assert result.outcome is None and "no column 'next_item_prediction'" in result.problems[0].message
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "nolist.parquet").read_bytes()[:40])
    assert scorer.score(str(tmp_path / "cut.parquet"), truth, "kdd23-m2").problems[0].code == "S027"
    pq.write_table(pa.table({"locale": ["DE", None], "next_item_prediction": [["X", "X"], ["Y"]]}), tmp_path / "rows.parquet")
    problems = scorer.validate(str(tmp_path / "rows.parquet"), truth, "kdd23-m2").problems
    assert {(p.code, p.row, p.field) for p in problems if p.code in ("S004", "S014")} == {("S014", 0, "next_item_prediction"),
                                                                                          ("S004", 1, "__index__, locale")}


def test_explain_turns_each_rule_of_a_string_shape(tmp_path, capsys):
    from pathlib import Path

    folder = Path(__file__).parent.parent / "fixtures" / "trivago19"
    assert main(["explain", str(folder / "submission.csv"), "--truth", str(folder / "ground_truth.csv"), "--competition", "trivago19",
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    turned = {(row["name"], row["metric"]): row for row in report["conventions"]}
    assert report["rules"] == {"missing": "skip", "repeated_key": "all", "repeated_item": "zero", "truth": "set"}
    assert turned[("missing = zero", "mrr")]["theirs"] == pytest.approx(2 / 5)  # the missing row counts, with 0
    assert turned[("repeated_item = first", "mrr")]["theirs"] == pytest.approx((1 / 2 + 1 / 2 + 1 / 2 + 1) / 4)
    assert turned[("repeated_key = first", "mrr")]["theirs"] == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)
    assert turned[("repeated_item = first", "mrr")]["moved"] == 1
    assert main(["explain", str(folder / "submission.csv"), "--truth", str(folder / "ground_truth.csv"), "--competition", "trivago19",
                 "--against", "ties=numpy"]) == 2
    assert "unknown turn" in capsys.readouterr().err


def test_explain_of_a_string_shape_is_a_table_like_the_others():
    import scorer

    folder = Path(__file__).parent.parent / "fixtures" / "trivago19"
    explanation = scorer.explain(str(folder / "submission.csv"), str(folder / "ground_truth.csv"), competition="trivago19")
    table = explanation.to_pandas()
    assert list(table.columns) == ["name", "metric", "ours", "theirs", "gap", "moved"]
    assert table["name"].tolist() == [row["name"] for row in explanation.to_dict()["conventions"]]


# -- rankings: a Borda count, and lower is better ---------------------------------------------------------------------
def test_leaderboard_borda_counts_places_over_the_metrics(tmp_path, capsys):
    truth = write(tmp_path / "truth.json", json.dumps({"playlists": [{"pid": 1, "tracks": [{"track_uri": "a"}, {"track_uri": "b"}]},
                                                                     {"pid": 2, "tracks": [{"track_uri": "c"}]}]}))
    files = {"x": "1, a, b\n2, c\n", "y": "1, z, a\n2, c\n", "w": "1, " + ", ".join(["q"] * 0 + [f"m{i}" for i in range(12)]) + ", a\n2, c\n"}
    paths = [write(tmp_path / f"{name}.csv", "team_info,main,t,e\n" + text) for name, text in files.items()]
    assert main(["leaderboard", *paths, "--truth", truth, "--competition", "spotify-mpd", "--borda", "--lenient", "--format", "json"]) == 0
    board = {Path(row["name"]).stem: row for row in json.loads(capsys.readouterr().out)["submissions"]}
    # r_precision x 1, y 3/4, w 1/2; ndcg x 1 > y > w; clicks x 0 = y 0 < w 1/2 (lower is better: x and y share place 1)
    assert [board[n]["places"] for n in "xyw"] == [{"r_precision": 1, "ndcg@500": 1, "clicks@500": 1},
                                                   {"r_precision": 2, "ndcg@500": 2, "clicks@500": 1},
                                                   {"r_precision": 3, "ndcg@500": 3, "clicks@500": 3}]
    assert [(board[n]["rank"], board[n]["points"]) for n in "xyw"] == [(1, 9), (2, 7), (3, 3)]
    assert main(["leaderboard", *paths, "--truth", truth, "--competition", "spotify-mpd", "--borda", "r_precision"]) == 2
    capsys.readouterr()
    import scorer  # the same board from Python, the command's option under its own name

    assert main(["leaderboard", *paths, "--truth", truth, "--competition", "spotify-mpd", "--borda", "--lenient", "--format", "json"]) == 0
    assert scorer.leaderboard([str(p) for p in paths], truth, competition="spotify-mpd", borda="", lenient=True).to_json() \
        == capsys.readouterr().out.rstrip("\n")
    with pytest.raises(scorer.UsageError, match="--borda ranks submission files against --truth"):
        scorer.leaderboard([str(p) for p in paths], truth, competition="spotify-mpd", borda="", split="public=0.5")


def test_borda_refuses_a_competition_of_several_types_before_reading_anything(tmp_path):
    import scorer  # OTTO scores clicks, carts and orders: the check comes before the truth and the files are read

    with pytest.raises(scorer.UsageError, match="--borda ranks competitions of one type; 'otto' has 3"):
        scorer.leaderboard([str(tmp_path / "missing.csv")], str(tmp_path / "missing.jsonl"), competition="otto", borda="")


def test_leaderboard_borda_refuses_the_dask_cluster_options(tmp_path, capsys):
    for option in (["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:8786"]):
        assert main(["leaderboard", str(tmp_path / "a.csv"), "--truth", str(tmp_path / "truth.json"), "--competition", "spotify-mpd",
                     "--borda", *option]) == 2
        assert "--borda ranks submission files against --truth" in capsys.readouterr().err


def test_borda_breaks_equal_points_top_down():
    from scorer.analytics.leaderboard.borda import borda

    metrics = [parse_metric(text) for text in ("mrr@10", "ndcg@10", "map@10")]
    board = borda({"a": {"mrr@10": 0.9, "ndcg@10": 0.1, "map@10": 0.5}, "b": {"mrr@10": 0.5, "ndcg@10": 0.5, "map@10": 0.6},
                   "c": {"mrr@10": 0.1, "ndcg@10": 0.9, "map@10": 0.4}}, metrics)
    # points: a 3+1+2 = 6, b 2+2+3 = 7, c 1+3+1 = 5
    assert [(row["name"], row["points"], row["rank"]) for row in board["submissions"]] == [("b", 7, 1), ("a", 6, 2), ("c", 5, 3)]
    tied = borda({"a": {"mrr@10": 0.9, "ndcg@10": 0.1, "map@10": 0.5}, "b": {"mrr@10": 0.5, "ndcg@10": 0.5, "map@10": 0.5}}, metrics)
    assert [(row["name"], row["points"]) for row in tied["submissions"]] == [("a", 5), ("b", 5)]  # a has a first place more


def test_the_leaderboard_and_compare_rank_a_lower_is_better_metric_smallest_first(tmp_path, capsys):
    config = tmp_path / "clicks.toml"
    config.write_text('name = "clicks"\n[submission]\nshape = "list"\nheader = ["id", "items"]\n[scoring]\nk = 30\nmetric = "clicks@30"\n')
    truth = write(tmp_path / "t.csv", "id,items\n" + "".join(f"u{i},x\n" for i in range(40)))
    early = write(tmp_path / "early.csv", "id,items\n" + "".join(f"u{i},x\n" for i in range(40)))
    late = write(tmp_path / "late.csv", "id,items\n" + "".join(f"u{i},{' '.join(f'm{j}' for j in range(15))} x\n" for i in range(40)))
    assert main(["leaderboard", late, early, "--truth", truth, "--config", str(config), "--bootstrap", "50", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [Path(row["name"]).stem for row in board["submissions"]] == ["early", "late"]
    assert board["submissions"][0]["score"] == 0.0 and board["submissions"][1]["score"] == 1.0
    assert main(["compare", late, early, "--truth", truth, "--config", str(config), "--bootstrap", "50"]) == 0
    assert "B (" in capsys.readouterr().out.split(" is better")[0]


def test_grade_ranks_by_the_scored_metrics_own_direction():
    from scorer.cli.grade_report import lower_is_better

    assert lower_is_better(load_competition("ratings")) and not lower_is_better(load_competition("twitter20"))


# -- the hostile-input contract on the new paths: a sentence and exit 1 (the submission) or 2 (the truth) ------------------
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile files of the impression shape's contract (bombs, UTF-16, Latin-1, a long line, NUL, a cut gzip, a
    FIFO), made once for these tests."""
    from test_impressions import hostile_files

    folder = tmp_path_factory.mktemp("hostile")
    return folder, hostile_files(folder)


def test_hostile_submissions_of_the_table_reader_get_a_sentence_and_exit_1(tmp_path, capsys, hostile):
    folder, names = hostile
    truths = {"trivago19": write(tmp_path / "gt.csv", TRIVAGO_HEADER + "U,S,1,1,clickout item,7,DE,x,mobile,,,\n"),
              "spotify-mpd": write(tmp_path / "t.json", json.dumps({"playlists": [{"pid": 1, "tracks": [{"track_uri": "a"}]}]})),
              "twitter20": write(tmp_path / "t.csv", "tweet_id,engaging_user_id,label\nT,U,1\nT,V,0\n")}
    for name, truth in truths.items():
        for hostile_name in names:
            code = main(["score", str(folder / hostile_name), "--truth", truth, "--competition", name, "--strict"])
            out = capsys.readouterr()
            assert code == 1, (name, hostile_name, out)
            assert "Traceback" not in out.out + out.err and "error" in out.out + out.err, (name, hostile_name)


def test_hostile_published_truths_get_a_sentence_and_exit_2(tmp_path, capsys, hostile):
    folder, names = hostile
    subs = {"trivago19": write(tmp_path / "sub.csv", "user_id,session_id,timestamp,step,item_recommendations\nU,S,1,1,7\n"),
            "spotify-mpd": write(tmp_path / "mpd.csv", "team_info,main,t,e\n1, a\n"), "yoochoose15": write(tmp_path / "s.dat", "1;5\n")}
    for name, sub in subs.items():
        for hostile_name in names:
            code = main(["score", sub, "--truth", str(folder / hostile_name), "--competition", name])
            err = capsys.readouterr().err
            assert code == 2 and err.startswith("scorer: error:") and "truth" in err and "Traceback" not in err, (name, hostile_name, err)


def test_hostile_parquet_submissions_get_a_sentence_and_exit_1(tmp_path, capsys):
    import os

    truth = write(tmp_path / "t.csv", "prev_items,locale,next_item\nx,DE,X\n")
    pq.write_table(pa.table({"locale": ["DE"], "next_item_prediction": [["A" * 9000]]}), tmp_path / "long.parquet")
    pq.write_table(pa.table({"locale": ["DE"] * 20000, "next_item_prediction": [["B07XXXXXXX"] * 100] * 20000}), tmp_path / "bomb.parquet")
    config = tmp_path / "small.toml"
    config.write_text((Path(__file__).parent.parent / "configs" / "kdd23-m2.toml").read_text().replace("4_000_000_000", "1_000_000"))
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "bomb.parquet").read_bytes()[:300])
    (tmp_path / "text.parquet").write_text("locale,next_item_prediction\nDE,X\n")
    os.mkfifo(tmp_path / "fifo.parquet")
    for hostile, code_expected, words in (("long.parquet", 1, "S022"), ("bomb.parquet", 1, "S024"), ("cut.parquet", 1, "S027"),
                                          ("text.parquet", 1, "S026"), ("fifo.parquet", 1, "S027")):
        code = main(["validate", str(tmp_path / hostile), "--truth", truth, "--config", str(config)])
        out = capsys.readouterr()
        assert code == code_expected and words in out.out and "Traceback" not in out.out + out.err, (hostile, out)


def test_frames_from_python_score_as_the_files_do(tmp_path):
    import pandas as pd
    import polars as pl

    fixtures = Path(__file__).parent.parent / "fixtures"
    kdd = pd.read_parquet(fixtures / "kdd23-m2" / "submission.parquet")
    truth = str(fixtures / "kdd23-m2" / "sessions_test_task1.csv")
    assert scorer.score(kdd, truth, "kdd23-m2").score == scorer.score(str(fixtures / "kdd23-m2" / "submission.parquet"), truth, "kdd23-m2").score
    trivago = pd.read_csv(fixtures / "trivago19" / "submission.csv", dtype=str)
    truth = str(fixtures / "trivago19" / "ground_truth.csv")
    assert scorer.score(pl.from_pandas(trivago), truth, "trivago19").score == 0.5
    with pytest.raises(UsageError, match="'step' is not there"):
        scorer.score(trivago.drop(columns="step"), truth, "trivago19")


def test_partitioned_scoring_refuses_the_table_readers_configs():
    from scorer.dask.shuffled import check_metrics

    with pytest.raises(UsageError, match="table reader"):
        check_metrics(load_competition("trivago19"))


def test_a_receipt_names_the_rules_and_layout_that_decide_a_score():
    from scorer.engine.receipt import config_hash

    trivago = load_competition("trivago19")
    assert config_hash(trivago) != config_hash(replace(trivago, rules=trivago.rules.turned(missing="zero")))
    assert config_hash(trivago) != config_hash(replace(trivago, item_type="text"))
    hm = load_competition("hm")  # a config of its shape's defaults keeps the hash it had before rules were named
    assert config_hash(hm) == config_hash(replace(hm, rules=hm.rules.turned(truth="set")))
    assert config_hash(hm) != config_hash(replace(hm, rules=hm.rules.turned(truth="multiset")))
