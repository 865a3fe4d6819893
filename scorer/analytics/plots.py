"""The analytics report: recall@k curves, intervals and breakdowns drawn with matplotlib.

FILE.png is the figure; FILE.html is a self-contained page (the figure embedded as base64 PNG,
plus the tables as text). matplotlib is an optional dependency: pip install 'recsys-scorer[report]'.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from scorer.errors import UsageError
from scorer.wording import fixed

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--report needs matplotlib: pip install 'recsys-scorer[report]' (or pip install matplotlib)") from None
    # Text is drawn as written: a file or team name holding dollar signs ("a$\foo{$.csv") is no TeX for mathtext to parse.
    matplotlib.rcParams["text.parse_math"] = False
    return plt


def _integer_ticks():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _curves(ax, b: dict) -> None:
    ks = list(range(1, b["k"] + 1))
    weighted = [0.0] * len(ks)
    for (name, curve), colour, weight in zip(b["recall_at_k"].items(), COLOURS, b["weights"]):
        ax.plot(ks, [float("nan") if v is None else v for v in curve], marker="o", ms=3, color=colour, label=name)
        weighted = [w + weight * (v or 0.0) for w, v in zip(weighted, curve)]
    ax.plot(ks, weighted, color="black", ls="--", label="weighted")
    ax.set(title=f"{b['metric'].split('@')[0]}@k", xlabel="k (items read)", ylabel="recall")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def _intervals(ax, analytics: dict) -> bool:
    """Score and each type's scored metric, per subset (public, private, all), each drawn as its distance from the whole
    set's figure with its interval around it: an interval of ±0.001 at 0.5 shows, as it would not on a 0-1 scale. The
    whole set's figures are written under their labels."""
    boot = analytics.get("bootstrap")
    split = analytics.get("split")
    if boot is None and split is None:
        return False
    source = boot["subsets"] if boot else split["figures"]
    first = next(iter(source))
    types = list(source[first]["metrics"].keys())
    metric = next(iter(source[first]["metrics"][types[0]]))
    labels = ["score"] + types

    def entries(figures: dict) -> list[dict]:  # value, low, high per label (low and high None without a bootstrap)
        rows = [figures["score"]] + [figures["metrics"][t][metric] for t in types]
        return [row if isinstance(row, dict) else {"value": row, "low": None, "high": None} for row in rows]

    reference = "all" if "all" in source else first
    centre = [e["value"] for e in entries(source[reference])]
    width = 0.8 / len(source)
    for i, (name, colour) in enumerate(zip(source, COLOURS)):
        xs = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
        rows = entries(source[name])
        ys = [float("nan") if e["value"] is None or c is None else e["value"] - c for e, c in zip(rows, centre)]
        low = [0.0 if e["low"] is None else e["value"] - e["low"] for e in rows]
        high = [0.0 if e["high"] is None else e["high"] - e["value"] for e in rows]
        ax.errorbar(xs, ys, yerr=[low, high], fmt="o", color=colour, capsize=4, label=name)
    ax.axhline(0.0, color="grey", lw=1)
    ax.set_xticks(range(len(labels)), [f"{label}\n{fixed(c, 4)}" for label, c in zip(labels, centre)])
    level = f"{100 * boot['level']:g}% intervals, {boot['resamples']:,} resamples" if boot else "no intervals (use --bootstrap)"
    ax.set(title=f"score and {metric} ({level})", ylabel=f"distance from the {reference} figure (written below)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    return True


def _ranks(ax, b: dict) -> None:
    ranks = list(range(1, b["k"] + 1))
    for (name, counts), colour in zip(b["hit_ranks"].items(), COLOURS):
        total = sum(counts) or 1
        ax.plot(ranks, [c / total for c in counts], marker="o", ms=3, color=colour, label=f"{name} ({sum(counts):,} hits)")
    ax.set(title="where the hits are: share of hits by rank", xlabel="rank (1 = first item)", ylabel="share of the type's hits")
    ax.set_ylim(bottom=0)  # from zero: a zoom on 0.0485-0.0512 would make noise look like a trend
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def _bins(ax, rows_by_type: dict, title: str, metric: str) -> None:
    types = list(rows_by_type)
    bins = [row["bin"] for row in rows_by_type[types[0]]]
    width = 0.8 / len(types)
    for i, (name, colour) in enumerate(zip(types, COLOURS)):
        values = [row["recall"] if row["recall"] is not None else 0.0 for row in rows_by_type[name]]
        xs = [j - 0.4 + width * (i + 0.5) for j in range(len(bins))]
        bars = ax.bar(xs, values, width, color=colour, label=name)
        for bar, row in zip(bars, rows_by_type[name]):
            ax.annotate(f"{row['sessions']:,}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                        va="bottom", fontsize=6, rotation=90)
    top = max((row["recall"] or 0.0 for rows in rows_by_type.values() for row in rows), default=0.0)
    ax.set_ylim(0, max(top, 0.05) * 1.25)  # room above the bars for their labels, below the title
    ax.set_xticks(range(len(bins)), bins, fontsize=8)
    ax.set(title=f"{metric} by {title} (numbers: sessions)", xlabel=title, ylabel=metric)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)


def _beyond_bins(ax, b: dict) -> bool:
    """The per-row beyond-accuracy metrics by truth size for the heaviest type, each relative to its whole-run figure."""
    totals = b.get("beyond", {}).get("totals")
    if not totals:
        return False
    type_name = max(zip(b["weights"], b["truth_size"]))[1]
    rows = b["truth_size"][type_name]
    bins = [row["bin"] for row in rows]
    for (name, total), colour in zip(((m, v) for m, v in totals.get(type_name, {}).items() if m in rows[0]["beyond"]), COLOURS):
        if not total:
            continue
        values = [float("nan") if row["beyond"][name] is None else row["beyond"][name] / total for row in rows]
        ax.plot(range(len(bins)), values, marker="o", color=colour, label=f"{name} (total {total:.4g})")
    ax.axhline(1.0, color="grey", lw=1)
    ax.set_xticks(range(len(bins)), bins, fontsize=8)
    ax.set(title=f"beyond-accuracy by truth size ({type_name}; gini: totals only)", xlabel="truth size",
           ylabel="bin figure / whole-run figure")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return True


def report_figure(summary: dict, analytics: dict, title: bool = True):
    """The report figure: one panel per view there is data for (no empty panel), up to three to a row; title: the
    submission and its score above them (an HTML page says both already)."""
    plt = _pyplot()
    b = analytics.get("breakdown")
    panels = []  # functions drawing on one axis; each returns False when it has nothing to draw
    if b is not None:
        panels.append(lambda ax: _curves(ax, b) or True)
    if analytics.get("bootstrap") is not None or analytics.get("split") is not None:
        panels.append(lambda ax: _intervals(ax, analytics))
    if b is not None:
        panels.append(lambda ax: _ranks(ax, b) or True)
        panels.append(lambda ax: _bins(ax, b["truth_size"], "truth size", b["metric"]) or True)
        if "session_length" in b:
            panels.append(lambda ax: _bins(ax, b["session_length"], "session length (events)", b["metric"]) or True)
        if b.get("beyond", {}).get("totals"):
            panels.append(lambda ax: _beyond_bins(ax, b))
    columns = 2 if len(panels) == 4 else min(3, max(1, len(panels)))  # 4 as 2 x 2, not 3 + 1
    rows = max(1, -(-len(panels) // columns))
    band = 0.6 if title else 0.0
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 5 * rows + band), squeeze=False)
    axes = axes.ravel()
    if title:
        score = summary.get("score")
        name = summary.get("submission", "")
        fig.suptitle(f"{name}: score {fixed(score)}" if score is not None else f"{name}: no score", fontsize=13)
    for ax, draw in zip(axes, panels):
        if not draw(ax):
            ax.axis("off")
    for ax in axes[len(panels):]:
        ax.remove()
    if not panels:
        fig.text(0.5, 0.5, "no analytics asked for (--breakdown, --bootstrap, --split)", ha="center", va="center")
    fig.tight_layout(rect=(0, 0, 1, 1 - band / (5 * rows + band)))  # the suptitle's band stays clear
    return fig


def png_of(fig, dpi: int = 110) -> bytes:
    """A figure's PNG bytes; the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    _pyplot().close(fig)
    return buffer.getvalue()


def figure_png(summary: dict, analytics: dict, dpi: int = 110, title: bool = True) -> bytes:
    """report_figure as PNG bytes."""
    return png_of(report_figure(summary, analytics, title), dpi)


def compare_png(figures: dict, dpi: int = 110) -> bytes:
    """The comparison figure: A - B with its interval per type and for the score, one colour per subset."""
    from scorer.analytics.compare import p_text

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 5))
    first = next(iter(figures.values()))
    labels = ["score"] + list(first["types"])
    width = 0.8 / len(figures)
    for i, ((name, f), colour) in enumerate(zip(figures.items(), COLOURS)):
        rows = [f["score"]] + [f["types"][t] for t in labels[1:]]
        xs = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
        values = [r["difference"] if r["difference"] is not None else float("nan") for r in rows]
        low = [v - r["low"] if r["low"] is not None else 0.0 for v, r in zip(values, rows)]
        high = [r["high"] - v if r["high"] is not None else 0.0 for v, r in zip(values, rows)]
        ax.errorbar(xs, values, yerr=[low, high], fmt="o", color=colour, capsize=4, label=name)
        for x, v, up, r in zip(xs, values, high, rows):  # above the interval, upright: never over the next point
            if r["p_value"] is not None:
                shown = p_text(r["p_value"])
                ax.annotate(f"p{shown}" if shown.startswith("<") else f"p={shown}", (x, v + up), textcoords="offset points",
                            xytext=(0, 4), fontsize=7, ha="center", va="bottom", rotation=90)
    ax.axhline(0.0, color="grey", lw=1)
    ax.margins(y=0.25)  # room above the highest interval for its p-value
    ax.set_xticks(range(len(labels)), labels)
    ax.set(title=f"A - B ({first['metric']}): {100 * first['level']:g}% paired bootstrap intervals, randomization p-values\n"
                 f"A = {first['a']}   B = {first['b']}", ylabel="difference")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return png_of(fig, dpi)


def _write(path, png: bytes, title: str, header: str, tables: str) -> Path:
    path = Path(path)
    try:
        if path.suffix.lower() == ".png":
            path.write_bytes(png)
        else:
            title = html.escape(title)
            body = (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{title}</title>"
                    "<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}</style></head><body>"
                    f"<h1>{title}</h1>{header}"
                    f"<img alt='figures' style='max-width:100%' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                    f"<pre>{html.escape(tables.strip())}</pre></body></html>\n")
            path.write_text(body, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write the report {path}: {error}") from None
    return path


REPORT_SUFFIXES = (".html", ".htm", ".png")


def check_name(path) -> None:
    if not Path(path).name.lower().endswith(REPORT_SUFFIXES):
        raise UsageError(f"--report {path}: the name must end in .html or .png")


def write_report(path, summary: dict, analytics: dict) -> Path:
    """Write FILE.png (the figure) or FILE.html (self-contained: figure and tables)."""
    from scorer.analytics.summary import render_text

    check_name(path)
    metrics = "\n".join(f"{t}: " + ", ".join(f"{m} {fixed(v)}" for m, v in ms.items()) for t, ms in summary.get("metrics", {}).items())
    score = summary.get("score")
    header = f"<p>score <b>{'none' if score is None else fixed(score)}</b></p><pre>{html.escape(metrics)}</pre>"
    png = figure_png(summary, analytics, title=Path(path).suffix.lower() == ".png")  # a page has its own title
    return _write(path, png, f"scorer report: {summary.get('submission', '')}", header,
                  render_text(analytics))


def write_compare_report(path, figures: dict, beyond: dict | None = None) -> Path:
    """Write the comparison as FILE.png or a self-contained FILE.html (with the beyond-accuracy metrics' table)."""
    from scorer.analytics.compare import render_beyond, render_text

    check_name(path)
    tables = "\n\n".join(f"== {name} ==\n{render_text(f)}" for name, f in figures.items())
    if beyond:
        tables += "\n\n" + render_beyond(beyond)
    first = next(iter(figures.values()))
    return _write(path, compare_png(figures), f"scorer compare: {first['a']} vs {first['b']}", "", tables)
