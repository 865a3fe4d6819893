"""frame_rows lets go of the GIL while it runs (the JIT's nogil, the compiled module's release_gil), so the
frame pass's threads score pieces at once and the main thread merges meanwhile."""

import sys
import threading
import time

import numpy as np
import pytest

from scorer.engine import aot_build
from scorer.engine.frame_pass import _Job
from scorer.engine.id_kernel import IdKernel as _Kernel
from scorer.kernels import aot, codes, door
from scorer.kernels.rows import scratch_for
from scorer.spec.competition import load_competition
from scorer.truth.ids import from_long

N_ROWS = 1_000_000
N_ITEMS = 12


def _frame_rows_call(frame_rows):
    """frame_rows' arguments for a frame of N_ROWS keyed rows of N_ITEMS items each, written into one row array."""
    competition = load_competition("otto")
    sessions = np.arange(N_ROWS // 3, dtype=np.int64)
    truth = from_long(sessions, np.zeros(len(sessions), np.int64), sessions % 97, competition.types)
    kernel = _Kernel(competition, truth, 1)
    empty8, empty64 = np.empty(0, np.uint8), np.empty(0, np.int64)
    offsets = np.arange(N_ROWS + 1, dtype=np.int64) * N_ITEMS
    values = np.arange(N_ROWS * N_ITEMS, dtype=np.int64) % 101
    lists = (offsets, empty8, 0, values, empty8, 0, empty64)
    keys = (np.arange(N_ROWS, dtype=np.int64) // 3, np.arange(N_ROWS, dtype=np.int64) % 3, empty64)
    job = _Job((empty8, empty64, empty8, 0), keys, lists, N_ROWS, 0, ())
    row_ints = np.zeros((N_ROWS, 5), np.int64)
    row_values = np.zeros((N_ROWS, kernel.stored_metrics), np.float64)
    counts, found = np.zeros(codes.N_CODES, np.int64), np.zeros((kernel.max_per_code * codes.N_CODES, 5), np.int64)
    args = (0, N_ROWS, 0, job.ids, job.keys, job.lists, kernel.idspec, kernel.truth, kernel.metric, kernel.max_per_code,
            scratch_for(kernel.kmax)[:3], row_ints, row_values, counts, found, 0)
    return lambda: frame_rows(*args)


def _python_steps_during(call) -> tuple[int, float]:
    """(how many steps of a Python loop the main thread made in the middle half of call() on another thread, the call's seconds)."""
    span, stamps, done = [], [], threading.Event()

    def worker():
        started = time.perf_counter()
        call()
        span.extend((started, time.perf_counter()))
        done.set()

    thread = threading.Thread(target=worker)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # a thread holding the GIL hands it over within 0.1 ms of a request, not 5 ms
    try:
        thread.start()
        while not done.is_set():
            stamps.append(time.perf_counter())
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    started, ended = span
    quarter = (ended - started) / 4
    return sum(started + quarter < stamp < ended - quarter for stamp in stamps), ended - started


def _kernel_sets():
    yield pytest.param(lambda: door.jit("frame_rows"), id="jit")
    yield pytest.param(lambda: _compiled().frame_rows, id="compiled", marks=pytest.mark.slow)


def _compiled():
    aot_build.ensure_built()
    module = aot.load("score")
    if module is None:
        pytest.fail(f"no ahead-of-time module: {aot_build.ensure_built()}")
    return module


@pytest.mark.parametrize("frame_rows", list(_kernel_sets()))
def test_frame_rows_releases_the_gil(frame_rows):
    call = _frame_rows_call(frame_rows())
    call()  # compiled (JIT) and its pages touched before the timed call
    steps, seconds = _python_steps_during(call)
    assert seconds > 0.005, f"the call took {seconds:.3f} s: too short to tell (50 switch intervals at least)"
    assert steps > 0, f"the main thread made no step during {seconds:.3f} s of frame_rows: it holds the GIL"
