"""The pass's kernel interface (scorer.engine.row_kernel) for both file shapes, and finite_or_none."""


import numpy as np
import pytest

from scorer.api import load_truth, resolve_competition
from scorer.engine.file_pass import kernel_for
from scorer.engine.id_kernel import IdKernel
from scorer.engine.result import finite_or_none
from scorer.engine.row_kernel import RowKernel
from scorer.engine.string_kernel import ShapeKernel
from scorer.truth.ids import from_long

FIXTURES = "fixtures"


def test_the_id_shape_names_slots_and_rows_by_session_and_type():
    competition = resolve_competition("otto")
    truth = from_long(np.array([7, 9]), np.array([0, 2]), np.array([5, 6]), competition.types)
    kernel = kernel_for(competition, truth, 3)
    assert isinstance(kernel, IdKernel) and isinstance(kernel, RowKernel)
    assert kernel.slot_name(5) == "9_orders"
    assert kernel.repeat_name(np.int64(12), np.int64(1), 4) == "12_carts"
    assert kernel.unknown_name(np.int64(12), np.int64(4)) == "12 (line 4)"
    assert kernel.coverage() == {} and kernel.side_figures() is None


def test_a_string_shape_names_slots_by_id_and_rows_by_line():
    competition = resolve_competition("ratings")
    truth = load_truth(f"{FIXTURES}/ratings/truth.csv", competition=competition, use_cache=False)
    kernel = kernel_for(competition, truth, 3)
    assert isinstance(kernel, ShapeKernel) and isinstance(kernel, RowKernel)
    assert kernel.slot_name(0) == truth.name(0)
    assert kernel.repeat_name(0, 0, np.int64(4)) == "of line 4"
    assert kernel.unknown_name(0, np.int64(4)) == "line 4"
    assert kernel.side_figures() is None


def test_the_interface_is_abstract():
    with pytest.raises(TypeError):
        RowKernel()


@pytest.mark.parametrize("value, expected", [(None, None), (0.25, 0.25), (np.float64(0.5), 0.5), (3, 3.0), (float("nan"), None),
                                             (np.nan, None), (float("inf"), None), (-np.inf, None), (np.float32(0.5), 0.5)])
def test_finite_or_none(value, expected):
    out = finite_or_none(value)
    assert out == expected and (out is None or type(out) is float)
