"""`scorer similar --report FILE.html`: a self-contained page, no library needed. A heatmap of the pairs' Jaccard (an
HTML table, one coloured cell per pair; the files of flagged pairs first, at most MAX_FILES files), the flagged pairs
outlined, then the text report."""

from __future__ import annotations

import html
import os
from pathlib import Path

import numpy as np

from scorer.errors import UsageError

MAX_FILES = 60  # files on the heatmap: those of flagged pairs first, then the most similar to any other


def shown_files(report: dict, limit: int = MAX_FILES) -> list[int]:
    """Indices of the files on the heatmap: every file of a flagged pair, then by their largest Jaccard with another."""
    names = [f["name"] for f in report["files"]]
    index = {name: i for i, name in enumerate(names)}
    chosen = list(dict.fromkeys(index[n] for q in report["flagged"] for n in (q["a"], q["b"])))
    closest = report["matrix"]["closest"]
    chosen += [i for i in np.argsort(-closest, kind="stable").tolist() if i not in chosen]
    return chosen[:limit]


def _colour(x: float | None) -> str:
    """White (0) to deep red (1); grey for no figure."""
    if x is None or not np.isfinite(x):
        return "#dddddd"
    x = min(max(float(x), 0.0), 1.0)
    return f"rgb(255,{round(255 * (1 - 0.85 * x))},{round(255 * (1 - 0.95 * x))})"


def _short(name: str, width: int = 28) -> str:
    base = os.path.basename(name) or name
    return base if len(base) <= width else "…" + base[-(width - 1):]


def heatmap(report: dict) -> str:
    """The table: rows and columns the shown files, a cell the pair's Jaccard (its colour and, in its title, identical and
    jaccard); a flagged pair's cells outlined in black."""
    shown = shown_files(report)
    names = [report["files"][i]["name"] for i in shown]
    flagged = {frozenset((q["a"], q["b"])) for q in report["flagged"]}
    measures = report["matrix"]["measures"]
    head = "".join(f"<th class='col' title='{html.escape(n)}'><div>{html.escape(_short(n))}</div></th>" for n in names)
    rows = []
    for i, name in zip(shown, names):
        cells = []
        for j, other in zip(shown, names):
            a, b = min(i, j), max(i, j)
            if i == j:
                cells.append("<td class='self'></td>")
                continue
            figures = measures(a, b)
            title = html.escape(f"{name} ~ {other}: " + ", ".join(f"{m.replace('_', ' ')} {100 * v:.1f}%" if np.isfinite(v)
                                                                  else f"{m.replace('_', ' ')} -" for m, v in figures.items()))
            outline = " class='flag'" if frozenset((name, other)) in flagged else ""
            cells.append(f"<td{outline} title='{title}' style='background:{_colour(figures['jaccard'])}'></td>")
        rows.append(f"<tr><th class='row' title='{html.escape(name)}'>{html.escape(_short(name))}</th>{''.join(cells)}</tr>")
    more = len(report["files"]) - len(shown)
    note = f"<p>{more:,} more files are not shown (the files of flagged pairs and the most similar come first).</p>" if more > 0 else ""
    return f"<table class='heat'><tr><th></th>{head}</tr>{''.join(rows)}</table>{note}"


STYLE = ("body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}"
         "table.heat{border-collapse:collapse}table.heat td{width:22px;height:22px;border:1px solid #eee;padding:0}"
         "table.heat td.self{background:#888}table.heat td.flag{outline:3px solid #000;outline-offset:-3px}"
         "th.row{text-align:right;font-weight:normal;font-size:11px;padding-right:4px;white-space:nowrap}"
         "th.col{height:140px;vertical-align:bottom;font-weight:normal;font-size:11px}"
         "th.col div{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}"
         ".key span{display:inline-block;width:40px;height:14px}")


def page(report: dict) -> str:
    from scorer.analytics.similar import render_text

    key = "".join(f"<span style='background:{_colour(x)}'></span>" for x in (0, 0.25, 0.5, 0.75, 1))
    return ("<!doctype html>\n<html><head><meta charset='utf-8'><title>scorer similar</title>"
            f"<style>{STYLE}</style></head><body><h1>scorer similar</h1>"
            f"<p class='key'>mean Jaccard of the first {report['k']} items: 0 {key} 1; a flagged pair is outlined; "
            "hover a cell for its figures</p>"
            f"{heatmap(report)}<pre>{html.escape(render_text(report))}</pre></body></html>\n")


def write_page(path, report: dict) -> Path:
    path = Path(path)
    try:
        path.write_text(page(report), encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write the report {path}: {error.strerror or error}") from None
    return path
