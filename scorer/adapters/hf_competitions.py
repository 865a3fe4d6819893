"""Hugging Face Competitions: the custom metric's ``compute(params)`` (bundles/hf/metric.py calls it).

The platform (github huggingface/competitions, competitions/compute_metrics.py) imports the competition's metric.py
when its conf.json says ``"EVAL_METRIC": "custom"`` and calls ``compute(params)``; ``params`` carries
``competition_id``, ``token``, ``team_id``, ``submission_id`` (and more). The metric fetches the solution and the
submission from the competition's private dataset with ``hf_hub_download`` and returns
``{"public_score": {key: value}, "private_score": {key: value}}`` with the same keys: here the leaderboard keys
(``score`` and one per type). The split is the solution's ``split`` column (``public`` or ``private`` per row, as
the platform's own metrics read it; every row of a session on the same side).

solution.csv is a Kaggle-style solution: the id column and the labels column of the competition's header, plus
``split`` (``scorer export hf-solution TRUTH -o solution.csv`` writes it, and the sample submission).

The submission is an upload, read as untrusted (no link followed, one link), but ``hf_hub_download`` hands back a
link: on Linux its cache keeps each file once, as ``<cache>/datasets--ORG--NAME/blobs/<etag>``, and returns
``snapshots/<commit>/<filename>`` beside it, a relative symbolic link to that blob. That one link is followed,
only when it is exactly the cache's own (``cached_blob``); any other link is refused as from any upload (S027).

The platform shows a participant only the status FAILED when the metric raises, and logs the traceback in the
organisers' space. So only two exceptions leave: ``SubmissionRejected`` (the submission: its text is the sentence
a participant would need, for the organisers to pass on) and ``EvaluationFailed`` (the solution, the config or a
bug), and neither carries a byte of the solution: no cause is chained.
"""

from __future__ import annotations

import math
import os
import re
import stat
import sys
from pathlib import Path

import numpy as np

from scorer.adapters.message import leaderboard_values, participant_message
from scorer.api import resolve_competition, score
from scorer.errors import ScorerError, SubmissionError, one_line
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth, attach_usage

SOLUTION = "solution.csv"
BLOB_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # the Hub's etags: a file's git SHA-1, or an LFS file's SHA-256
SPLIT_COLUMN = "split"
HOST_SIDE = "The submission could not be evaluated: a problem on the organisers' side (see the space's log)."


class SubmissionRejected(Exception):
    """The submission is invalid; str(error) is the message for the participant."""


class EvaluationFailed(Exception):
    """Not the participant's fault (the solution, the config, a bug); the detail went to stderr, not into the text."""


def compute(params, download, competition: str = "otto", config: str | None = None, listing=None) -> dict:
    """The public and private figures of the submission `params` names (see the module docstring).

    `download` is huggingface_hub.hf_hub_download (the platform's own downloader), `listing` HfApi().list_repo_tree
    (finds an upload whose name does not end in .csv; without it, only .csv is looked for).
    """
    try:
        comp = resolve_competition(competition, config)
        truth = solution_truth(_fetch(download, params, SOLUTION), comp)
        upload, path = _upload(download, listing, params)
        submission = cached_blob(path, params.competition_id, upload)
    except Exception as error:  # the solution, the config or the hub: the organisers' business
        _host_log(error)
        raise EvaluationFailed(HOST_SIDE) from None
    try:
        result = score(submission, truth, comp, strict=True, untrusted=True)
    except SubmissionError as error:
        raise SubmissionRejected(f"Submission rejected: {error}.") from None
    except Exception as error:
        _host_log(error)
        raise EvaluationFailed(HOST_SIDE) from None
    if result.score is None:
        raise SubmissionRejected(participant_message(result))
    try:
        return split_figures(result, truth)
    except Exception as error:
        _host_log(error)
        raise EvaluationFailed(HOST_SIDE) from None


def _fetch(download, params, filename: str) -> str:
    return download(repo_id=params.competition_id, filename=filename, token=params.token, repo_type="dataset")


def _upload(download, listing, params) -> tuple[str, str]:
    """(its name in the dataset, the downloaded path) of the submission. The platform stores an upload as
    submissions/{team_id}-{submission_id}.{the extension of the participant's file} (competitions/submissions.py), so
    .csv is looked for first, then, with `listing`, the one file of that name with any other extension (.gz, .zip)."""
    stem = f"submissions/{params.team_id}-{params.submission_id}."
    try:
        return stem + "csv", _fetch(download, params, stem + "csv")
    except Exception:
        if listing is None:
            raise
    found = [entry.path for entry in listing(params.competition_id, path_in_repo="submissions", repo_type="dataset", token=params.token)
             if entry.path.startswith(stem) and "/" not in entry.path[len(stem):]]
    if len(found) != 1:
        raise ScorerError(f"the dataset holds {len(found)} files named {stem}*, not one")
    return found[0], _fetch(download, params, found[0])


def cached_blob(path: str, repo_id: str, filename: str) -> str:
    """The file to read for `filename` of the dataset `repo_id`, which hf_hub_download returned at `path`.

    Where `path` is the hub cache's own link, ``.../datasets--ORG--NAME/snapshots/<commit>/<filename>`` reading exactly
    ``../../blobs/<etag>`` (one more ``../`` per folder in `filename`) with a 40- or 64-digit hex etag, into a real
    ``blobs`` folder: the blob's path, worked out from the link's text (the kernel never resolves it). Anything else:
    `path` itself, which the upload's checks then take as it is (a link there: S027). The cache is written by
    hf_hub_download alone; a participant sets only the bytes of the upload, which the blob holds, never a link.
    """
    parts = filename.split("/")
    link = Path(path)
    if len(link.parts) < len(parts) + 3 or list(link.parts[-len(parts):]) != parts:
        return path
    snapshots = link.parents[len(parts)]
    repo = snapshots.parent
    prefix = "../" * (len(parts) + 1) + "blobs/"
    try:
        if not stat.S_ISLNK(os.lstat(link).st_mode) or not stat.S_ISDIR(os.lstat(repo / "blobs").st_mode):
            return path
        target = os.readlink(link)
    except OSError:
        return path
    if snapshots.name != "snapshots" or repo.name != "datasets--" + repo_id.replace("/", "--"):
        return path
    if not target.startswith(prefix) or not BLOB_NAME.fullmatch(target[len(prefix):]):
        return path
    return str(repo / "blobs" / target[len(prefix):])


def _host_log(error: BaseException) -> None:
    print(f"scorer: evaluation failed: {one_line(error)}", file=sys.stderr)


def solution_truth(path: str, comp: Competition) -> Truth:
    """The truth of solution.csv with each session's side (Truth.usage) from its `split` column."""
    import pandas as pd
    import pyarrow as pa

    from scorer.adapters.kaggle import parse_ids, truth_from_solution

    if comp.shape != "id_type":
        raise ScorerError(f"this metric reads solutions of shape 'id_type' (ids like {comp.id_pattern!r}), not {comp.shape!r}")
    row_id = comp.header[0]
    solution = pd.read_csv(path, dtype=str, keep_default_na=False)
    if SPLIT_COLUMN not in solution.columns:
        raise ScorerError(f"{SOLUTION} has no {SPLIT_COLUMN!r} column (columns: {', '.join(map(str, solution.columns))})")
    sides = solution.pop(SPLIT_COLUMN)
    truth = truth_from_solution(solution, row_id, comp)
    sessions = parse_ids(pa.array(solution[row_id].to_numpy(), pa.string()), comp)[1]
    return attach_usage(truth, np.asarray(sessions, np.int64), list(sides), where=f"{SOLUTION} row")


def split_figures(result, truth: Truth) -> dict:
    """{"public_score": {...}, "private_score": {...}}: the leaderboard figures of each side's sessions, as
    `scorer score --split usage` gives them; a type no session of a side has truth for is NaN there (`score` gives
    null: no figure)."""
    from scorer.analytics.split import resolve_split
    from scorer.analytics.summary import analyse

    figures = analyse(result, truth, split=resolve_split(truth))["split"]["figures"]
    keys = list(leaderboard_values(result))
    out = {}
    for side in ("public", "private"):
        side_figures = figures[side]
        values = {"score": float(side_figures["score"])}
        for type_name in keys[1:]:
            value = side_figures["metrics"][type_name][result.scored_metric]
            values[type_name] = float(value) if value is not None else math.nan
        out[f"{side}_score"] = values
    return out
