"""The options several jobs share, checked once: the extra diagnostics and item table (--metrics, --items, --train),
the public/private split (--split), the names of the submissions given (paths or frames), and a frame as a file for
the jobs that read a submission's bytes."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from contextlib import contextmanager

from scorer.errors import UsageError


def with_items(competition, metrics: str | None = None, items=None, train=None):
    """(competition with the `metrics` diagnostics added (comma-separated), scorer.truth.items.ItemSide or None) of
    --metrics, --items and --train."""
    from scorer.spec.metrics import parse_metric, split_metrics
    from scorer.truth.items import from_train, read_items

    if items and train:
        raise UsageError("give --items or --train, not both (the table's popularity column, or counts from the log)")
    extra = []
    for text in split_metrics(metrics or ""):
        try:
            metric = parse_metric(text)
        except ValueError as error:
            raise UsageError(f"--metrics: {error}") from None
        if metric.k is not None and metric.k > competition.k:
            raise UsageError(f"--metrics: {metric} reads more than the competition's k = {competition.k} items")
        if metric.family == "beyond" and (competition.shape != "id_type" or metric.k > 63):
            raise UsageError(f"--metrics: {metric} needs shape 'id_type' (integer item ids) and K at most 63")
        if metric.family in ("ranking", "set", "beyond") and metric not in competition.metrics:
            extra.append(metric)
        elif metric.family not in ("ranking", "set", "beyond"):
            raise UsageError(f"--metrics: {metric} cannot be added to {competition.name}'s diagnostics")
    if extra:
        competition = dataclasses.replace(competition, diagnostics=(*competition.diagnostics, *extra))
    side = read_items(items) if items else from_train(train) if train else None
    return competition, side


def split_wanted(text: str | None) -> float | str | None:
    """--split checked before any truth is read: public=F's fraction, "usage" (the truth's column), None without it."""
    from scorer.analytics.split import parse_split

    return None if not text else "usage" if text == "usage" else parse_split(text)


def split_of(wanted: float | str | None, truth, truth_name, seed: int):
    """The Split that split_wanted gave (its fraction hashed with the seed, or "usage": the truth's column), None without it."""
    from scorer.analytics.split import resolve_split

    if wanted is None:
        return None
    if wanted == "usage" and getattr(truth, "usage", None) is None:
        raise UsageError(f"--split usage: the truth {truth_name} has no Usage column; use --split public=F")
    return resolve_split(truth, None if wanted == "usage" else wanted, seed)


def named(sources, what: str = "submission") -> tuple[list[str], list]:
    """(names, sources) of what a job ranks or compares: a list of paths and frames (a path is its own name, each file
    once however spelled; a frame is named by its place and kind), or a dict {name: path or frame}."""
    from scorer.file_identity import identity
    from scorer.frames import check_source

    if isinstance(sources, dict):
        pairs = [(str(name), source) for name, source in sources.items()]
    elif isinstance(sources, (list, tuple)):
        pairs, seen = [], set()
        for index, source in enumerate(sources):
            if isinstance(source, (str, os.PathLike)):
                key = identity(source)
                if key not in seen:  # a file given twice, however spelled, is one submission
                    seen.add(key)
                    pairs.append((str(source), str(source)))
            else:
                pairs.append((frame_name(source, index), source))
    else:
        raise UsageError(f"give the {what}s as a list of paths or frames, or a dict {{name: path or frame}}, not a {type(sources).__name__}")
    for name, source in pairs:
        check_source(source, f"the {what} {name!r}")
    return [name for name, _ in pairs], [source for _, source in pairs]


def frame_name(frame, index: int) -> str:
    """A frame's name where none is given: its place and kind ('frame 2 (polars DataFrame)')."""
    return f"frame {index + 1} ({type(frame).__module__.split('.')[0]} {type(frame).__name__})"


def whole(name: str, value, low: int, high: int | None = None) -> int:
    """A whole-number option (as its command's parser checks it); UsageError naming it otherwise."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)
    if not ok:
        limits = f"of at least {low:,}" if high is None else f"from {low:,} to {high:,}"
        raise UsageError(f"{name} must be a whole number {limits}, got {value!r}")
    return value


def level_of(level) -> float:
    """The confidence level of the intervals: a number between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise UsageError(f"level must be a number between 0 and 1 (such as 0.95), got {level!r}")
    return float(level)


def resampling(bootstrap, seed, level) -> tuple[int, int, float]:
    """--bootstrap, --seed and --level, checked as their parsers check them."""
    from scorer.engine.receipt_schema import MAX_RESAMPLES

    return whole("bootstrap", bootstrap, 0, MAX_RESAMPLES), whole("seed", seed, 0, 2**63 - 1), level_of(level)


def choice(name: str, value, allowed) -> str:
    if value not in allowed:
        raise UsageError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


@contextmanager
def written(frame, competition):
    """(path, the frame's name) of a frame written as its CSV (scorer.engine.frame_pass.write_csv) into a private
    temporary folder, removed after: for the jobs that read a submission's bytes (explain's second pass, similar)."""
    from scorer.engine.frame_pass import write_csv

    with tempfile.TemporaryDirectory(prefix="scorer-frame-") as folder:
        path = os.path.join(folder, "submission.csv")
        with open(path, "wb") as handle:
            name = write_csv(frame, competition, handle)
        yield path, name
