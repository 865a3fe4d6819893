"""numba kernels: pure functions on arrays. Nothing here imports the rest of the package, but first numba's cache
folder is checked (scorer.numba_cache: its files are code that numba loads).

A helper that takes only scalars is a plain njit function: LLVM inlines it, and numba's own inlining would copy and
type its IR again at every call site, at build time. A helper that takes arrays costs reference counts on them where it
runs per line or per item: a call counts them, and so does an inlined helper with a loop or an early return (numba's
pruning leaves those counts in place). Each count is an atomic operation on the array's header, a cache line both
threads share. On such a path a helper is `inline="always"` only when it has no loop or early return; otherwise its
reading is written out in the kernel's body (parse.plain_rows, explain_block, candidate_runs). `perf record` of a run shows
any that are left, as NRT_incref and NRT_decref."""

from scorer import numba_cache as _numba_cache

_numba_cache.prepare()
