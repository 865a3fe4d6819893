"""Figures derived from hit-rank masks equal, to the last bit, the figures the kernel works out per row."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.kernels.kinds import ROW_AP, ROW_HITS, ROW_NDCG, ROW_NDCG_EXP, ROW_RR, ROW_SET_F1, derivable, discounts, ideal_dcg
from scorer.kernels.rank import figures_from_hits, row_figures

KINDS = np.array([ROW_HITS, ROW_AP, ROW_NDCG, ROW_NDCG_EXP, ROW_RR], np.int64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), max_size=63), st.integers(0, 70), st.integers(1, 63))
def test_derived_figures_equal_row_figures(relevant, n_truth, k):
    kmax = 63
    discount, ideal = discounts(kmax), ideal_dcg(kmax)
    flags = np.array(relevant, np.bool_)
    ks = np.full(len(KINDS), k, np.int64)
    expected = np.zeros(len(KINDS))
    row_figures(flags, discount[:0], len(flags), n_truth, len(flags), discount[:0], KINDS, ks, discount, ideal, expected)
    mask = sum(1 << r for r, hit in enumerate(relevant) if hit)
    out = figures_from_hits(np.array([mask], np.int64), np.array([5], np.int64), np.array([5 + n_truth], np.int64), KINDS, ks,
                            discount, ideal, np.empty((1, len(KINDS))))
    assert out[0].tolist() == expected.tolist(), (relevant, n_truth, k)


def test_what_can_be_derived():
    assert derivable(KINDS, 20, graded=False)
    assert not derivable(KINDS, 20, graded=True)  # grades are not in the mask
    assert not derivable(KINDS, 64, graded=False)  # ranks past 63 are not in the mask
    assert not derivable(np.array([ROW_HITS, ROW_SET_F1]), 20, graded=False)  # set F1 needs the distinct count


def test_otto_pass_keeps_no_float_figures():
    import scorer

    result = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl")
    assert result.outcome.figures.stored is None  # recall, MAP and NDCG @20 come from the hit masks
    values = result.slot_values
    assert values.shape == (len(result.slot_hits), 3)
    recall_clicks = values[0::3, 0].sum() / np.minimum(result.truth_sizes[:, 0], 20).sum()
    assert recall_clicks == result.metrics["clicks"]["recall@20"]


def test_list_shape_derives_its_figures_and_instacart_keeps_them():
    import scorer

    hm = scorer.score("fixtures/hm/submission.csv", "fixtures/hm/truth.csv", "hm")
    assert hm.outcome.figures.stored is None  # map/recall/precision/ndcg@12 come from the hit masks
    assert hm.score == 2 / 3  # the worked-out value (fixtures/hm/README.md)
    instacart = scorer.score("fixtures/instacart/submission.csv", "fixtures/instacart/truth.csv", "instacart")
    assert instacart.outcome.figures.stored is not None  # set F1 needs the distinct count: stored per row


def test_figure_sums_agree_with_the_summed_figures():
    from scorer.kernels.rank import figure_sums
    from scorer.spec.exact_sums import ExactSum, new_accumulators

    rng = np.random.default_rng(7)
    n = 200_000
    hits = np.where(rng.random(n) < 0.4, rng.integers(0, 1 << 20, n), 0).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 25, n))])
    discount, ideal = discounts(20), ideal_dcg(20)
    ks = np.full(len(KINDS), 20, np.int64)
    rows = figures_from_hits(hits, indptr[:-1], indptr[1:], KINDS, ks, discount, ideal, np.empty((n, len(KINDS))))
    acc = figure_sums(hits, indptr[:-1], indptr[1:], KINDS, ks, discount, ideal, new_accumulators(len(KINDS)))
    sums = [float(ExactSum.of_buckets(buckets)) for buckets in acc]
    exact = [math.fsum(rows[:, j]) for j in range(len(KINDS))]  # correctly rounded
    assert sums == exact  # exact sums: the correctly rounded value, to the last bit


def test_aggregating_sums_equals_aggregating_columns():
    import scorer
    from scorer.spec.competition import load_competition

    result = scorer.score("fixtures/otto_submission.csv", "fixtures/otto_truth.jsonl")
    truth, figures = result.truth, result.outcome.figures
    for t, type_name in enumerate(truth.types):
        for j, metric in enumerate(load_competition("otto").metrics):
            assert metric.sums_suffice
            from_column = metric.aggregate(figures.column(j, t, 3), truth.type_sizes(t))
            assert result.metrics[type_name][str(metric)] == pytest.approx(from_column, rel=1e-15)


@pytest.mark.parametrize("k, dtype", [(20, np.uint32), (32, np.uint32), (33, np.int64), (63, np.int64)])
@pytest.mark.parametrize("frame", [False, True])
def test_the_pass_keeps_masks_as_narrow_as_its_cut_off_allows_and_every_rank_still_counts(tmp_path, k, dtype, frame):
    """uint32 masks up to K 32, int64 beyond: a hit at every rank up to K - 1 (rank 31: the uint32's top bit) counts,
    against a reference written here (one truth click per session: recall 1, MAP 1 / (rank + 1) when found)."""
    import json
    import tomllib
    from pathlib import Path

    import pandas as pd

    import scorer
    from scorer.spec.competition import competition_from_dict

    config = tomllib.loads((Path(__file__).resolve().parent.parent / "configs" / "otto.toml").read_text())
    config["scoring"].update(k=k, metric=f"recall@{k}", diagnostics=[f"map@{k}"])
    competition = competition_from_dict(config)
    sessions = range(2 * k + 3)
    ranks = {s: s % (k + 3) for s in sessions}  # ranks k..k+2: the truth item is not in the row
    truth = tmp_path / "truth.jsonl"
    truth.write_text("".join(json.dumps({"session": s, "labels": {"clicks": 10_000 + s}}) + "\n" for s in sessions))
    rows = []
    for s in sessions:
        items = [1 + i for i in range(k)]
        if ranks[s] < k:
            items[ranks[s]] = 10_000 + s
        rows += [(f"{s}_clicks", " ".join(map(str, items))), (f"{s}_carts", "1"), (f"{s}_orders", "1")]
    table = pd.DataFrame(rows, columns=["session_type", "labels"])
    submission = table if frame else tmp_path / "submission.csv"
    if not frame:
        table.to_csv(submission, index=False)
    result = scorer.score(submission, truth, competition)
    assert result.slot_hits.dtype == dtype
    found = [ranks[s] for s in sessions if ranks[s] < k]
    assert result.metrics["clicks"][f"recall@{k}"] == pytest.approx(len(found) / len(sessions), rel=1e-15)
    assert result.metrics["clicks"][f"map@{k}"] == pytest.approx(sum(1 / (rank + 1) for rank in found) / len(sessions), rel=1e-12)
    assert sorted(int(mask).bit_length() - 1 for mask in result.slot_hits[0::3] if mask) == sorted(found)
