"""`scorer leaderboard --engine dask`: one task per submission scores it on a worker and reduces it there to its
resampled sums (scorer.analytics.leaderboard.streamed_bootstrap), so only R x types floats per side travel back, whatever the
number of sessions. The tasks run under scorer.dask.grade.Grading: its retries, lost workers and scheduler, cancelled
tasks and re-run counts; a task that never finishes leaves its submission unranked with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.leaderboard.board import sides_of, unranked_reason
from scorer.analytics.leaderboard.streamed_bootstrap import Plan, reduce_tables
from scorer.analytics.split import parse_split, resolve_split
from scorer.dask.grade import Grading
from scorer.dask.truthcache import truth_for
from scorer.errors import ScorerError
from scorer.spec.competition import Competition


@dataclass(frozen=True)
class Resampling:
    """What every task reduces by: the split (text of --split: "public=F", "usage" or None), the seed of the resamples and
    of a hashed split, the number of resamples, the lanes of the arithmetic, and whether --mde keeps its sample."""

    split: str | None
    seed: int
    resamples: int
    lanes: int
    mde: bool

    def plan(self, truth) -> Plan:
        """The Plan of this truth: the sides and sample are worked out from the truth on each worker (never shipped)."""
        split = None if not self.split else resolve_split(truth, None if self.split == "usage" else parse_split(self.split), self.seed)
        sides = sides_of(split, int(truth.sizes.shape[0]))
        return Plan.make(sides, self.resamples, self.seed, self.lanes, ("private" if split is not None else "all") if self.mde else None)


def reduce_one(submission: str, truth_path: str, competition: Competition, strict: bool = True, max_per_code: int = 20,
               threads: int = 1, untrusted: bool = True, *, resampling: Resampling) -> dict:
    """What runs on a worker: score one submission with this worker's cached truth and reduce it; never raises for a bad
    file. {"file", "path", "status": scored | invalid | failed, "score", "reason" or "error", "reduced" when scored}."""
    from scorer.api import score

    record: dict = {"file": submission, "path": submission, "score": None}
    try:
        truth = truth_for(truth_path, competition)
        result = score(submission, truth, competition, strict=strict, max_per_code=max_per_code, threads=threads, untrusted=untrusted)
        reason = unranked_reason(result)
        if reason is not None:
            record.update(status="invalid", reason=reason)
        else:
            record.update(status="scored", score=result.score,
                          reduced=reduce_tables([SessionTable.from_result(result)], resampling.plan(truth), threads=threads))
    except ScorerError as error:
        record.update(status="failed", error=str(error))
    return record


def reductions(client, paths: list[str], truth_path: str, competition: Competition, resampling: Resampling, *,
               strict: bool = True, retries: int = 2, no_worker_seconds: float | None = 60.0) -> Grading:
    """One reduce_one task per path: iterate for the records, each with "index" (its position in `paths`), in the order
    they finish; then read the Grading's `stopped` and `lost_workers`."""
    return Grading(client, paths, truth_path, competition, strict=strict, threads=1, retries=retries,
                   task=partial(reduce_one, resampling=resampling), no_worker_seconds=no_worker_seconds)
