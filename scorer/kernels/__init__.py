"""numba kernels: pure functions on arrays. Nothing here imports the rest of the package, but first numba's cache
folder is checked (scorer.numba_cache: its files are code that numba loads)."""

from scorer import numba_cache as _numba_cache

_numba_cache.prepare()
