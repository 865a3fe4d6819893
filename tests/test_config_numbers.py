"""Every number in a config is finite and in range: nan, inf, negatives and non-numbers are named (key and value), exit 2.
A nan limit compares false with everything, so it would have turned the limit off."""

import pytest

from conftest import full_rows
from scorer.cli.main import main
from scorer.errors import ConfigError
from scorer.spec.competition import competition_from_dict

TRUTH = {1: {"clicks": 5, "orders": [8]}, 2: {"carts": [3]}}
BASE = ("name = 'x'\n[submission]\nheader=['session_type','labels']\nid_pattern='{{session}}_{{type}}'\n"
        "[scoring]\ntypes=['clicks','carts','orders']\nk=20\nmetric='recall@20'\nweights={weights}\n[limits]\n{limits}\n")


def _score_with_config(files, tmp_path, weights: str = "[1, 1, 1]", limits: str = "") -> int:
    """`scorer score`'s exit code with BASE as the config, its weights and limits filled in."""
    sub, tru = files(TRUTH, full_rows(TRUTH))
    path = tmp_path / "bad.toml"
    path.write_text(BASE.format(weights=weights, limits=limits))
    return main(["score", str(sub), "--truth", str(tru), "--config", str(path)])


@pytest.mark.parametrize("limits, message", [
    ("max_seconds = nan", "key 'limits.max_seconds' must be a finite positive number, got nan"),
    ("max_seconds = -nan", "key 'limits.max_seconds' must be a finite positive number, got nan"),
    ("max_seconds = inf", "key 'limits.max_seconds' must be a finite positive number, got inf"),
    ("max_seconds = -1.5", "key 'limits.max_seconds' must be a finite positive number, got -1.5"),
    ("max_seconds = 0", "key 'limits.max_seconds' must be a finite positive number, got 0.0"),
    ("max_seconds = '10'", "key 'limits.max_seconds' must be a number, got '10'"),
    ("max_seconds = true", "key 'limits.max_seconds' must be a number, got True"),
    ("max_line_bytes = nan", "key 'limits.max_line_bytes' must be int, got nan"),
    ("max_line_bytes = 1.5", "key 'limits.max_line_bytes' must be int, got 1.5"),
    ("max_file_bytes = -1", "key 'limits.max_file_bytes' must be a finite positive number, got -1"),
    ("max_decompressed_bytes = 0", "key 'limits.max_decompressed_bytes' must be a finite positive number, got 0"),
])
def test_a_limit_that_is_not_a_finite_positive_number_is_named_exit_2(files, tmp_path, capsys, limits, message):
    assert _score_with_config(files, tmp_path, limits=limits) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("weights, message", [
    ("[nan, 1, 1]", "key 'scoring.weights' must be 3 finite non-negative numbers (one per type), got [nan, 1, 1]"),
    ("[inf, 1, 1]", "key 'scoring.weights' must be 3 finite non-negative numbers (one per type), got [inf, 1, 1]"),
    ("[-0.5, 1, 1]", "got [-0.5, 1, 1]"),
    ("['1', 1, 1]", "got ['1', 1, 1]"),
    ("[0, 0, 0]", "key 'scoring.weights' must add up to a finite positive total, got [0, 0, 0]"),
    ("[1.5e308, 1.5e308, 0]", "key 'scoring.weights' must add up to a finite positive total, got [1.5e+308, 1.5e+308, 0]"),
])
def test_weights_that_are_not_finite_and_in_range_are_named_exit_2(files, tmp_path, capsys, weights, message):
    assert _score_with_config(files, tmp_path, weights=weights) == 2
    assert message in capsys.readouterr().err


def test_the_python_api_refuses_a_nan_limit_too():
    data = {"name": "x", "submission": {"header": ["a", "b"], "shape": "list"},
            "scoring": {"k": 12, "metric": "map@12"}, "limits": {"max_seconds": float("nan")}}
    with pytest.raises(ConfigError, match="'limits.max_seconds' must be a finite positive number, got nan"):
        competition_from_dict(data)
    data["limits"] = {"max_seconds": 2.5}
    assert competition_from_dict(data).limits.max_seconds == 2.5
