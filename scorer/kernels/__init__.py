"""numba kernels: pure functions on arrays. Nothing here imports the rest of the package, but first numba's cache
folder is checked (scorer.numba_cache: its files are code that numba loads).

A helper that takes only scalars is a plain njit function: LLVM inlines it, and numba's own inlining would copy and
type its IR again at every call site, at build time. A helper that takes arrays is `inline="always"` where it runs per
line or per item: an ahead-of-time call counts the references of its array arguments."""

from scorer import numba_cache as _numba_cache

_numba_cache.prepare()
