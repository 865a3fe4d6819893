"""The published evaluators `scorer explain` scores a file under: each metric they define, as ours plus rules.

Each convention metric is one of our metrics (recall, precision, MAP, NDCG at the competition's K) with the
evaluator's rules applied in order; scorer.kernels.conventions computes every row under them. The rules
(docs/metrics.md, "Conventions of other evaluators"):

- item 0 dropped: OTTO's evaluate.py tests `labels['clicks']` for truth, so a session whose next click is item 0
  is in neither sum of the clicks recall;
- rows without predictions skipped: trec_eval averages over the queries of the run (pytrec_eval returns no
  others), microsoft/recommenders over the users found in both data frames;
- repeats collapsed: a run is a dict (trec_eval, ranx), so a repeated item keeps its first rank and takes no slot;
- repeats counted twice: implicit's loop and recommenders' merge on (user, item) count every occurrence of a
  truth item as a hit;
- denominator |T|: recall and AP divided by all relevant items instead of min(K, |T|);
- per-row mean: recall averaged per row instead of pooled over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorer.kernels.explain_layout import (
    BASE_MAP,
    BASE_NDCG,
    BASE_PRECISION,
    BASE_RECALL,
    RULE_DENOM_TRUTH,
    RULE_ITEM0_DROPPED,
    RULE_NO_PREDICTIONS_SKIPPED,
    RULE_PER_ROW_MEAN,
    RULE_REPEATS_COLLAPSED,
    RULE_REPEATS_TWICE,
)

OTTO_TYPES = ("clicks", "carts", "orders")

RULES = {  # bit: (name, what it does)
    RULE_ITEM0_DROPPED: ("item 0 dropped", "a click label of item 0 is falsy: the row is in neither sum"),
    RULE_NO_PREDICTIONS_SKIPPED: ("rows without predictions skipped", "a missing or empty row is not averaged"),
    RULE_REPEATS_COLLAPSED: ("repeats collapsed", "the run is a dict: a repeat takes no slot, later items move up"),
    RULE_REPEATS_TWICE: ("repeats counted twice", "every occurrence of a truth item is a hit"),
    RULE_DENOM_TRUTH: ("denominator |T|", "divided by all relevant items, not min(K, |T|)"),
    RULE_PER_ROW_MEAN: ("per-row mean", "the mean of the rows' recalls, not Σ hits / Σ min(K, |T|)"),
}
OUR_METRICS = {BASE_RECALL: "recall@{k}", BASE_PRECISION: "precision@{k}", BASE_MAP: "map@{k}", BASE_NDCG: "ndcg@{k}"}


@dataclass(frozen=True)
class ConventionMetric:
    name: str  # as the evaluator calls it, {k} for K
    base: int  # BASE_*: the metric of ours it is compared with
    rules: tuple[int, ...]  # RULE_* bits, applied in this order


@dataclass(frozen=True)
class Convention:
    name: str
    source: str
    metrics: tuple[ConventionMetric, ...]
    otto_only: bool = False  # defined for OTTO's types only (evaluate.py)
    note: str = ""
    stops: bool = False  # the evaluator stops with a KeyError at a truth row missing from a session that has other rows
    default: bool = True  # scored when --against names none (an older version is scored only when named)


_TREC_ROWS = (RULE_REPEATS_COLLAPSED, RULE_NO_PREDICTIONS_SKIPPED)
CONVENTIONS = (
    Convention("otto-official", "otto-de/recsys-dataset src/evaluate.py (since d1e176b, December 2022)",
               (ConventionMetric("recall@{k}", BASE_RECALL, (RULE_ITEM0_DROPPED,)),), otto_only=True,
               note="a type's row missing from a session, or empty, scores 0 in it, as in ours; the evaluate.py before "
                    "commit d1e176b stopped with a KeyError there (--against otto-official-2022 names those rows)"),
    Convention("otto-official-2022", "otto-de/recsys-dataset src/evaluate.py before d1e176b (December 2022)",
               (ConventionMetric("recall@{k}", BASE_RECALL, (RULE_ITEM0_DROPPED,)),), otto_only=True, stops=True, default=False,
               note="the figures of the current evaluate.py, where it runs to the end"),
    Convention("kaggle-apk", "benhamner/Metrics ml_metrics average_precision.py (apk, mapk)",
               (ConventionMetric("mapk@{k}", BASE_MAP, ()),),
               note="apk counts a repeat once (`p not in predicted[:i]`) and divides by min(len(actual), k): as ours"),
    Convention("trec_eval", "trec_eval / pytrec_eval (run = {item: score}, score falling with rank)",
               (ConventionMetric("recall_{k}", BASE_RECALL, (RULE_DENOM_TRUTH, RULE_PER_ROW_MEAN, *_TREC_ROWS)),
                ConventionMetric("P_{k}", BASE_PRECISION, _TREC_ROWS),
                ConventionMetric("map_cut_{k}", BASE_MAP, (RULE_DENOM_TRUTH, *_TREC_ROWS)),
                ConventionMetric("ndcg_cut_{k}", BASE_NDCG, _TREC_ROWS)),
               note="ties in score are broken by document id; scores falling with rank leave no tie"),
    Convention("recommenders-map", "microsoft/recommenders python_evaluation.map",
               (ConventionMetric("map", BASE_MAP, (RULE_DENOM_TRUTH, RULE_REPEATS_TWICE, RULE_NO_PREDICTIONS_SKIPPED)),),
               note="the top k by prediction score; AP divided by |T| (issue 1702)"),
    Convention("recommenders-map_at_k", "microsoft/recommenders python_evaluation.map_at_k",
               (ConventionMetric("map_at_k", BASE_MAP, (RULE_REPEATS_TWICE, RULE_NO_PREDICTIONS_SKIPPED)),)),
    Convention("ranx", "ranx evaluate(make_comparable=True): recall, map, ndcg",
               (ConventionMetric("recall@{k}", BASE_RECALL, (RULE_DENOM_TRUTH, RULE_PER_ROW_MEAN, RULE_REPEATS_COLLAPSED)),
                ConventionMetric("map@{k}", BASE_MAP, (RULE_DENOM_TRUTH, RULE_REPEATS_COLLAPSED)),
                ConventionMetric("ndcg@{k}", BASE_NDCG, (RULE_REPEATS_COLLAPSED,)))),
    Convention("implicit", "implicit.evaluation.ranking_metrics_at_k",
               (ConventionMetric("precision@{k}", BASE_RECALL, (RULE_REPEATS_TWICE,)),
                ConventionMetric("map@{k}", BASE_MAP, (RULE_REPEATS_TWICE,)),
                ConventionMetric("ndcg@{k}", BASE_NDCG, (RULE_REPEATS_TWICE,))),
               note="its precision is Σ hits / Σ min(K, |T|): our recall (implicit issue 412)"),
)
BY_NAME = {convention.name: convention for convention in CONVENTIONS}


def pooled(base: int, rules: int) -> bool:
    """Is the metric Σ numerators / Σ denominators (our recall) rather than a mean of row figures?"""
    return base == BASE_RECALL and not rules & RULE_PER_ROW_MEAN
