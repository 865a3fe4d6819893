"""A value-shaped submission cannot make the score infinite: a rating beyond ±1e100 is S031, the grader rejects it."""

from __future__ import annotations

import json
import math

import pytest

import scorer
from scorer.adapters import codabench


def _files(tmp_path, ratings):
    truth = tmp_path / "truth.csv"
    truth.write_text("id,rating\na,3.5\nb,4\n")
    submission = tmp_path / "submission.csv"
    submission.write_text("id,rating\n" + "".join(f"{key},{value}\n" for key, value in ratings.items()))
    return submission, truth


@pytest.mark.parametrize("value", ["1e200", "-1e101", "1e400", "100000000000000000000e90"])
def test_a_huge_rating_is_refused_and_the_score_stays_finite(tmp_path, value):
    submission, truth = _files(tmp_path, {"a": value, "b": "4"})
    result = scorer.score(submission, truth, competition="ratings", strict=False)
    assert [p.code for p in result.problems if p.severity == "error"] == ["S031"]
    assert value in result.problems[0].message and "1e100" in result.problems[0].message
    assert math.isfinite(result.score) and result.metrics["all"]["rmse"] == 0.0  # the line is not scored: only b


def test_the_largest_accepted_rating_scores(tmp_path):
    submission, truth = _files(tmp_path, {"a": "1e100", "b": "4"})
    result = scorer.score(submission, truth, competition="ratings", strict=True)
    assert result.valid and math.isfinite(result.score)
    assert result.score == pytest.approx(math.sqrt((1e100 - 3.5) ** 2 / 2))


def test_codabench_rejects_it_with_a_message_instead_of_an_internal_error(tmp_path):
    submission, truth = _files(tmp_path, {"a": "1e200", "b": "4"})
    for name, path in (("res", submission), ("ref", truth)):
        (tmp_path / "input" / name).mkdir(parents=True)
        path.rename(tmp_path / "input" / name / path.name)
    outcome = codabench.grade(tmp_path / "input", tmp_path / "output", competition="ratings")
    assert outcome.exit_code == 1 and "S031" in outcome.message, outcome
    assert not (tmp_path / "output" / "scores.json").exists()
    json.dumps(outcome.message)  # a plain message for the participant
