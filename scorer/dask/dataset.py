"""Score a partitioned submission (a directory of part files) on a Dask cluster, or part by part in process."""

from __future__ import annotations

import time
from pathlib import Path

from scorer.dask.partitioned import reduce, score_part
from scorer.dask.parts import list_parts
from scorer.engine.problems import Code
from scorer.engine.reader import Deadline
from scorer.errors import UsageError
from scorer.spec.competition import Competition
from scorer.truth.ids import Truth


def score_dataset(directory: str | Path, truth: str | Path | Truth, competition: str | Competition = "otto", *,
                  config: str | Path | None = None, strict: bool = False, max_per_code: int = 20,
                  client=None, threads: int | None = None, retries: int = 2, untrusted: bool = False,
                  partitions: int | None = None, truth_parts: str | None = None, task=None, progress: bool = False):
    """Score the parts under `directory` as one submission; the figures equal scoring their concatenation.

    With a Dask `client`, the rows are routed to session partitions and scored there, each against its part of
    the truth, and only statistics come back (scorer.dask.shuffled; `truth` must then be a path; `partitions`: how
    many, default from the truth's size; `truth_parts`: the folder of the partitioned truth, default the cache;
    `task`: the per-partition scorer, for tests; `progress`: a bar on stderr of the partitions scored). Without, the parts are scored one after the other here against
    the whole truth and reduced into full per-slot arrays (the Result then has them, for the analyses). A part
    that cannot be read is reported as unreadable (no score), naming the part. `untrusted` reads every part as
    score() does an upload: a part that is a link or has several hard links is refused (S027, naming the part).
    """
    from scorer.api import resolve_competition, resolve_truth

    started = time.monotonic()
    competition = resolve_competition(competition, config)
    root = Path(directory)
    parts = list_parts(root)
    names = [part.relative_to(root).as_posix() for part in parts]
    if client is not None:
        from scorer.dask.shuffled import score_partitioned

        if isinstance(truth, Truth):
            raise UsageError("partitioned scoring on a cluster takes the truth's path (each task loads its own partition)")
        return score_partitioned(root, truth, competition, client, parts=partitions, strict=strict, max_per_code=max_per_code,
                                 untrusted=untrusted, dataset_root=truth_parts, retries=retries, task=task, progress=progress)
    check_shape(competition)
    loaded = resolve_truth(truth, competition)  # a bad truth fails here, before any part
    deadline = Deadline(competition.limits.max_seconds)  # one time limit for the whole submission, as for one file
    partials = []
    for part, name in zip(parts, names):
        partials.append(score_part(str(part), name, loaded, competition, strict, max_per_code, threads or 2, untrusted, deadline))
        if partials[-1].report.counts.get(Code.TIME_LIMIT.code):
            break  # the time is up: the parts not read are not scored (and their rows are missing)
    return reduce(partials, competition, loaded, strict, max_per_code, str(directory), time.monotonic() - started)


def check_shape(competition: Competition) -> None:
    """Scoring parts in this process merges rows by (id, type) slot: only shape 'id_type' (OTTO) has them; the string
    shapes are partitioned on a cluster (--engine dask)."""
    if competition.shape != "id_type":
        raise UsageError(f"scoring part files in this process takes competitions whose rows are one id and type (shape 'id_type', "
                         f"as OTTO); {competition.name!r} has shape {competition.shape!r}: use --engine dask, or score the parts "
                         "concatenated")
