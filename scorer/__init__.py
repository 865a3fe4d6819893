"""scorer: fast, streaming scorer and validator for recommender-system competition submissions.

    >>> import scorer
    >>> result = scorer.score("submission.csv", "test_labels.jsonl", competition="otto")
    >>> result.score, result.metrics["orders"]["recall@20"]
    >>> scorer.compare("new.csv", "old.csv", "test_labels.jsonl").to_pandas()

The commands' jobs are functions too (compare, leaderboard, explain, similar, ladder): each returns an object whose
to_dict() is the command's JSON, with to_text(), to_pandas(), to_polars() and a notebook display.

Every public name is imported on first use (module __getattr__), so that `import scorer` (and the CLI's
start) loads neither numpy nor numba.
"""

__version__ = "0.2.0"  # the one place: pyproject.toml reads it ([tool.setuptools.dynamic])

_HOMES = {
    "score": "scorer.api",
    "validate": "scorer.api",
    "candidates": "scorer.api",
    "load_truth": "scorer.api",
    "compare": "scorer.jobs.compare",
    "leaderboard": "scorer.jobs.leaderboard",
    "explain": "scorer.jobs.explain",
    "similar": "scorer.jobs.similar",
    "ladder": "scorer.jobs.ladder",
    "load_competition": "scorer.spec.competition",
    "Competition": "scorer.spec.competition",
    "Result": "scorer.engine.result",
    "Truth": "scorer.truth.ids",
    "ScorerError": "scorer.errors",
    "SubmissionError": "scorer.errors",
    "TruthError": "scorer.errors",
    "ConfigError": "scorer.errors",
    "UsageError": "scorer.errors",
}
__all__ = list(_HOMES)


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'scorer' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
