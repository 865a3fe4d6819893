"""How a Dask task ended, read from its future on the client: shared by grading and partitioned scoring."""

from __future__ import annotations

import sys
from concurrent.futures import CancelledError


def settle(futures, progress: bool = False, unit: str = " tasks") -> None:
    """Wait until every future has finished, failed or been cancelled (distributed.wait raises on a cancelled one).

    `progress`: a bar on stderr of the tasks settled (n of N, rate, ETA).
    """
    from distributed import as_completed
    from tqdm import tqdm

    with tqdm(total=len(futures), unit=unit, file=sys.stderr, disable=not progress, leave=False,
              bar_format="{n_fmt} of {total_fmt}{unit} |{bar}| {rate_fmt}, ETA {remaining}") as bar:
        for _ in as_completed(futures, raise_errors=False):
            bar.update()
        bar.refresh()  # the last count is shown even when it came sooner than the bar's refresh interval


def failure(future) -> BaseException | None:
    """Why a settled task has no result: the exception it raised, the CancelledError if it was cancelled; else None.

    future.exception() covers only the first: for a cancelled future it returns None (older Dask: raises).
    """
    if future.status == "error":
        return future.exception()
    if future.cancelled():
        try:
            future.result()
        except CancelledError as cancelled:  # distributed's FutureCancelledError derives from it
            return cancelled
    return None
