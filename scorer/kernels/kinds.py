"""What a per-row figure is (ROW_* kinds), the DCG discounts, which figures a hit-rank mask determines,
and the string shapes' codes as their kernel takes them.

Plain numpy: the metric registry and the engine read these without loading numba.
"""

import numpy as np

ROW_HITS = 0  # Σ_{i≤k} rel_i                                   (recall, precision, hitrate, f1@k)
ROW_AP = 1  # Σ_{i≤k} P@i·rel_i / min(k, |T|)                 (map)
ROW_NDCG = 2  # Σ_{i≤k} g_i / log2(i+1) ÷ IDCG_k, g linear       (ndcg)
ROW_NDCG_EXP = 3  # the same with g = 2^grade − 1                 (ndcg, gain=exp)
ROW_RR = 4  # 1 / rank of the first hit within k, else 0          (mrr)
ROW_SET_F1 = 5  # 2·hits / (distinct predictions + |T|)           (f1)
ROW_NONE = 6  # no per-row figure (coverage is counted over the whole file)
ROW_AUC = 7  # impression: (pairs (clicked, not clicked) ranked right + ½ tied) / (clicked · not clicked)   (auc)
ROW_MRR_MEAN = 8  # impression: Σ over the clicked of 1 / rank, ÷ clicked; list shapes: 1 / rank of the first hit, no cut-off   (mrr)
ROW_RPREC = 9  # hits among the first |T| (distinct truth items) ÷ |T|       (r_precision)
ROW_CLICKS = 10  # ⌊(rank of the first hit − 1) / 10⌋ within k, k / 10 + 1 without a hit    (clicks)
ROW_JACCARD = 11  # hits ÷ (distinct predictions + |T| − hits)               (jaccard, signed_jaccard)
ROW_VALUE = 12  # value shape: the row's prediction itself, for the totals over all rows (roc_auc, pr_auc, ..., rce)
ROW_RPREC_ARTIST = 13  # (hits + 0.25 · artists matched) among the first |T|, ÷ |T|   (r_precision, credit=artist)


def discounts(k: int) -> np.ndarray:
    """discount[i] = 1 / log2(i + 2): the gain of a hit at 0-based rank i."""
    return 1.0 / np.log2(np.arange(k, dtype=np.float64) + 2.0)


def ideal_dcg(k: int) -> np.ndarray:
    """ideal[n] = Σ_{i<n} discount[i]: the DCG of a list whose first n items are all hits."""
    out = np.zeros(k + 1, np.float64)
    np.cumsum(discounts(k), out=out[1:])
    return out


DERIVABLE = (ROW_HITS, ROW_AP, ROW_NDCG, ROW_NDCG_EXP, ROW_RR, ROW_NONE)  # row kinds a hit-rank mask determines
MASK_RANKS = 63  # ranks a hit-rank mask holds


def derivable(kinds, kmax: int, graded: bool) -> bool:
    """Can each row figure be worked out later from the hit-rank mask and |truth| alone?

    Yes for binary relevance, cut-offs within the mask, and figures that need no more than the
    hit ranks (set F1 also needs the number of distinct predictions).
    """
    return not graded and kmax <= MASK_RANKS and all(int(kind) in DERIVABLE for kind in kinds)


LIST = 2  # the string shapes, as parse_strings_block's `shape` argument
LONG = 3
VALUE = 5
IMPRESSION = 6  # the impression shape (scorer.kernels.impressions)
SQUARED = 1  # value_kinds: the per-row figure of rmse, (ŷ − y)²
ABSOLUTE = 2  # of mae, |ŷ − y|
PREDICTION = 3  # of the table reader's classification figures (roc_auc, ..., rce): ŷ itself

# The side figures of the beyond-accuracy metrics (scorer.kernels.beyond), one column per metric after the row's item count.
SIDE_NOVELTY = 1  # Σ_{i≤k} −log2 p(item_i)
SIDE_POPULARITY = 2  # Σ_{i≤k} pop(item_i)                          (arp)
SIDE_LONG_TAIL = 3  # Σ_{i≤k} [item_i in the long tail]             (aplt)
SIDE_SERENDIPITY = 4  # hits within k outside the popularity top k
SIDE_DIVERSITY_CATEGORY = 5  # 1 − share of the row's pairs within k of the same category
SIDE_DIVERSITY_EMBEDDING = 6  # 1 − mean cosine of the row's pairs within k
SIDE_EXPOSURE = 7  # no figure: counts each item shown within k        (gini)
SIDE_PAIRS = 8  # Σ over the misses within min(k, n) of the hits ranked before them  (auc, gauc)

# The impression shape's rules at the edges, as its kernels take them (scorer.spec.competition.Rules names them).
TIES_NUMPY = 0  # equal ranks in the order of numpy's own argsort (its introsort, no SIMD), reversed: the evaluators' order
TIES_LATER_FIRST = 1  # equal ranks: the later candidate first, at every list length (a stable sort, reversed)
VALUES_RANK = 0  # a list holds ranks (1 = first): each candidate's score is 1 / rank
VALUES_SCORE = 1  # a list holds scores (higher first), as a frame of a model's outputs does
