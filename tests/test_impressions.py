"""The impression shape (MIND, EB-NeRD): the scorer equals the published definitions and MIND's rules at the edges
(tests/reference_impressions.py), numpy's order of equal ranks, and every place where the official evaluators stop is
a located problem."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_impressions as ref
import scorer
from scorer.cli.main import main
from scorer.errors import ConfigError, TruthError
from scorer.spec.competition import competition_from_dict, load_competition
from scorer.spec.metrics import parse_metric
from scorer.truth.impressions import read_impression_truth

METRICS = ("auc", "mrr", "ndcg@5", "ndcg@10")


def write(path, lines) -> str:
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def as_lines(rows) -> list[str]:
    return [f"{impression} [{','.join(str(v) for v in values)}]" for impression, values in rows]


def figures(result) -> tuple:
    return tuple(result.metrics["all"][name] for name in METRICS)


def score(tmp_path, truth, lines, competition="mind", **options):
    truth_path = write(tmp_path / "truth.txt", as_lines(truth))
    sub = write(tmp_path / "prediction.txt", lines)
    return scorer.score(sub, truth_path, competition, **options)


# -- the definitions and MIND's rules, with hypothesis ----------------------------------------------------------------
@st.composite
def impressions(draw):
    """A truth of impressions (some masked) and a submission of ranks: permutations, ties, gaps, ending early."""
    truth, lines = [], []
    for index in range(draw(st.integers(1, 8))):
        n = draw(st.integers(2, 16))  # numpy sorts up to 16 by insertion: equal ranks later first (reference's order)
        clicked = draw(st.integers(1, n - 1))
        labels = draw(st.permutations([1] * clicked + [0] * (n - clicked)))
        masked = draw(st.booleans()) and draw(st.booleans())
        truth.append((index + 1, [] if masked else list(labels)))
        ranks = draw(st.one_of(st.permutations(list(range(1, n + 1))), st.lists(st.integers(1, 4), min_size=n, max_size=n)))
        lines.append((index + 1, list(ranks)))
    ends = draw(st.integers(0, len(lines)))
    return truth, lines[:ends]


@settings(max_examples=300, deadline=None)
@given(case=impressions())
def test_the_scorer_equals_the_published_definitions_and_mind_rules(case, tmp_path_factory):
    truth, lines = case
    if all(not labels for _, labels in truth):
        return
    tmp_path = tmp_path_factory.mktemp("imp")
    result = score(tmp_path, truth, as_lines(lines))
    expected = ref.score(truth, lines)
    assert result.valid
    assert figures(result) == pytest.approx(expected, abs=1e-12)
    assert result.score == result.metrics["all"]["auc"]


def test_auc_is_scikit_learns_roc_auc_score_on_one_over_rank(tmp_path):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    truth, lines, aucs = [], [], []
    for index in range(200):
        n = int(rng.integers(2, 60))
        labels = rng.permutation([1] * int(rng.integers(1, n)) + [0] * n)[:n]
        if labels.sum() in (0, n):
            labels[0], labels[1] = 1, 0
        ranks = rng.integers(1, 6, n) if index % 2 else rng.permutation(n) + 1
        truth.append((index + 1, labels.tolist()))
        lines.append((index + 1, ranks.tolist()))
        aucs.append(roc_auc_score(labels.astype(np.float32), [1.0 / r for r in ranks]))
    result = score(tmp_path, truth, as_lines(lines))
    assert result.metrics["all"]["auc"] == pytest.approx(float(np.mean(aucs)), abs=1e-12)


def test_decimal_and_exponent_ranks_are_read_as_json_reads_them(tmp_path):
    truth = [(1, [0, 1, 0]), (2, [1, 0])]
    plain = score(tmp_path, truth, ["1 [3,1,2]", "2 [2,1]"])
    written = score(tmp_path, truth, ["1 [3.0,1e0,2.000]", "2 [2E0,1.0]"])
    assert figures(written) == figures(plain)
    halves = score(tmp_path, truth, ["1 [2.5,1.5,2.5]", "2 [1.25,1.5]"])
    assert figures(halves) == pytest.approx(ref.score(truth, [(1, [2.5, 1.5, 2.5]), (2, [1.25, 1.5])]), abs=1e-12)


def test_whitespace_and_crlf_split_fields_as_str_split_does(tmp_path):
    truth = [(1, [0, 1, 0]), (2, [1, 0])]
    plain = score(tmp_path, truth, ["1 [3,1,2]", "2 [2,1]"])
    spaced = score(tmp_path, truth, ["  1\t [3,1,2] \r", "2   [2,1]\r"])
    assert spaced.valid and figures(spaced) == figures(plain)


# -- the rules at the edges ----------------------------------------------------------------------------------------
def test_a_masked_impression_is_skipped_and_its_line_not_read(tmp_path):
    truth = [(1, [0, 1]), (2, []), (3, [1, 0])]
    result = score(tmp_path, truth, ["1 [2,1]", "anything at all", "3 [1,2]"], strict=True)
    assert result.valid and figures(result) == (1.0, 1.0, 1.0, 1.0)
    assert result.counts["rows_scored"] == 3


def test_a_file_that_ends_early_is_filled_with_rank_1_and_says_so(tmp_path):
    truth = [(1, [0, 1]), (2, [1, 0, 0]), (3, [0, 0, 1])]
    result = score(tmp_path, truth, ["1 [2,1]"], strict=True)
    assert result.valid  # the evaluator's rule: a warning, not an error, even when strict
    assert [p.code for p in result.problems] == ["S038"] and "line 2, impression id 2" in result.problems[0].message
    # ranks 1 1 1: AUC 1/2; numpy's order of three ties puts the last first
    assert figures(result) == pytest.approx(ref.score(truth, [(1, [2, 1])]), abs=1e-12)
    assert result.metrics["all"]["mrr"] == pytest.approx((1 + 1 / 3 + 1) / 3)


def test_missing_zero_scores_the_impressions_left_0_and_reports_them(tmp_path):
    truth = [(1, [0, 1]), (2, [1, 0])]
    config = dict(tomllib_load("mind"), rules={"missing": "zero", "ties": "numpy"})
    result = score(tmp_path, truth, ["1 [2,1]"], competition_from_dict(config))
    assert result.metrics["all"]["auc"] == 0.5 and [p.code for p in result.problems] == ["S011"]


def test_an_empty_file_is_all_filled_as_the_evaluator_fills_it(tmp_path):
    truth = [(1, [0, 1]), (2, [1, 0])]
    result = score(tmp_path, truth, [])
    assert result.metrics["all"]["auc"] == 0.5 and [p.code for p in result.problems] == ["S038"]


def test_lines_past_the_truth_are_ignored_with_one_warning(tmp_path):
    result = score(tmp_path, [(1, [0, 1])], ["1 [2,1]", "2 [1,2]", "3 [1]"], strict=True)
    assert result.valid and result.score == 1.0
    assert [(p.code, p.line) for p in result.problems] == [("S037", 2)] and result.report.counts["S037"] == 2


def tomllib_load(name: str) -> dict:
    import tomllib
    from importlib import resources

    return tomllib.loads((resources.files("scorer.spec") / "configs" / f"{name}.toml").read_text())


# -- equal ranks beyond 16: numpy's own introsort ------------------------------------------------------------------
def scalar_numpy_env() -> dict:
    """The environment of a Python whose numpy sorts with its own introsort, not x86-simd-sort (every dispatched CPU
    feature turned off)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    off = " ".join(name for name in __cpu_dispatch__ if __cpu_features__.get(name))
    return dict(os.environ, NPY_DISABLE_CPU_FEATURES=off)


def scalar_argsorts(arrays) -> list[list[int]]:
    code = "import json, sys, numpy as np; print(json.dumps([np.argsort(np.array(a)).tolist() for a in json.load(sys.stdin)]))"
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(arrays), capture_output=True, text=True, env=scalar_numpy_env(),
                          check=True)
    return json.loads(done.stdout)


def test_equal_ranks_take_the_places_numpys_own_argsort_gives_them(tmp_path):
    rng = np.random.default_rng(11)
    truth, lines = [], []
    for index in range(300):
        n = int(rng.integers(17, 300))
        labels = (rng.random(n) < 0.2).astype(int)
        labels[0], labels[-1] = 1, 0
        truth.append((index + 1, labels.tolist()))
        lines.append((index + 1, rng.integers(1, int(rng.integers(2, 8)), n).tolist()))
    scores = [[1.0 / r for r in ranks] for _, ranks in lines]
    orders = dict(zip(map(tuple, scores), scalar_argsorts(scores)))

    def numpy_order(scores):
        return orders[tuple(scores)][::-1]

    expected = ref.score(truth, lines, order=numpy_order)
    result = score(tmp_path, truth, as_lines(lines))
    assert figures(result) == pytest.approx(expected, abs=1e-12)
    later_first = ref.score(truth, lines)
    assert abs(later_first[1] - expected[1]) > 1e-6, "lists past 16 must tell numpy's order from the later-first one"


def _median_of_three_killer(n: int) -> np.ndarray:
    """Musser's sequence that drives a median-of-three quicksort to its depth limit (n even)."""
    half = n // 2
    values = np.zeros(n)
    for i in range(1, half + 1):
        values[i - 1] = i if i % 2 else half + i - 1
        values[half + i - 1] = 2 * i
    return values


def test_the_heapsort_past_the_depth_limit_orders_ties_as_numpys_own(monkeypatch):
    from scorer.kernels import impressions as kernels
    from scorer.kernels.impression_layout import SORT_STACK

    reached, heap_order = [], kernels._heap_order
    cases = []
    with monkeypatch.context() as patched:  # the Python body calls a counting heapsort; numba compiles the real one, after
        patched.setattr(kernels, "_heap_order", lambda v, order, first, count: (reached.append(count), heap_order(v, order, first, count)))
        for n in range(352, 640, 8):
            for coarser in (1, 2, 3):  # coarser values: ties inside the parts the heapsort orders
                values = np.floor(_median_of_three_killer(n) / coarser)
                reached.clear()
                kernels.numpy_order.py_func(values, n, np.empty(n, np.int64), np.empty(3 * SORT_STACK, np.int64))
                if reached:
                    cases.append(values)
    assert len(cases) > 20 and sum(len(np.unique(v)) < len(v) for v in cases) > 10
    for values, expected in zip(cases, scalar_argsorts([v.tolist() for v in cases])):
        order = np.empty(len(values), np.int64)
        kernels.numpy_order(values, len(values), order, np.empty(3 * SORT_STACK, np.int64))
        assert order.tolist() == expected


def test_ties_later_first_is_the_stable_order_at_every_length(tmp_path):
    truth = [(1, [1] + [0] * 19)]
    config = dict(tomllib_load("mind"), rules={"missing": "fill", "ties": "later_first"})
    result = score(tmp_path, truth, ["1 [" + ",".join(["1"] * 20) + "]"], competition_from_dict(config))
    assert result.metrics["all"]["mrr"] == pytest.approx(1 / 20)
    numpy_ties = score(tmp_path, truth, ["1 [" + ",".join(["1"] * 20) + "]"])
    assert numpy_ties.metrics["all"]["mrr"] == pytest.approx(1 / (20 - scalar_argsorts([[1.0] * 20])[0].index(0)))


# -- where the evaluators stop: located problems --------------------------------------------------------------------
@pytest.mark.parametrize("line, code, column", [
    ("2 [2,1,3]", "S033", 1),  # an id out of order: evaluate.py's "Inconsistent Impression Id"
    ("01 [2,1,3]", "S033", 1),  # compared as text, as evaluate.py compares them
    ("1 [0,1,2]", "S035", 4),  # rank 0: 1/rank divides by zero
    ("1 [2,-1,3]", "S035", 6),  # 1/rank < 0
    ("1 [2,0.5,3]", "S035", 6),  # 1/rank > 1
    ("1 [2,1]", "S034", 3),  # fewer ranks than candidates: roc_auc_score's inconsistent lengths
    ("1 [2,1,3,4]", "S034", 3),
    ("1 [2, 1, 3]", "S003", 7),  # a space in the list: three fields
    ("1", "S003", 1),
    ("1 [2,1,]", "S036", 7),
    ("1 [2,01,3]", "S036", 6),  # not JSON
    ("1 [2,NaN,3]", "S036", 6),
    ("1 2,1,3", "S036", 3),
    ("1 [2,1,3]x", "S036", 3),
    ("1 [2,1e999,3]", "S035", 6),  # not read exactly (json gives inf)
])
def test_what_the_evaluator_stops_at_is_a_located_problem(tmp_path, line, code, column):
    result = score(tmp_path, [(1, [0, 1, 0])], [line], strict=True)
    assert not result.valid and result.score is None
    assert [(p.code, p.line, p.column) for p in result.problems] == [(code, 1, column)], result.problems[0].message
    lenient = score(tmp_path, [(1, [0, 1, 0]), (2, [1, 0])], [line, "2 [1,2]"])
    assert lenient.metrics["all"]["auc"] == 0.5  # the bad line scores 0, the other 1


def test_messages_name_the_expected_id_and_counts(tmp_path):
    result = score(tmp_path, [(1, [0, 1]), (2, [1, 0]), (3, [1, 0])], ["1 [2,1]", "3 [1,2]", "3 [1,2]"])
    mismatch = result.problems[0]
    assert mismatch.code == "S033" and "'3' where the truth's impression at this line is 2" in mismatch.message
    assert "a line seems to be missing" in mismatch.message
    counted = score(tmp_path, [(1, [0, 1, 0])], ["1 [2,1]"]).problems[0]
    assert counted.code == "S034" and "2 ranks for an impression of 3 candidates" in counted.message


@pytest.mark.parametrize("text, fragment", [
    ("1 [0,0]\n", "line 1, column 3: the labels are all 0 or all 1"),
    ("1 [0,1]\n2 [1,1,1]\n", "line 2, column 3"),
    ("1 [0,2]\n", "line 1, column 6: the labels are not a list of 0s and 1s"),
    ("x [0,1]\n", "line 1, column 1: the impression id is not a whole number"),
    ("1 [0,1]\n\n2 [1,0]\n", "line 2, column 1: expected two fields"),
])
def test_a_truth_the_evaluator_would_stop_at_is_a_located_truth_error(tmp_path, text, fragment):
    path = tmp_path / "truth.txt"
    path.write_text(text)
    with pytest.raises(TruthError, match=fragment.replace("(", r"\(")):
        read_impression_truth(path, use_cache=False)


def test_validate_lists_the_problems_of_the_file(tmp_path, capsys):
    truth = write(tmp_path / "truth.txt", ["1 [0,1]", "2 [1,0]", "3 [0,1]"])
    sub = write(tmp_path / "prediction.txt", ["1 [2,1]", "3 [0,1]", "3 [1]"])
    code = main(["validate", sub, "--truth", truth, "--competition", "mind", "--format", "json"])
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert code == 1 and [(p["code"], p["line"]) for p in problems] == [("S033", 2), ("S034", 3)]
    no_truth = write(tmp_path / "bad.txt", ["1 [2,1]", "x [1]", "3 [1,0]"])
    assert main(["validate", no_truth, "--competition", "mind", "--format", "json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["code"], p["line"]) for p in problems] == [("S004", 2), ("S035", 3)]


def test_the_cli_gives_score_and_the_four_metrics(tmp_path, capsys):
    truth = write(tmp_path / "truth.txt", ["1 [0,1,0]", "2 [1,0]"])
    sub = write(tmp_path / "prediction.txt", ["1 [2,1,3]", "2 [2,1]"])
    assert main(["score", sub, "--truth", truth, "--competition", "mind", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"] == out["metrics"]["all"]["auc"] == 0.5
    assert set(out["metrics"]["all"]) == set(METRICS)


def test_a_zip_holding_the_prediction_is_read(tmp_path):
    import zipfile

    truth = [(1, [0, 1, 0]), (2, [1, 0])]
    plain = score(tmp_path, truth, ["1 [3,1,2]", "2 [2,1]"])
    with zipfile.ZipFile(tmp_path / "prediction.zip", "w") as archive:
        archive.writestr("prediction.txt", "1 [3,1,2]\n2 [2,1]\n")
    zipped = scorer.score(tmp_path / "prediction.zip", tmp_path / "truth.txt", "mind")
    assert figures(zipped) == figures(plain)


# -- EB-NeRD's behaviors.parquet ------------------------------------------------------------------------------------
def test_behaviors_parquet_compiles_to_labels_and_masks_beyond_accuracy_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"impression_id": pa.array([7, 0, 9], pa.uint32()),
                      "article_ids_inview": pa.array([[4, 5, 6], [1, 2, 3, 4], [6, 4]], pa.list_(pa.int32())),
                      "article_ids_clicked": pa.array([[5], [], [6]], pa.list_(pa.int32())),
                      "user_id": pa.array([1, 2, 3], pa.uint32())})
    pq.write_table(table, tmp_path / "behaviors.parquet")
    truth = read_impression_truth(tmp_path / "behaviors.parquet", use_cache=False)
    assert truth.sessions.tolist() == [7, 0, 9] and truth.indptr.tolist() == [0, 3, 3, 5]
    assert truth.label_bytes.tolist() == [0, 1, 0, 1, 0]
    one_class = table.set_column(2, "article_ids_clicked", pa.array([[4, 5, 6], [], [6]], pa.list_(pa.int32())))
    pq.write_table(one_class, tmp_path / "all_clicked.parquet")
    with pytest.raises(TruthError, match=r"row 0 \(impression_id 7\): the labels are all 0 or all 1"):
        read_impression_truth(tmp_path / "all_clicked.parquet", use_cache=False)


def test_compile_truth_writes_the_impressions_and_they_score_the_same(tmp_path, capsys):
    truth = write(tmp_path / "truth.txt", ["1 [0,1,0]", "2 []", "3 [1,0]"])
    sub = write(tmp_path / "prediction.txt", ["1 [2,1,3]", "2 [1]", "3 [2,1]"])
    compiled = tmp_path / "truth.impressions.npz"
    assert main(["compile-truth", truth, "-o", str(compiled), "--competition", "mind"]) == 0
    assert "3 impressions (2 with labels), 5 labels" in capsys.readouterr().out
    assert figures(scorer.score(sub, compiled, "mind")) == figures(scorer.score(sub, truth, "mind"))


# -- the config and the metric registry -----------------------------------------------------------------------------
def test_auc_and_mrr_without_a_cut_off_are_the_impression_shapes():
    assert parse_metric("auc").family == parse_metric("mrr").family == "impression"
    assert parse_metric("mrr@12").kind.name == "mrr@k" and parse_metric("auc@20").family == "beyond"
    with pytest.raises(ConfigError, match="shape .impression. takes auc, mrr, mrr@K"):
        competition_from_dict(dict(tomllib_load("mind"), scoring={"k": 10, "metric": "recall@10"}))
    with pytest.raises(ConfigError, match="does not go with shape 'list'"):
        competition_from_dict(dict(tomllib_load("hm"), scoring={"k": 12, "metric": "auc"}))
    with pytest.raises(ConfigError, match="rules.ties"):
        competition_from_dict(dict(tomllib_load("hm"), rules={"ties": "numpy"}))
    assert load_competition("mind").rules.missing == "fill"


def test_auc_weighted_by_candidates_is_the_gauc_convention(tmp_path):
    truth = [(1, [0, 1, 0, 0]), (2, [1, 0])]
    config = dict(tomllib_load("mind"), scoring={"k": 10, "metric": "auc", "diagnostics": ["auc(weight=candidates)"]})
    result = score(tmp_path, truth, ["1 [1,2,3,4]", "2 [1,2]"], competition_from_dict(config))
    assert result.metrics["all"]["auc"] == pytest.approx((2 / 3 + 1) / 2)
    assert result.metrics["all"]["auc(weight=candidates)"] == pytest.approx((4 * 2 / 3 + 2 * 1) / 6)


# -- frames from Python -----------------------------------------------------------------------------------------------
def test_frames_of_ranks_or_scores_score_as_the_file_does(tmp_path):
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    truth = [(1, [0, 1, 0]), (2, [1, 0, 0, 1]), (3, [])]
    from_file = score(tmp_path, truth, ["1 [2,1,3]", "2 [1,3,2,4]", "3 [1]"])
    ranks = {"impression_id": [1, 2, 3], "ranks": [[2, 1, 3], [1, 3, 2, 4], [1]]}
    scores = {"impression_id": [1, 2, 3], "scores": [[0.5, 0.9, 0.1], [0.9, 0.2, 0.5, 0.1], [0.3]]}  # higher first, as ebrec holds them
    truth_path = tmp_path / "truth.txt"
    for frame in (pl.DataFrame(ranks), pd.DataFrame(ranks), pa.table(ranks), pl.DataFrame(scores),
                  pl.DataFrame(scores).with_columns(pl.col("scores").cast(pl.List(pl.Float32)))):
        assert figures(scorer.score(frame, truth_path, "mind")) == figures(from_file)


def test_a_frames_problems_name_the_row_and_column(tmp_path):
    import polars as pl

    write(tmp_path / "truth.txt", ["1 [0,1,0]", "2 [1,0]", "3 [0,1]"])
    frame = pl.DataFrame({"impression_id": [1, 3, 3], "scores": [[0.1, float("nan"), 0.2], [0.5, 0.1], [0.1]]})
    result = scorer.score(frame, tmp_path / "truth.txt", "mind", strict=True)
    assert [(p.code, p.row, p.field) for p in result.problems] == [("S033", 1, "impression_id"), ("S034", 2, "scores"),
                                                                 ("S035", 0, "scores")]
    assert "score nan is not a finite number" in result.problems[2].message


# -- scorer explain: the conventions turned one at a time ---------------------------------------------------------------
def test_explain_turns_each_convention_and_names_the_impressions_it_moves(tmp_path, capsys):
    from scorer.analytics.explain.impressions import TURNS
    from scorer.cli.explain import IMPRESSION_CONVENTIONS

    assert IMPRESSION_CONVENTIONS == tuple(turn.name for turn in TURNS)
    truth = write(tmp_path / "truth.txt", ["1 [0,1,0,0]", "2 []", "3 [1,0,0,1]", "4 " + str([0, 1] + [0] * 18).replace(" ", ""), "5 [0,1]"])
    sub = write(tmp_path / "prediction.txt", ["1 [1,2,3,4]", "2 [1]", "3 [2,1,3,4]", "4 [" + ",".join(["1"] * 20) + "]"])
    assert main(["explain", sub, "--truth", truth, "--competition", "mind", "--format", "json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)["conventions"]}
    # AUC per impression: 2/3, (masked), 1/4 (clicks at positions 2 and 4 of 4), 1/2 (all tied), 1/2 (filled)
    assert rows["gauc"]["ours"] == pytest.approx((2 / 3 + 1 / 4 + 1 / 2 + 1 / 2) / 4)
    assert rows["gauc"]["value"] == pytest.approx((4 * (2 / 3) + 4 * (1 / 4) + 20 * 0.5 + 2 * 0.5) / 30)
    assert rows["first-click-mrr"]["gap"] == pytest.approx((1 / 2 - (1 / 2 + 1 / 4) / 2) / 4)  # impression 3 alone moves
    assert rows["first-click-mrr"]["moved"] == 1 and rows["first-click-mrr"]["first"] == ["line 3 (impression 3)"]
    assert rows["ties-later-first"]["moved"] == 1 and rows["ties-later-first"]["first"] == ["line 4 (impression 4)"]
    assert rows["missing-zero"]["value"] == pytest.approx((2 / 3 + 1 / 4 + 1 / 2 + 0) / 4) and rows["missing-zero"]["moved"] == 1
    assert rows["masked-zero"]["value"] == pytest.approx((2 / 3 + 0 + 1 / 4 + 1 / 2 + 1 / 2) / 5) and rows["masked-zero"]["moved"] == 1


# -- a CodaLab / Codabench bundle for MIND --------------------------------------------------------------------------
@pytest.mark.parametrize("platform", ["codabench", "codalab"])
def test_a_mind_bundle_scores_prediction_txt_as_the_worker_runs_it(tmp_path, platform):
    """The bundle's truth is MIND's truth.txt compiled; the scoring program's command, run as the platform's worker runs
    it (tests/test_hosting.py's emulations of compute_worker.py and worker.py), scores prediction.txt."""
    import shlex
    import zipfile

    import yaml

    from test_hosting import IMAGE, build, codabench_command, codabench_run, push_output, unzip_into

    mind = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mind")
    truth, prediction = os.path.join(mind, "truth.txt"), os.path.join(mind, "prediction.txt")
    out = tmp_path / f"mind-{platform}.zip"
    assert build.main([platform, str(out), "--image", IMAGE, "--competition", "mind", "--truth", truth]) == 0
    expected = scorer.score(prediction, truth, "mind", strict=True).score
    if platform == "codabench":
        root = codabench_run(tmp_path, out, Path(prediction))
        assert [p.name for p in (root / "input" / "ref").iterdir()] == ["truth.impressions.npz"]
        spec = yaml.safe_load((tmp_path / "bundle" / "competition.yaml").read_text())
        assert spec["title"] == "MIND News Recommendation" and "prediction.txt" in (tmp_path / "bundle" / "competition.yaml").read_text()
        assert main(codabench_command(root)) == 0
        assert push_output(root)["score"] == pytest.approx(expected, abs=1e-12)
        return
    bundle = tmp_path / "bundle"
    unzip_into(out, bundle)
    spec = yaml.safe_load((bundle / "competition.yaml").read_text())
    run = tmp_path / "run"
    phase = spec["phases"][1]
    unzip_into((bundle / phase["scoring_program"]).read_bytes(), run / "program")
    unzip_into((bundle / phase["reference_data"]).read_bytes(), run / "input" / "ref")
    (run / "input" / "res").mkdir(parents=True)
    with zipfile.ZipFile(run / "input" / "res" / "prediction.zip", "w") as archive:  # MIND's upload: a zip of prediction.txt
        archive.write(prediction, "prediction.txt")
    (run / "output").mkdir()
    command = yaml.safe_load((run / "program" / "metadata").read_text())["command"]
    command = command.replace("$program", str(run / "program")).replace("$input", str(run / "input")).replace("$output", str(run / "output"))
    assert main(shlex.split(command)) == 0
    assert yaml.safe_load((run / "output" / "scores.txt").read_text())["score"] == pytest.approx(expected, abs=1e-9)  # 10 digits


def test_a_mind_bundle_needs_its_truth(tmp_path, capsys):
    from test_hosting import IMAGE, build

    with pytest.raises(SystemExit) as stop:
        build.main(["codabench", str(tmp_path / "a.zip"), "--image", IMAGE, "--competition", "mind"])
    assert stop.value.code == 2 and "mind needs --truth" in capsys.readouterr().err


# -- the hostile-input contract: a sentence and exit 1 (the submission) or 2 (the truth), never a traceback ------------
def hostile_files(folder):
    import gzip
    import zipfile

    with gzip.open(folder / "bomb.gz", "wb", compresslevel=9) as bomb:  # 640 MB of zeros in 0.6 MB
        for _ in range(40):
            bomb.write(bytes(1 << 24))
    with zipfile.ZipFile(folder / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("prediction.txt", b"1 [" + b"1," * 5_000_000 + b"1]\n")
    (folder / "utf16.txt").write_bytes("1 [2,1,3]\n".encode("utf-16"))
    (folder / "latin1.txt").write_bytes(b"1 [2,1,3]\n\xe9 [1,2]\n")
    (folder / "long.txt").write_bytes(b"1 [" + b"1," * 100_000 + b"1]\n")
    (folder / "nul.txt").write_bytes(b"1 [2,1,3]\n2 [1\x00,2]\n")
    (folder / "cut.gz").write_bytes(gzip.compress(b"1 [0,1,0]\n" * 1000)[:60])
    os.mkfifo(folder / "fifo")
    return ["bomb.gz", "bomb.zip", "utf16.txt", "latin1.txt", "long.txt", "nul.txt", "cut.gz", "fifo"]


def test_hostile_submissions_get_a_sentence_and_exit_1(tmp_path, capsys):
    truth = write(tmp_path / "truth.txt", ["1 [0,1,0]", "2 [1,0]"])
    for name in hostile_files(tmp_path):
        code = main(["score", str(tmp_path / name), "--truth", truth, "--competition", "mind", "--strict"])
        out = capsys.readouterr()
        assert code == 1, (name, out)
        assert "Traceback" not in out.out + out.err and "error" in out.out + out.err, name


def test_hostile_truths_get_a_sentence_and_exit_2(tmp_path, capsys):
    sub = write(tmp_path / "prediction.txt", ["1 [2,1,3]"])
    for name in hostile_files(tmp_path):
        code = main(["score", sub, "--truth", str(tmp_path / name), "--competition", "mind"])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("scorer: error: truth file") and "Traceback" not in err, (name, err)


# -- everything around a score: compare, leaderboard (intervals over impressions), receipts ---------------------------
def test_compare_leaderboard_and_verify_read_the_impression_shape(tmp_path, capsys):
    rng = np.random.default_rng(3)
    truth_rows = [(i + 1, [1] + [0] * int(rng.integers(1, 9))) for i in range(300)]
    truth = write(tmp_path / "truth.txt", as_lines(truth_rows))
    good = write(tmp_path / "good.txt", as_lines([(i, [1] + list(range(2, len(labels) + 1))) for i, labels in truth_rows]))
    noisy = write(tmp_path / "noisy.txt", as_lines([(i, (rng.permutation(len(labels)) + 1).tolist()) for i, labels in truth_rows]))
    assert main(["compare", good, noisy, "--truth", truth, "--competition", "mind", "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["a"]["score"] == scorer.score(good, truth, "mind").score == 1.0 and compared["comparison"]
    assert main(["leaderboard", good, noisy, "--truth", truth, "--competition", "mind", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["sessions"] == 300 and board["metric"] == "auc"  # resampled over the impressions
    first = board["submissions"][0]
    assert first["name"] == good and first["rank"] == first["rank_low"] == first["rank_high"] == 1
    assert main(["score", good, "--truth", truth, "--competition", "mind", "--format", "json"]) == 0
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(json.loads(capsys.readouterr().out)["receipt"]))
    assert main(["verify", str(receipt), good, "--truth", truth]) == 0
    assert "5 of 5 checks passed" in capsys.readouterr().out
