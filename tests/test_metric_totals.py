"""Each metric forms its total in one place (scorer.spec.totals, attached in the registry): the engine's aggregate,
the sums-only path and the bootstrap's ratio parts agree for every metric, and only ratios are resampled."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.spec.metrics import REGISTRY, parse_metric
from scorer.spec.totals import Total

RATIOS = ["recall@5", "recall@5(average=macro)", "recall@5(denominator=truth)", "recall@5(average=macro,empty=zero)",
          "precision@5", "precision@5(empty=zero)", "hitrate@5", "f1@5", "f1", "map@5", "map@5(denominator=truth)",
          "map@5(denominator=truth,empty=zero)", "ndcg@5", "ndcg@5(gain=exp)", "mrr@5", "mrr@5(empty=zero)"]


def test_every_kind_has_a_total():
    assert all(isinstance(kind.total, Total) for kind in REGISTRY.values())


@pytest.mark.parametrize("name", RATIOS)
def test_ratio_parts_sum_to_the_total(name):
    metric = parse_metric(name)
    rng = np.random.default_rng(7)
    sizes = rng.integers(0, 9, 200)
    values = np.where(sizes > 0, rng.integers(0, 6, 200), 0).astype(np.float64)
    values = np.minimum(values, np.minimum(sizes, 5))
    num, den = metric.ratio_parts(values, sizes)
    total = metric.aggregate(values, sizes)
    assert num.sum() / den.sum() == pytest.approx(total, rel=1e-12)
    if metric.sums_suffice:
        assert metric.from_sum(float(values.sum()), sizes) == total


@pytest.mark.parametrize("name", ["rmse", "mae", "coverage@5", "novelty@5", "diversity@5", "serendipity@5", "arp@5",
                                  "aplt@5", "gini@5", "auc@5", "gauc@5"])
def test_only_ratios_are_resampled(name):
    metric = parse_metric(name)
    assert metric.ratio_parts(np.ones(3), np.ones(3)) is None
    assert not metric.sums_suffice


@pytest.mark.parametrize("name", ["coverage@5", "novelty@5", "gini@5"])
def test_whole_file_metrics_have_no_total_from_rows(name):
    with pytest.raises(ValueError, match="not from per-row figures"):
        parse_metric(name).aggregate(np.ones(3), np.ones(3, np.int64))


def test_rating_totals_average_only_the_rows_present():
    sizes = np.array([1, 1, 1, 0])
    squared = np.array([4.0, 0.0, 9.0, 25.0])
    present = np.array([True, True, False, True])
    assert parse_metric("rmse").aggregate(squared, sizes, present) == np.sqrt(2.0)
    assert parse_metric("mae").aggregate(squared, sizes, present) == 2.0
    assert np.isnan(parse_metric("mae").aggregate(squared, np.zeros(4, np.int64)))
