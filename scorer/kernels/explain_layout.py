"""The numbers `scorer explain`'s kernels (explain_rows, conventions) and their callers share, apart from the kernels:
the caller reads them without loading numba (the ahead-of-time kernels serve)."""

MAX_RANKS = 63  # ranks a mask holds
ROW_COLUMNS = 4  # explain_block's rows: truth row, hits, repeats, items read

BASE_RECALL, BASE_PRECISION, BASE_MAP, BASE_NDCG = 0, 1, 2, 3  # the metric of ours a convention's metric starts from
N_BASES = 4
RULE_ITEM0_DROPPED = 1  # a convention's rules, as bits
RULE_NO_PREDICTIONS_SKIPPED = 2
RULE_REPEATS_COLLAPSED = 4
RULE_REPEATS_TWICE = 8
RULE_DENOM_TRUTH = 16
RULE_PER_ROW_MEAN = 32
SUM_NUM, SUM_DEN, SUM_RATIO = 0, 1, 2  # columns of convention_sums' `sums`
N_ROWS, N_TOUCHED = 0, 1  # columns of its `counts`
