"""The layout of the exact sums' buckets (scorer.kernels.exact_sum), apart from the kernel: the Python side
(scorer.spec.exact_sums) reads buckets without loading numba (the ahead-of-time kernels fill them)."""

OFFSET = 1100  # frexp's exponent of a finite float64 is in [-1073, 1024]
BUCKETS = 2200
LOW_BITS = 26
SCALE = OFFSET + 53  # bucket b holds units of 2^(b - SCALE)
NAN_COUNT, POSITIVE_INF, NEGATIVE_INF = 0, 1, 2
SPECIALS = 3  # the counts of NaN, +inf and -inf live in the low row's first three cells, below any finite bucket
