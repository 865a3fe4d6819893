"""Exact sums of float64 values: a superaccumulator of integer buckets, one per binary exponent.

A finite x is m · 2^(e-53) with frexp's e and an integer m, |m| < 2^53. Bucket e + OFFSET adds m split in a high
part (m >> 26, |.| < 2^27) and a low part (m - high · 2^26, in [0, 2^26)), in int64: 2^36 values a bucket before
an overflow is possible. The sum is then exact, so it is the same whatever the order of the values and however
they were split into parts; scorer.spec.exact_sums turns the buckets into one Python integer (the sum
times 2^SCALE) and rounds that once. NaN and ±inf are counted apart (SPECIALS).
"""

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from scorer.kernels.exact_layout import LOW_BITS, NAN_COUNT, NEGATIVE_INF, OFFSET, POSITIVE_INF


@intrinsic
def float_bits(typingctx, value):
    """The bits of a float64 as a uint64 (one register move: math.frexp is a call into libm)."""
    if value != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.uint64(value), codegen


@njit(cache=True, nogil=True, inline="always")
def add_exact(value, acc, j):
    """Add value to accumulator j of acc (int64, (accumulators, 2, BUCKETS)) exactly."""
    if value == 0.0:
        return
    if not math.isfinite(value):
        if math.isnan(value):
            acc[j, 1, NAN_COUNT] += 1
        elif value > 0:
            acc[j, 1, POSITIVE_INF] += 1
        else:
            acc[j, 1, NEGATIVE_INF] += 1
        return
    bits = float_bits(value)
    exponent = np.int64(bits >> np.uint64(52)) & 0x7FF
    if exponent == 0:  # subnormal
        m, small = math.frexp(value)
        e = np.int64(small)  # frexp's exponent is an int32
        mantissa = np.int64(m * 9007199254740992.0)  # m · 2^53, exact
    else:  # frexp's, read from the bits: 1.f · 2^(E - 1023) = (2^52 + f) · 2^(E - 1022 - 53)
        e = exponent - 1022
        mantissa = np.int64(bits & np.uint64(0xFFFFFFFFFFFFF)) | (np.int64(1) << 52)
        if value < 0:
            mantissa = -mantissa
    high = mantissa >> LOW_BITS
    bucket = e + OFFSET
    acc[j, 0, bucket] += high
    acc[j, 1, bucket] += mantissa - (high << LOW_BITS)


@njit(cache=True, nogil=True)
def accumulate(values, acc, j):
    """Add every value of a float64 array to accumulator j of acc exactly; returns acc."""
    for i in range(values.shape[0]):
        add_exact(values[i], acc, j)
    return acc
