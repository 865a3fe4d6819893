"""What `scorer grade` prints: a line per submission as it finishes, and at the end the leaderboard and the files without a score."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorer.dask.results_file import status
from scorer.wording import counted, fixed, inline

if TYPE_CHECKING:  # the parser imports this module: spec would load the kernels, and numba, before main's error handling
    from scorer.spec.competition import Competition

RERUN = "rerun the same command with --resume"


def first_problem(record: dict) -> str:
    """Why a record has no score, in one line: the task's error, why it did not finish, or the first error problem."""
    if record.get("error"):
        return record["error"]
    if status(record) == "retryable":
        return f"{record.get('reason') or 'not finished'} ({RERUN})"
    errors = [p for p in record.get("problems", []) if p["severity"] == "error"]
    if not errors:
        return "no error was recorded"
    where = f" line {errors[0]['line']}" if errors[0].get("line") else ""
    return f"{errors[0]['code']}{where}: {errors[0]['message']}"


def line(record: dict) -> str:
    """A submission's line as it finishes: its score, or its status and first problem; re-runs named."""
    runs = record.get("attempts") or 1
    again = f"  (ran {runs} times: {' then '.join(record.get('workers') or [])})" if runs > 1 else ""
    kind = status(record)
    if kind == "scored":
        return f"{fixed(record['score'])}  {inline(record['file'])}{again}"
    return f"{kind:<9} {inline(record['file'])}: {inline(first_problem(record))}{again}"


def workers_that_graded(records: list[dict]) -> int | None:
    """The workers on which the records' tasks ran (every attempt counts), None when the scheduler did not say."""
    if any(record.get("workers") is None for record in records):
        return None
    return len({worker for record in records for worker in record["workers"]})


def ran(graded: int, workers: int, seconds: float, skipped: int) -> str:
    """grade's summary of the run: 'graded 3 submissions on 2 workers in 4.1 s (43.9 per minute)'."""
    already = f" ({skipped} skipped: already graded)" if skipped else ""
    return (f"graded {counted(graded, 'submission')} on {counted(workers, 'worker')} in {seconds:.1f} s "
            f"({60 * graded / max(seconds, 1e-9):.1f} per minute){already}")


def lower_is_better(competition: Competition) -> bool:
    """A scored metric whose smaller figure is the better (rmse, mae, log_loss, clicks) ranks low first; the others high
    first (a property of the metric: twitter20's pr_auc is of the value shape and ranks high first)."""
    return competition.metric.lower_is_better


def leaderboard(records: list[dict], competition: Competition) -> str:
    """The scored records ranked by score (ties share a rank), then every other file again with its first problem."""
    scored = sorted((r for r in records if status(r) == "scored"),
                    key=lambda r: (r["score"] if lower_is_better(competition) else -r["score"], r["file"]))
    order = "lower" if lower_is_better(competition) else "higher"
    lines = [f"leaderboard: {len(scored)} of {len(records)} submissions scored ({competition.metric}, {order} is better)"]
    if scored:
        lines.append(f"{'rank':>5}  {'score':>10}  file")
        rank = 0
        for position, record in enumerate(scored, 1):
            if position == 1 or record["score"] != scored[position - 2]["score"]:
                rank = position
            lines.append(f"{rank:>5}  {fixed(record['score']):>10}  {inline(record['file'])}")
    others = sorted((r for r in records if status(r) != "scored"), key=lambda r: (status(r), r["file"]))
    if others:
        lines += ["", f"not scored: {len(others)}"]
        lines += [f"{status(r):<9} {inline(r['file'])}: {inline(first_problem(r))}" for r in others]
    return "\n".join(lines)
