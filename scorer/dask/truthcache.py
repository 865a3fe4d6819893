"""The ground truth, loaded once per worker process and kept: keyed by path, content and competition shape.

Tasks carry only the truth's path; the first task on a process loads it (from the compiled
cache, in milliseconds once compiled), later tasks reuse it. A file whose bytes changed is loaded
again, even with the same size and modification time (the content key of scorer.truth.cache: ~10 ms at OTTO size).
"""

from __future__ import annotations

import os
from collections import OrderedDict

from scorer.spec.competition import Competition

KEEP = 2  # truths kept per process (a grader may serve two competitions at once)
_loaded: OrderedDict = OrderedDict()
loads = 0  # how many times this process read a truth (for tests and diagnostics)


def truth_for(path: str, competition: Competition):
    """The truth at `path` as `competition` reads it, read at most once per process while the file is unchanged."""
    global loads
    from scorer.api import resolve_truth
    from scorer.truth.cache import content_key

    try:
        content = content_key(path)
    except OSError:
        content = None
    if content is None:
        return resolve_truth(path, competition)  # raises TruthError naming the path, or reads a file that says it is empty
    key = (os.path.abspath(path), content, competition.shape, competition.types)
    if key in _loaded:
        _loaded.move_to_end(key)
        return _loaded[key]
    truth = resolve_truth(path, competition)
    loads += 1
    _loaded[key] = truth
    while len(_loaded) > KEEP:
        _loaded.popitem(last=False)
    return truth


def loads_here() -> tuple[int, int]:
    """(process id, truth loads in this process): run on each worker to check the truth is not shipped per task."""
    return os.getpid(), loads
