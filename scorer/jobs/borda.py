"""scorer.leaderboard(borda=...): many submissions ranked by a Borda count across several metrics (`scorer leaderboard --borda`)."""

from __future__ import annotations

from scorer.errors import UsageError
from scorer.jobs.board import Board


class BordaBoard(Board):
    """The board of `scorer leaderboard --borda`: to_dict() its JSON (scorer.analytics.leaderboard.borda), to_text() its table,
    to_arrow() a row per submission (the ranked, then the unranked with their reason)."""

    columns = ("name", "rank", "points", "reason")

    def to_text(self) -> str:
        from scorer.analytics.leaderboard.borda import render_text

        return render_text(self.data)

    def rows(self) -> list[dict]:
        return ([{"name": s["name"], "rank": s["rank"], "points": s["points"], **s["figures"]} for s in self.data["submissions"]]
                + [{"name": u["name"], "reason": u["reason"]} for u in self.data["unranked"]])

    @property
    def exit_code(self) -> int:
        return 1 if self.data["unranked"] else 0


def borda(submissions, truth, *, metrics: str | None = None, competition="otto", config=None, lenient: bool = False,
          threads: int = 2) -> BordaBoard:
    """Score each submission against the truth (strict unless lenient) and rank them by a Borda count over `metrics`
    (comma-separated metric texts of the competition; default: all of its metrics). A submission that gets no score is
    listed unranked with its first error."""
    from scorer.analytics.leaderboard.board import unranked_reason
    from scorer.analytics.leaderboard.borda import borda as count
    from scorer.api import resolve_competition, resolve_truth, score
    from scorer.jobs import options as check
    from scorer.spec.metrics import parse_metric, split_metrics

    check.whole("threads", threads, 1, 64)
    competition = resolve_competition(competition, config)
    if len(competition.types) != 1:
        raise UsageError(f"--borda ranks competitions of one type; {competition.name!r} has {len(competition.types)}")
    known = {str(metric): metric for metric in competition.metrics}
    chosen = list(competition.metrics) if not metrics else []
    for text in split_metrics(metrics or ""):
        try:
            metric = str(parse_metric(text))
        except ValueError as error:
            raise UsageError(f"--borda: {error}") from None
        if metric not in known:
            raise UsageError(f"--borda names {text!r}, which is not a metric of {competition.name!r} ({', '.join(known)})")
        chosen.append(known[metric])
    if len(chosen) < 2:
        raise UsageError("--borda counts over two metrics or more (a single metric's ranking is the leaderboard's own)")
    names, sources = check.named(submissions)
    truth_read = resolve_truth(truth, competition)
    figures, unranked = {}, []
    for name, source in zip(names, sources):
        result = score(source, truth_read, competition, strict=not lenient, threads=threads)
        reason = unranked_reason(result) if result.score is None else None
        if reason is not None:
            unranked.append({"name": name, "reason": reason})
            continue
        figures[name] = {str(metric): result.metrics[competition.types[0]].get(str(metric)) for metric in chosen}
    board = count(figures, chosen)
    board["unranked"] = unranked
    return BordaBoard(board)
