"""What runs on a worker: grade one submission to a result record. Never raises for a bad file."""

from __future__ import annotations

import os
import time
from pathlib import Path

from scorer.dask.truthcache import truth_for
from scorer.errors import ScorerError
from scorer.spec.competition import Competition

RECORD_KEYS = ("valid", "score", "metrics", "counts", "problem_counts", "problems")


def where() -> str:
    """The address of the Dask worker running this task ('' outside a worker)."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return ""


def grade_one(submission: str, truth_path: str, competition: Competition, strict: bool = True,
              max_per_code: int = 20, threads: int = 1, untrusted: bool = True) -> dict:
    """Score one submission with this worker's cached truth; the record a grader stores (an upload: untrusted).

    A bad submission gives its problems (code, severity, line, column, message), not an exception;
    a truth or config that cannot be read on this worker gives an "error" entry. "path" and "content_key"
    (see submission_key) are what `grade --resume` matches a finished file by.
    """
    from scorer.api import score
    from scorer.engine.receipt import make_receipt

    started = time.monotonic()
    record = {"file": submission, "path": submission, "content_key": submission_key(submission)}
    try:
        truth = truth_for(truth_path, competition)
        result = score(submission, truth, competition, strict=strict, max_per_code=max_per_code, threads=threads, untrusted=untrusted)
        out = result.to_dict()
        record.update((key, out[key]) for key in RECORD_KEYS)
        # `scorer verify` proves the score later; the key read above is the receipt's submission hash too
        record["receipt"] = make_receipt(result, competition, submission, submission_key=record["content_key"])
    except ScorerError as error:
        record.update(valid=False, score=None, error=str(error))
    record["status"] = "failed" if "error" in record else "scored" if record["score"] is not None else "invalid"
    record.update(seconds=round(time.monotonic() - started, 3), worker=where(), pid=os.getpid())
    return record


def submission_key(path: str) -> str | None:
    """The content key of the file's bytes (size and xxh3-128, as scorer.truth.cache), opened as an upload is
    (a regular file, not a link); None when it cannot be opened so or is empty. Read in blocks, not mapped:
    a worker's memory (which Dask watches) does not grow by the submission's size."""
    from scorer.engine.reader import open_regular
    from scorer.truth.cache import handle_key

    try:
        fd, _ = open_regular(Path(path), untrusted=True)
    except ScorerError:
        return None
    with open(fd, "rb", buffering=0) as handle:
        try:
            return handle_key(handle, mapped=False)
        except OSError:
            return None


def warm(truth_path: str, competition: Competition) -> float:
    """Load the truth and the compiled kernels on this worker (score a one-row file); seconds taken."""
    import tempfile

    from scorer.api import score

    started = time.monotonic()
    truth = truth_for(truth_path, competition)
    lines = [",".join(competition.header)]
    if competition.shape == "id_type":
        session = int(truth.sessions[0]) if truth.n_sessions else 0
        lines.append(competition.id_pattern.format(session=session, type=competition.types[0]) + ",1")
    with tempfile.TemporaryDirectory(prefix="scorer-warm-") as scratch:
        path = os.path.join(scratch, "warm.csv")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        score(path, truth, competition, threads=1)
    return time.monotonic() - started
