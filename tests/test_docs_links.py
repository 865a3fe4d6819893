"""The documentation holds together: every relative link of README.md and docs/*.md reaches a file (and heading),
every page of docs/ is linked from the README, and every module path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(m.group(1)) for m in re.finditer(r"^#+ (.*)$", page.read_text(), re.M)}


def links(page: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2) or "") for m in re.finditer(r"\]\(([^)#\s]*)(#[^)\s]+)?\)", page.read_text())
            if not m.group(1).startswith(("http://", "https://"))]


def test_every_relative_link_reaches_a_file_and_heading():
    broken = []
    for page in PAGES:
        for target, fragment in links(page):
            path = (page.parent / target).resolve() if target else page
            if not path.is_file() or (fragment and fragment[1:] not in anchors(path)):
                broken.append(f"{page.relative_to(ROOT)}: {target}{fragment}")
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / target).resolve() for target, _ in links(ROOT / "README.md")}
    assert [page.name for page in sorted((ROOT / "docs").glob("*.md")) if page.resolve() not in linked] == []


def test_every_module_path_named_exists():
    named = {m.group(0).rstrip("/") for page in PAGES for m in re.finditer(r"scorer/[\w/]+(\.py|/)", page.read_text())}
    assert named and sorted(path for path in named if not (ROOT / path).exists()) == []
