"""The metric registry and the per-row kernel against the slow references in reference_metrics.py."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_metrics as ref
from scorer.kernels.kinds import discounts, ideal_dcg
from scorer.kernels.rank import score_row
from scorer.spec.metrics import REGISTRY, parse_metric, supported

CONFORMANCE = Path(__file__).parent.parent / "fixtures" / "conformance.csv"
ROW_METRICS = ["recall", "precision", "hitrate", "f1@k", "map", "ndcg", "mrr@k", "f1"]


def kernel_value(metric, rows, kmax=None):
    """The engine's way: per-row figures by the kernel (score_row), then Metric.aggregate.

    rows: [(predictions, {item: grade})]; items are mapped to integer codes as the string shapes do.
    """
    codes: dict = {}
    code = lambda item: codes.setdefault(item, len(codes))  # noqa: E731
    graded = any(grade != 1 for _, truth in rows for grade in truth.values())
    kmax = kmax or max([metric.k or 1] + [len(p) for p, _ in rows])
    values, sizes = np.zeros(len(rows)), np.zeros(len(rows), np.int64)
    kinds, ks = np.array([metric.row_kind], np.int64), np.array([metric.k or kmax], np.int64)
    for r, (predictions, truth) in enumerate(rows):
        pairs = sorted((code(item), float(grade)) for item, grade in truth.items())
        truth_items = np.array([c for c, _ in pairs], np.int64)
        grades = np.array([g for _, g in pairs], np.float64) if graded else np.empty(0)
        best = np.sort(grades)[::-1].copy() if graded else np.empty(0)
        items = np.array([code(item) for item in predictions[:kmax]] + [0], np.int64)
        relevant = np.array([item not in predictions[:i] for i, item in enumerate(predictions[:kmax])] + [False])
        out = np.zeros(1)
        score_row(items, relevant, np.zeros(len(items)), len(predictions[:kmax]), truth_items, grades, best,
                  0, len(truth_items), kinds, ks, discounts(kmax), ideal_dcg(kmax), out)
        values[r], sizes[r] = out[0], len(truth)
    return metric.aggregate(values, sizes)


def reference_value(metric, rows):
    return ref.value(metric.kind.name, metric.k, dict(metric.options), rows)


def same(a, b, tolerance=1e-9):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tolerance


# -- hypothesis: every metric, every option, against the reference ----------------------------------
items = st.sampled_from("abcdefgh")
binary_truth = st.dictionaries(items, st.just(1), max_size=6)
graded_truth = st.dictionaries(items, st.integers(0, 4), max_size=6)
rows = st.lists(st.tuples(st.lists(items, max_size=9), st.one_of(binary_truth, graded_truth)), min_size=1, max_size=6)


@st.composite
def metrics(draw):
    name = draw(st.sampled_from(ROW_METRICS))
    kind = REGISTRY[name]
    options = ",".join(f"{option}={draw(st.sampled_from(values))}" for option, values in kind.options)
    k = draw(st.integers(1, 12))
    base = "f1" if name == "f1" else (name.replace("@k", f"@{k}") if name.endswith("@k") else f"{name}@{k}")
    return parse_metric(f"{base}({options})" if options else base)


@settings(max_examples=400, deadline=None)
@given(metric=metrics(), rows=rows)
def test_kernel_equals_reference(metric, rows):
    if metric.kind.name == "f1":  # set F1 reads every prediction of the row
        assert same(kernel_value(metric, rows, kmax=9), reference_value(metric, rows))
    else:
        assert same(kernel_value(metric, rows), reference_value(metric, rows))


@settings(max_examples=200, deadline=None)
@given(metric=metrics(), rows=rows)
def test_ranking_metrics_lie_between_0_and_1(metric, rows):
    value = kernel_value(metric, rows)
    assert math.isnan(value) or -1e-12 <= value <= 1 + 1e-12


@settings(max_examples=200, deadline=None)
@given(truth=st.dictionaries(items, st.integers(1, 4), min_size=1, max_size=6), extra=st.integers(0, 3))
def test_a_perfect_list_scores_1(truth, extra):
    """Positive grades (a truth whose grades are all 0 has IDCG 0, and its NDCG is defined as 0)."""
    perfect = sorted(truth, key=lambda item: -truth[item])
    k = len(truth) + extra
    for text in (f"recall@{k}", f"map@{k}", f"ndcg@{k}", f"ndcg@{k}(gain=exp)", f"mrr@{k}", f"hitrate@{k}", "f1",
                 f"recall@{k}(denominator=truth,average=macro)", f"map@{k}(denominator=truth)"):
        assert kernel_value(parse_metric(text), [(perfect, truth)]) == pytest.approx(1.0), text
    assert kernel_value(parse_metric(f"precision@{len(truth)}"), [(perfect, truth)]) == pytest.approx(1.0)


@settings(max_examples=200, deadline=None)
@given(grades=st.lists(st.integers(1, 5), min_size=2, max_size=8, unique=True), gain=st.sampled_from(["linear", "exp"]))
def test_reversing_a_perfect_graded_list_lowers_ndcg(grades, gain):
    truth = {f"i{g}": g for g in grades}
    perfect = sorted(truth, key=lambda item: -truth[item])
    metric = parse_metric(f"ndcg@{len(grades)}(gain={gain})")
    assert kernel_value(metric, [(perfect[::-1], truth)]) < kernel_value(metric, [(perfect, truth)]) == pytest.approx(1.0)


def test_empty_zero_counts_ids_without_truth_in_the_mean():
    rows = [(["a"], {"a": 1}), (["b"], {})]
    assert kernel_value(parse_metric("map@3"), rows) == 1.0
    assert kernel_value(parse_metric("map@3(empty=zero)"), rows) == 0.5
    assert math.isnan(kernel_value(parse_metric("map@3"), [(["a"], {})]))


# -- the conformance table -------------------------------------------------------------------------
def conformance_cases():
    with open(CONFORMANCE, newline="") as handle:
        for record in csv.DictReader(handle):
            truth = {}
            for token in record["truth"].split():
                item, _, grade = token.partition(":")
                truth[item] = int(grade or 1)
            yield pytest.param(record, truth, record["predictions"].split(), id=record["case"])


@pytest.mark.parametrize("record, truth, predictions", list(conformance_cases()))
def test_conformance_table(record, truth, predictions):
    k = int(record["k"])
    columns = [c for c in record if c not in ("case", "k", "truth", "predictions")]
    assert {parse_metric(c.replace("@k", f"@{k}") if "@" in c else (c if c == "f1" else c.replace("(", f"@{k}(", 1) if "(" in c else f"{c}@{k}")).kind.name
            for c in columns} == set(ROW_METRICS), "the table has a column for every row metric"
    for column in columns:
        text = column.replace("@k", f"@{k}") if "@k" in column else column if column == "f1" else (
            column.replace("(", f"@{k}(", 1) if "(" in column else f"{column}@{k}")
        metric = parse_metric(text)
        expected = float(record[column])
        rows = [(predictions, truth)]
        assert same(kernel_value(metric, rows, kmax=max(k, len(predictions))), expected, 5e-7), (column, record["case"])
        assert same(reference_value(metric, rows), expected, 5e-7), (column, record["case"], "reference")


# -- names, options and errors ---------------------------------------------------------------------
@pytest.mark.parametrize("text", ["recall@20", "precision@5", "map@12", "ndcg@5", "mrr@10", "hitrate@3", "f1@4", "f1",
                                  "coverage@12", "rmse", "mae", "recall@20(denominator=truth,average=macro)",
                                  "ndcg@5(gain=exp)", "map@7(empty=zero)", "map@12(denominator=truth,empty=zero)"])
def test_repr_round_trips(text):
    metric = parse_metric(text)
    assert parse_metric(repr(metric)) == metric and str(metric) == repr(metric) == text


def test_default_options_are_dropped_and_order_is_canonical():
    assert str(parse_metric("recall@20(average=micro,denominator=min)")) == "recall@20"
    assert str(parse_metric("RECALL@20 (average=macro, denominator=truth)")) == "recall@20(denominator=truth,average=macro)"


@pytest.mark.parametrize("text, words", [
    ("recall@", "bad metric syntax"), ("@20", "bad metric syntax"), ("recall@20(denominator)", "bad metric syntax"),
    ("recall@2x", "bad metric syntax"), (20, "bad metric syntax"),
    ("auprc@20", "unknown metric 'auprc'"), ("precison@5", "unknown metric 'precison'"),
    ("recall", "needs a cut-off"), ("rmse@5", "takes no @K"), ("recall@0", "at least 1"),
    ("ndcg@5(gain=cubic)", "not one of linear, exp"), ("mrr@5(gain=exp)", "unknown option 'gain'"),
    ("map@5(empty=zero,empty=skip)", "given twice"),
])
def test_errors_name_the_problem(text, words):
    with pytest.raises(ValueError, match=None) as error:
        parse_metric(text)
    assert words in str(error.value)


def test_supported_names_come_from_the_registry():
    with pytest.raises(ValueError) as error:
        parse_metric("auprc@5")
    for name in REGISTRY:
        assert name.replace("@k", "@K").split("@")[0] in supported() and name.split("@")[0] in str(error.value)


def test_every_metric_has_a_formula_in_its_summary():
    assert all(len(kind.summary) > 10 for kind in REGISTRY.values())
