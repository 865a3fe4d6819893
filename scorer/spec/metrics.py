"""Metric registry: names such as "recall@20" or "ndcg@5(gain=exp)" are data, parsed into Metric objects.

Every metric is computed in two steps: a per-row figure (by the kernel, from the first k
predictions of a row and the truth of its id and type), then an aggregate over the rows.
Notation: T = the row's truth set, h = hits among the first k predictions (an item repeated
in a row counts once, at its first rank), N = the rows that are averaged over — those whose
truth is not empty (option ``empty=skip``, the default) or every id of the truth (``empty=zero``:
an id with empty truth scores 0 and still counts in the mean).

The canonical text of a metric is its str() and its repr(): ``parse_metric(repr(m)) == m``.
Options equal to their default are left out of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from scorer.kernels.kinds import (
    ROW_AP,
    ROW_AUC,
    ROW_CLICKS,
    ROW_HITS,
    ROW_JACCARD,
    ROW_MRR_MEAN,
    ROW_NDCG,
    ROW_NDCG_EXP,
    ROW_NONE,
    ROW_RPREC,
    ROW_RPREC_ARTIST,
    ROW_RR,
    ROW_SET_F1,
    ROW_VALUE,
    SIDE_DIVERSITY_CATEGORY,
    SIDE_DIVERSITY_EMBEDDING,
    SIDE_EXPOSURE,
    SIDE_LONG_TAIL,
    SIDE_NOVELTY,
    SIDE_PAIRS,
    SIDE_POPULARITY,
    SIDE_SERENDIPITY,
)
from scorer.spec import curves
from scorer.spec.totals import (
    AveragePrecision,
    CatalogueCoverage,
    ExposureGini,
    F1AtK,
    HitRate,
    ImpressionMean,
    ListMean,
    PairAuc,
    Precision,
    RatingMean,
    Recall,
    RowRatio,
    Serendipity,
    SignedJaccard,
    Total,
    ValueCurve,
)

RANKING, SET, VALUE, CATALOG, BEYOND, IMPRESSION = "ranking", "set", "value", "catalog", "beyond", "impression"
EMPTY = ("skip", "zero")
MEAN_OF_ROWS = RowRatio()  # the default total: mean_N of the row figure


@dataclass(frozen=True)
class MetricKind:
    name: str
    row_kind: int
    summary: str  # the formula, for help texts and docs/metrics.md
    family: str = RANKING  # ranking (needs @K), set (whole row), value (rating), catalog (over all rows), beyond (scorer.engine.beyond),
    # impression (the impression shape's candidates, scorer.kernels.impressions)
    options: tuple[tuple[str, tuple[str, ...]], ...] = (("empty", EMPTY),)  # (name, allowed values; first = default)
    side: int = 0  # beyond: the side figure the kernel adds per row (SIDE_*), 0 for none
    needs_items: bool = False  # beyond: needs --items or --train
    total: Total = MEAN_OF_ROWS  # how the per-row figures become the total (scorer.spec.totals)
    table_only: bool = False  # computed by the table reader alone (scorer.kernels.table_rows), not the two-column one
    lower_is_better: bool = False  # a smaller figure is a better one (rmse, mae, log_loss, clicks): rankings sort it ascending

    @property
    def takes_k(self) -> bool:
        return self.family in (RANKING, CATALOG, BEYOND)

    def default(self, option: str) -> str:
        return dict(self.options)[option][0]


REGISTRY: dict[str, MetricKind] = {
    kind.name: kind
    for kind in (
        MetricKind("recall", ROW_HITS,
                   "micro: Σ h / Σ d; macro: mean_N h / d; d = min(k, |T|) (denominator=min) or |T| (denominator=truth)",
                   options=(("denominator", ("min", "truth")), ("average", ("micro", "macro")), ("empty", EMPTY)), total=Recall()),
        MetricKind("precision", ROW_HITS, "mean_N h / k  (micro Σ h / (k·|N|) is the same number)",
                   options=(("average", ("macro", "micro")), ("empty", EMPTY)), total=Precision()),
        MetricKind("hitrate", ROW_HITS, "mean_N [h > 0]", total=HitRate()),
        MetricKind("f1@k", ROW_HITS, "mean_N 2·h / (k + |T|)  (F1 of P@k = h/k and R = h/|T|)", total=F1AtK()),
        MetricKind("map", ROW_AP,
                   "mean_N (1/d) Σ_{i≤k} P@i · rel_i; d = min(k, |T|) (denominator=min) or |T| (denominator=truth)",
                   options=(("denominator", ("min", "truth")), ("empty", EMPTY)), total=AveragePrecision()),
        MetricKind("ndcg", ROW_NDCG,
                   "mean_N Σ_{i≤k} g(grade_i)/log2(i+1) ÷ IDCG_k; IDCG from the truth's best grades cut at k; "
                   "g(x) = x (gain=linear) or 2^x − 1 (gain=exp); binary truth: grade 1",
                   options=(("gain", ("linear", "exp")), ("empty", EMPTY))),
        MetricKind("mrr@k", ROW_RR, "mean_N 1 / rank of the first hit within k (0 without a hit); also called ARHR"),
        MetricKind("f1", ROW_SET_F1, "mean_N 2·h / (|P| + |T|), P = the row's distinct predictions (set F1)", family=SET),
        MetricKind("coverage", ROW_NONE, "|∪ over rows of top_k ∩ catalog| / |catalog|; catalog = the items of the truth",
                   family=CATALOG, options=(), total=CatalogueCoverage()),
        # Beyond accuracy (scorer.engine.beyond; docs/metrics.md, "Beyond-accuracy metrics and AUC"). L = the row's first k items (n = |L|),
        # pop(i) = training interactions, p(i) = max(pop(i), 1) / Σ pop, R = rows with at least one item (two: diversity).
        MetricKind("auc@k", ROW_NONE,
                   "mean_N [Σ_{misses j<k} hits before j + (h + |T|)/2 · (C − |T| − (k − h))] / (|T| · (C − |T|)); C = catalogue "
                   "size; ranks past the list are misses (implicit's ranking_metrics_at_k)",
                   family=BEYOND, options=(), side=SIDE_PAIRS, needs_items=True, total=PairAuc(impression_weighted=False)),
        MetricKind("gauc", ROW_NONE,
                   "Σ_u w_u·AUC_u / Σ_u w_u over rows with a hit and a miss in L; AUC_u = share of (hit, miss) pairs of L with "
                   "the hit ranked first; w_u = n (impressions) (Zhou et al. 2018, DIN)",
                   family=BEYOND, options=(), side=SIDE_PAIRS, total=PairAuc(impression_weighted=True)),
        MetricKind("novelty", ROW_NONE, "mean_R (1/n) Σ_{i∈L} −log2 p(i)  (Zhou et al. 2010; Vargas & Castells 2011)",
                   family=BEYOND, options=(), side=SIDE_NOVELTY, needs_items=True, total=ListMean()),
        MetricKind("diversity", ROW_NONE,
                   "mean_R 2/(n(n−1)) Σ_{i<j∈L} d(i, j); d = 1 − [same category] (by=category) or 1 − cos(e_i, e_j) "
                   "(by=embedding) (intra-list diversity, Ziegler et al. 2005)",
                   family=BEYOND, options=(("by", ("category", "embedding")),), side=SIDE_DIVERSITY_CATEGORY, needs_items=True,
                   total=ListMean(min_items=2, per_item=False)),
        MetricKind("serendipity", ROW_NONE,
                   "mean_N |hits in L not in PM_k| / k; PM_k = the k most popular training items (Ge et al. 2010)",
                   family=BEYOND, options=(), side=SIDE_SERENDIPITY, needs_items=True, total=Serendipity()),
        MetricKind("arp", ROW_NONE, "mean_R (1/n) Σ_{i∈L} pop(i)  (average recommendation popularity, Yin et al. 2012)",
                   family=BEYOND, options=(), side=SIDE_POPULARITY, needs_items=True, total=ListMean()),
        MetricKind("aplt", ROW_NONE, "mean_R |L ∩ long tail| / n; long tail = all but the 20% most popular items "
                   "(Abdollahpouri et al. 2019)", family=BEYOND, options=(), side=SIDE_LONG_TAIL, needs_items=True, total=ListMean()),
        MetricKind("gini", ROW_NONE, "Σ_{j=1..C} (2j − C − 1)·x_j / (C·Σ x); x ascending exposure counts (rows showing the item "
                   "in their first k) of the C catalogue items (RecBole GiniIndex)",
                   family=BEYOND, options=(), side=SIDE_EXPOSURE, needs_items=True, total=ExposureGini()),
        # The impression shape (docs/metrics.md, "The impression shape"): per impression of n candidates, c of them clicked,
        # their order that of np.argsort(1 / rank)[::-1]; N = the impressions whose label list is not empty.
        MetricKind("auc", ROW_AUC,
                   "mean_N (pairs (clicked, not clicked) with the clicked ranked first + ½ tied pairs) / (c·(n − c)) "
                   "(scikit-learn's roc_auc_score per impression); weight=candidates: Σ n·AUC / Σ n (the gauc convention)",
                   family=IMPRESSION, options=(("weight", ("impressions", "candidates")), ("empty", EMPTY)), total=ImpressionMean()),
        MetricKind("mrr", ROW_MRR_MEAN, "impression shape: mean_N (1/c) Σ over the clicked of 1 / position (MIND's and ebrec's "
                   "mrr_score); list and long shapes: mean_N 1 / rank of the first hit in the whole row (no cut-off: trivago's)",
                   family=IMPRESSION, table_only=True),
        # The table reader's (scorer.kernels.table_rows): P = the row's distinct predictions, h = hits, |T| = distinct truth items.
        MetricKind("r_precision", ROW_RPREC, "mean_N |first |T| predictions ∩ T| / |T| (R-precision, the cut at |T|: Spotify's "
                   "metrics.py, track-only); credit=artist: mean_N (|S_T ∩ T| + 0.25·|S_A ∩ A_T|) / |T|, S_T the first |T| predictions, "
                   "S_A and A_T their artists and the truth's (the challenge rules' artist credit; the config's [artists] table)",
                   family=SET, options=(("credit", ("track", "artist")), ("empty", EMPTY)), table_only=True),
        MetricKind("clicks@k", ROW_CLICKS, "mean_N ⌊(rank of the first hit − 1) / 10⌋ within k, k/10 + 1 without one (Spotify's "
                   "recommended-songs clicks: pages of 10 a listener clicks through; lower is better)", table_only=True,
                   lower_is_better=True),
        MetricKind("jaccard", ROW_JACCARD, "mean_N h / (|P| + |T| − h)", family=SET, table_only=True),
        MetricKind("signed_jaccard", ROW_JACCARD, "Σ over the rows given: b + h / (|P| + |T| − h) where T is not empty, −b where it "
                   "is; b = rows with truth / rows (YooChoose's score, RecSys Challenge 2015: a sum, not a mean)",
                   family=SET, options=(), total=SignedJaccard(), table_only=True),
        MetricKind("rmse", ROW_NONE, "sqrt(mean over rows with truth and a prediction of (ŷ − y)²)", family=VALUE, options=(), total=RatingMean(root=True),
                   lower_is_better=True),
        MetricKind("mae", ROW_NONE, "mean over rows with truth and a prediction of |ŷ − y|", family=VALUE, options=(),
                   total=RatingMean(root=False), lower_is_better=True),
        # The value shape's classification figures over all rows with a label 0/1 and a prediction (scorer.spec.curves).
        MetricKind("roc_auc", ROW_VALUE, "area under the ROC curve of the predictions, ties one half (roc_auc_score)", family=VALUE,
                   options=(), total=ValueCurve(curves.roc_auc), table_only=True),
        MetricKind("pr_auc", ROW_VALUE, "trapezoids under the precision-recall curve, auc(recall, precision) (Twitter's compute_prauc)",
                   family=VALUE, options=(), total=ValueCurve(curves.pr_auc), table_only=True),
        MetricKind("average_precision", ROW_VALUE, "Σ (R_n − R_{n−1}) P_n over the thresholds (average_precision_score)",
                   family=VALUE, options=(), total=ValueCurve(curves.average_precision), table_only=True),
        MetricKind("log_loss", ROW_VALUE, "mean −ln of the probability given the true label, clipped to [1e-15, 1 − 1e-15] "
                   "(scikit-learn's log_loss of 2020; lower is better)", family=VALUE, options=(), total=ValueCurve(curves.log_loss),
                   table_only=True, lower_is_better=True),
        MetricKind("rce", ROW_VALUE, "(1 − log_loss / log_loss of the positive rate for every row) · 100 (Twitter's compute_rce)",
                   family=VALUE, options=(), total=ValueCurve(curves.rce), table_only=True),
    )
}

_SYNTAX = re.compile(r"^([a-z][a-z0-9_]*)(?:@([0-9]+))?(?:\(([^()]*)\))?$")
_OPTION = re.compile(r"^([a-z_]+)=([a-z_]+)$")


def supported() -> str:
    """Every metric name as it is written, from the registry."""
    return ", ".join(name.replace("@k", "@K") if "@" in name else (f"{name}@K" if kind.takes_k else name)
                     for name, kind in REGISTRY.items())


@dataclass(frozen=True)
class Metric:
    """A metric, its cut-off and its non-default options: str(m) == repr(m) == "map@12(denominator=truth)"."""

    name: str
    k: int | None = None
    options: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> MetricKind:
        return REGISTRY[registry_key(self.name, self.k is not None)]

    def option(self, name: str) -> str:
        return dict(self.options).get(name, self.kind.default(name))

    @property
    def cutoff(self) -> int:
        """K, for a metric that takes one (all but f1, rmse and mae)."""
        if self.k is None:
            raise ValueError(f"metric {self} has no cut-off K")
        return self.k

    @property
    def row_kind(self) -> int:
        if self.kind.row_kind == ROW_NDCG and self.option("gain") == "exp":
            return ROW_NDCG_EXP
        if self.kind.row_kind == ROW_RPREC and self.option("credit") == "artist":
            return ROW_RPREC_ARTIST
        return self.kind.row_kind

    @property
    def family(self) -> str:
        return self.kind.family

    @property
    def side_kind(self) -> int:
        """The side figure the kernel adds per row for this metric (SIDE_*), 0 for none."""
        if self.kind.side == SIDE_DIVERSITY_CATEGORY and self.option("by") == "embedding":
            return SIDE_DIVERSITY_EMBEDDING
        return self.kind.side

    def __str__(self) -> str:
        text = self.name if self.k is None else f"{self.name}@{self.k}"
        if self.options:
            text += "(" + ",".join(f"{key}={value}" for key, value in self.options) + ")"
        return text

    __repr__ = __str__

    def total_of(self, rows) -> float:
        """The total of one pass for the rows of one type (rows: scorer.engine.metric_rows.MetricRows); NaN when no row counts."""
        return self.kind.total.of(self, rows)

    def aggregate(self, row_values: np.ndarray, truth_sizes: np.ndarray, present: np.ndarray | None = None) -> float:
        """Combine the per-row figures of the rows of one type (rows without truth hold 0).

        present marks the rows the submission has (used by rmse and mae, which have no score for a
        missing row); NaN when no row can be averaged.
        """
        return self.kind.total.from_rows(self, row_values, truth_sizes, present)

    @property
    def sums_suffice(self) -> bool:
        """Is the aggregate a function of Σ row figures and the truth sizes alone (no per-row array needed)?"""
        return self.kind.total.sums_suffice(self)

    def from_sum(self, total: float, truth_sizes: np.ndarray) -> float:
        """The aggregate from Σ row figures (for metrics whose sums suffice), NaN when no row counts."""
        return self.kind.total.from_sum(self, total, truth_sizes)

    def ratio_parts(self, values: np.ndarray, sizes: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """Per row (numerator, denominator) with the total = Σ num / Σ den, or None when it is no such ratio
        (rmse, coverage, the beyond-accuracy metrics): what a bootstrap resamples. weights: how many times each row counts,
        where the rules weigh rows (missing = skip, repeated_key = all)."""
        return self.kind.total.ratio_parts(self, values, sizes, weights)

    @property
    def lower_is_better(self) -> bool:
        return self.kind.lower_is_better


def registry_key(name: str, has_k: bool) -> str:
    """The registry's key of a metric name: "NAME@k" where the name with a cut-off is another metric than without one
    (f1 and f1@K, mrr and mrr@K, auc and auc@K), else the name."""
    return f"{name}@k" if has_k and f"{name}@k" in REGISTRY else name


def split_metrics(text: str) -> list[str]:
    """A comma-separated list of metric texts, split only at the commas outside parentheses:
    "recall@3(average=macro,empty=zero),map@12" is two metrics. Empty pieces are dropped."""
    pieces, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            pieces.append(text[start:at])
            start, depth = at + 1, 0
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def parse_metric(text: str) -> Metric:
    """Parse "recall@20", "f1" or "ndcg@5(gain=exp)" into a Metric.

    A ValueError says which of these is wrong: the syntax, the metric's name (with the supported
    names, from the registry), the cut-off, or an option's name or value.
    """
    if not isinstance(text, str):
        raise ValueError(f"bad metric syntax {text!r}: expected a string such as 'recall@20' (supported: {supported()})")
    match = _SYNTAX.match(text.strip().lower().replace(" ", ""))
    if not match:
        raise ValueError(f"bad metric syntax {text!r}: expected NAME, NAME@K or NAME@K(option=value,...) such as 'recall@20' "
                         f"(supported: {supported()})")
    name, k_text, options_text = match.groups()
    key = registry_key(name, k_text is not None)
    if key not in REGISTRY:
        raise ValueError(f"unknown metric {name!r} in {text!r} (supported: {supported()})")
    kind = REGISTRY[key]
    if kind.takes_k or key.endswith("@k"):
        if k_text is None:
            raise ValueError(f"metric {text!r} needs a cut-off: {name}@K, such as {name}@12")
        k = int(k_text)
        if k < 1:
            raise ValueError(f"metric {text!r}: K must be at least 1")
    else:
        if k_text is not None:
            raise ValueError(f"metric {text!r}: {name} takes no @K")
        k = None
    allowed = dict(kind.options)
    options = {}
    for part in filter(None, (options_text or "").split(",")):
        option = _OPTION.match(part)
        if not option:
            raise ValueError(f"bad metric syntax {text!r}: option {part!r} is not name=value")
        option_name, value = option.groups()
        if option_name not in allowed:
            known = ", ".join(allowed) or "none"
            raise ValueError(f"metric {text!r}: unknown option {option_name!r} for {name} (its options: {known})")
        if value not in allowed[option_name]:
            raise ValueError(f"metric {text!r}: option {option_name}={value!r} is not one of {', '.join(allowed[option_name])}")
        if option_name in options:
            raise ValueError(f"metric {text!r}: option {option_name!r} is given twice")
        options[option_name] = value
    canonical = tuple((option_name, options[option_name]) for option_name, _ in kind.options
                      if option_name in options and options[option_name] != allowed[option_name][0])
    return Metric(name, k, canonical)
