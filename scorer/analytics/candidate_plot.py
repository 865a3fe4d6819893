"""The candidate stage's PNG: recall over K (both denominators) and the ceiling of a perfect reranker over K, per type
and weighted, with the hit ranks' histogram (matplotlib, an optional dependency)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scorer.analytics.plots import COLOURS, _pyplot

CURVE_POINTS = 40  # Ks the curves are drawn at (besides those asked)


def curve_ks(ks) -> list[int]:
    """The asked Ks and about CURVE_POINTS more, spread from 1 to the largest."""
    top = max(ks)
    return sorted({*ks, *np.unique(np.linspace(1, top, min(top, CURVE_POINTS)).round().astype(int)).tolist()})


def write_curves(result, path: str | Path) -> None:
    """Draw the curves of a CandidateResult into a PNG at path."""
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
    labels = result.rank_labels()
    width = 0.8 / len(result.per_type)
    for i, (name, colour) in enumerate(zip(result.per_type, COLOURS)):
        counts = [result.per_type[name]["hit_ranks"][label] for label in labels]
        total = sum(counts) or 1
        axes[2].bar(np.arange(len(labels)) - 0.4 + width * (i + 0.5), [c / total for c in counts], width, color=colour,
                    label=f"{name} ({sum(counts):,} hits)")
    axes[2].set_xticks(range(len(labels)), labels, fontsize=8, rotation=30)
    axes[2].set(title="where the hits rank (share of the type's hits)", xlabel="rank", ylabel="share of hits")
    axes[2].grid(alpha=0.3, axis="y")
    axes[2].legend(fontsize=8)
    figure.suptitle(f"candidates: {result.source}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
