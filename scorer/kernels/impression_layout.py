"""Numbers the impression shape's kernels (scorer.kernels.impressions) share with their callers, without numba."""

SORT_STACK = 128  # numpy's PYA_QS_STACK: parts of a sort pending, twice the bits of an index

# read_impression_truth's outcome: none, or the first problem of the truth file (scorer.truth.impressions words them)
TRUTH_OK, TRUTH_FIELDS, TRUTH_ID, TRUTH_LABELS, TRUTH_ONE_CLASS = 0, 1, 2, 3, 4
