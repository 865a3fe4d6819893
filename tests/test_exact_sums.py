"""Exact sums (scorer.spec.exact_sums): the correctly rounded sum, whatever the order and however the values are split."""

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.spec.exact_sums import ExactSum, exact_sum

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, max_size=60), st.randoms(use_true_random=False))
def test_the_sum_is_fsums_whatever_the_split_and_order(values, random):
    array = np.array(values, np.float64)
    try:  # the exact rational sum, rounded once
        expected = float(sum(map(Fraction, values), Fraction(0)))
    except OverflowError:  # beyond the largest float: ours is then ±inf
        expected = None
    order = list(range(len(values)))
    random.shuffle(order)
    cut = random.randint(0, len(values))
    merged = float(ExactSum.of(array[order[:cut]]) + ExactSum.of(array[order[cut:]]))
    if expected is None:
        assert math.isinf(exact_sum(array)) and merged == exact_sum(array)
    else:
        assert exact_sum(array) == expected == merged


def test_a_large_array_of_figures_sums_to_fsum():
    values = np.random.default_rng(3).random(300_000) / np.arange(1, 300_001)
    assert exact_sum(values) == math.fsum(values)


def test_nan_and_infinities_are_counted_apart():
    assert math.isnan(exact_sum(np.array([1.0, np.nan])))
    assert exact_sum(np.array([1.0, np.inf])) == np.inf
    assert exact_sum(np.array([-np.inf, 2.0])) == -np.inf
    assert math.isnan(exact_sum(np.array([np.inf, -np.inf])))
    assert exact_sum(np.array([1e308, 1e308])) == np.inf  # exact sum beyond the largest float
    assert exact_sum(np.array([1e308, 1e308, -1e308])) == 1e308  # ... though a partial sum overflows


def test_the_edges_of_the_float_format_sum_exactly():
    """The exponent and mantissa come from the bits for normal floats and from frexp for subnormal ones: both edges."""
    edges = [5e-324, -5e-324, 2.2250738585072009e-308, 2.2250738585072014e-308, -2.2250738585072014e-308, 1.0, -0.5,
             0.1, 1.7976931348623157e308, -1.7976931348623157e308, 3.0e-310]
    for value in edges:
        assert exact_sum(np.array([value])) == value
    assert exact_sum(np.array(edges)) == float(sum(map(Fraction, edges), Fraction(0)))
