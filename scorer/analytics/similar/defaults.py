"""The defaults of `scorer similar` that its parser shows: this module imports nothing, so building the command line
loads no kernel (scorer.kernels prepares numba's cache at its import, which may refuse with an error of its own)."""

DEFAULT_Z = 5.0  # flag a pair this many robust spreads above the median of all pairs
DEFAULT_SAMPLE = 2048  # S, sessions kept per file
