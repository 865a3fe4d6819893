"""The submissions `scorer audit` makes from a truth, as its kernel (scorer.kernels.submission_rows) takes them, apart
from the kernel: the caller names them without loading numba."""

PERFECT, EMPTY, RANDOM = 0, 1, 2
