"""`scorer similar`: pairwise similarity of submissions from their sketches (scorer.analytics.similar.sketch).

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

Memory: the tokens, linear in the files (N x rows x (1 + 2 m) x 4 bytes, and a byte a row for its presence); the pairs'
identical and jaccard as float32, 8 bytes a pair (N (N - 1) / 2 pairs: 36 MB at 3,000 files), counted one file against
the later ones at a time; the z and the selection take 8 bytes a pair more at their peak. Nothing N x N of int64 or
float64, and a listed pair's figures are worked out again from its tokens, exactly.
"""

from __future__ import annotations

import numpy as np

from scorer.analytics.similar.defaults import DEFAULT_Z
from scorer.analytics.similar.sketch import BASE, EMPTY, SLOTS, Sketch
from scorer.wording import counted, inline, percent

MIN_SPREAD = 0.02  # a measure's spread is at least 2 points: smaller gaps between files are not called outliers
FEW_PAIRS = 10  # under this many pairs the text says the distribution is too small to call an outlier
RANK_PAIRS = 2000  # pairs drawn for the distribution of rank agreement
NEAR = 1e-3  # pairs whose float32 flag z is within this of the threshold (or above) are decided on their exact figures
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
        self.present = np.zeros((n, rows * t), bool)
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
            present = np.zeros((rows, t), bool)
            present[at] = held
            self.order[i], self.mins[i], self.ranks[i] = order.ravel(), mins.ravel(), ranks.ravel()
            self.present[i] = present.ravel()


def pair_start(n: int, a) -> np.ndarray:
    """The index of pair (a, a + 1) among the N (N - 1) / 2 pairs, in the order (0, 1), (0, 2), ..., (1, 2), ..."""
    a = np.asarray(a, np.int64)
    return a * n - a * (a + 1) // 2


def pair_of(n: int, p) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of pair indices p."""
    p = np.asarray(p, np.int64)
    a = np.searchsorted(pair_start(n, np.arange(n)), p, side="right") - 1
    return a, p - pair_start(n, a) + a + 1


def pair_measures(aligned: Aligned, threads: int = 2) -> dict[str, np.ndarray]:
    """Per pair (a < b, in pair_of's order), float32: identical = equal order tokens / rows both hold, jaccard = equal
    MinHash tokens / (m x rows both hold); NaN where the pair shares no row. File i against files i+1.. at once: one
    equality pass into a reused bool buffer, its bytes summed per row; the rows i are shared among `threads` threads
    (numpy releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    n = aligned.order.shape[0]
    total = n * (n - 1) // 2
    out = {"identical": np.empty(total, np.float32), "jaccard": np.empty(total, np.float32)}

    def rows(start: int) -> None:
        buffers = {name: np.empty((n, getattr(aligned, name).shape[1]), bool) for name in ("present", "order", "mins")}
        for i in range(start, n - 1, threads):
            counts = {}
            for name, buffer in buffers.items():
                tokens = getattr(aligned, name)
                operation = np.logical_and if name == "present" else np.equal
                found = operation(tokens[i + 1:], tokens[i], out=buffer[: n - 1 - i])
                counts[name] = found.view(np.uint8).sum(axis=1, dtype=np.int64)
            at = int(pair_start(n, i))
            both = counts["present"].astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                out["identical"][at: at + n - 1 - i] = np.where(both > 0, counts["order"] / both, np.nan)
                out["jaccard"][at: at + n - 1 - i] = np.where(both > 0, counts["mins"] / (SLOTS * both), np.nan)

    with ThreadPoolExecutor(max(1, threads)) as pool:
        list(pool.map(rows, range(max(1, threads))))
    return out


def exact_measures(aligned: Aligned, a: int, b: int) -> tuple[int, float, float]:
    """(rows both hold, identical, jaccard) of one pair, in float64 from its tokens (NaN without a common row)."""
    both = int(np.count_nonzero(aligned.present[a] & aligned.present[b]))
    if not both:
        return 0, np.nan, np.nan
    order = np.count_nonzero(aligned.order[a] == aligned.order[b])
    return both, order / both, np.count_nonzero(aligned.mins[a] == aligned.mins[b]) / (SLOTS * both)


def rank_agreement(aligned: Aligned, a: int, b: int) -> float:
    """#{(r, j): rank_j,a(r) = rank_j,b(r)} / #{(r, j): min_j,a(r) = min_j,b(r)}, the slots of two empty lists left out
    (they share no item); NaN without a common item."""
    held = aligned.mins[a] != EMPTY
    matched = np.count_nonzero((aligned.mins[a] == aligned.mins[b]) & held)
    return np.count_nonzero((aligned.ranks[a] == aligned.ranks[b]) & held) / matched if matched else np.nan


def spread_of(values: np.ndarray) -> dict:
    """{median, mad, spread} of the finite values: spread = max(1.4826 MAD, MIN_SPREAD); median None without any."""
    finite = values[np.isfinite(values)]  # a copy, in the values' type (float32 for the pairs: 4 bytes a pair)
    if finite.size == 0:
        return {"median": None, "mad": None, "spread": MIN_SPREAD}
    median = float(np.median(finite))
    mad = float(np.median(np.abs(finite - finite.dtype.type(median), out=finite)))
    return {"median": median, "mad": mad, "spread": max(1.4826 * mad, MIN_SPREAD)}


def z_of(value: float, spread: dict) -> float:
    return (value - spread["median"]) / spread["spread"] if spread["median"] is not None else np.nan


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
    RANK_PAIRS pairs drawn at random, it is worked out for the pairs listed only); and (key "matrix", not JSON) what the
    page draws: each file's largest jaccard with another ("closest") and a pair's figures ("measures"(a, b))."""
    aligned = Aligned(sketches)
    values = pair_measures(aligned, threads)
    n = len(sketches)
    closest = _closest(values["jaccard"], n)
    spread = {name: spread_of(values[name]) for name in ("identical", "jaccard")}
    pairs = n * (n - 1) // 2
    drawn = np.random.default_rng(0).choice(pairs, min(RANK_PAIRS, pairs), replace=False)
    spread["rank_agreement"] = spread_of(np.array([rank_agreement(aligned, int(a), int(b)) for a, b in zip(*pair_of(n, drawn))]))
    flag_z = _flag_z(values, spread)  # float32, in the place of the identical figures
    del values
    codes = {t: i for i, t in enumerate(dict.fromkeys(teams))}
    team = np.array([codes[t] for t in teams])
    near = np.flatnonzero(flag_z >= z - NEAR)  # decided on their exact figures below, not on float32's rounding

    def pair(p: int) -> dict:
        a, b = (int(x) for x in pair_of(n, p))
        both, identical, jaccard = exact_measures(aligned, a, b)
        z_pair = np.fmax(z_of(identical, spread["identical"]), z_of(jaccard, spread["jaccard"]))
        ranks = rank_agreement(aligned, a, b)
        return {"a": sketches[a].name, "b": sketches[b].name, "team_a": teams[a], "team_b": teams[b],
                "same_team": teams[a] == teams[b], "rows_compared": both,
                "identical": _finite(identical), "jaccard": _finite(jaccard),
                "rank_agreement": _finite(ranks), "z_identical": _finite(z_of(identical, spread["identical"])),
                "z_jaccard": _finite(z_of(jaccard, spread["jaccard"])),
                "z_rank_agreement": _finite(z_of(ranks, spread["rank_agreement"])),
                "z": _finite(z_pair), "flagged": bool(team[a] != team[b] and np.isfinite(z_pair) and z_pair >= z),
                "examples": examples(aligned, a, b)}

    listed = {p: pair(p) for p in near.tolist()}
    flagged_at = sorted((p for p in listed if listed[p]["flagged"]), key=lambda p: (-listed[p]["z"], p))
    for p in _top_others(flag_z, near, top + len(near)).tolist():
        listed.setdefault(p, pair(p))
    others_at = sorted((p for p in listed if not listed[p]["flagged"]), key=lambda p: (-(listed[p]["z"] if listed[p]["z"] is not None else -np.inf), p))[:top]
    return {"files": [{"name": s.name, "team": t, "rows": s.rows, "sessions_sampled": int(s.keys.size)}
                      for s, t in zip(sketches, teams)],
            "types": list(aligned.first.types), "k": k, "sample": int(aligned.keys.size), "minhash_slots": SLOTS,
            "pairs": pairs, "threshold_z": z, "min_spread": MIN_SPREAD, "distribution": spread,
            "flagged": [listed[p] for p in flagged_at], "most_similar_others": [listed[p] for p in others_at],
            "matrix": {"closest": closest, "measures": lambda a, b: dict(zip(("identical", "jaccard"), exact_measures(aligned, a, b)[1:]))}}


def _flag_z(values: dict[str, np.ndarray], spread: dict) -> np.ndarray:
    """max(z identical, z jaccard) per pair, float32, NaN -> -inf (written over the identical figures: no copy)."""
    out = values["identical"]
    for name in ("identical", "jaccard"):
        d = spread[name]
        if d["median"] is None:
            values[name][:] = -np.inf
            continue
        values[name] -= np.float32(d["median"])
        values[name] /= np.float32(d["spread"])
    np.fmax(out, values["jaccard"], out=out)
    out[np.isnan(out)] = -np.inf
    return out


def _top_others(flag_z: np.ndarray, near: np.ndarray, top: int) -> np.ndarray:
    """The `top` pairs with the highest flag z outside `near` (whose figures are worked out exactly anyway), ties in
    pair order: the top-th value found by a partition of a float32 copy (4 bytes a pair), then those at or above it."""
    if top <= 0 or flag_z.size == 0:
        return np.empty(0, np.int64)
    below = flag_z.copy()
    below[near] = -np.inf
    cut = np.partition(below, max(below.size - top, 0))[max(below.size - top, 0)]
    return np.setdiff1d(_first(below, cut, top + near.size), near)


def _first(values: np.ndarray, cut: float, top: int, chunk: int = 1 << 20) -> np.ndarray:
    """The indices of values above `cut`, and of the first values equal to it (in order) up to `top` in all."""
    over = np.flatnonzero(values > cut)
    equal: list[np.ndarray] = []
    wanted = top - over.size
    for start in range(0, values.size, chunk):
        if wanted <= 0:
            break
        found = np.flatnonzero(values[start: start + chunk] == cut)[:wanted] + start
        equal.append(found)
        wanted -= found.size
    return np.concatenate([over, *equal]) if equal else over


def _closest(jaccard: np.ndarray, n: int) -> np.ndarray:
    """Per file, its largest jaccard with another (0 without any), from the pairs' figures: the page's order."""
    closest = np.zeros(n)
    for i in range(n - 1):
        row = np.nan_to_num(jaccard[int(pair_start(n, i)): int(pair_start(n, i)) + n - 1 - i], nan=0.0)
        closest[i] = max(closest[i], float(row.max()))
        np.maximum(closest[i + 1:], row, out=closest[i + 1:])
    return closest


def _finite(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def _who(file: str, team: str) -> str:
    """A file as a person names it: its team and the file, or the file alone without a teams file."""
    return inline(file) if team == file else f"{inline(team)} ({inline(file)})"


def lead(report: dict) -> str:
    """What the report shows, in plain words: which pairs of different teams are far more alike than the rest (the first
    few, with how alike), or that none is, and the most alike pair."""
    files, flagged = report["files"], report["flagged"]
    teams = len({f["team"] for f in files})
    alone = all(f["team"] == f["name"] for f in files)
    whose = "" if alone else f" of {counted(teams, 'team')}"
    pairs = f"{report['pairs']:,} pairs" + ("; no teams file, so each file counts as its own team" if alone else "")
    words = [f"This report compares {counted(len(files), 'file')}{whose} two by two ({pairs}), on the first {report['k']} items "
             f"of each row in a sample of {report['sample']:,} sessions."]
    alike = lambda q: (f"{_who(q['a'], q['team_a'])} and {_who(q['b'], q['team_b'])} ({percent(q['identical'])} of their rows "  # noqa: E731
                       f"identical, {percent(q['jaccard'])} of their items shared)")
    if report["pairs"] < FEW_PAIRS:
        words.append(f"{counted(report['pairs'], 'pair')} are too few to tell an unusual pair from a typical one: read the "
                     "figures themselves.")
    if flagged:
        more = f"; and {len(flagged) - 3:,} more listed below" if len(flagged) > 3 else ""
        words.append(f"{counted(len(flagged), 'pair')} of different teams {'is' if len(flagged) == 1 else 'are'} far more alike "
                     f"than the rest (at least {report['threshold_z']:g} spreads above the typical pair: z) and worth a look: "
                     + "; ".join(alike(q) for q in flagged[:3]) + more + ".")
    else:
        others = [q for q in report["most_similar_others"] if not q["same_team"]]
        words.append(f"No pair of different teams is unusually alike (none {report['threshold_z']:g} spreads above the typical "
                     "pair)" + (f"; the most alike: {alike(others[0])}." if others else "."))
    words.append(f"A typical pair shares {percent(report['distribution']['jaccard']['median'])} of its items.")
    return " ".join(words)


def render_text(report: dict, opening: bool = True) -> str:
    """The lead in plain words (unless not opening: a page says it above), then the flagged pairs (or the most similar
    ones), each with its measures, z and example sessions."""
    dist = report["distribution"]
    lines = [lead(report), ""] if opening else []
    lines += [f"{len(report['files'])} submissions, {report['pairs']:,} pairs, compared on a sample of "
              f"{report['sample']:,} {'sessions' if len(report.get('types', ())) != 1 else 'ids'} (first {report['k']} items of "
              f"each row, {report['minhash_slots']} MinHash slots)",
              "over all pairs: " + ", ".join(f"{name.replace('_', ' ')} median {percent(d['median'])} (spread {percent(d['spread'])})"
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
    lines += ["", "key: identical       the share of rows whose lists are the same, in the same order",
              "     jaccard         the share of items two rows hold in common, on average (shared / either)",
              "     rank agreement  of the items both rows hold, the share at the same rank",
              "     spreads (z)     how far a pair sits above the typical pair (the median over all pairs), in spreads "
              f"(1.4826 MAD; at least {100 * MIN_SPREAD:g} points): its z-score"]
    return "\n".join(lines)


def _pair_text(i: int, q: dict) -> str:
    teams = f"teams {inline(q['team_a'])} / {inline(q['team_b'])}" if not q["same_team"] else f"same team {inline(q['team_a'])}"
    teams = teams if q["team_a"] != q["a"] or q["team_b"] != q["b"] else "no teams file"
    z = f"{q['z']:.1f} spreads above the typical pair (z)" if q["z"] is not None else "no spread to compare with (z -)"
    head = (f"{i:>3}. {inline(q['a'])}  ~  {inline(q['b'])}  ({teams})\n"
            f"     identical {percent(q['identical'])}, jaccard {percent(q['jaccard'])}, rank agreement {percent(q['rank_agreement'])}; "
            f"{z}, over {q['rows_compared']:,} rows")
    shown = [f"{inline(e['session_type'])} ({'identical' if e['identical'] else str(e['minhash_slots_equal']) + '/' + str(e['slots']) + ' slots'})"
             for e in q.get("examples", [])]
    return head + ("\n     alike in: " + ", ".join(shown) if shown else "")

