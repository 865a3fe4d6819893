"""`scorer similar --report FILE.html`: a self-contained page, no library needed. It opens with what it shows in plain
words, then a heatmap of the pairs' Jaccard (an HTML table, one coloured cell per pair, its percentage written in it; the
files of flagged pairs first, at most MAX_FILES files; rows and columns named by team when a teams file gives them),
the flagged pairs outlined, then the text report."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorer.analytics.plots import page_html, short
from scorer.errors import UsageError

MAX_FILES = 60  # files on the heatmap: those of flagged pairs first, then the most similar to any other
LABEL_WIDTH = 30  # characters of a row's or a column's name (its start and its end; the title and the text have it whole)
CHAR_WIDTH = 0.62  # a character's width in the page's sans-serif font, as a share of its size (digits 0.56, the widest letters 0.9)


@dataclass(frozen=True)
class Layout:
    """The sizes the heatmap is drawn at (pixels): a cell's side and its figure's font, the names' font and the columns'
    header height; each chosen so that what is written fits where it is written."""

    cell: int
    cell_font: int
    label_font: int
    header: int

    @classmethod
    def of(cls, files: int, labels: list[str]) -> Layout:
        cell = int(min(40, max(16, 960 // max(files, 1))))  # the cells within about 960 px, the names beside them: 1,280 px
        cell_font = min(12, int((cell - 4) / (CHAR_WIDTH * 3)))  # '100' fits
        label_font = 12
        header = int(max((len(label) for label in labels), default=1) * CHAR_WIDTH * label_font) + 12
        return cls(cell, cell_font, label_font, header)

    def figures_fit(self) -> bool:
        """Whether a cell can hold its percentage ('100') at a readable size."""
        return self.cell_font >= 8


def shown_files(report: dict, limit: int = MAX_FILES) -> list[int]:
    """Indices of the files on the heatmap: every file of a flagged pair, then by their largest Jaccard with another."""
    names = [f["name"] for f in report["files"]]
    index = {name: i for i, name in enumerate(names)}
    chosen = list(dict.fromkeys(index[n] for q in report["flagged"] for n in (q["a"], q["b"])))
    closest = report["matrix"]["closest"]
    chosen += [i for i in np.argsort(-closest, kind="stable").tolist() if i not in chosen]
    return chosen[:limit]


def labels(report: dict, shown: list[int]) -> list[tuple[str, str]]:
    """(label, title) of each shown file: its team (and its file where the team has more than one on the heatmap), or the
    file's name without a teams file; the title names both whole."""
    files = [report["files"][i] for i in shown]
    teams = [f["team"] for f in files]
    out = []
    for f in files:
        if f["team"] == f["name"]:
            out.append((short(f["name"], LABEL_WIDTH), f["name"]))
        elif teams.count(f["team"]) > 1:
            team = short(f["team"], LABEL_WIDTH // 2, folder=True)
            out.append((f"{team} · {short(f['name'], LABEL_WIDTH - len(team) - 3)}", f"{f['team']}: {f['name']}"))
        else:
            out.append((short(f["team"], LABEL_WIDTH, folder=True), f"{f['team']}: {f['name']}"))
    return out


def _colour(x: float | None) -> str:
    """White (0) to deep red (1); grey for no figure."""
    if x is None or not np.isfinite(x):
        return "#dddddd"
    x = min(max(float(x), 0.0), 1.0)
    return f"rgb(255,{round(255 * (1 - 0.85 * x))},{round(255 * (1 - 0.95 * x))})"


def heatmap(report: dict) -> tuple[str, Layout]:
    """The table and the sizes it is drawn at: rows and columns the shown files, a cell the pair's Jaccard (its colour, its
    percentage written in it where it fits, and in its title identical and jaccard); a flagged pair's cells outlined."""
    shown = shown_files(report)
    names = [report["files"][i]["name"] for i in shown]
    named = labels(report, shown)
    layout = Layout.of(len(shown), [label for label, _ in named])
    flagged = {frozenset((q["a"], q["b"])) for q in report["flagged"]}
    measures = report["matrix"]["measures"]
    head = "".join(f"<th class='col' title='{html.escape(title)}'><div>{html.escape(label)}</div></th>" for label, title in named)
    rows = []
    for i, name, (label, title) in zip(shown, names, named):
        cells = []
        for j, other, (_, other_title) in zip(shown, names, named):
            if i == j:
                cells.append("<td class='self'></td>")
                continue
            figures = measures(min(i, j), max(i, j))
            tip = html.escape(f"{title} ~ {other_title}: " + ", ".join(f"{m.replace('_', ' ')} {100 * v:.1f}%" if np.isfinite(v)
                                                                       else f"{m.replace('_', ' ')} -" for m, v in figures.items()))
            outline = " flag" if frozenset((name, other)) in flagged else ""
            jaccard = figures["jaccard"]
            dark = " dark" if np.isfinite(jaccard) and jaccard > 0.6 else ""
            text = f"{100 * jaccard:.0f}" if layout.figures_fit() and np.isfinite(jaccard) and jaccard >= 0.005 else ""
            cells.append(f"<td class='cell{outline}{dark}' title='{tip}' style='background:{_colour(jaccard)}'>{text}</td>")
        rows.append(f"<tr><th class='row' title='{html.escape(title)}'>{html.escape(label)}</th>{''.join(cells)}</tr>")
    more = len(report["files"]) - len(shown)
    note = f"<p>{more:,} more files are not shown (the files of flagged pairs and the most similar come first).</p>" if more > 0 else ""
    return f"<table class='heat'><tr><th></th>{head}</tr>{''.join(rows)}</table>{note}", layout


def style(layout: Layout) -> str:
    """The heatmap's CSS at its layout's sizes."""
    return ("table.heat{border-collapse:collapse;table-layout:fixed}"
            f"table.heat td{{width:{layout.cell}px;height:{layout.cell}px;min-width:{layout.cell}px;max-width:{layout.cell}px;"
            f"border:1px solid #eee;padding:0;overflow:hidden;white-space:nowrap;text-align:center;font-size:{layout.cell_font}px;"
            "color:#444}"
            "table.heat td.dark{color:#fff}table.heat td.self{background:#888}"
            "table.heat td.flag{outline:3px solid #000;outline-offset:-3px}"
            f"th.row{{text-align:right;font-weight:normal;font-size:{layout.label_font}px;padding-right:6px;white-space:nowrap}}"
            f"th.col{{height:{layout.header}px;vertical-align:bottom;font-weight:normal;font-size:{layout.label_font}px;"
            "padding-bottom:4px}th.col div{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;margin:auto}"
            ".key span{display:inline-block;width:40px;height:14px;vertical-align:middle}")


def page(report: dict) -> str:
    from scorer.analytics.similar.pairs import lead, render_text

    table, layout = heatmap(report)
    key = "".join(f"<span style='background:{_colour(x)}'></span>" for x in (0, 0.25, 0.5, 0.75, 1))
    written = ", written in each cell (blank: under 0.5)" if layout.figures_fit() else ""
    body = (f"<p class='key'>0 {key} 100: the share of the first {report['k']} items two files hold in common, in % (their mean "
            f"Jaccard){written}.<br>A flagged pair is outlined in black; hover a cell for all its figures.</p>"
            f"{table}<pre>{html.escape(render_text(report, opening=False))}</pre>")
    return page_html("scorer similar", lead(report), body, style(layout))


def write_page(path, report: dict) -> Path:
    path = Path(path)
    try:
        path.write_text(page(report), encoding="utf-8", errors="backslashreplace")  # a name of undecodable bytes
    except OSError as error:
        raise UsageError(f"cannot write the report {path}: {error.strerror or error}") from None
    return path
