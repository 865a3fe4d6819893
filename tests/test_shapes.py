"""The string shapes (list, long, value) through the whole engine, against slow references."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference_metrics as ref
import scorer
from scorer.errors import ConfigError
from scorer.spec.competition import competition_from_dict


def competition(shape="list", metric="map@3", diagnostics=(), k=3, **submission):
    return competition_from_dict({
        "name": f"test-{shape}", "submission": {"shape": shape, "header": ["id", "items"], **submission},
        "scoring": {"k": k, "metric": metric, "diagnostics": list(diagnostics)}})


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp_path, comp, truth_lines, submission_lines, **options):
    truth = write(tmp_path, "truth.csv", ["id,items", *truth_lines])
    sub = write(tmp_path, "sub.csv", ["id,items", *submission_lines])
    return scorer.score(sub, truth, comp, **options)


def codes(result):
    return {p.code for p in result.problems}


# -- list -------------------------------------------------------------------------------------------
def test_ids_and_items_are_compared_as_written(tmp_path):
    result = run(tmp_path, competition(diagnostics=["recall@3"]), ["007,0123 0456"], ["007,123 0456 0123"])
    assert result.metrics["all"]["map@3"] == pytest.approx((1 / 2 + 2 / 3) / 2)  # '123' is not '0123'
    result = run(tmp_path, competition(), ["007,0123"], ["7,0123"], strict=True)
    assert {"S011", "S012"} <= codes(result) and result.score is None  # '7' is not '007'


def test_an_unknown_item_repeated_is_a_duplicate_and_wastes_slots(tmp_path):
    result = run(tmp_path, competition(), ["a,x"], ["a,zz zz x"])
    assert result.metrics["all"]["map@3"] == pytest.approx(1 / 3)
    assert "S014" in codes(result)


def test_empty_truth_is_expected_but_not_averaged_and_empty_predictions_score_0(tmp_path):
    result = run(tmp_path, competition(), ["a,x", "b,", "c,y"], ["a,x", "b,q", "c,"], strict=True)
    assert result.score == pytest.approx(0.5) and result.valid
    zero = run(tmp_path, competition(metric="map@3(empty=zero)"), ["a,x", "b,", "c,y"], ["a,x", "b,q", "c,"])
    assert zero.score == pytest.approx(1 / 3)


def test_format_problems_are_found_with_line_and_column(tmp_path):
    result = run(tmp_path, competition(), ["a,x", "b,y"], ["a,x,y", ",x", "b,x  y", "a,x"])
    found = {p.code: (p.line, p.column) for p in result.problems}
    assert found["S003"][0] == 2 and found["S004"][0] == 3 and found["S021"] == (4, 4)


ids = st.text("0123456789abcdef", min_size=1, max_size=6)
tokens = st.sampled_from(["01", "1", "001", "a", "A", "b", "0b", "zz"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(truth=st.dictionaries(ids, st.lists(tokens, max_size=4, unique=True), min_size=1, max_size=8),
       extra=st.lists(ids, max_size=3), data=st.data(), block=st.sampled_from([1, 16, 1 << 20]), threads=st.sampled_from([1, 2]))
def test_list_shape_equals_reference(tmp_path, truth, extra, data, block, threads):
    rows = {s: data.draw(st.lists(tokens, max_size=5)) for s in list(truth) + extra if data.draw(st.booleans()) or s in truth}
    comp = competition(diagnostics=["recall@3", "ndcg@3", "mrr@2", "f1", "precision@3", "hitrate@1"])
    truth_path = write(tmp_path, "t.csv", ["id,items", *(f"{s},{' '.join(v)}" for s, v in truth.items())])
    sub = write(tmp_path, "s.csv", ["id,items", *(f"{s},{' '.join(v)}" for s, v in rows.items())])
    result = scorer.score(sub, truth_path, comp, block_bytes=block, threads=threads)
    pairs = [(rows.get(s, [])[:3], {i: 1 for i in t}) for s, t in truth.items()]
    for metric in comp.metrics:
        expected = ref.value(metric.kind.name, metric.k, {}, pairs)
        got = result.metrics["all"][str(metric)]
        assert (got is None and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12), str(metric)


def test_graded_truth_three_columns(tmp_path):
    truth = write(tmp_path, "t.csv", ["id,item,grade", "u,a,3", "u,b,1", "v,c,0"])
    sub = write(tmp_path, "s.csv", ["id,items", "u,b a", "v,c"])
    result = scorer.score(sub, truth, competition(metric="ndcg@3", diagnostics=["ndcg@3(gain=exp)"]))
    assert result.metrics["all"]["ndcg@3"] == pytest.approx(ref.mean_over([(["b", "a"], {"a": 3, "b": 1}), (["c"], {"c": 0})],
                                                                          lambda p, t: ref.ndcg(p, t, 3)))
    assert result.metrics["all"]["ndcg@3(gain=exp)"] == pytest.approx(ref.ndcg(["b", "a"], {"a": 3, "b": 1}, 3, "exp") / 2)


def test_empty_token_is_an_item_of_its_own(tmp_path):
    comp = competition(metric="f1", empty_token="None")
    result = run(tmp_path, comp, ["1,None", "2,5 6", "3,None"], ["1,None", "2,5 None", "3,"])
    assert result.score == pytest.approx((1 + 2 * 1 / (2 + 2) + 0) / 3)


def test_repeated_rows_are_found_without_truth(tmp_path):
    sub = write(tmp_path, "s.csv", ["id,items", "abc,1", "abd,2", "abc,3"])
    result = scorer.validate(sub, None, competition())
    assert [p.line for p in result.problems if p.code == "S010"] == [4]


# -- long -------------------------------------------------------------------------------------------
def test_long_shape_ranks_by_row_order(tmp_path):
    comp = competition("long", metric="ndcg@5", k=5)
    result = run(tmp_path, comp, ["u1,FR", "u2,US", "u3,NDF"],
                 ["u1,US", "u1,FR", "u2,US", "u1,IT", "u3,NDF", "u3,US"])
    assert result.score == pytest.approx((1 / math.log2(3) + 1 + 1) / 3)


def test_long_shape_problems(tmp_path):
    comp = competition("long", metric="ndcg@2", k=2)
    result = run(tmp_path, comp, ["u1,FR", "u2,US"], ["u1,US", "u1,US", "u1,FR", "u9,FR", "u1,"])
    assert {"S012", "S011", "S013", "S014", "S032"} <= codes(result)
    assert result.score == 0.0  # FR is third: past K = 2


# -- value ------------------------------------------------------------------------------------------
def test_value_shape_rmse_and_mae(tmp_path):
    comp = competition("value", metric="rmse", diagnostics=["mae"], k=1)
    result = run(tmp_path, comp, ["a,4", "b,2.5", "c,1"], ["a,3", "b,3.5", "c,x", "d,1e0"])
    assert result.metrics["all"]["rmse"] == pytest.approx(1.0) and result.metrics["all"]["mae"] == pytest.approx(1.0)
    assert {"S031", "S012", "S011"} <= codes(result)


def test_shape_config_errors():
    with pytest.raises(ConfigError, match="submission.shape"):
        competition("grid")
    with pytest.raises(ConfigError, match="does not go with shape"):
        competition("list", metric="rmse")
    with pytest.raises(ConfigError, match="does not go with shape"):
        competition("value", metric="map@3")
    with pytest.raises(ConfigError, match="empty_token"):
        competition("long", empty_token="None")


def test_coverage_counts_the_truth_items_in_some_top_k(tmp_path):
    comp = competition(metric="map@2", diagnostics=["coverage@2"], k=2)
    result = run(tmp_path, comp, ["a,x y", "b,z", "c,w"], ["a,y q x", "b,y", "zz,w"])  # x is third; zz is unknown
    assert result.metrics["all"]["coverage@2"] == pytest.approx(1 / 4)  # only y of x, y, z, w
