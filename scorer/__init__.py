"""scorer: fast, streaming scorer and validator for recommender-system competition submissions.

    >>> import scorer
    >>> result = scorer.score("submission.csv", "test_labels.jsonl", competition="otto")
    >>> result.score, result.metrics["orders"]["recall@20"]
"""

__version__ = "0.1.0"
__all__ = ["score", "validate", "load_truth", "load_competition"]


def __getattr__(name):
    # Imported lazily so that `import scorer` (and the CLI's start) stays light.
    if name in ("score", "validate", "load_truth"):
        from scorer import api

        return getattr(api, name)
    if name == "load_competition":
        from scorer.spec.competition import load_competition

        return load_competition
    raise AttributeError(f"module 'scorer' has no attribute {name!r}")
