"""HTML for a notebook's display (_repr_html_ of Result and of the analyses' objects): a heading, figures, tables and
the problems with their lines. Every text is escaped, a name others chose (a file, a team, an id) on one line
(scorer.wording.inline), so nothing of a submission becomes markup."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from scorer.wording import fixed, inline, printable

STYLE = "border-collapse:collapse;margin:0.4em 0"
CELL = "padding:0.15em 0.6em;text-align:right;border-bottom:1px solid #ddd;white-space:nowrap"
HEAD = "padding:0.15em 0.6em;text-align:right;border-bottom:2px solid #888"


def text(value) -> str:
    """A text for HTML: escaped, on one line."""
    return html.escape(inline(value))


def figure(value, places: int = 6, sign: str = "") -> str:
    """A cell's figure: a float to `places` decimals ('-' for None or NaN), a whole number with its thousands, any
    other value as text."""
    if isinstance(value, bool) or value is None:
        return "-" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return fixed(value, places, sign) if math.isfinite(value) or value != value else str(value)
    return text(value)


def table(header: Iterable[str], rows: Iterable[Iterable], first_left: bool = True) -> str:
    """A table: the header's names and each row's cells (figures as figure() writes them), the first column left."""
    def cell(tag: str, value, i: int, style: str) -> str:
        align = ";text-align:left" if first_left and i == 0 else ""
        shown = value if isinstance(value, Markup) else figure(value)
        return f'<{tag} style="{style}{align}">{shown}</{tag}>'

    head = "".join(cell("th", Markup(text(name)), i, HEAD) for i, name in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", value, i, CELL) for i, value in enumerate(row)) + "</tr>" for row in rows)
    return f'<div style="overflow-x:auto"><table style="{STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


class Markup(str):
    """HTML already written (a cell that holds markup, not text)."""


def heading(title: str, detail: str = "") -> str:
    """The object's first line: a bold title and a plain detail, both escaped."""
    return f"<p><b>{text(title)}</b>{' ' + text(detail) if detail else ''}</p>"


def paragraph(words: str) -> str:
    return f"<p>{text(words)}</p>"


def problems(report, shown: int = 5) -> str:
    """Per code: its count and title, then up to `shown` of its problems with where they are, the message and the line's
    context with a caret under the bad part; '' without problems."""
    out = []
    for row in report.summary():
        kept = report.kept[row["code"]][:shown] if report.examples else []
        lines = []
        for problem in kept:
            lines.append(f"{problem.where}: {printable(problem.message)}")
            if problem.context is not None and problem.caret is not None:
                start, width = problem.caret
                lines += [f"  | {problem.context}", f"  | {' ' * start}{'^' * max(1, min(width, len(problem.context) - start))}"]
        listed = f"<pre style=\"margin:0.2em 0 0.6em 1em\">{html.escape(chr(10).join(lines))}</pre>" if lines else ""
        out.append(f"<li><b>{text(row['code'])} {text(row['severity'])}</b>: {text(row['title'])}, {row['count']:,} in all{listed}</li>")
    return f"<ul style=\"margin:0.3em 0\">{''.join(out)}</ul>" if out else ""


def block(*parts: str) -> str:
    """The parts in one block (what _repr_html_ returns)."""
    return "<div>" + "".join(part for part in parts if part) + "</div>"
