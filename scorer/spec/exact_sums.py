"""Exactly rounded sums of float64 figures, mergeable across parts of any split (scorer.kernels.exact_sum).

An ExactSum is the exact value of a sum as a Python integer `units` (the sum times 2^SCALE) plus the counts
of NaN and ±inf added; `+` merges two, `float()` rounds once to the nearest float64. The total of a metric is
therefore the same to the last bit however its rows were split, ordered or reduced: one process, the parts of
a partitioned submission, or a tree of Dask tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scorer.kernels import door
from scorer.kernels.exact_layout import BUCKETS, LOW_BITS, NAN_COUNT, NEGATIVE_INF, POSITIVE_INF, SCALE, SPECIALS


def new_accumulators(n: int) -> np.ndarray:
    """Empty buckets for n sums, as the kernels fill them."""
    return np.zeros((n, 2, BUCKETS), np.int64)


@dataclass(frozen=True)
class ExactSum:
    units: int = 0  # Σ finite values · 2^SCALE, exactly
    nan: int = 0
    positive_inf: int = 0
    negative_inf: int = 0

    @classmethod
    def of_buckets(cls, acc: np.ndarray) -> ExactSum:
        """The sum held by one accumulator (2, BUCKETS) of the kernels."""
        high, low = acc[0], acc[1].copy()
        specials = [int(low[i]) for i in (NAN_COUNT, POSITIVE_INF, NEGATIVE_INF)]
        low[:SPECIALS] = 0
        units = 0
        for bucket in np.flatnonzero(high | low):
            units += ((int(high[bucket]) << LOW_BITS) + int(low[bucket])) << int(bucket)
        return cls(units, *specials)

    @classmethod
    def of(cls, values: np.ndarray) -> ExactSum:
        """The exact sum of a float64 array."""
        acc = new_accumulators(1)
        door.kernel("accumulate")(np.ascontiguousarray(values, np.float64), acc, 0)
        return cls.of_buckets(acc[0])

    def __add__(self, other: ExactSum) -> ExactSum:
        return ExactSum(self.units + other.units, self.nan + other.nan, self.positive_inf + other.positive_inf,
                        self.negative_inf + other.negative_inf)

    def __float__(self) -> float:
        if self.nan or (self.positive_inf and self.negative_inf):
            return float("nan")
        if self.positive_inf or self.negative_inf:
            return float("inf") if self.positive_inf else float("-inf")
        try:
            return self.units / (1 << SCALE)  # int / int: correctly rounded
        except OverflowError:
            return float("inf") if self.units > 0 else float("-inf")


def exact_sum(values: np.ndarray) -> float:
    """Σ values, exactly rounded (the same float for any order of the values)."""
    return float(ExactSum.of(values))
