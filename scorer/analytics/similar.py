"""`scorer similar`: pairwise similarity of submissions from their sketches (scorer.analytics.similar_sketch).

The sketches are aligned on one set of sessions, the S smallest session hashes over all files, so row r of every
file is the same (session, type). For a pair (a, b), over the n_ab rows both files hold:

- identical = #{r: order_a(r) = order_b(r)} / n_ab, the share of rows whose first K items are identical;
- jaccard = #{(r, j): min_j,a(r) = min_j,b(r)} / (m n_ab), the MinHash estimate of the mean over rows of
  |A_r ∩ B_r| / |A_r ∪ B_r| (two empty lists: 1);
- rank agreement = #{(r, j): rank_j,a(r) = rank_j,b(r)} / #{(r, j): min_j,a(r) = min_j,b(r)} over the rows where the
  lists are not both empty, the share of items both rows hold (a uniform sample of them: the matching MinHash slots)
  that they hold at the same rank; two empty lists hold no item, and count neither way.

Each is a count of equal 32-bit tokens; an absent row holds a token of its own file, equal to no other. A pair's
z-score of a measure x is (x - median) / max(1.4826 MAD, MIN_SPREAD) over all pairs (robust: a few copies do not
move the median or the MAD); a pair from different teams is flagged when its larger z of identical and jaccard
reaches the threshold.
"""

from __future__ import annotations

import numpy as np

from scorer.analytics.similar_defaults import DEFAULT_Z
from scorer.analytics.similar_sketch import BASE, EMPTY, SLOTS, Sketch
from scorer.wording import inline

MIN_SPREAD = 0.02  # a measure's spread is at least 2 points: smaller gaps between files are not called outliers
FEW_PAIRS = 10  # under this many pairs the text says the distribution is too small to call an outlier
RANK_PAIRS = 2000  # pairs drawn for the distribution of rank agreement
EXAMPLES = 5


class Aligned:
    """The sketches' tokens on common rows: order (N, R), mins and ranks (N, R m), present (N, R) as float32."""

    def __init__(self, sketches: list[Sketch]):
        keys = np.unique(np.concatenate([s.keys for s in sketches]))[: max(s.keys.size for s in sketches)]
        self.first = sketches[0]  # the competition's types and row names (one competition: every sketch has the same)
        n, rows, t = len(sketches), keys.size, len(self.first.types)
        self.keys = keys
        self.sessions = np.zeros(rows, self.first.sessions.dtype)
        self.order = np.empty((n, rows * t), np.uint32)
        self.mins = np.empty((n, rows * t * SLOTS), np.uint32)
        self.ranks = np.empty((n, rows * t * SLOTS), np.uint32)
        self.present = np.zeros((n, rows * t), np.float32)
        for i, s in enumerate(sketches):
            absent = np.uint32(BASE + (i % (1 << 20)))  # a file's own token for the rows it lacks
            at = np.searchsorted(keys, s.keys)
            inside = at < rows
            inside[inside] = keys[at[inside]] == s.keys[inside]
            at, mine = at[inside], np.flatnonzero(inside)
            self.sessions[at] = s.sessions[mine]
            order = np.full((rows, t), absent, np.uint32)
            mins = np.full((rows, t, SLOTS), absent, np.uint32)
            ranks = np.full((rows, t, SLOTS), absent, np.uint32)
            held = s.present[mine]
            order[at] = np.where(held, s.order[mine], absent)
            mins[at] = np.where(held[..., None], s.mins[mine], absent)
            ranks[at] = np.where(held[..., None], s.ranks[mine], absent)
            present = np.zeros((rows, t), np.float32)
            present[at] = held
            self.order[i], self.mins[i], self.ranks[i] = order.ravel(), mins.ravel(), ranks.ravel()
            self.present[i] = present.ravel()


def pair_counts(aligned: Aligned, threads: int = 2) -> dict[str, np.ndarray]:
    """(N, N) counts, upper triangle: rows both hold ("both", one float32 product), equal order tokens ("order") and
    equal MinHash tokens ("mins"). File i against files i+1.. at once: one equality pass into a reused bool buffer,
    its bytes summed per row; the rows i are shared among `threads` threads (numpy releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    n = aligned.order.shape[0]
    counts = {"both": np.rint(aligned.present @ aligned.present.T).astype(np.int64),
              "order": np.zeros((n, n), np.int64), "mins": np.zeros((n, n), np.int64)}

    def rows(start: int) -> None:
        buffers = {name: np.empty((n, getattr(aligned, name).shape[1]), bool) for name in ("order", "mins")}
        for i in range(start, n - 1, threads):
            for name, buffer in buffers.items():
                tokens = getattr(aligned, name)
                equal = np.equal(tokens[i + 1:], tokens[i], out=buffer[: n - 1 - i])
                counts[name][i, i + 1:] = equal.view(np.uint8).sum(axis=1, dtype=np.int64)

    with ThreadPoolExecutor(max(1, threads)) as pool:
        list(pool.map(rows, range(max(1, threads))))
    return counts


def rank_agreement(aligned: Aligned, a: int, b: int) -> float:
    """#{(r, j): rank_j,a(r) = rank_j,b(r)} / #{(r, j): min_j,a(r) = min_j,b(r)}, the slots of two empty lists left out
    (they share no item); NaN without a common item."""
    held = aligned.mins[a] != EMPTY
    matched = np.count_nonzero((aligned.mins[a] == aligned.mins[b]) & held)
    return np.count_nonzero((aligned.ranks[a] == aligned.ranks[b]) & held) / matched if matched else np.nan


def measures(counts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per pair (upper triangle; NaN where the pair shares no row): identical = equal order tokens / rows both hold,
    jaccard = equal MinHash tokens / (m x rows both hold)."""
    both = counts["both"].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"identical": np.where(both > 0, counts["order"] / both, np.nan),
                "jaccard": np.where(both > 0, counts["mins"] / (SLOTS * both), np.nan)}


def robust_z(values: np.ndarray) -> tuple[np.ndarray, dict]:
    """(z, {median, mad, spread}): z = (x - median) / spread, spread = max(1.4826 MAD, MIN_SPREAD); NaN stays NaN."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.full_like(values, np.nan), {"median": None, "mad": None, "spread": MIN_SPREAD}
    median = float(np.median(finite))
    mad = float(np.median(np.abs(finite - median)))
    spread = max(1.4826 * mad, MIN_SPREAD)
    return (values - median) / spread, {"median": median, "mad": mad, "spread": spread}


def examples(aligned: Aligned, a: int, b: int, limit: int = EXAMPLES) -> list[dict]:
    """Sessions that make a and b alike: rows with identical lists first, then rows with the most equal MinHash slots."""
    t = len(aligned.first.types)
    both = (aligned.present[a] > 0) & (aligned.present[b] > 0)
    same = both & (aligned.order[a] == aligned.order[b])
    slots = (aligned.mins[a] == aligned.mins[b]).reshape(-1, SLOTS).sum(axis=1) * both
    score = same * (SLOTS + 1) + slots
    chosen = [r for r in np.argsort(-score, kind="stable")[:limit].tolist() if score[r] > 0]
    return [{"session_type": aligned.first.row_name(aligned.sessions[r // t], r % t), "identical": bool(same[r]),
             "minhash_slots_equal": int(slots[r]), "slots": SLOTS} for r in chosen]


def similarity(sketches: list[Sketch], teams: list[str], k: int, z: float = DEFAULT_Z, top: int = 20, threads: int = 2) -> dict:
    """The report: the flagged pairs of different teams ranked by z, and the `top` most similar other pairs, each with
    its measures, z-scores and example sessions; the measures' distribution over all pairs (rank agreement's over
    RANK_PAIRS pairs drawn at random, it is worked out for the pairs listed only); and (key "matrix", not JSON) the
    (N, N) matrices of identical and jaccard for the page."""
    aligned = Aligned(sketches)
    counts = pair_counts(aligned, threads)
    values = measures(counts)
    n = len(sketches)
    upper = np.triu_indices(n, 1)
    zs, spread = {}, {}
    for name in ("identical", "jaccard"):
        zs[name], spread[name] = robust_z(values[name][upper])
    drawn = np.random.default_rng(0).choice(upper[0].size, min(RANK_PAIRS, upper[0].size), replace=False)
    _, spread["rank_agreement"] = robust_z(np.array([rank_agreement(aligned, upper[0][p], upper[1][p]) for p in drawn.tolist()]))
    flag_z = np.fmax(zs["identical"], zs["jaccard"])
    codes = {t: i for i, t in enumerate(dict.fromkeys(teams))}
    team = np.array([codes[t] for t in teams])
    apart = team[upper[0]] != team[upper[1]]
    ranked = np.argsort(-np.nan_to_num(flag_z, nan=-np.inf), kind="stable")
    hit = apart[ranked] & (np.nan_to_num(flag_z[ranked], nan=-np.inf) >= z)
    flagged_at, others_at = ranked[hit], ranked[~hit][:top]

    def pair(p: int) -> dict:
        a, b = int(upper[0][p]), int(upper[1][p])
        ranks, d = rank_agreement(aligned, a, b), spread["rank_agreement"]
        return {"a": sketches[a].name, "b": sketches[b].name, "team_a": teams[a], "team_b": teams[b],
                "same_team": teams[a] == teams[b], "rows_compared": int(counts["both"][a, b]),
                "identical": _finite(values["identical"][a, b]), "jaccard": _finite(values["jaccard"][a, b]),
                "rank_agreement": _finite(ranks), "z_identical": _finite(zs["identical"][p]), "z_jaccard": _finite(zs["jaccard"][p]),
                "z_rank_agreement": _finite((ranks - d["median"]) / d["spread"]) if d["median"] is not None else None,
                "z": _finite(flag_z[p]),
                "flagged": bool(apart[p] and np.isfinite(flag_z[p]) and flag_z[p] >= z), "examples": examples(aligned, a, b)}

    return {"files": [{"name": s.name, "team": t, "rows": s.rows, "sessions_sampled": int(s.keys.size)}
                      for s, t in zip(sketches, teams)],
            "types": list(aligned.first.types), "k": k, "sample": int(aligned.keys.size), "minhash_slots": SLOTS,
            "pairs": int(upper[0].size),
            "threshold_z": z, "min_spread": MIN_SPREAD, "distribution": spread,
            "flagged": [pair(p) for p in flagged_at.tolist()], "most_similar_others": [pair(p) for p in others_at.tolist()],
            "matrix": {name: values[name] for name in ("identical", "jaccard")}}


def _finite(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def render_text(report: dict) -> str:
    """The flagged pairs (or the most similar ones), each with its measures, z and example sessions."""
    dist = report["distribution"]
    lines = [f"{len(report['files'])} submissions, {report['pairs']:,} pairs, compared on a sample of "
             f"{report['sample']:,} {'sessions' if len(report.get('types', ())) != 1 else 'ids'} (first {report['k']} items of "
             f"each row, {report['minhash_slots']} MinHash slots)",
             "over all pairs: " + ", ".join(f"{name.replace('_', ' ')} median {_pct(d['median'])} (spread {_pct(d['spread'])})"
                                            for name, d in dist.items()), ""]
    flagged = report["flagged"]
    if report["pairs"] < FEW_PAIRS:
        lines.append(f"note: {report['pairs']} pair(s) are too few for their median and spread to mark an outlier; "
                     "read the measures themselves (or add other files of the competition)")
    if flagged:
        lines.append(f"{len(flagged)} pair(s) of different teams sit at least {report['threshold_z']:g} spreads above the median:")
    else:
        lines.append(f"no pair of different teams sits {report['threshold_z']:g} spreads above the median; the most similar pairs:")
    for i, q in enumerate(flagged or report["most_similar_others"], 1):
        lines.append(_pair_text(i, q))
    return "\n".join(lines)


def _pair_text(i: int, q: dict) -> str:
    teams = f"teams {inline(q['team_a'])} / {inline(q['team_b'])}" if not q["same_team"] else f"same team {inline(q['team_a'])}"
    teams = teams if q["team_a"] != q["a"] or q["team_b"] != q["b"] else "no teams file"
    z = f"{q['z']:.1f}" if q["z"] is not None else "-"
    head = (f"{i:>3}. {inline(q['a'])}  ~  {inline(q['b'])}  ({teams})\n"
            f"     identical {_pct(q['identical'])}, jaccard {_pct(q['jaccard'])}, rank agreement {_pct(q['rank_agreement'])}; "
            f"z {z} over {q['rows_compared']:,} rows")
    shown = [f"{inline(e['session_type'])} ({'identical' if e['identical'] else str(e['minhash_slots_equal']) + '/' + str(e['slots']) + ' slots'})"
             for e in q.get("examples", [])]
    return head + ("\n     alike in: " + ", ".join(shown) if shown else "")


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"
