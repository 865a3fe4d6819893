"""The candidate stage's figures (per type, at each K) from a pass's hits, and their text and JSON.

Notation (docs/metrics.md, "The candidate stage"): for a session s with truth T (of one type), h_K = the truth items
among its first K candidates (an item counts once, at its best rank); N = the sessions with truth for the type.

- recall@K = Σ h_K / Σ |T|;  recall@K (the competition's denominator) = Σ h_K / Σ min(K, |T|)
- hit rate@K = |{s ∈ N: h_K > 0}| / N
- ceiling@K = the competition's metric of a perfect reranker of the first K candidates: per session the list whose
  first min(h_K, k) items are hits (k: the competition's cut-off), scored as the competition scores it (OTTO:
  Σ min(h_K, 20) / Σ min(20, |T|) per type), then weighted over the types
- candidates per session (over N): min, median, p95 (the smallest count at or above 95% of the sessions), max
- missed = 1 − Σ h_∞ / Σ |T|: the share of truth items no candidate holds
- hit ranks: a histogram of the 1-based ranks of the hits
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from scorer.engine.problems import Report
from scorer.truth.ids import offsets
from scorer.wording import counted

RANK_BINS = (1, 2, 6, 11, 21, 51, 101, 201, 501, 1001)  # left edges of the hit-rank histogram's bins (1-based ranks)


def rank_bin_labels(edges=RANK_BINS) -> list[str]:
    labels = []
    for low, high in zip(edges, (*edges[1:], None)):
        labels.append(f">{low - 1}" if high is None else str(low) if high == low + 1 else f"{low}-{high - 1}")
    return labels


@dataclass
class CandidateFigures:
    """The figures of one pass (see the module docstring); at(ks) works them out for any K."""

    competition: object
    truth: object
    outcome: object

    threads: int = 2  # the types' parts and the Ks' figures are worked out on up to this many threads

    def __post_init__(self):
        n_types = len(self.truth.types)
        self.n_types = n_types
        self.ceiling_reason = _ceiling_unsupported(self.competition, self.truth)
        self.ceiling_of_hit_sessions = self.competition.metric.sums_suffice  # every other session's figure is 0 then
        kind = self.outcome.hit_slot % n_types
        parts = _on_threads(self.threads, lambda t: self._type_part(t, kind == t), range(n_types))
        (self.sizes, self.hit_ranks, self.hit_tied, self.group_starts, self.sessions_hit, self.counted, self.truth_items,
         self.type_indptr) = (list(column) for column in zip(*parts))

    def _type_part(self, t: int, of_type: np.ndarray) -> tuple:
        """Type t's |truth| per session, its hits' ranks and ties, the starts of its sessions' groups of hits, those
        sessions, the sessions with truth, the truth items, and (for the ceiling) a CSR whose rows hold |T| of type t:
        of the sessions with a hit where the metric's total needs only the sum of its row figures (every other
        session's figure is 0), else of every session. A session's hits of a type sit next to each other (its rows
        are one run: the pass refuses a second), so its h_K is a sum over its group of hits, and the figures at each K
        need no array over every session but a macro average's ceiling."""
        pick = np.flatnonzero(of_type)
        slots = self.outcome.hit_slot[pick]
        starts = np.flatnonzero(np.concatenate(([True], slots[1:] != slots[:-1]))) if len(slots) else np.zeros(0, np.int64)
        sizes = self.truth.type_sizes(t)
        sessions_hit = slots[starts] // self.n_types
        indptr = None
        if not self.ceiling_reason:
            indptr = offsets(sizes[sessions_hit] if self.ceiling_of_hit_sessions else sizes, self.truth.source)
        return (sizes, self.outcome.hit_rank[pick], self.outcome.hit_tied[pick], starts, sessions_hit,
                int(np.count_nonzero(sizes)), int(sizes.sum()), indptr)

    def group_hits_at(self, t: int, k: int) -> np.ndarray:
        """h_K of each session of type t that has a hit at any rank (in the order of sessions_hit[t])."""
        if not len(self.group_starts[t]):
            return np.zeros(0, np.int64)
        return np.add.reduceat(self.hit_ranks[t] < k, self.group_starts[t], dtype=np.int64)

    def at(self, k: int) -> dict:
        """Per type and weighted: recall (both denominators), hit rate and the ceiling at K."""
        out: dict = {}
        weights = self.competition.weights
        weighted = {"recall": 0.0, "recall_min": 0.0, "ceiling": 0.0}
        for t, name in enumerate(self.truth.types):
            hits = self.group_hits_at(t, k)
            total = int(hits.sum())
            figures = {
                "recall": _ratio(total, self.truth_items[t]),
                "recall_min": _ratio(total, int(np.minimum(self.sizes[t], k).sum())),
                "hit_rate": _ratio(int(np.count_nonzero(hits)), self.counted[t]),
                "ceiling": self._ceiling(t, hits),
            }
            out[name] = figures
            for key in weighted:
                weighted[key] += weights[t] * (figures[key] or 0.0)
        out["weighted"] = {key: (None if key == "ceiling" and self.ceiling_reason else value) for key, value in weighted.items()}
        return out

    def at_each(self, ks) -> dict:
        """at(K) for each K of ks."""
        return dict(zip(ks, _on_threads(self.threads, self.at, ks)))

    def _ceiling(self, t: int, hits: np.ndarray) -> float | None:
        """The ceiling of type t from group_hits_at's h_K: every other session's list has no hit."""
        if self.ceiling_reason:
            return None
        from scorer.engine.figures import SlotFigures
        from scorer.engine.metric_rows import MetricRows

        metric = self.competition.metric
        cutoff = metric.k or self.competition.k
        hit_masks = np.left_shift(np.int64(1), np.minimum(hits, cutoff)) - 1  # in the order of sessions_hit[t]
        if self.ceiling_of_hit_sessions:  # type_indptr's rows are those sessions
            masks = hit_masks
        else:
            masks = np.zeros(self.truth.n_sessions, np.int64)
            masks[self.sessions_hit[t]] = hit_masks
        slots = SlotFigures(np.array([metric.row_kind], np.int64), np.array([cutoff], np.int64), self.type_indptr[t], masks, None)
        value = metric.total_of(MetricRows(SimpleNamespace(figures=slots), metric, 0, 1, self.sizes[t], 0))
        return None if np.isnan(value) else float(value)

    def per_type(self) -> dict:
        """The figures that do not depend on K: candidates per session, missed share, hit-rank histogram, ties."""
        return dict(zip(self.truth.types, _on_threads(self.threads, self._type_figures, range(self.n_types))))

    def _type_figures(self, t: int) -> dict:
        lengths = self.outcome.slot_candidates[t :: self.n_types][self.sizes[t] > 0]
        ranks = self.hit_ranks[t] + 1
        counts = np.histogram(ranks, bins=[*RANK_BINS, max(int(ranks.max()) + 1 if len(ranks) else 0, RANK_BINS[-1] + 1)])[0]
        return {
            "sessions": self.counted[t],
            "truth_items": self.truth_items[t],
            "candidates_per_session": _spread(lengths),
            "missed": _ratio(self.truth_items[t] - len(ranks), self.truth_items[t]),
            "hit_ranks": dict(zip(rank_bin_labels(), map(int, counts))),
            "tied_hits": int(self.hit_tied[t].sum()),
        }


def _on_threads(threads: int, function, items) -> list:
    """[function(item) for item in items], on up to `threads` threads (numpy lets go of the GIL in most of the work)."""
    items = list(items)
    if threads <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(threads, len(items))) as pool:
        return list(pool.map(function, items))


def _ceiling_unsupported(competition, truth) -> str:
    """Why the ceiling cannot be given for this competition's metric ('' when it can)."""
    from scorer.kernels.kinds import ROW_NONE, derivable

    metric = competition.metric
    graded = getattr(truth, "grades", None) is not None
    if competition.shape == "value" or metric.family != "ranking" or metric.row_kind == ROW_NONE:
        return f"the ceiling is given for ranking metrics, not {metric}"
    if not derivable([metric.row_kind], metric.k or competition.k, graded):
        return f"the ceiling of {metric} needs graded relevance or a cut-off over 63, which it does not model"
    return ""


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _spread(values: np.ndarray) -> dict:
    if not len(values):
        return {"min": None, "median": None, "p95": None, "max": None}
    return {"min": int(values.min()), "median": float(np.median(values)),
            "p95": int(np.quantile(values, 0.95, method="inverted_cdf")), "max": int(values.max())}


@dataclass
class CandidateResult:
    """What `scorer candidates` reports: figures per type at each K, the ceiling, and the problems found."""

    competition: str
    source: str
    ks: tuple[int, ...]
    metric: str
    weights: dict
    at_k: dict  # K -> at(K)
    per_type: dict
    report: Report
    rows: int
    unknown_rows: int
    unknown_sessions: int
    ceiling_note: str
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    figures: CandidateFigures | None = field(default=None, repr=False)

    def curve(self, ks) -> dict:
        """at(K) for each K of ks (the PNG's curves)."""
        missing = [int(k) for k in ks if int(k) not in self.at_k]
        more = self.figures.at_each(missing) if missing else {}
        return {int(k): self.at_k.get(int(k)) or more[int(k)] for k in ks}

    def rank_labels(self) -> list[str]:
        """The histogram's bins up to the last one any hit (or the largest K) falls in."""
        labels = rank_bin_labels()
        used = [i for i, label in enumerate(labels) if any(row["hit_ranks"][label] for row in self.per_type.values())]
        reach = next(i for i, edge in enumerate((*RANK_BINS[1:], float("inf"))) if max(self.ks) < edge)
        return labels[: max([reach, *used]) + 1]

    def to_dict(self) -> dict:
        return {
            "candidates": self.source, "competition": self.competition, "ks": list(self.ks), "ceiling_metric": self.metric,
            "ceiling_note": self.ceiling_note or None, "weights": self.weights,
            "at_k": {str(k): figures for k, figures in self.at_k.items()},
            "types": self.per_type,
            "counts": {"rows": self.rows, "unknown_rows": self.unknown_rows, "unknown_sessions": self.unknown_sessions,
                       "tied_hits": sum(figures["tied_hits"] for figures in self.per_type.values())},
            "warnings": self.warnings,
            "problem_counts": self.report.summary(),
            "problems": [problem.to_dict() for problem in self.report.problems],
            "seconds": round(self.seconds, 3),
        }

    def text(self, warning_examples: int | None = None) -> str:
        """The figures per K and type, the lists' spread, the hit ranks, the warnings and the problems (with
        warning_examples, at most that many examples of each warning or note code, as Result.to_text)."""
        def number(value, digits=4):
            return "-" if value is None else f"{value:.{digits}f}"

        lines = [f"candidates: {self.source} ({counted(self.rows, 'row')}), competition {self.competition}",
                 f"ceiling: {self.metric} of a perfect reranker of the first K candidates" + (f" ({self.ceiling_note})" if self.ceiling_note else "")]
        names = [*self.per_type, "weighted"]
        header = f"{'K':>6}  {'type':<10}{'recall':>9}{'recall(min)':>13}{'hit rate':>10}{'ceiling':>10}"
        lines += ["", header]
        for k, figures in self.at_k.items():
            for name in names:
                row = figures[name]
                lines.append(f"{k:>6}  {name:<10}{number(row['recall']):>9}{number(row['recall_min']):>13}"
                             f"{number(row.get('hit_rate')):>10}{number(row['ceiling']):>10}")
        lines += ["", f"{'type':<10}{'sessions':>10}{'truth items':>13}{'missed':>9}   candidates per session (min/median/p95/max)"]
        for name, row in self.per_type.items():
            spread = row["candidates_per_session"]
            lines.append(f"{name:<10}{row['sessions']:>10,}{row['truth_items']:>13,}{number(row['missed']):>9}   "
                         + "/".join("-" if spread[key] is None else f"{spread[key]:g}" for key in ("min", "median", "p95", "max")))
        labels = self.rank_labels()
        lines += ["", f"{'hit ranks':<10}" + "".join(f"{label:>10}" for label in labels)]
        for name, row in self.per_type.items():
            lines.append(f"{name:<10}" + "".join(f"{row['hit_ranks'][label]:>10,}" for label in labels))
        for warning in self.warnings:
            lines.append(f"warning: {warning}")
        from scorer.engine.result import render_problems

        problems = render_problems(self.report, warning_examples)
        if problems:
            lines += ["", problems]
        return "\n".join(lines)
