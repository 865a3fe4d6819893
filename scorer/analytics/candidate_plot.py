"""The candidate stage's PNG: what it shows in plain words first, then recall over K and the ceiling of a perfect
reranker over K, per type and weighted, with the hit ranks' histogram (matplotlib, an optional dependency)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.analytics.plots import COLOURS, FIGURE_WIDTH, _pyplot, legend_below, opening
from scorer.engine.candidate_result import RANK_BINS
from scorer.wording import inline, listed, percent

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


def lead(result) -> str:
    """What the plot shows, in plain words: how much of the truth the lists hold at the largest K, and the best a
    reranker of them could score."""
    top = max(result.ks)
    figures = result.at_k[top]
    types = list(result.per_type)
    held = listed([f"{percent(figures[t]['recall'])} of the {t}" for t in types])
    words = [f"The candidate lists of {inline(result.source)} against what the sessions went on to do: with {top:,} candidates a "
             f"session they hold {held} (recall@K; weighted {figures['weighted']['recall']:.4f})."]
    ceilings = [(k, result.at_k[k]["weighted"]["ceiling"]) for k in result.ks]
    if all(value is not None for _, value in ceilings):
        words.append(f"The best a reranker of them could score ({result.metric} of a perfect reranker, the ceiling): "
                     + ", ".join(f"{value:.4f} from the first {k:,}" for k, value in ceilings) + ".")
    elif result.ceiling_note:
        words.append(f"No ceiling: {result.ceiling_note}.")
    return " ".join(words)


def candidate_figure(result, lead_text: str | None = None):
    """The figure of a CandidateResult: recall and the ceiling over K side by side, and where the hits rank under them,
    across the figure; lead_text (the plain-words opening) above."""
    plt = _pyplot()
    ks = curve_ks(result.ks)
    curve = result.curve(ks)
    names = [*result.per_type, "weighted"]
    figure = plt.figure(figsize=(FIGURE_WIDTH, 8.5))
    top = opening(figure, lead_text)
    grid = figure.add_gridspec(2, 2)
    axes = [figure.add_subplot(grid[0, 0]), figure.add_subplot(grid[0, 1]), figure.add_subplot(grid[1, :])]
    panels = (("recall", "recall@K: the share of the truth in the first K", "recall (Σ hits / Σ |truth|)"),
              ("ceiling", f"ceiling: {result.metric} of a perfect reranker of the first K", "ceiling"))
    for ax, (key, title, label) in zip(axes, panels):
        for name, colour in zip(names, (*COLOURS[: len(names) - 1], "black")):
            values = [np.nan if curve[k][name][key] is None else curve[k][name][key] for k in ks]
            ax.plot(ks, values, color=colour, ls="--" if name == "weighted" else "-", label=name)
            ax.plot(list(result.ks), [np.nan if result.at_k[k][name][key] is None else result.at_k[k][name][key] for k in result.ks],
                    "o", ms=4, color=colour)
        ax.set(title=title, xlabel="K (candidates per session; dots: the Ks asked)", ylabel=label, ylim=(0, None))
        ax.title.set_fontsize(10)
        ax.grid(alpha=0.3)
        legend_below(ax)
    _hit_ranks(axes[2], result)
    if lead_text is None:
        figure.suptitle(f"candidates: {result.source}", fontsize=10, in_layout=False)
        top = 0.96
    figure.tight_layout(rect=(0, 0, 1, top))
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
    ax.set_xticks(edges[:-1], labels, fontsize=9)
    ax.minorticks_off()
    ax.set(title="where the hits rank: share of the type's hits per rank (a bin's share over the ranks it spans)",
           xlabel="rank (bins of the text's table, log scale)", ylabel="share of hits per rank", ylim=(0, None))
    ax.title.set_fontsize(10)
    ax.grid(alpha=0.3, axis="y")
    legend_below(ax)


def write_curves(result, path: str | Path) -> None:
    """Draw the curves of a CandidateResult into a PNG at path, its lead above them."""
    plt = _pyplot()
    figure = candidate_figure(result, lead(result))
    figure.savefig(path, dpi=110)
    plt.close(figure)
