"""The Python API: score() and validate(), used by the CLI and the platform adapters."""

from __future__ import annotations

import operator
import os
import time
from pathlib import Path

import numpy as np

from scorer.engine.file_pass import Pass
from scorer.engine.problems import Code, Report
from scorer.engine.reader import DEFAULT_BLOCK_BYTES, Deadline, LimitExceeded
from scorer.engine.result import Result
from scorer.errors import SubmissionError, UsageError
from scorer.spec import MAX_CANDIDATE_K
from scorer.spec.competition import Competition, load_competition
from scorer.truth.ids import Truth
from scorer.truth.load import load_truth as read_truth_file

__all__ = ["score", "validate", "candidates", "load_truth", "resolve_competition", "resolve_truth", "result_from"]


def resolve_competition(competition: str | Competition | None = "otto", config: str | Path | None = None) -> Competition:
    if isinstance(competition, Competition):
        return competition
    if competition is not None and not isinstance(competition, str):
        raise UsageError(f"competition must be a bundled competition's name (such as 'otto') or a Competition, not a "
                         f"{type(competition).__name__}")
    if config is not None and not isinstance(config, (str, os.PathLike)):
        raise UsageError(f"config must be the path of a competition config (TOML), not a {type(config).__name__}")
    return load_competition(path=config) if config is not None else load_competition(competition or "otto")


def resolve_truth(truth: str | Path | Truth, competition: Competition) -> Truth:
    if isinstance(truth, Truth):
        if _truth_shape(truth) != _truth_shape(competition):
            from scorer.errors import TruthError

            raise TruthError(f"the truth was read for another file shape than the competition's ({competition.shape!r})")
        if truth.types != competition.types:
            from scorer.errors import TruthError

            raise TruthError(f"the truth has types {list(truth.types)}, the competition {list(competition.types)}")
        return truth
    from scorer.frames import check_source, is_frame

    check_source(truth, "the truth", ", or a truth scorer.load_truth read")
    if competition.shape == "impression" and is_frame(truth):
        raise UsageError("the impression shape's truth is read from its file (truth.txt, behaviors.parquet or a compiled "
                         ".impressions.npz), or from a truth scorer.load_truth read; not from a frame")
    if competition.shape == "impression":
        from scorer.truth.impressions import read_impression_truth

        return read_impression_truth(truth)
    if competition.shape != "id_type":
        from scorer.truth.strings import read_string_truth

        return read_string_truth(truth, competition.shape, competition.types[0], competition=competition)
    if is_frame(truth):
        from scorer.truth.frames import truth_from_frame

        return truth_from_frame(truth, competition)
    return read_truth_file(truth, competition.types)


def _truth_shape(truth_or_competition) -> str:
    """Which reader a truth comes from (or a competition's truth must): "impression", "strings" or "ids"."""
    if isinstance(truth_or_competition, Competition):
        shape = truth_or_competition.shape
        return "impression" if shape == "impression" else "ids" if shape == "id_type" else "strings"
    from scorer.truth.impressions import ImpressionTruth

    return "impression" if isinstance(truth_or_competition, ImpressionTruth) else "strings" if hasattr(truth_or_competition, "ids") else "ids"


MAX_PER_CODE = 10_000  # problems kept per code: the kernel's record table has this many rows per code and block
MAX_THREADS = 64  # each thread holds a block in flight


def _check_options(max_per_code: int, threads: int, block_bytes: int) -> None:
    """Refuse option values that would exhaust memory (a usage error, never a MemoryError)."""
    for name, value, lower, upper in (("max_per_code", max_per_code, 0, MAX_PER_CODE), ("threads", threads, 1, MAX_THREADS),
                                      ("block_bytes", block_bytes, 1, 1 << 31)):
        try:
            whole = operator.index(value) if not isinstance(value, bool) else None
        except TypeError:
            whole = None
        if whole is None or not lower <= whole <= upper:
            raise UsageError(f"{name} must be a whole number from {lower} to {upper:,}, got {value!r}")


def score(submission, truth, competition: str | Competition = "otto", *,
          config: str | Path | None = None, strict: bool = False, max_per_code: int = 20,
          block_bytes: int = DEFAULT_BLOCK_BYTES, threads: int = 2, progress: bool | None = False,
          untrusted: bool = False, items=None, deadline: Deadline | None = None, per_session: bool = False, seeds=None,
          artists=None) -> Result:
    """Score a submission against ground truth.

    The submission is a file (CSV, gz, zip) or a data frame: pandas or polars DataFrame, pyarrow Table, RecordBatch
    or RecordBatchReader (see scorer.engine.frame_pass for the forms); the truth is a file, a Truth or a frame.

    Lenient (default): score what is there; missing, repeated and unknown rows are warnings.
    Strict: those are errors, and any error means no score (result.score is None).
    Raises ConfigError / TruthError for a bad config or truth; a bad submission never raises:
    its problems are in result.problems.
    untrusted: the submission is an upload a grader reads: a symbolic link or a file of several hard
    links is refused (S027). Off by default (a participant's own file may be reached through links);
    every platform adapter and `scorer grade` set it.
    items: a scorer.truth.items.ItemSide for the beyond-accuracy metrics (file submissions).
    deadline: a scorer.engine.reader.Deadline this file's reading shares with other work (the parts of one partitioned
    submission: one time limit for them all); default: the config's max_seconds from now.
    per_session: keep the per-session figures, result.sessions (a pyarrow Table, one row per truth session and type).
    seeds: a file of the items each row was given (the config's [seeds]: Spotify's challenge_set.json), which no row may
    list (S042). artists: the files (or folders of files) of each item's artist (the config's [artists]: the MPD's slices
    and the truth's file), for r_precision(credit=artist).
    """
    from scorer.frames import check_source, is_frame

    started = time.monotonic()
    _check_options(max_per_code, threads, block_bytes)
    check_source(submission)
    competition = resolve_competition(competition, config)
    if competition.table_reader:
        from scorer.truth.sides import check_side

        check_side(competition, bool(artists))  # before the truth's read: its first parse may take seconds
    truth = resolve_truth(truth, competition)
    side = _table_side(competition, truth, seeds, artists)
    report = Report(strict=strict, max_per_code=max_per_code)
    if is_frame(submission):
        if items is not None or any(metric.family == "beyond" for metric in competition.metrics):
            raise UsageError("beyond-accuracy metrics are computed for file submissions only, not yet for data frames")
        return _score_frame(submission, competition, truth, report, strict, threads, started, per_session, side)
    engine = Pass(competition, truth, report, block_bytes=block_bytes, threads=threads, progress=progress, items=items, side=side)
    try:
        outcome = engine.run(submission, untrusted, deadline)
    except SubmissionError as error:
        if isinstance(error, LimitExceeded):
            report.add(error.number, str(error), error.line, error.column, stopped=True, **error.words)
        else:
            report.add(Code.UNREADABLE, str(error))
        report.fatal = True
        outcome = None
    except MemoryError:  # a grader refuses what it cannot hold, as it refuses what is too large: never an internal error
        del engine  # what the pass held goes before the report grows
        report.add(Code.UNREADABLE, f"submission {Path(str(submission)).name} needs more memory to be scored than this "
                                    "process may use (an allocation failed): check it with scorer validate")
        report.fatal = True
        outcome = None
    return _result(competition, truth, report, outcome, str(submission), strict, time.monotonic() - started, per_session)


def _table_side(competition: Competition, truth: Truth, seeds, artists):
    """The table reader's side inputs (scorer.truth.sides), read for this truth; None without them."""
    if seeds is None and not artists:
        return None
    if not competition.table_reader or not hasattr(truth, "ids"):
        raise UsageError("seeds and artists are side inputs of the table reader's list configs (such as spotify-mpd), not of "
                         f"{competition.name!r}")
    from scorer.truth.sides import read_side
    from scorer.truth.strings import StringTruth

    assert isinstance(truth, StringTruth)  # a truth with ids is a StringTruth (the check above)
    return read_side(competition, truth, seeds, artists)


def _score_frame(frame, competition: Competition, truth: Truth, report: Report, strict: bool, threads: int, started: float,
                 per_session: bool, side=None) -> Result:
    from scorer.engine.frame_pass import FramePass
    from scorer.frames import Batches, describe

    rows = Batches(frame)
    outcome = FramePass(competition, truth, report, threads=threads, progress=False, side=side).run_frame(rows)
    return _result(competition, truth, report, outcome, describe(frame, rows), strict, time.monotonic() - started, per_session)


def load_truth(source, types=None, use_cache: bool = True, *, competition: str | Competition = "otto",
               config: str | Path | None = None) -> Truth:
    """Ground truth from a file (JSONL, Parquet, CSV, compiled) or a data frame, for a competition (types default
    to the competition's)."""
    competition = resolve_competition(competition, config)
    from scorer.frames import check_source, is_frame

    check_source(source, "the truth")
    if is_frame(source):
        from scorer.truth.frames import truth_from_frame

        return truth_from_frame(source, competition, tuple(types) if types is not None else None)
    if competition.shape == "impression":
        from scorer.truth.impressions import read_impression_truth

        return read_impression_truth(source, use_cache=use_cache)
    if competition.shape != "id_type":
        from scorer.truth.strings import read_string_truth

        return read_string_truth(source, competition.shape, competition.types[0], use_cache=use_cache, competition=competition)
    return read_truth_file(source, tuple(types) if types is not None else competition.types, use_cache)


def validate(submission, truth: str | Path | Truth | None = None, competition: str | Competition = "otto", *,
             config: str | Path | None = None, strict: bool = True, **options) -> Result:
    """Find every problem in a submission (strict by default, as a grader judges it). Without a truth, a seeds file
    (options' seeds) names the rows the file must give, as verify_submission.py reads the MPD's challenge set."""
    competition = resolve_competition(competition, config)
    if truth is None and options.get("seeds") is not None and competition.seeds_spec is not None:
        from scorer.truth.sides import seeds_truth

        truth, options["seeds"] = seeds_truth(options["seeds"], competition)  # the file read once: its rows and their seeds
    if truth is None:
        from scorer.truth.ids import empty_truth
        from scorer.truth.impressions import empty_impression_truth
        from scorer.truth.strings import empty_string_truth

        if competition.shape == "impression":
            truth = empty_impression_truth()
        else:
            truth = empty_truth(competition.types) if competition.shape == "id_type" else empty_string_truth(competition.types[0])
    return score(submission, truth, competition, strict=strict, **options)


def _result(competition: Competition, truth: Truth, report: Report, outcome, submission: str, strict: bool, seconds: float,
            per_session: bool = False) -> Result:
    metrics: dict[str, dict[str, float | None]] = {}
    truth_sessions = {}
    weighted = 0.0
    for t, type_name in enumerate(competition.types):
        metrics[type_name], truth_sessions[type_name] = _type_metrics(competition, truth, outcome, t)
        scored = metrics[type_name][str(competition.metric)]
        weighted += competition.weights[t] * (scored or 0.0)
    give_score = outcome is not None and not report.fatal and not (strict and report.has_errors())
    sessions = None
    if per_session and outcome is not None:
        from scorer.engine.session_table import session_table

        sessions = session_table(competition, truth, outcome)
    return Result(
        competition=competition.name, submission=submission, strict=strict,
        score=float(weighted) if give_score else None, metrics=metrics,
        weights=dict(zip(competition.types, competition.weights)), scored_metric=str(competition.metric),
        counts=outcome.counts if outcome else {}, report=report,
        truth_sessions=truth_sessions, outcome=outcome, truth=truth,
        seconds=seconds, per_session=sessions,
    )


def _type_metrics(competition: Competition, truth: Truth, outcome, t: int) -> tuple[dict[str, float | None], int]:
    """Every metric of type t (None where it is undefined) and the sessions with truth of that type. Its |truth| per
    session (an int64 per session) goes with the call: one type's at a time is held."""
    type_sizes = truth.type_sizes(t)
    metrics: dict[str, float | None] = {}
    for j, metric in enumerate(competition.metrics):
        value = _aggregate(metric, outcome, t, j, len(competition.types), type_sizes) if outcome else float("nan")
        metrics[str(metric)] = None if np.isnan(value) else value
    return metrics, int(np.count_nonzero(type_sizes))


def result_from(competition: Competition, truth: Truth, report: Report, outcome, submission: str, strict: bool,
                seconds: float) -> Result:
    """The Result of per-slot figures (one pass, or partial passes reduced, see scorer.dask): one aggregation code path."""
    return _result(competition, truth, report, outcome, submission, strict, seconds)


def _aggregate(metric, outcome, t: int, j: int, n_types: int, sizes: np.ndarray) -> float:
    """One metric of one type (j: its column among the competition's metrics), as the metric forms its total."""
    from scorer.engine.metric_rows import MetricRows

    return metric.total_of(MetricRows(outcome, metric, t, n_types, sizes, j))


DEFAULT_KS = (20, 50, 100, 200)


def candidates(source, truth, competition: str | Competition = "otto", *, config: str | Path | None = None,
               k=DEFAULT_KS, max_per_code: int = 20, threads: int = 2):
    """The candidate stage: recall at each K, hit rate, list lengths, missed truth, hit ranks, and the ceiling (the
    competition's score of a perfect reranker of the first K candidates), per type.

    source: a long table with columns session, aid (or item), optional type (rows without one serve every type) and
    score (highest first; without it, row order ranks): a Parquet or CSV file, or a pandas, polars or pyarrow frame.
    Bad rows are problems of the result (never raised); see scorer.engine.candidate_result for the figures.
    """
    from scorer.engine.candidate_pass import CandidatePass, FileSource, FrameSource
    from scorer.engine.candidate_result import CandidateFigures, CandidateResult
    from scorer.frames import check_source, is_frame

    started = time.monotonic()
    _check_options(max_per_code, threads, DEFAULT_BLOCK_BYTES)
    check_source(source, "the candidate table")
    ks = _check_ks(k)
    competition = resolve_competition(competition, config)
    truth = resolve_truth(truth, competition)
    engine = CandidatePass(competition, truth, max_per_code=max_per_code, threads=threads)
    source_obj = FrameSource(source, engine) if is_frame(source) else FileSource(source, engine)
    outcome = engine.run(source_obj)
    figures = CandidateFigures(competition, truth, outcome, threads)
    per_type = figures.per_type()
    tied = sum(row["tied_hits"] for row in per_type.values())
    if tied:
        outcome.warnings.append(f"tied hits: {tied:,} (a hit whose score another candidate of its list has too: equal scores rank "
                                "by row order, the earlier row first, so such a hit's rank depends on that order)")
    return CandidateResult(competition.name, source_obj.description, ks, str(competition.metric),
                           dict(zip(competition.types, competition.weights)), figures.at_each(ks), per_type,
                           outcome.report, outcome.rows, outcome.unknown_rows, outcome.unknown_sessions, figures.ceiling_reason,
                           outcome.warnings, time.monotonic() - started, figures)


def _check_ks(k) -> tuple[int, ...]:
    """K values: whole numbers from 1 to MAX_CANDIDATE_K, given as an int, a sequence or a text such as "20,50,100"."""
    items = k.split(",") if isinstance(k, str) else [k] if isinstance(k, int) else list(k)
    out = []
    for item in items:
        try:
            value = operator.index(item) if not isinstance(item, str) else int(item.strip())
        except (TypeError, ValueError):
            raise UsageError(f"k must be whole numbers of at least 1 such as 20,50,100, got {k!r}") from None
        if isinstance(item, bool) or not 1 <= value <= MAX_CANDIDATE_K:
            raise UsageError(f"k must be whole numbers from 1 to {MAX_CANDIDATE_K:,} such as 20,50,100, got {k!r}")
        out.append(value)
    if not out:
        raise UsageError("k must name at least one K, such as 20,50,100")
    return tuple(sorted(set(out)))
