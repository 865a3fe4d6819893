"""scorer.leaderboard: many submissions ranked on one joint session bootstrap (`scorer leaderboard` prints its report)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from scorer.errors import UsageError
from scorer.jobs.board import Board

SUBMISSION_COLUMNS = ("name", "rank", "score", "score_low", "score_high", "rank_low", "rank_high", "p_first", "p_top", "tier")
SPLIT_COLUMNS = ("public_score", "private_score", "public_rank", "private_rank", "rank_change")
BORDA_ALONE = "--borda ranks submission files against --truth; --results, --report, --split, --mde and --engine do not go with it"


@dataclass(frozen=True)
class Options:
    """The options of `scorer leaderboard`, under its names (what the engines read)."""

    truth: object = None
    results: str | None = None
    bootstrap: int = 1000
    seed: int = 0
    level: float = 0.95
    top: int = 3
    method: str = "holm"
    split: str | None = None
    mde: int | None = None  # None: no plan; 0: the private sessions' (else all); N: N sessions
    lenient: bool = False
    engine: str = "stream"
    scheduler: str | None = None
    workers: int | None = None
    threads: int = 2


class Leaderboard(Board):
    """The board of `scorer leaderboard`: to_dict() its JSON (the submissions ranked, their intervals, p_first, tiers,
    the pairs, the split, the MDE), to_text() its text; to_arrow() one row per submission (the ranked, then the
    unranked with their reason). ranked: False when no submission could be; cut_short: a Dask task never finished."""

    def __init__(self, data: dict | None, unranked: list[dict] | None = None, cut_short: bool = False):
        super().__init__(data)
        self.ranked = data is not None
        self.unranked = data["unranked"] if data is not None else list(unranked or [])
        self.cut_short = cut_short

    def to_dict(self) -> dict:
        return self.data if self.ranked else {"submissions": [], "unranked": self.unranked}

    def to_text(self) -> str:
        from scorer.analytics.leaderboard.board import render_text
        from scorer.wording import inline

        if not self.ranked:
            return "\n".join([*(f"{inline(u['name'])}: {inline(u['reason'])}" for u in self.unranked), "no submission could be ranked"])
        return render_text(self.data)

    @property
    def exit_code(self) -> int:
        """The command's: 2 when the Dask run was cut short, 1 with an unranked submission, else 0."""
        return 2 if self.cut_short else 1 if self.unranked else 0

    @property
    def columns(self) -> tuple[str, ...]:
        data = self.to_dict()
        split = SPLIT_COLUMNS if "split" in data else ()
        return (*SUBMISSION_COLUMNS, *split, *data.get("types", ()), "reason")

    def rows(self) -> list[dict]:
        data, columns = self.to_dict(), self.columns
        rows = [{**{key: s.get(key) for key in columns}, **(s.get("figures") or {})} for s in data["submissions"]]
        return rows + [{"name": u["name"], "reason": u["reason"]} for u in self.unranked]

    def _repr_html_(self) -> str:
        from scorer.engine import display
        from scorer.wording import counted, fixed

        data = self.to_dict()
        if not self.ranked:
            title, detail = "no submission could be ranked", ""
        else:
            title = f"{counted(len(data['submissions']), 'submission')} ranked by {data['metric'] or 'the recorded score'}"
            detail = (f"on {counted(data['sessions'], 'session')}, {data['resamples']:,} joint resamples (seed {data['seed']}), "
                      f"{100 * data['level']:g}% intervals" if data.get("resamples") else "(no resamples: no intervals)")
        split = "split" in data
        header = ["name", "rank", "rank interval", "score", "score interval", "p_first", "tier",
                  *(["public rank", "private rank"] if split else []), *data.get("types", ())]
        rows = []
        span = lambda low, high, shown=str: "-" if low is None else f"{shown(low)} - {shown(high)}"  # noqa: E731
        for s in data["submissions"]:
            rows.append([s["name"], s["rank"], span(s["rank_low"], s["rank_high"]), s["score"], span(s["score_low"], s["score_high"], fixed),
                         s["p_first"], s["tier"], *([s["public_rank"], s["private_rank"]] if split else []),
                         *(s["figures"].get(t) for t in data.get("types", ()))])
        unranked = display.table(["unranked", "reason"], [[u["name"], u["reason"]] for u in self.unranked]) if self.unranked else ""
        return display.block(display.heading(title, detail), display.table(header, rows) if rows else "", unranked)


def leaderboard(submissions=None, truth=None, *, results: str | None = None, competition="otto", config=None,
                bootstrap: int = 1000, seed: int = 0, level: float = 0.95, top: int = 3, method: str = "holm",
                split: str | None = None, mde: int | bool | None = None, lenient: bool = False, engine: str = "stream",
                scheduler: str | None = None, workers: int | None = None, threads: int = 2, borda: str | None = None):
    """Rank many submissions on one joint, paired session bootstrap: rank intervals, p(first), tiers of tied submissions.

    submissions: a list of paths and frames, or a dict {name: path or frame}; or results: the JSON lines of
    `scorer grade -o` (its files scored again with the truth; without a truth, the table alone). The options are those of
    `scorer leaderboard` (mde: True for the default number of sessions, or a number of sessions). Strict unless lenient.
    borda: rank by a Borda count over these metrics instead ("" for all of the competition's; `--borda`): a
    scorer.jobs.borda.BordaBoard, with no resamples (results, split, mde and another engine do not go with it).
    """
    from scorer.jobs import options as check
    from scorer.jobs.leaderboard_engines import ENGINES
    from scorer.jobs.records import read_records

    if borda is not None:
        from scorer.jobs.borda import borda as by_borda

        if results or truth is None or split or mde is not None or engine != "stream" or scheduler or workers:
            raise UsageError(BORDA_ALONE)
        return by_borda(submissions, truth, metrics=borda, competition=competition, config=config, lenient=lenient, threads=threads)

    if bool(submissions) == bool(results):
        raise UsageError("give submission files or --results FILE (the JSON lines of `scorer grade -o`), not both")
    if (scheduler or workers) and engine != "dask":
        raise UsageError("--scheduler and --workers run the leaderboard on Dask: add --engine dask")
    bootstrap, seed, level = check.resampling(bootstrap, seed, level)
    check.whole("top", top, 1)
    check.choice("method", method, ("holm", "bh"))
    check.choice("engine", engine, tuple(ENGINES))
    mde = 0 if mde is True else None if mde is False else mde
    if mde is not None:
        check.whole("mde", mde, 0, 10**12)
    if truth is None and submissions:
        raise UsageError("--truth is needed to score submission files")
    if truth is None and (split or mde is not None):
        raise UsageError("--split and --mde need --truth (the per-session figures)")
    records = read_records(results) if results else []
    if truth is None:
        from scorer.analytics.leaderboard.board import from_records

        return Leaderboard(from_records(records))
    from scorer.analytics.leaderboard.board import leaderboard as rank
    from scorer.api import resolve_competition, resolve_truth
    from scorer.frames import is_frame

    wanted = check.split_wanted(split)
    names, sources = check.named(submissions or [r["file"] for r in records])
    if engine == "dask" and (any(map(is_frame, sources)) or not isinstance(truth, (str, os.PathLike))):
        raise UsageError("the dask engine scores files on the cluster's workers: give the submissions and the truth as paths, not frames")
    competition = resolve_competition(competition, config)
    truth_read = resolve_truth(truth, competition)
    if truth_read.n_sessions == 0:
        raise UsageError(f"the truth {truth} has no sessions: nothing to rank")
    resolved_split = check.split_of(wanted, truth_read, truth, seed)
    options = Options(truth, results, bootstrap, seed, level, top, method, split, mde, lenient, engine, scheduler, workers, threads)
    recorded = {r["file"]: r for r in records}
    columns, ranked, unranked, cut_short = ENGINES[engine](list(zip(names, sources)), recorded, truth_read, competition,
                                                           resolved_split, options)
    if columns is None:
        return Leaderboard(None, unranked, cut_short)
    board = rank(columns, ranked, unranked, n=bootstrap, seed=seed, level=level, top=top, method=method, split=resolved_split,
                 mde_sessions=mde or None, plan_mde=mde is not None, threads=threads)
    return Leaderboard(board, cut_short=cut_short)
