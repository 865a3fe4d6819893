"""The public API: what `import scorer` offers, that the import stays light, and the one version."""

import importlib.metadata
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import scorer

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = {"score", "validate", "candidates", "load_truth", "compare", "leaderboard", "explain", "similar", "ladder",
          "load_competition", "Result", "Competition", "Truth", "ScorerError", "SubmissionError", "TruthError", "ConfigError",
          "UsageError"}


def test_all_lists_the_public_names_and_each_resolves():
    assert set(scorer.__all__) == PUBLIC and len(scorer.__all__) == len(PUBLIC)
    for name in scorer.__all__:
        value = getattr(scorer, name)
        assert callable(value) and value.__name__ == name


def test_the_names_are_the_api_modules_own():
    from scorer import api, errors
    from scorer.engine.result import Result
    from scorer.jobs import compare, explain, ladder, leaderboard, similar
    from scorer.spec.competition import Competition, load_competition
    from scorer.truth.ids import Truth

    assert (scorer.score, scorer.validate, scorer.load_truth) == (api.score, api.validate, api.load_truth)
    assert (scorer.compare, scorer.leaderboard, scorer.explain, scorer.similar, scorer.ladder) == (
        compare.compare, leaderboard.leaderboard, explain.explain, similar.similar, ladder.ladder)
    assert (scorer.Result, scorer.Competition, scorer.load_competition, scorer.Truth) == (Result, Competition, load_competition, Truth)
    assert scorer.SubmissionError is errors.SubmissionError
    errors_ = [getattr(scorer, name) for name in scorer.__all__ if name.endswith("Error")]
    assert all(inspect.isclass(error) and issubclass(error, scorer.ScorerError) for error in errors_)


def test_dir_lists_every_public_name():
    assert PUBLIC <= set(dir(scorer)) and "__version__" in dir(scorer)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'scroe'"):
        scorer.scroe


def test_the_public_errors_are_caught_as_one():
    with pytest.raises(scorer.ScorerError):
        scorer.load_competition("no-such-competition")
    with pytest.raises(scorer.TruthError):
        scorer.load_truth(ROOT / "no-such-truth.jsonl")


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_scorer_is_light():
    heavy = ("numpy", "numba", "pyarrow", "pandas", "polars", "scorer.api", "scorer.jobs", "scorer.analytics")
    out = _fresh(f"import sys, scorer; print(sorted(m for m in {heavy!r} if m in sys.modules))")
    assert out.strip() == "[]"
    # a public name loads its own module, and only what that module needs
    out = _fresh("import sys, scorer; scorer.UsageError; print('numpy' in sys.modules, 'scorer.errors' in sys.modules)")
    assert out.split() == ["False", "True"]


def test_the_version_is_defined_once_and_is_the_installed_one():
    from setuptools.config.pyprojecttoml import read_configuration

    assert read_configuration(ROOT / "pyproject.toml")["project"]["version"] == scorer.__version__
    assert importlib.metadata.version("recsys-scorer") == scorer.__version__
    assert scorer.__version__ in _fresh("from scorer.cli.main import main; main(['--version'])")
