"""The checks of `scorer audit` that need no platform: the truth itself, the sample submission, submissions made
from the truth (perfect, empty, random), the public/private split, two runs, and the time to grade a full-size
submission. Each is a scorer.engine.checklist.Check; a failed one names the fix.

Expected figures are worked out here from the truth sizes alone, not by the engine, so that the engine's figures
are checked against an independent count. For the perfect submission (the truth items of each row first, then
filler ids that are never a hit, up to K items) every row's figure is its best: hits min(k, |T|), AP, NDCG and RR 1.
For the random one (each row min(K, C) distinct items drawn uniformly from the C distinct items of the truth)
the item at each rank is a hit with probability p = m/C (m = |T|), two given ranks both with q = m(m−1)/(C(C−1)):
  E[hits@c] = c·p;   E[AP] = (1/min(k, m)) Σ_{i≤c} (p + (i−1)·q)/i;   E[NDCG] = p·Σ_{i≤c} 1/log2(i+1) ÷ IDCG;
  E[RR] = Σ_{i≤c} (1/i)·P(first hit at i);   E[hit] = 1 − P(no hit in c);   P(no hit in i) = Π_{j<i} (C−m−j)/(C−j),
with c = min(k, K, C) the items within the metric's cut-off. A metric's total is Σ a_r·x_r / Σ d_r over rows r
(scorer.spec.totals ratio parts), so its expectation follows; hits are hypergeometric, Var = c·p·(1−p)·(C−c)/(C−1),
and any other row figure lies in [0, best_r], so Var(x_r) ≤ best_r·E[x_r]: that bounds the total's standard deviation σ. The random score must lie within 5σ (normal
approximation) of its expectation.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from scorer.api import score
from scorer.engine.checklist import Check, failed, warned
from scorer.kernels import door
from scorer.kernels.kinds import ROW_AP, ROW_HITS, ROW_NDCG, ROW_NDCG_EXP, ROW_RR, ROW_SET_F1
from scorer.kernels.submission_modes import EMPTY, PERFECT, RANDOM
from scorer.spec.competition import Competition, id_literals
from scorer.truth.ids import Truth

CHUNK_SLOTS = 1 << 16
RANDOM_SEED = 20260101
RANDOM_SIGMAS = 5.0
FIGURE_TOLERANCE = 1e-9
CODABENCH_LIMIT = 600.0  # seconds: Codabench's default execution_time_limit (MAX_EXECUTION_TIME_LIMIT of its default queue)
HEADROOM = 0.5  # a full-size grade must take at most this share of the platform's limit (a slower worker, a cold start)


# --- submissions made from the truth ------------------------------------------------------------------------
def _id_parts(comp: Competition) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per type the literal bytes before and after the session digits of a row id (heads, tails as CSR)."""
    prefix, middle, suffix = id_literals(comp.id_pattern)
    if "{type}" not in comp.id_pattern:
        pairs = [(prefix, suffix)]
    elif comp.session_first:
        pairs = [(prefix, f"{middle}{t}{suffix}") for t in comp.types]
    else:
        pairs = [(f"{prefix}{t}{middle}", suffix) for t in comp.types]

    def packed(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        encoded = [text.encode() for text in texts]
        return (np.frombuffer(b"".join(encoded) or b"\0", np.uint8).copy(),
                np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64))

    heads, head_offsets = packed([head for head, _ in pairs])
    tails, tail_offsets = packed([tail for _, tail in pairs])
    return heads, head_offsets, tails, tail_offsets


def catalogue(truth: Truth) -> np.ndarray:
    """The distinct items of the truth (every type): what the random submission draws from."""
    return np.unique(truth.items)


def pads(comp: Competition) -> bool:
    """Is the perfect row filled up to K items? Not for a set metric (f1 without @k), whose figure counts them."""
    return all(metric.row_kind != ROW_SET_F1 for metric in comp.metrics)


def write_submission(path: str | Path, truth: Truth, comp: Competition, mode: int, seed: int = RANDOM_SEED) -> int:
    """Write the PERFECT, EMPTY or RANDOM submission of the truth (scorer.kernels.submission_rows); bytes written."""
    heads, head_offsets, tails, tail_offsets = _id_parts(comp)
    n_types = len(comp.types)
    items = catalogue(truth) if mode == RANDOM else np.empty(0, np.int64)
    filler = int(truth.items.max()) + 1 if len(truth.items) else 0
    pad = comp.k if mode == PERFECT and pads(comp) else 0
    line_bytes = len(heads) + len(tails) + 24 + comp.k * 21
    buffer = np.empty(CHUNK_SLOTS * line_bytes, np.uint8)
    written = 0
    with open(path, "wb") as out:
        header = (",".join(comp.header) + "\n").encode()
        out.write(header)
        written += len(header)
        for first in range(0, truth.n_sessions * n_types, CHUNK_SLOTS):
            last = min(first + CHUNK_SLOTS, truth.n_sessions * n_types)
            size = door.kernel("write_rows")(buffer, first, last, truth.sessions, n_types, heads, head_offsets, tails, tail_offsets,
                                             truth.indptr, truth.items, mode, comp.k, pad, filler, items, seed)
            out.write(memoryview(buffer)[:size])
            written += size
    return written


# --- expected figures ---------------------------------------------------------------------------------------
def supported(metric) -> bool:
    """Metrics whose best and random figures are worked out here: the ranking and set metrics with a per-row figure."""
    return metric.row_kind in (ROW_HITS, ROW_AP, ROW_NDCG, ROW_NDCG_EXP, ROW_RR, ROW_SET_F1) and metric.ratio_parts(
        np.zeros(1), np.ones(1)) is not None


def best_rows(metric, sizes: np.ndarray, row_items: np.ndarray) -> np.ndarray:
    """Each row's best figure, which the perfect submission (row_items items a row, truth first) gets."""
    m = sizes.astype(np.float64)
    has = (sizes > 0).astype(np.float64)
    if metric.row_kind == ROW_HITS:
        return np.minimum(m, metric.k)
    if metric.row_kind == ROW_SET_F1:
        hits = np.minimum(m, row_items)
        return np.divide(2 * hits, row_items + m, out=np.zeros_like(m), where=sizes > 0)
    return has  # AP, NDCG and RR of a row whose hits come first


def _no_hit(m: int, catalogue_size: int, ranks: int) -> np.ndarray:
    """P(no hit among the first i items) for i = 0..ranks (items drawn without replacement)."""
    j = np.arange(ranks, dtype=np.float64)
    factors = np.clip((catalogue_size - m - j) / np.maximum(catalogue_size - j, 1), 0.0, 1.0)
    return np.concatenate([[1.0], np.cumprod(factors)])


def random_row(metric, m: int, catalogue_size: int, row_items: int) -> float:
    """E[row figure] of a row of row_items distinct uniform draws from the catalogue, |T| = m (formulas above)."""
    if m == 0:
        return 0.0
    c = row_items if metric.k is None else min(metric.k, row_items)
    p = m / catalogue_size
    q = m * (m - 1) / (catalogue_size * (catalogue_size - 1)) if catalogue_size > 1 else 0.0
    ranks = np.arange(1, c + 1, dtype=np.float64)
    if metric.row_kind == ROW_SET_F1:
        return 2 * c * p / (c + m)
    if metric.row_kind == ROW_HITS:
        return 1.0 - _no_hit(m, catalogue_size, c)[c] if metric.name == "hitrate" else c * p
    if metric.row_kind == ROW_AP:
        return float(((p + (ranks - 1) * q) / ranks).sum() / min(metric.k, m))
    if metric.row_kind in (ROW_NDCG, ROW_NDCG_EXP):  # binary truth: both gains are 1 for a hit
        ideal = (1.0 / np.log2(np.arange(2, min(metric.k, m) + 2))).sum()
        return float(p * (1.0 / np.log2(ranks + 1)).sum() / ideal)
    no_hit = _no_hit(m, catalogue_size, c)  # RR
    return float(((no_hit[:-1] - no_hit[1:]) / ranks).sum())


def random_total(metric, sizes: np.ndarray, catalogue_size: int, row_items: int) -> tuple[float, float]:
    """(E[total], an upper bound of its standard deviation) of the random submission for the rows of one type."""
    distinct, inverse = np.unique(sizes, return_inverse=True)
    expected = np.array([random_row(metric, int(m), catalogue_size, row_items) for m in distinct])[inverse]
    row_cap = row_items if metric.k is None else min(metric.k, row_items)
    best = best_rows(metric, np.minimum(sizes, row_cap), np.full(len(sizes), row_items, np.float64))
    if metric.name == "hitrate":
        best = (sizes > 0).astype(np.float64)
    variance = best * expected  # a figure in [0, best] has E[x²] <= best·E[x]
    if metric.row_kind == ROW_HITS and metric.name != "hitrate":  # hits are hypergeometric: the exact variance
        c, p = min(row_cap, catalogue_size), sizes / catalogue_size
        variance = c * p * (1 - p) * (catalogue_size - c) / max(catalogue_size - 1, 1)
    weights, denominators = metric.ratio_parts(np.ones(len(sizes)), sizes)
    total = float(denominators.sum())
    if total == 0:
        return math.nan, 0.0
    return float((weights * expected).sum() / total), float(math.sqrt((weights**2 * variance).sum()) / total)


# --- the checks ---------------------------------------------------------------------------------------------
def check_truth(truth: Truth, comp: Competition) -> list[Check]:
    """Empty sessions, types without truth, the id ranges, and the rows holding more truth items than K."""
    if truth.n_sessions == 0:
        return [failed("truth", "the truth has no sessions", "give the test set's labels")]
    sizes = truth.sizes
    empty = int(np.count_nonzero(sizes.sum(axis=1) == 0))
    missing = [t for i, t in enumerate(comp.types) if comp.weights[i] > 0 and not sizes[:, i].any()]
    if hasattr(truth, "ids"):  # string ids: their codes' ranges say nothing
        ranges = f"string ids, {len(np.unique(truth.items)):,} distinct items"
    else:
        ranges = (f"session ids {int(truth.sessions[0]):,}..{int(truth.sessions[-1]):,}, item ids "
                  + (f"{int(truth.items.min()):,}..{int(truth.items.max()):,}" if len(truth.items) else "none"))
    found = f"{truth.n_sessions:,} sessions, {empty:,} without any truth item; {ranges}"
    checks = []
    if missing:
        checks.append(failed("truth", found + f"; no truth at all for {', '.join(missing)}",
                             f"give truth for {', '.join(missing)} or set its weight to 0"))
    elif empty:  # their rows are asked for and count nowhere: sane (OTTO's own test set has them), worth a look
        checks.append(warned("truth", found, "drop the sessions without truth from the test set (every row of them is "
                                             "asked for and counts nowhere)"))
    else:
        checks.append(Check("truth", True, found))
    over = sizes > comp.k
    rows = int(np.count_nonzero(sizes))
    share = np.count_nonzero(over) / rows if rows else 0.0
    found = f"{share:.2%} of the {rows:,} rows with truth hold more truth items than K = {comp.k}"
    capped = [str(m) for m in comp.metrics if dict(m.kind.options).get("denominator") and m.option("denominator") == "truth"]
    if share > 0 and capped:
        checks.append(failed("truth over K", found + f": their best {', '.join(capped)} is below 1",
                             "use denominator=min (OTTO's) or raise K in the config"))
    else:
        checks.append(Check("truth over K", True, found + (" (only the first K count; denominator=min keeps the best at 1)" if share else "")))
    return checks


def check_sample(sample: str | Path, truth: Truth, comp: Competition, threads: int = 2) -> Check:
    """The sample covers exactly the truth's rows and passes strict validation."""
    result = score(sample, truth, comp, strict=True, threads=threads)
    summary = result.report.summary()
    counts = {row["code"]: row["count"] for row in summary}
    rows = {"missing": counts.get("S011", 0), "unknown": counts.get("S012", 0), "repeated": counts.get("S010", 0)}
    errors = sorted(row["code"] for row in summary if row["severity"] == "error")
    found = f"{', '.join(f'{n:,} {what}' for what, n in rows.items())} rows"
    if result.valid and not any(rows.values()):
        return Check("sample", True, f"covers the truth's {truth.n_sessions * len(comp.types):,} rows exactly and passes strict validation")
    if any(rows.values()):
        return failed("sample", found + (f"; errors {', '.join(errors)}" if errors else ""),
                      "make the sample from the truth itself: scorer export kaggle-solution TRUTH -o solution.csv "
                      "(writes sample_submission.csv beside it, one row per session and type)")
    first = result.report.problems[0]
    return failed("sample", f"not valid in strict mode: {first.code} {first.where}: {first.message}",
                  "write the sample in the submission format: scorer validate SAMPLE lists every problem")


def _compare(name: str, result, expected: dict, tolerance: dict, fix: str) -> Check:
    """Compare the scored figures with the expected ones: keys (type, metric) and "score"; NaN expects no figure."""
    if result.score is None:
        first = result.report.problems[0] if result.report.problems else None
        return failed(name, f"no score: {first.code + ' ' + first.message if first else 'unreadable'}", fix)
    worst = []
    for key, want in expected.items():
        got, label = (result.score, "score") if key == "score" else (result.metrics[key[0]][key[1]], " ".join(key))
        if got is None or math.isnan(want):
            if not (got is None and math.isnan(want)):
                worst.append(f"{label} {got!r}, expected {want!r}")
        elif abs(got - want) > tolerance[key]:
            worst.append(f"{label} {got:.6g}, expected {want:.6g} ± {tolerance[key]:.2g}")
    shown = f"score {result.score:.6g}" + (f" (expected {expected['score']:.6g} ± {tolerance['score']:.2g})" if name == "random" else "")
    return failed(name, "; ".join(worst[:3]), fix) if worst else Check(name, True, shown + f"; {len(expected) - 1} metric figures as expected")


def check_made(name: str, path: Path, truth: Truth, comp: Competition, threads: int = 2) -> Check:
    """Score a submission made from the truth against the expected figures: perfect (best), empty (0) or random."""
    result = score(path, truth, comp, strict=True, threads=threads)
    expected: dict = {}
    tolerance: dict = {}
    weighted, spread = 0.0, 0.0
    row_items = comp.k if pads(comp) else None
    items_c = len(catalogue(truth))
    for t, type_name in enumerate(comp.types):
        sizes = truth.type_sizes(t)
        for metric in comp.metrics:
            if not supported(metric):
                continue
            if name == "perfect":
                items = np.full(len(sizes), row_items, np.float64) if row_items else np.minimum(sizes, comp.k).astype(np.float64)
                value, sigma = metric.aggregate(best_rows(metric, sizes, items), sizes), 0.0
            elif name == "empty":
                value, sigma = metric.aggregate(np.zeros(len(sizes)), sizes), 0.0
            else:
                value, sigma = random_total(metric, sizes, items_c, min(comp.k, items_c))
            expected[(type_name, str(metric))] = value
            tolerance[(type_name, str(metric))] = RANDOM_SIGMAS * sigma + FIGURE_TOLERANCE
            if metric == comp.metric:
                weighted += comp.weights[t] * (0.0 if math.isnan(value) else value)
                spread += comp.weights[t] * sigma
    if not supported(comp.metric):
        return Check(name, True, f"not checked: no worked-out expectation for {comp.metric}")
    expected["score"], tolerance["score"] = weighted, RANDOM_SIGMAS * spread + FIGURE_TOLERANCE
    fix = {"perfect": "a perfect submission must score the metric's best: check the config's types, K and metric options "
                      "against the truth; if they are right, report a scorer bug",
           "empty": "an empty submission must score the minimum: check the config's metric options (empty=...)",
           "random": "a random submission scores far from chance: check that the truth's items are the catalogue's ids "
                     "and the config's K; if they are right, report a scorer bug"}[name]
    return _compare(name, result, expected, tolerance, fix)


def check_repeatable(path: Path, truth: Truth, comp: Competition) -> Check:
    """Two runs, with other threads and block sizes, give identical figures (to the last bit)."""
    runs = [score(path, truth, comp, strict=True, threads=threads, block_bytes=block).to_dict()
            for threads, block in ((1, 1 << 20), (2, 1 << 24))]
    for run in runs:
        run.pop("seconds")
    if runs[0] == runs[1]:
        return Check("repeatable", True, "two runs (1 thread and 1 MiB blocks, 2 threads and 16 MiB blocks) give identical figures")
    differ = [key for key in runs[0] if runs[0][key] != runs[1][key]]
    return failed("repeatable", f"two runs differ in {', '.join(differ)}", "report a scorer bug, with the truth and config")


def check_split(split, overlap: int = 0, where: str = "") -> Check:
    """The public/private proportions, and that no session is in both."""
    counts = split.counts()
    scored = counts["public"] + counts["private"]
    share = counts["public"] / scored if scored else 0.0
    found = (f"{where or split.source}: {counts['public']:,} public ({share:.1%}), {counts['private']:,} private, "
             f"{counts['ignored']:,} ignored sessions")
    if overlap:
        return failed("split", f"{found}; {overlap:,} sessions are in both", "give every row of a session the same Usage: "
                      "scorer export kaggle-solution draws whole sessions")
    if not counts["public"] or not counts["private"]:
        return failed("split", found + ": one side is empty", "give both sides sessions (e.g. --public 0.3)")
    return Check("split", True, found + "; no session in both")


def check_time(path: Path, truth_path: str | Path, truth: Truth, comp: Competition, limit: float, threads: int = 2) -> Check:
    """Load the truth as a fresh container does (no cache) and grade the full-size perfect submission, against the limit."""
    from scorer.truth.load import load_truth as read_truth_file

    started = time.monotonic()
    read_truth_file(truth_path, comp.types, use_cache=False)
    loaded = time.monotonic()
    result = score(path, truth, comp, strict=True, untrusted=True, threads=threads)
    done = time.monotonic()
    size = Path(path).stat().st_size
    total = done - started
    found = (f"a full-size submission ({truth.n_sessions * len(comp.types):,} rows of {comp.k} items, {size / 1e6:,.0f} MB): "
             f"truth loaded without cache in {loaded - started:.2f} s, graded in {done - loaded:.2f} s; "
             f"{total:.1f} s of the {limit:g} s limit")
    if result.score is None:
        return failed("time", found + " but it was not scored", "report a scorer bug")
    if total > HEADROOM * limit:
        fix = ("compile the truth once (scorer compile-truth TRUTH -o test.truth.npz) and ship that"
               if loaded - started > (done - loaded) else "raise the platform's limit or grade on a faster worker")
        return failed("time", found + f", over {HEADROOM:.0%} of it", fix)
    return Check("time", True, found + f" (at most {HEADROOM:.0%} allowed, for a slower worker)")


def modes() -> dict[str, int]:
    return {"perfect": PERFECT, "empty": EMPTY, "random": RANDOM}
