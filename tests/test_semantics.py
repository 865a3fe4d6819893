"""One test per row of the semantics table in DESIGN.md / docs/semantics.md."""

from pathlib import Path

import pytest

import scorer
from conftest import full_rows

TRUTH = {1: {"clicks": 5, "carts": [6, 7], "orders": [8]}, 2: {"clicks": 9}}


def score(files, rows, truth=TRUTH, **options):
    sub, tru = files(truth, rows)
    return scorer.score(sub, tru, **options)


def codes(result):
    return {p.code: p.severity for p in result.problems}


def test_recall_is_micro_averaged_with_min_k_denominator(files):
    truth = {1: {"carts": list(range(100, 130))}, 2: {"carts": [1]}}  # 30 items: denominator min(20, 30) = 20
    rows = full_rows(truth, {(1, "carts"): list(range(100, 110)), (2, "carts"): [1]})
    result = score(files, rows, truth)
    assert result.metrics["carts"]["recall@20"] == pytest.approx((10 + 1) / (20 + 1))


def test_weighted_total_uses_config_weights(files):
    rows = full_rows(TRUTH, {(1, "clicks"): [5], (1, "carts"): [6], (1, "orders"): [8], (2, "clicks"): [0]})
    result = score(files, rows)
    assert result.score == pytest.approx(0.10 * 0.5 + 0.30 * 0.5 + 0.60 * 1.0)


def test_clicks_sessions_without_truth_are_not_in_denominator(files):
    truth = {1: {"clicks": 5}, 2: {"orders": [3]}}
    result = score(files, full_rows(truth, {(1, "clicks"): [5]}), truth)
    assert result.metrics["clicks"]["recall@20"] == 1.0
    assert result.truth_sessions["clicks"] == 1


def test_only_first_k_predictions_count_and_a_warning_says_so(files):
    rows = full_rows(TRUTH, {(1, "orders"): list(range(100, 120)) + [8]})  # the hit is 21st
    result = score(files, rows)
    assert result.metrics["orders"]["recall@20"] == 0.0
    assert codes(result)["S013"] == "warning"
    assert result.counts["rows_cut_at_k"] == 1


def test_duplicate_items_count_once_and_waste_a_slot(files):
    rows = full_rows(TRUTH, {(1, "carts"): [6, 6] + list(range(100, 118)) + [7]})  # 7 is 21st
    result = score(files, rows)
    assert result.metrics["carts"]["recall@20"] == pytest.approx(0.5)
    assert codes(result)["S014"] == "warning"


def test_item_zero_is_an_ordinary_item(files):
    truth = {1: {"orders": [0]}}
    result = score(files, full_rows(truth, {(1, "orders"): [0]}), truth)
    assert result.metrics["orders"]["recall@20"] == 1.0


@pytest.mark.parametrize("strict, severity", [(True, "error"), (False, "warning")])
def test_missing_row_scores_zero(files, strict, severity):
    rows = [r for r in full_rows(TRUTH, {(1, "clicks"): [5], (2, "clicks"): [9]}) if r[:2] != (2, "clicks")]
    result = score(files, rows, strict=strict)
    assert codes(result)["S011"] == severity
    assert result.metrics["clicks"]["recall@20"] == 0.5
    assert result.counts["rows_missing"] == 1
    assert (result.score is None) == strict


@pytest.mark.parametrize("strict, severity", [(True, "error"), (False, "warning")])
def test_session_not_in_truth_is_ignored(files, strict, severity):
    rows = full_rows(TRUTH, {(1, "clicks"): [5]}) + [(77, "clicks", [5])]
    result = score(files, rows, strict=strict)
    assert codes(result)["S012"] == severity
    assert result.counts["rows_unknown_session"] == 1
    assert result.metrics["clicks"]["recall@20"] == 0.5


@pytest.mark.parametrize("strict, severity", [(True, "error"), (False, "warning")])
def test_same_row_twice_lenient_keeps_the_last(files, strict, severity):
    rows = full_rows(TRUTH) + [(2, "clicks", [9])]  # the second row for 2_clicks hits
    result = score(files, rows, strict=strict)
    assert codes(result)["S010"] == severity
    assert result.counts["rows_duplicate"] == 1
    assert result.metrics["clicks"]["recall@20"] == 0.5
    assert (result.score is None) == strict


def test_empty_labels_field_is_valid(files):
    result = score(files, full_rows(TRUTH), strict=True)
    assert result.valid and result.score == 0.0


def test_ap_counts_first_occurrence_only(files):
    truth = {1: {"orders": [1, 2]}}
    # ranks: 1 hit, 1 repeated (not relevant), 2 hit at rank 3: AP = (1/1 + 2/3) / 2
    result = score(files, full_rows(truth, {(1, "orders"): [1, 1, 2]}), truth)
    assert result.metrics["orders"]["map@20"] == pytest.approx((1 + 2 / 3) / 2)


def test_ndcg_binary_gain_over_ideal_of_length_k(files):
    truth = {1: {"orders": [1, 2]}}
    result = score(files, full_rows(truth, {(1, "orders"): [3, 1]}), truth)
    import math

    assert result.metrics["orders"]["ndcg@20"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_map_and_ndcg_average_over_sessions_with_truth(files):
    truth = {1: {"orders": [1]}, 2: {"orders": [2]}, 3: {"clicks": 4}}
    result = score(files, full_rows(truth, {(1, "orders"): [1]}), truth)
    assert result.metrics["orders"]["map@20"] == pytest.approx(0.5)
    assert result.metrics["orders"]["ndcg@20"] == pytest.approx(0.5)


# -- a line with an error scores 0 (it holds its slot: not also missing) -----------------------------
@pytest.mark.parametrize("line, code", [
    ("1_clicks,5 abc 99", "S008"),  # the clean items would hit: the row still scores 0
    ("1_clicks,5 99999999999999999999", "S009"),
    (b"1_clicks,5 \xff".decode("latin-1"), "S016"),
    ("1_clicks,5,99", "S003"),
    ('1_clicks,"5 99', "S030"),
])
@pytest.mark.parametrize("strict", [False, True])
def test_a_line_with_an_error_scores_zero_and_holds_its_slot(files, line, code, strict):
    rows = [line if (s, t) == (1, "clicks") else f"{s}_{t}," + ("9" if (s, t) == (2, "clicks") else "")
            for s, t, _ in full_rows(TRUTH)]
    sub, tru = files(TRUTH, [], raw=("session_type,labels\n" + "\n".join(rows) + "\n").encode("latin-1"))
    result = scorer.score(sub, tru, strict=strict)
    assert codes(result)[code] == "error" and "S011" not in codes(result)
    assert result.counts["rows_with_errors"] == 1 and result.counts["rows_missing"] == 0
    assert result.metrics["clicks"]["recall@20"] == 0.5  # 2_clicks hits, 1_clicks scores 0
    assert (result.score is None) == strict


def test_a_line_whose_id_cannot_be_read_gives_no_row(files):
    rows = [r for r in full_rows(TRUTH, {(2, "clicks"): [9]}) if r[:2] != (1, "clicks")] + ["1_clicks_x,5"]
    result = score(files, rows)
    assert set(codes(result)) == {"S005", "S011"}
    assert result.counts["rows_missing"] == 1 and result.counts["rows_with_errors"] == 0


def test_a_later_row_replaces_a_row_with_an_error_in_lenient_mode(files):
    rows = full_rows(TRUTH, {(2, "clicks"): [9]}) + ["1_clicks,5 x", "1_clicks,5"]
    result = score(files, rows)
    assert result.metrics["clicks"]["recall@20"] == 1.0
    assert codes(result) == {"S008": "error", "S010": "warning"}


def test_warnings_score_the_row_as_read(files):
    rows = [r for r in full_rows(TRUTH, {(2, "clicks"): [9]}) if r[:2] != (1, "clicks")] + ["1_clicks,99  5"]
    result = score(files, rows, strict=True)
    assert codes(result) == {"S021": "warning"} and result.metrics["clicks"]["recall@20"] == 1.0
    assert result.counts["rows_with_errors"] == 0


@pytest.mark.parametrize("damage, code", [(b"\xff", "S016"), (b",0568601006", "S003")])
def test_a_list_shaped_line_with_an_error_scores_zero_and_holds_its_slot(tmp_path, damage, code):
    hm = Path(__file__).parent.parent / "fixtures" / "hm"
    lines = (hm / "submission.csv").read_bytes().split(b"\n")
    lines[2] = lines[2].split(b",")[0] + b",0568601006 " + damage  # the row would hit without the damage
    sub = tmp_path / "sub.csv"
    sub.write_bytes(b"\n".join(lines))
    clean = scorer.score(hm / "submission.csv", hm / "truth.csv", "hm")
    result = scorer.score(sub, hm / "truth.csv", "hm")
    assert codes(result)[code] == "error" and "S011" not in codes(result)
    assert result.counts["rows_with_errors"] == 1 and result.slot_values is not None
    assert result.slot_line[1] == 3 and result.slot_hits[1] == 0 and clean.slot_hits[1] != 0
