"""splitmix64, once: the 64-bit mixing every seeded draw of the package uses (Steele, Lea and Flood 2014).

mix64 is its finalizer, a bijection of uint64 whose output bits all depend on every input bit;
splitmix64(x) = mix64(x + φ), φ = 0x9E3779B97F4A7C15 (2^64 / golden ratio). Inlined into the kernels that call them.
"""

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """splitmix64's finalizer."""
    x = np.uint64(x)
    x = (x ^ (x >> np.uint64(30))) * MIX1
    x = (x ^ (x >> np.uint64(27))) * MIX2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def splitmix64(x):
    """One step of splitmix64 from state x: mix64(x + φ)."""
    return mix64(np.uint64(x) + GOLDEN)
