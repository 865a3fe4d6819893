"""The string hash tables' numbers, apart from their kernels (scorer.kernels.strings): the hash's constants and a
table's size, which the truth's builders and checks use without loading numba."""

import numpy as np

U = np.uint64
MIX = U(0x9E3779B97F4A7C15)
SEED = U(0x243F6A8885A308D3)
LOW = np.int64(0xFFFFFFFF)


def table_size(n_keys: int) -> int:
    """The power of two of at least 1.5·n_keys (and 16): at most two thirds full."""
    return max(16, 1 << int(3 * max(n_keys, 1) // 2 - 1).bit_length())
