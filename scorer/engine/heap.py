"""Keep large allocations out of the C heap, so the memory of freed arrays goes back to the system.

glibc serves an allocation from mmap when it is larger than a threshold, and raises the threshold
each time such a block is freed (up to 32 MiB). After one scoring pass frees its multi-MiB arrays,
the next pass's arrays come from the heap, which keeps their pages after free: peak RSS then
depends on what ran before. Fixing the threshold (mallopt M_MMAP_THRESHOLD) stops that. A no-op
where the C library has no mallopt.
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 1 << 20

_done = False


def bound_heap() -> None:
    """Serve allocations of THRESHOLD_BYTES and more from mmap for the rest of the process (once)."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    _done = True
    try:
        ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES)
    except (OSError, AttributeError):  # not glibc: its allocator has its own policy
        pass
