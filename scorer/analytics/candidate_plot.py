"""The candidate stage's PNG: recall over K (both denominators) and the ceiling of a perfect reranker over K, per type
and weighted, with the hit ranks' histogram (matplotlib, an optional dependency)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.analytics.plots import COLOURS, _pyplot
from scorer.engine.candidate_result import RANK_BINS

CURVE_POINTS = 40  # Ks the curves are drawn at (besides those asked)


def curve_ks(ks) -> list[int]:
    """The asked Ks and about CURVE_POINTS more, spread from 1 to the largest."""
    top = max(ks)
    return sorted({*ks, *np.unique(np.linspace(1, top, min(top, CURVE_POINTS)).round().astype(int)).tolist()})


def rank_edges(labels: list[str], ks) -> list[int]:
    """The edges of the histogram's bins shown (1-based ranks, the last one exclusive); the open last bin (">1000") is
    drawn to the largest K, or to twice its start."""
    shown = list(RANK_BINS[: len(labels)])
    upper = RANK_BINS[len(labels)] if len(labels) < len(RANK_BINS) else max(2 * RANK_BINS[-1], max(ks) + 1)
    return [*shown, upper]


def candidate_figure(result):
    """The figure of a CandidateResult: recall and the ceiling over K, and where the hits rank."""
    plt = _pyplot()
    ks = curve_ks(result.ks)
    curve = result.curve(ks)
    names = [*result.per_type, "weighted"]
    figure, axes = plt.subplots(1, 3, figsize=(17, 5))
    panels = (("recall", "recall@K = Σ hits / Σ |truth|"), ("ceiling", f"ceiling: {result.metric} of a perfect reranker of the top K"))
    for ax, (key, title) in zip(axes, panels):
        for name, colour in zip(names, (*COLOURS[: len(names) - 1], "black")):
            values = [np.nan if curve[k][name][key] is None else curve[k][name][key] for k in ks]
            ax.plot(ks, values, color=colour, ls="--" if name == "weighted" else "-", label=name)
            ax.plot(list(result.ks), [np.nan if result.at_k[k][name][key] is None else result.at_k[k][name][key] for k in result.ks],
                    "o", ms=4, color=colour)
        ax.set(title=title, xlabel="K (candidates per session)", ylabel=key, ylim=(0, None))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    _hit_ranks(axes[2], result)
    figure.suptitle(f"candidates: {result.source}", fontsize=10)
    figure.tight_layout()
    return figure


def _hit_ranks(ax, result) -> None:
    """The hit ranks as a density: a bin's share of the type's hits over the ranks it spans (bins 2-5 and 51-100 are of
    unequal width: their raw shares would make the widest look best), on a log axis of ranks."""
    labels = result.rank_labels()
    edges = rank_edges(labels, result.ks)
    widths = np.diff(edges)
    for name, colour in zip(result.per_type, COLOURS):
        counts = np.array([result.per_type[name]["hit_ranks"][label] for label in labels], np.float64)
        total = counts.sum() or 1.0
        ax.stairs(counts / total / widths, edges, color=colour, lw=2, label=f"{name} ({int(counts.sum()):,} hits)")
    ax.set_xscale("log")
    ax.set_xticks(edges[:-1], labels, fontsize=8, rotation=30)
    ax.minorticks_off()
    ax.set(title="where the hits rank: share of the type's hits per rank\n(a bin's share over the ranks it spans)",
           xlabel="rank (bins of the text's table, log scale)", ylabel="share of hits per rank", ylim=(0, None))
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)


def write_curves(result, path: str | Path) -> None:
    """Draw the curves of a CandidateResult into a PNG at path."""
    plt = _pyplot()
    figure = candidate_figure(result)
    figure.savefig(path, dpi=110)
    plt.close(figure)
