"""The analytics report: recall@k curves, intervals and breakdowns drawn with matplotlib.

FILE.png is the figure; FILE.html is a self-contained page (the figure embedded as base64 PNG,
plus the tables as text). Every report opens with what it shows in plain words (its lead): on the page as text, in
a PNG at the top of the figure. matplotlib is an optional dependency: pip install 'recsys-scorer[report]'.
"""

from __future__ import annotations

import base64
import html
import io
import os
import textwrap
from pathlib import Path

from scorer.errors import UsageError
from scorer.wording import fixed, inline, listed, percent

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
FIGURE_WIDTH = 11.0  # inches: 1,210 px at the reports' 110 dpi, shown at its own size on a page in a 1,280-px window
LEAD_SIZE = 11  # points: the lead atop a PNG


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


def plain_ticks(ax, axis: str = "y", bins: int = 4) -> None:
    """Ticks that read as the figures themselves: no offset ('+1.69e-1') or scientific factor on a narrow range."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(MaxNLocator(nbins=bins))
    target.set_major_formatter(formatter)


def wrapped(fig, text: str, fontsize: float, share: float = 0.98) -> str:
    """text broken into lines no wider than `share` of the figure's width, as the renderer measures them."""
    renderer = fig.canvas.get_renderer()
    room = fig.get_figwidth() * fig.dpi * share
    chars = max(20, int(room / (0.6 * fontsize * fig.dpi / 72)))
    while True:
        lines = "\n".join(textwrap.fill(part, chars, break_on_hyphens=False) for part in text.split("\n"))
        probe = fig.text(0, 0, lines, fontsize=fontsize)
        width = probe.get_window_extent(renderer).width
        probe.remove()
        if width <= room or chars <= 20:
            return lines
        chars = max(20, min(chars - 1, int(chars * room / width)))


def opening(fig, lead: str | None, title: str | None = None) -> float:
    """Room at the top of the figure for its title and its lead, each wrapped to the figure's width and drawn there; the
    figure grows by that room. Returns the top of what is left for the panels (tight_layout's rect)."""
    gap = 0.12  # inches above, between and below the blocks
    texts = []
    if title:
        texts.append(fig.suptitle(wrapped(fig, title, 13), fontsize=13, va="top", in_layout=False))  # the band holds it
    if lead:
        texts.append(fig.text(0.01, 1.0, wrapped(fig, lead, LEAD_SIZE), fontsize=LEAD_SIZE, ha="left", va="top", gid="lead"))
    if not texts:
        return 1.0
    renderer = fig.canvas.get_renderer()
    heights = [text.get_window_extent(renderer).height / fig.dpi for text in texts]
    width, height = fig.get_size_inches()
    band = sum(heights) + gap * (len(texts) + 1)
    total = height + band
    fig.set_size_inches(width, total)
    top = total - gap
    for text, block in zip(texts, heights):
        text.set_y(top / total)
        top -= block + gap
    return 1.0 - band / total


def figure_with_lead(lead: str | None, height: float, *grid, **kwargs):
    """(figure, axes, top): pyplot's subplots(*grid) FIGURE_WIDTH wide, `height` inches for the panels, the lead drawn above
    them (opening); top: where the panels' room ends, for tight_layout's rect."""
    fig, axes = _pyplot().subplots(*grid, figsize=(FIGURE_WIDTH, height), **kwargs)
    return fig, axes, opening(fig, lead)


def legend_below(ax, *args, **kwargs):
    """The axis's legend in a row under its tick labels and its x label: over no data point (tight_layout makes room)."""
    from matplotlib.transforms import ScaledTranslation

    label = ax.get_xlabel()
    drop = 20 + (14 * (label.count("\n") + 1) if label else 0)  # points: the tick labels, then the axis label's lines
    handles, labels = ax.get_legend_handles_labels() if not args else args
    kwargs.setdefault("ncol", min(len(labels), 4))
    kwargs.setdefault("fontsize", 8)
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                     bbox_transform=ax.transAxes + ScaledTranslation(0, -drop / 72, ax.figure.dpi_scale_trans), **kwargs)


def _curves(ax, b: dict) -> None:
    ks = list(range(1, b["k"] + 1))
    weighted = [0.0] * len(ks)
    for (name, curve), colour, weight in zip(b["recall_at_k"].items(), COLOURS, b["weights"]):
        ax.plot(ks, [float("nan") if v is None else v for v in curve], marker="o", ms=3, color=colour, label=name)
        weighted = [w + weight * (v or 0.0) for w, v in zip(weighted, curve)]
    ax.plot(ks, weighted, color="black", ls="--", label="weighted")
    ax.set(title=f"{b['metric'].split('@')[0]}@k: truth found in the first k items", xlabel="k (items read)", ylabel="recall")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.grid(alpha=0.3)
    legend_below(ax)


def _interval_rows(analytics: dict) -> tuple[dict, list[str], str, list[list[dict]]] | None:
    """(subsets, labels, metric, rows): per label (score, then each type's scored metric) the entries {value, low, high}
    of each subset (low and high None without a bootstrap); None without a bootstrap or a split."""
    boot = analytics.get("bootstrap")
    split = analytics.get("split")
    if boot is None and split is None:
        return None
    source = boot["subsets"] if boot else split["figures"]
    first = next(iter(source))
    types = list(source[first]["metrics"].keys())
    metric = next(iter(source[first]["metrics"][types[0]]))

    def entries(figures: dict) -> list[dict]:
        rows = [figures["score"]] + [figures["metrics"][t][metric] for t in types]
        return [row if isinstance(row, dict) else {"value": row, "low": None, "high": None} for row in rows]

    by_subset = [entries(figures) for figures in source.values()]
    return source, ["score"] + types, metric, [list(row) for row in zip(*by_subset)]


def _intervals(ax, analytics: dict) -> bool:
    """Score and each type's scored metric, a strip each on its own scale (an interval of ±0.001 at 0.5 shows, as it
    would not on a 0-1 scale), the subsets (public, private, all) a row each: the axis reads as the figures themselves."""
    found = _interval_rows(analytics)
    if found is None:
        return False
    source, labels, metric, rows = found
    boot = analytics.get("bootstrap")
    fig = ax.figure
    strips = ax.get_subplotspec().subgridspec(len(labels), 1, hspace=0.9)
    ax.remove()
    names = list(source)
    for j, (label, entries) in enumerate(zip(labels, rows)):
        strip = fig.add_subplot(strips[j, 0])
        for y, (name, e, colour) in enumerate(zip(names, entries, COLOURS)):
            if e["value"] is None:
                continue
            low = 0.0 if e["low"] is None else e["value"] - e["low"]
            high = 0.0 if e["high"] is None else e["high"] - e["value"]
            strip.errorbar([e["value"]], [y], xerr=[[low], [high]], fmt="o", color=colour, capsize=4, ms=5)
        strip.set_yticks(range(len(names)), names, fontsize=8)
        strip.set_ylim(len(names) - 0.5, -0.5)
        strip.margins(x=0.15)
        plain_ticks(strip, "x")
        strip.tick_params(axis="x", labelsize=8)
        strip.grid(alpha=0.3, axis="x")
        name = label if label == "score" else f"{label} {metric}"
        if j == 0:
            level = f"each figure and its {100 * boot['level']:g}% interval" if boot else "no intervals (use --bootstrap)"
            name = f"how sure: {level}\n{name}"
        strip.set_title(name, fontsize=9, loc="left")
    if boot:
        strip.set_xlabel(f"bar: where the figure would likely be on other sessions like these ({boot['resamples']:,} resamples)",
                         fontsize=8)
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
    legend_below(ax)


def _bins(ax, rows_by_type: dict, title: str, metric: str) -> None:
    """A bar per type and bin, lying down, its sessions written level at its end (a count never has to fit a bar's width)."""
    types = list(rows_by_type)
    bins = [row["bin"] for row in rows_by_type[types[0]]]
    height = 0.8 / len(types)
    for i, (name, colour) in enumerate(zip(types, COLOURS)):
        values = [row["recall"] if row["recall"] is not None else 0.0 for row in rows_by_type[name]]
        ys = [j - 0.4 + height * (i + 0.5) for j in range(len(bins))]
        bars = ax.barh(ys, values, height, color=colour, label=name)
        for bar, row in zip(bars, rows_by_type[name]):
            ax.annotate(f"{row['sessions']:,}", (bar.get_width(), bar.get_y() + bar.get_height() / 2), ha="left", va="center",
                        fontsize=8, xytext=(3, 0), textcoords="offset points", gid="sessions")
    top = max((row["recall"] or 0.0 for rows in rows_by_type.values() for row in rows), default=0.0)
    ax.set_xlim(0, max(top, 0.05) * 1.4)  # room right of the longest bar for its count
    ax.set_yticks(range(len(bins)), bins, fontsize=9)
    ax.set_ylim(len(bins) - 0.5, -0.5)
    ax.set(title=f"{metric} by {title} (beside each bar: its sessions)", ylabel=title, xlabel=metric)
    ax.grid(alpha=0.3, axis="x")
    legend_below(ax)


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
    ax.set_xticks(range(len(bins)), bins, fontsize=9)
    ax.set(title=f"beyond-accuracy by truth size ({type_name}; gini: totals only)", xlabel="truth size",
           ylabel="bin figure / whole-run figure")
    ax.grid(alpha=0.3)
    legend_below(ax)
    return True


def score_lead(summary: dict, analytics: dict) -> str:
    """What the score report shows, in plain words: the score, what each type's figure means, how sure it is and, with a
    split, the public and private figures."""
    name, score = inline(summary.get("submission", "the submission")), summary.get("score")
    if score is None:
        return f"{name} has no score: see the problems listed with the score."
    metric = summary.get("scored_metric") or ""
    per_type = {t: values.get(metric) for t, values in summary.get("metrics", {}).items()}
    types = [t for t, v in per_type.items() if v is not None]
    weighted = f", weighted over {listed(list(per_type))}" if len(per_type) > 1 else ""
    lines = [f"{name} scores {fixed(score, 4)} ({metric}{weighted})."]
    if types and metric.startswith("recall@"):
        k = metric.split("@")[1]
        found = (listed([f"{percent(per_type[t])} of the {t}" for t in types]) if len(per_type) > 1
                 else f"{percent(per_type[types[0]])} of the items")
        lines.append(f"Within its first {k} items it finds {found} that the sessions went on to have.")
    elif len(types) > 1:
        lines.append(f"Per type: {listed([f'{t} {fixed(per_type[t], 4)}' for t in types])}.")
    boot = analytics.get("bootstrap")
    if boot:
        figure = boot["subsets"].get("all") or next(iter(boot["subsets"].values()))
        span = figure["score"]
        if span["low"] is not None:
            lines.append(f"How sure: on other sessions like these the score would likely lie between {fixed(span['low'], 4)} and "
                         f"{fixed(span['high'], 4)} (its {100 * boot['level']:g}% interval, from {boot['resamples']:,} "
                         "resamples of the sessions); to tell whether another file is really better, use scorer compare.")
    split = analytics.get("split")
    if split:
        figures, counts = split["figures"], split["sessions"]
        sides = [f"on the {side} sessions ({counts[side]:,}) it scores {fixed(figures[side]['score'], 4)}"
                 for side in ("public", "private") if counts[side]]
        if sides:
            said = "; ".join(sides)
            lines.append(f"{said[0].upper()}{said[1:]}.")
    return " ".join(lines)


def report_figure(summary: dict, analytics: dict, title: bool = True, lead: str | None = None):
    """The report figure: one panel per view there is data for (no empty panel), up to three to a row; title: the
    submission and its score above them, and lead (the plain-words opening) under it (an HTML page says both already)."""
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
    columns = 2 if len(panels) > 1 else 1  # two to a row, 1,210 px wide; an odd last panel takes the whole row
    rows = max(1, -(-len(panels) // columns))
    fig = plt.figure(figsize=(FIGURE_WIDTH, 4.6 * rows))
    grid = fig.add_gridspec(rows, columns)
    axes = [fig.add_subplot(grid[i // columns, :] if i == len(panels) - 1 and i % columns == 0 else grid[i // columns, i % columns])
            for i in range(len(panels))]
    heading = None
    if title:
        score = summary.get("score")
        name = summary.get("submission", "")
        heading = f"{name}: score {fixed(score)}" if score is not None else f"{name}: no score"
    top = opening(fig, lead, heading)
    for ax, draw in zip(axes, panels):
        if not draw(ax):
            ax.axis("off")
    if not panels:
        fig.text(0.5, 0.5 * top, "no analytics asked for (--breakdown, --bootstrap, --split)", ha="center", va="center")
    fig.tight_layout(rect=(0, 0, 1, top))  # the title's and the lead's band stays clear
    return fig


def png_of(fig, dpi: int = 110) -> bytes:
    """A figure's PNG bytes; the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    _pyplot().close(fig)
    return buffer.getvalue()


def figure_png(summary: dict, analytics: dict, dpi: int = 110, title: bool = True, lead: str | None = None) -> bytes:
    """report_figure as PNG bytes."""
    return png_of(report_figure(summary, analytics, title, lead), dpi)


def short(name: str, width: int = 40, folder: bool = False) -> str:
    """A name cut in the middle to `width` characters, so that both its start (a team's prefix) and its end (a version,
    the suffix) stay; a file's without its folder unless folder."""
    base = inline(name if folder else os.path.basename(name) or name)
    if len(base) <= width:
        return base
    head = (width - 1) // 2
    return base[:head] + "…" + base[len(base) - (width - 1 - head):]


def _p_label(p: float) -> str:
    """'p=0.006', 'p<0.001': a p-value beside its interval."""
    from scorer.analytics.compare import p_is

    return p_is(p).replace(" ", "")


def compare_figure(figures: dict, lead: str | None = None):
    """The comparison figure: A - B with its interval per type and for the score, one colour per subset; above zero A is
    better. Each p-value above its interval, level unless the points are too close for it."""
    first = next(iter(figures.values()))
    labels = ["score"] + list(first["types"])
    fig, ax, top = figure_with_lead(lead, 5.2)
    width = 0.8 / len(figures)
    room = width * (FIGURE_WIDTH * 0.8) * 72 / len(labels)  # points between two neighbours, about
    upright = room < 8 * 0.6 * len("p=0.000") + 4
    for i, ((name, f), colour) in enumerate(zip(figures.items(), COLOURS)):
        rows = [f["score"]] + [f["types"][t] for t in labels[1:]]
        xs = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
        values = [r["difference"] if r["difference"] is not None else float("nan") for r in rows]
        low = [v - r["low"] if r["low"] is not None else 0.0 for v, r in zip(values, rows)]
        high = [r["high"] - v if r["high"] is not None else 0.0 for v, r in zip(values, rows)]
        ax.errorbar(xs, values, yerr=[low, high], fmt="o", color=colour, capsize=4, label=f"{name} sessions")
        for x, v, up, r in zip(xs, values, high, rows):
            if r["p_value"] is not None:
                ax.annotate(_p_label(r["p_value"]), (x, v + up), textcoords="offset points", xytext=(0, 4), fontsize=8,
                            ha="center", va="bottom", rotation=90 if upright else 0, gid="p")
    ax.axhline(0.0, color="grey", lw=1)
    ax.margins(y=0.25)  # room above the highest interval for its p-value
    ax.set_xticks(range(len(labels)), labels)
    plain_ticks(ax, "y", 6)
    ax.set_title(f"A - B ({first['metric']}): each dot the gap, its bar the {100 * first['level']:g}% interval; p: how often "
                 f"two equally good files differ this much\nA = {short(first['a'], 48)}   B = {short(first['b'], 48)}", fontsize=10)
    ax.set_ylabel("A - B (above 0: A is better)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot: over no point
    fig.tight_layout(rect=(0, 0, 1, top))
    return fig


def compare_png(figures: dict, dpi: int = 110, lead: str | None = None) -> bytes:
    """compare_figure as PNG bytes."""
    return png_of(compare_figure(figures, lead), dpi)


PAGE_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:76em}"
              "p.lead{font-size:1.15em;line-height:1.45;max-width:60em}"
              "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap;overflow-wrap:anywhere}")


def page_html(title: str, lead: str, body: str, style: str = "") -> str:
    """A self-contained page: its title, the lead (what it shows, in plain words) first, then the body (HTML)."""
    title = html.escape(title)
    return (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{title}</title><style>{PAGE_STYLE}{style}</style>"
            f"</head><body><h1>{title}</h1><p class='lead'>{html.escape(lead)}</p>{body}</body></html>\n")


def _write(path, figure, title: str, lead: str, header: str, tables: str) -> Path:
    """Write FILE.png (figure(lead): the lead drawn atop it) or FILE.html (figure(None), the lead as text above it)."""
    path = Path(path)
    try:
        if path.suffix.lower() == ".png":
            path.write_bytes(figure(lead))
        else:
            png = base64.b64encode(figure(None)).decode()
            body = (f"{header}<img alt='figures' style='max-width:100%' src='data:image/png;base64,{png}'>"
                    f"<pre>{html.escape(tables.strip())}</pre>")
            path.write_text(page_html(title, lead, body), encoding="utf-8", errors="backslashreplace")  # a name of undecodable bytes
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
    as_png = Path(path).suffix.lower() == ".png"  # a page has its own title
    return _write(path, lambda lead: figure_png(summary, analytics, title=as_png, lead=lead),
                  f"scorer report: {summary.get('submission', '')}", score_lead(summary, analytics), header, render_text(analytics))


def write_compare_report(path, figures: dict, beyond: dict | None = None) -> Path:
    """Write the comparison as FILE.png or a self-contained FILE.html (with the beyond-accuracy metrics' table)."""
    from scorer.analytics.compare import lead, render_beyond, render_text

    check_name(path)
    split = len(figures) > 1
    tables = "\n\n".join(f"== {name} ==\n{render_text(f, f' on the {name} sessions' if split else '')}" for name, f in figures.items())
    if beyond:
        tables += "\n\n" + render_beyond(beyond)
    first = next(iter(figures.values()))
    return _write(path, lambda opening_: compare_png(figures, lead=opening_), f"scorer compare: {first['a']} vs {first['b']}",
                  lead(figures), "", tables)
