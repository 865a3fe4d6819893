"""A leaderboard with honest uncertainty: many submissions ranked on one joint, paired session bootstrap.

Submissions come one at a time (collect) and their Results are dropped: in memory, each one's per-session numerators go
into a float32 matrix (scorer.analytics.leaderboard.joint_bootstrap), and one joint bootstrap resamples the sessions once for all of
them; streamed, each one is reduced to its resampled sums as it comes (scorer.analytics.leaderboard.streamed_bootstrap). Either way
the figures are made from the same JointSums: scorer.analytics.leaderboard.standings turns the resampled scores into ranks, rank
intervals, p_first, p_top, pairwise p-values and tiers, and scorer.analytics.leaderboard.mde plans a split's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from scorer.analytics.bootstrap import SessionTable
from scorer.analytics.leaderboard.joint_bootstrap import SessionColumns, joint_sums, observed_sums, resampled_scores, row_blocks
from scorer.analytics.leaderboard.mde import linearized, mde
from scorer.analytics.leaderboard.multiple_testing import METHODS
from scorer.analytics.leaderboard.standings import rank_change, standings
from scorer.analytics.leaderboard.streamed_bootstrap import StreamedColumns
from scorer.analytics.split import PRIVATE, PUBLIC, Split
from scorer.engine.result import finite_or_none
from scorer.wording import counted, fixed, inline, listed, significant


def unranked_reason(result) -> str | None:
    """Why a Result cannot be ranked (no score or no per-session figures: its first error), None when it can."""
    if result.score is not None and result.slot_values is not None:
        return None
    errors = [p for p in result.problems if p.severity == "error"]
    reason = f"{errors[0].code}: {errors[0].message}" if errors else "no score"
    return reason + (" (strict mode)" if result.strict else "")


def collect(entries: Iterable, capacity: int | None = None, open_columns: Callable | None = None) -> tuple:
    """(columns, names of the ranked, unranked [{"name", "reason"}]) from (name, Result or reason text) pairs.

    A Result without a score or per-session figures is listed as unranked; only its numerators are kept otherwise, in
    SessionColumns of `capacity` submissions, or in what open_columns(first table) makes (StreamedColumns).
    """
    columns = None
    names: list[str] = []
    unranked: list[dict] = []
    for name, result in entries:
        reason = result if isinstance(result, str) else unranked_reason(result)
        if reason is not None:
            unranked.append({"name": name, "reason": reason})
            continue
        table = SessionTable.from_result(result)
        if columns is None:
            columns = open_columns(table) if open_columns is not None else SessionColumns(table, capacity or 1)
        columns.add(table)
        names.append(name)
        del table, result  # only the numerators are kept
    return columns, names, unranked


def sides_of(split: Split | None, n_sessions: int) -> dict[str, np.ndarray]:
    """The ranked sessions: {"all": rows} without a split, else {"public": rows, "private": rows}."""
    if split is None:
        return {"all": np.arange(n_sessions, dtype=np.int64)}
    return {"public": np.flatnonzero(split.usage == PUBLIC), "private": np.flatnonzero(split.usage == PRIVATE)}


@dataclass
class JointSums:
    """What a leaderboard's figures are made of, by either path. Per side (its session rows), the observed column sums
    (C,) and the (n, C) resampled ones, in SessionColumns' layout (the denominators, then each submission's numerators);
    and for --mde the per-session columns of the planning side with their rows (all of them in memory, a sample streamed)."""

    types: tuple[str, ...]
    weights: np.ndarray
    metric: object
    sides: dict[str, np.ndarray]
    observed: dict[str, np.ndarray]
    resampled: dict[str, np.ndarray]
    n: int
    seed: int
    planning: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def n_types(self) -> int:
        return len(self.types)

    @classmethod
    def in_memory(cls, columns: SessionColumns, split: Split | None, n: int, seed: int, threads: int = 2) -> JointSums:
        matrix = columns.used()
        sides = sides_of(split, matrix.shape[0])
        observed = {name: observed_sums(matrix, rows) for name, rows in sides.items()}
        resampled = dict(zip(sides, joint_sums(matrix, list(sides.values()), n, seed, threads)))
        planning = (matrix, sides["private" if split is not None else "all"])
        return cls(columns.types, columns.weights, columns.metric, sides, observed, resampled, n, seed, planning)

    @classmethod
    def streamed(cls, columns: StreamedColumns) -> JointSums:
        observed, resampled, sample = columns.sums()
        plan_ = columns.plan
        planning = None if sample is None else (sample, np.arange(len(sample), dtype=np.int64))
        return cls(columns.types, columns.weights, columns.metric, plan_.sides, observed, resampled, plan_.n, plan_.seed, planning)


def figures_of(sums: np.ndarray, columns) -> tuple[np.ndarray, np.ndarray]:
    """(scores (S,), per-type ratios (S, T)) from observed column sums."""
    t = columns.n_types
    den, num = sums[:t], sums[t:].reshape(-1, t)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return resampled_scores(sums, t, columns.weights), ratios


def plan(columns, rows: np.ndarray, sums: np.ndarray, order: np.ndarray, names: list[str], observed: np.ndarray,
         sessions: int, alpha: float, power: float = 0.8, matrix: np.ndarray | None = None, side_sessions: int | None = None) -> dict:
    """--mde: per adjacent pair of the ranking, the paired MDE at `sessions` sessions; and the leader's unpaired one.

    One pass over the given rows of the per-session columns (matrix, default columns.used(); sums: the column sums of the
    whole planning side, of side_sessions sessions, default len(rows)), a block at a time: per block the linearized terms
    c_s of every submission (scorer.analytics.leaderboard.mde), and the sums of the adjacent pairs' differences and squares. The
    rows may be a sample of the side: the variance is then estimated from the sample ("variance_from").
    """
    t = columns.n_types
    den_total = sums[:t]
    ratio = sums[t:].reshape(-1, t) / np.where(den_total > 0, den_total, 1.0)
    mean_den = den_total / max(side_sessions if side_sessions is not None else len(rows), 1)
    upper, lower = order[:-1], order[1:]
    moments = np.zeros((2, len(order)))  # Σ d, Σ d² per adjacent pair; the last entry: the leader's c
    for chunk in row_blocks(columns.used() if matrix is None else matrix, rows):
        x = chunk.astype(np.float64)
        c = linearized(x[:, t:].reshape(len(x), -1, t), x[:, None, :t], ratio, mean_den, columns.weights)
        d = np.concatenate([c[:, upper] - c[:, lower], c[:, order[:1]]], axis=1)
        moments += [d.sum(axis=0), (d * d).sum(axis=0)]
    n = len(rows)
    spreads = np.sqrt(np.maximum(moments[1] - moments[0] ** 2 / n, 0.0) / (n - 1)) if n > 1 else np.full(len(order), np.nan)
    pairs = [{"a": names[a], "b": names[b], "difference": finite_or_none(observed[a] - observed[b]), "sd": finite_or_none(spread),
              "mde": finite_or_none(mde(spread, sessions, alpha, power))} for a, b, spread in zip(upper, lower, spreads)]
    found = [p["mde"] for p in pairs if p["mde"] is not None]
    return {"sessions": int(sessions), "power": power, "alpha": alpha, "variance_from": int(n),
            "median_pair_mde": finite_or_none(np.median(found)) if found else None,
            "unpaired_mde": finite_or_none(mde(np.sqrt(2.0) * spreads[-1], sessions, alpha, power)),
            "pairs": pairs}


def leaderboard(columns, names: list[str], unranked: list[dict] | None = None, *, n: int = 1000,
                seed: int = 0, level: float = 0.95, top: int = 3, method: str = "holm", split: Split | None = None,
                mde_sessions: int | None = None, plan_mde: bool = False, threads: int = 2) -> dict:
    """The leaderboard's JSON figures (see docs/analytics.md): the ranked submissions, the control, the split, the MDE.

    columns: SessionColumns (the joint bootstrap is run here, n resamples seeded by `seed`), StreamedColumns or
    JointSums (already resampled: their own n and seed count).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    if isinstance(columns, SessionColumns):
        columns = JointSums.in_memory(columns, split, n, seed, threads)
    elif isinstance(columns, StreamedColumns):
        columns = JointSums.streamed(columns)
    n, seed, sides, side_observed, t = columns.n, columns.seed, columns.sides, columns.observed, columns.n_types
    scores, ratios = figures_of(sum(side_observed.values()), columns)
    side_sums = list(columns.resampled.values())
    samples = resampled_scores(sum(side_sums), t, columns.weights)
    sign = -1.0 if getattr(columns.metric, "lower_is_better", False) else 1.0  # clicks, log_loss: the smallest ranks first
    found = standings(sign * scores, sign * samples, level, top, method)
    if sign < 0 and "score_low" in found:
        found["score_low"], found["score_high"] = -found["score_high"], -found["score_low"]
    alpha = 1.0 - level
    S = len(names)
    out: dict = {
        "metric": str(columns.metric), "types": list(columns.types), "weights": [float(w) for w in columns.weights],
        "sessions": int(sum(len(rows) for rows in sides.values())), "resamples": n, "seed": seed, "level": level, "top_k": top,
        "control": {"method": method, "name": METHODS[method], "alpha": alpha, "comparisons": S * (S - 1) // 2,
                    "family": "every pair of ranked submissions"},
        "submissions": [], "unranked": list(unranked or []), "pairs": [],
    }
    shake = None
    if split is not None:
        public_scores, _ = figures_of(side_observed["public"], columns)
        private_scores, _ = figures_of(side_observed["private"], columns)
        public_rank = standings(sign * public_scores, np.zeros((0, S)))["rank"]
        private_rank = standings(sign * private_scores, np.zeros((0, S)))["rank"]
        if n:
            shake = rank_change(sign * resampled_scores(side_sums[0], t, columns.weights), sign * resampled_scores(side_sums[1], t, columns.weights))
        out["split"] = {"source": split.source, "sessions": {"public": int(len(sides["public"])), "private": int(len(sides["private"]))},
                        "mean_rank_change": finite_or_none(shake.mean()) if shake is not None else None}
    for i in found["order"]:
        entry = {"name": names[i], "score": finite_or_none(scores[i]), "rank": int(found["rank"][i]),
                 "figures": {name: finite_or_none(ratios[i, k]) for k, name in enumerate(columns.types)}}
        if n:
            entry.update(rank_low=int(found["rank_low"][i]), rank_high=int(found["rank_high"][i]),
                         p_first=float(found["p_first"][i]), p_top=float(found["p_top"][i]), tier=int(found["tier"][i]),
                         score_low=finite_or_none(found["score_low"][i]), score_high=finite_or_none(found["score_high"][i]))
        else:
            entry.update(rank_low=None, rank_high=None, p_first=None, p_top=None, tier=None, score_low=None, score_high=None)
        if split is not None:
            entry.update(public_score=finite_or_none(public_scores[i]), private_score=finite_or_none(private_scores[i]),
                         public_rank=int(public_rank[i]), private_rank=int(private_rank[i]),
                         rank_change=None if shake is None else float(shake[i]))
        out["submissions"].append(entry)
    if n:
        order = found["order"]
        for a, i in enumerate(order):
            for j in order[a + 1:]:
                out["pairs"].append({"a": names[i], "b": names[j], "difference": finite_or_none(scores[i] - scores[j]),
                                     "p_value": float(found["p_values"][i, j]), "p_adjusted": float(found["adjusted"][i, j]),
                                     "significant": bool(sign * scores[i] > sign * scores[j] and found["adjusted"][i, j] <= alpha)})
    if plan_mde and S:
        side = "private" if split is not None else "all"
        sessions = mde_sessions if mde_sessions is not None else len(sides[side])
        matrix, rows = columns.planning
        out["mde"] = plan(columns, rows, side_observed[side], found["order"], names, scores, sessions, alpha, matrix=matrix,
                          side_sessions=len(sides[side]))
    return out


def from_records(records: list[dict]) -> dict:
    """A table without intervals from `scorer grade -o` records alone (no truth: nothing to resample)."""
    scored = [r for r in records if r.get("score") is not None]
    scores = np.array([r["score"] for r in scored], np.float64)
    found = standings(scores, np.zeros((0, len(scored))))
    submissions = []
    for i in found["order"]:
        record = scored[i]
        figures = {t: next(iter(values.values()), None) for t, values in (record.get("metrics") or {}).items()}
        submissions.append({"name": record["file"], "score": record["score"], "rank": int(found["rank"][i]), "figures": figures,
                            "rank_low": None, "rank_high": None, "p_first": None, "p_top": None, "tier": None,
                            "score_low": None, "score_high": None})
    unranked = [{"name": r.get("file", "?"), "reason": r.get("error") or "invalid"} for r in records if r.get("score") is None]
    types = list(submissions[0]["figures"]) if submissions else []
    return {"metric": None, "types": types, "sessions": None, "resamples": 0, "submissions": submissions, "unranked": unranked,
            "pairs": [], "note": "from the grade records alone: give --truth to re-score the files for intervals and tiers"}


def _key(board: dict, top: int, split: bool) -> list[str]:
    """What each column of the table means (those it has), a line each, in plain words with the term beside."""
    key = [("rank", "by the observed score (equal scores share the better rank)")]
    if board["resamples"]:
        level = f"{100 * board['level']:g}%"
        key += [("interval", f"the ranks it takes in {level} of the redraws of the sessions (its {level} rank interval)"),
                ("tier", "the submissions whose gap to their tier's first may be chance (the test above); 1 = top"),
                ("p_first", "how often it came first in the redraws (0.645: in 64.5% of them)"),
                (f"p_top{top}", f"how often it came within the top {top}")]
    key.append(("score", f"{board['metric'] or 'the recorded score'}, weighted over the types, then each type's"))
    if split:
        key += [("public", "its rank on the public sessions"), ("private", "its rank on the private sessions"),
                ("E|Δrank|", "how many places it may move between the public and the private board (the expected "
                             "|private rank - public rank| over the redraws)")]
    width = max(len(name) for name, _ in key)
    return ["", *(f"{'key:' if i == 0 else '':<5}{name:<{width}}  {meaning}" for i, (name, meaning) in enumerate(key))]


def _names(names: list[str], shown: int = 3) -> str:
    """'a', 'a and b', 'a, b, c and 2 more': names others chose, escaped."""
    return listed([inline(name) for name in names], shown)


def lead(board: dict) -> str:
    """What the board shows, in plain words: who is first, how sure that is, how many cannot be told apart from it, and
    with a split how far places may move."""
    ranked = board["submissions"]
    sessions = f" on {counted(board['sessions'], 'session')}" if board.get("sessions") else ""
    words = [f"This board ranks {counted(len(ranked), 'submission')} by {board['metric'] or 'their recorded score'}{sessions}."]
    if ranked:
        first = ranked[0]
        leaders = [s["name"] for s in ranked if s["rank"] == 1]
        if not board["resamples"]:
            why = board.get("note") or "no resamples (--bootstrap 0)"
            words.append(f"{_names(leaders)} {'is' if len(leaders) == 1 else 'are'} first with {fixed(first['score'])}; "
                         f"how sure that order is cannot be said here: {why}.")
        else:
            tied = [s["name"] for s in ranked[1:] if s["tier"] == first["tier"]]
            runner = max(ranked[1:], key=lambda s: s["p_first"], default=None)
            often = f"it came first in {100 * first['p_first']:.1f}% of {board['resamples']:,} redraws of the sessions"
            if runner is not None and runner["p_first"] > 0:
                often += f", {inline(runner['name'])} in {100 * runner['p_first']:.1f}%"
            if tied:
                words.append(f"{inline(first['name'])} is first with {fixed(first['score'])}, but {counted(len(tied), 'other')} "
                             f"cannot be told apart from it (tier 1: their gaps to it may be chance): {_names(tied)}; {often}.")
            else:
                words.append(f"{inline(first['name'])} is first with {fixed(first['score'])}, clearly ahead: every other "
                             f"submission is clearly below it; {often}.")
            tiers = max(s["tier"] for s in ranked)
            control = board["control"]
            words.append(f"The board falls into {counted(tiers, 'tier')}: within a tier the order may be chance; a tier ends where "
                         f"a submission is clearly below its first (a gap that chance would make less than {100 * control['alpha']:g}% "
                         f"of the time, every pair tested at once: {control['name']}, α = {control['alpha']:g}).")
    if "split" in board and board["split"]["mean_rank_change"] is not None:
        words.append(f"Between the public and the private sessions a submission may move {board['split']['mean_rank_change']:.1f} "
                     "places on average.")
    if board["unranked"]:
        words.append(f"{counted(len(board['unranked']), 'file')} could not be ranked (listed under the table).")
    return " ".join(words)


def tied_apart(board: dict) -> list[str]:
    """A sentence for each tier that holds a submission whose rank interval does not overlap its tier's first one's: why
    the two are tied all the same."""
    if not board["resamples"]:
        return []
    control = board["control"]
    pairs = {(p["a"], p["b"]): p for p in board["pairs"]}
    heads: dict = {}
    told: dict = {}
    for s in board["submissions"]:
        head = heads.setdefault(s["tier"], s)
        pair = pairs.get((head["name"], s["name"]))
        if s["tier"] in told or pair is None or s["rank_low"] <= head["rank_high"]:
            continue
        told[s["tier"]] = (f"tier {s['tier']}: {inline(s['name'])} (ranks {s['rank_low']}-{s['rank_high']}) is tied with {inline(head['name'])} "
                           f"(ranks {head['rank_low']}-{head['rank_high']}) although their rank intervals do not overlap: their "
                           f"gap ({significant(pair['difference'])}, p = {significant(pair['p_value'], 2)}) is not significant "
                           f"once {control['name']} corrects for all {control['comparisons']:,} comparisons (adjusted p = "
                           f"{significant(pair['p_adjusted'], 2)} > α = {control['alpha']:g}); a rank interval is one "
                           "submission's own, with no such correction")
    return ["", *told.values()] if told else []


def render_text(board: dict, opening: bool = True) -> str:
    """The lead in plain words (unless not opening: a page says it above), the ranked table, then the control, the split
    and the MDE in a few lines."""
    types = board["types"]
    split = "split" in board
    n = board["resamples"]
    lines = [lead(board), ""] if opening else []
    if n:
        level = f"{100 * board['level']:g}%"
        control = board["control"]
        lines.append(f"{counted(len(board['submissions']), 'submission')} ranked on {counted(board['sessions'], 'session')} by "
                     f"{board['metric']}; {n:,} joint paired resamples (seed {board['seed']}), {level} rank intervals")
        lines.append(f"tiers: a tier ends where a submission is significantly below the tier's first, every pair tested at once: "
                     f"{control['name']}, α = {control['alpha']:g}, over all {control['comparisons']:,} pairwise comparisons "
                     "(z-tests on the paired bootstrap standard error)")
    elif board.get("note"):
        lines.append(board["note"])
    else:
        lines.append(f"{counted(len(board['submissions']), 'submission')} ranked on {counted(board['sessions'], 'session')} by "
                     f"{board['metric']}; no resamples (--bootstrap 0): no intervals, p_first or tiers")
    lines.append("")
    top = board.get("top_k", 3)
    header = (f"{'rank':>4} {'interval':>9} {'tier':>4} {'score':>9} " + "".join(f"{t[:9]:>10}" for t in types)
              + f" {'p_first':>7} {f'p_top{top}':>7}" + (f" {'public':>6} {'private':>7} {'E|Δrank|':>8}" if split else "") + "  name")
    lines += [header, "-" * len(header)]
    fmt = fixed
    for s in board["submissions"]:
        span = "-" if s["rank_low"] is None else f"{s['rank_low']}-{s['rank_high']}"
        row = (f"{s['rank']:>4} {span:>9} {'-' if s['tier'] is None else s['tier']:>4} {fmt(s['score']):>9} "
               + "".join(f"{fmt(s['figures'].get(t)):>10}" for t in types)
               + f" {'-' if s['p_first'] is None else format(s['p_first'], '.3f'):>7} {'-' if s['p_top'] is None else format(s['p_top'], '.3f'):>7}")
        if split:
            change = "-" if s["rank_change"] is None else f"{s['rank_change']:.2f}"
            row += f" {s['public_rank']:>6} {s['private_rank']:>7} {change:>8}"
        lines.append(row + f"  {inline(s['name'])}")
    for u in board["unranked"]:
        lines.append(f"{'-':>4} {'':>9} {'':>4} {'unranked':>9}  {inline(u['name'])}: {inline(u['reason'])}")
    lines += _key(board, top, split)
    lines += tied_apart(board)
    if split:
        info = board["split"]
        mean = info["mean_rank_change"]
        lines += ["", f"split: {info['source']} ({info['sessions']['public']:,} public, {info['sessions']['private']:,} private sessions); "
                  f"expected public -> private rank change: {'-' if mean is None else f'{mean:.2f}'} places on average"]
    plan_ = board.get("mde")
    if plan_:
        lines += ["", f"the smallest gap {counted(plan_['sessions'], 'session')} would show as significant "
                  f"{100 * plan_['power']:g}% of the time (MDE at {100 * plan_['power']:g}% power, two-sided α = {plan_['alpha']:g}, "
                  f"per-session variance from {counted(plan_['variance_from'], 'session')}): median over adjacent pairs "
                  f"{significant(plan_['median_pair_mde'])}, unpaired {significant(plan_['unpaired_mde'])}"]
        for p in plan_["pairs"]:
            detectable = "  detectable" if p["mde"] and p["difference"] is not None and abs(p["difference"]) >= p["mde"] else ""
            lines.append(f"  {p['a']} - {p['b']}: difference {significant(p['difference'])}, MDE {significant(p['mde'])}{detectable}")
    return "\n".join(lines)
