"""The documentation holds together: every relative link of README.md and docs/*.md reaches a file (and heading), and
a docs page's links stay inside docs/ (the site is built from docs/ alone); every page of docs/ is linked from the
README and is in the site's table of contents; every module path it names exists; and every output a page shows for
a command on the bundled fixtures is what that command prints."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from conftest import run_main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
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


def test_docs_pages_link_only_inside_docs():
    """The site holds docs/ alone: a link from a page to README.md, bench/ or fixtures/ would be broken there."""
    outside = [f"{page.name}: {target}" for page in sorted(DOCS.glob("*.md")) for target, _ in links(page)
               if target and DOCS not in (page.parent / target).resolve().parents]
    assert outside == []


def toctree_entries(page: Path) -> set[str]:
    blocks = re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(), re.S)
    return {line.strip() for block in blocks for line in block.splitlines() if line.strip() and not line.startswith(":")}


def test_every_docs_page_is_in_the_site_s_contents():
    entries = toctree_entries(DOCS / "index.md") | toctree_entries(DOCS / "cli.md")
    assert "commands/*" in toctree_entries(DOCS / "cli.md")  # the generated command pages (docs/conf.py)
    assert sorted(page.stem for page in DOCS.glob("*.md") if page.stem != "index") == sorted(entries - {"commands/*"})


def shown_outputs() -> list[tuple[str, list[str], str]]:
    """(page, command's arguments, output shown) of every text block that starts with `$ scorer` and names only files
    that are in this repository (the bundled fixtures): what a reader can run as shown."""
    shown = []
    for page in PAGES:
        for block in re.findall(r"```text\n(.*?)```", page.read_text(), re.S):
            first, _, output = block.partition("\n")
            if not first.startswith("$ scorer "):
                continue
            argv = shlex.split(first[len("$ scorer "):], comments=True)
            files = [arg for arg in argv if not arg.startswith("-") and "/" in arg]
            if files and all((ROOT / arg).is_file() for arg in files):
                shown.append((page.name, argv, output))
    return shown


def test_every_output_shown_is_what_the_command_prints(monkeypatch):
    """Shown lines must be the command's, in order; a line `...` stands for lines left out."""
    monkeypatch.chdir(ROOT)
    shown = shown_outputs()
    commands = {(page, argv[0], argv[1]) for page, argv, _ in shown}
    assert {("README.md", "score", "fixtures/otto_submission.csv"), ("README.md", "validate", "fixtures/bad/S005_unknown_type.csv"),
            ("start-format-check.md", "validate", "fixtures/bad/S021_separator.csv"), ("semantics.md", "validate", "fixtures/bad/S021_separator.csv"),
            ("start-participant.md", "explain", "fixtures/explain/submission.csv")} <= commands
    assert any(page == "README.md" and "sessions in truth 3  rows expected 9" in output for page, _, output in shown)  # the counts line
    wrong = []
    for page, argv, output in shown:
        _, printed, _ = run_main(*argv)
        lines = [line.rstrip() for line in printed.splitlines()]
        at = 0
        for part in re.split(r"^ *\.\.\.\n", output, flags=re.M):
            want = [line.rstrip() for line in part.splitlines()]
            found = next((i for i in range(at, len(lines) - len(want) + 1) if lines[i:i + len(want)] == want), None)
            if found is None or (at == 0 and want and found != 0):  # the first line shown is the first printed
                wrong.append(f"{page}: scorer {' '.join(argv)}: not printed in this order:\n" + "\n".join(want))
                break
            at = found + len(want)
        else:
            if "..." not in output and lines[at:] != []:
                wrong.append(f"{page}: scorer {' '.join(argv)}: prints more than shown: {lines[at:]}")
    assert wrong == []


def test_no_page_cites_a_tracker_number_a_reader_cannot_follow():
    """`issue 25` means nothing to a reader; another project's issue is cited as a link to it."""
    cited = [f"{page.name}: {m.group(0)}" for page in PAGES if page.name != "CHANGELOG.md"
             for m in re.finditer(r"\bissues? #?\d+", re.sub(r"\[[^\]]*\]\(https?://[^)]*\)", "", page.read_text()), re.I)]
    assert cited == []


def command_lines(page: Path) -> list[str]:
    """The `scorer COMMAND ...` command lines of a page: in its code blocks (continuation lines joined) and code spans."""
    text = page.read_text()
    blocks = [re.sub(r"\\\n\s*", " ", block) for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S)]
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    lines = [line.strip().removeprefix("$ ") for chunk in blocks + spans for line in chunk.splitlines()]
    return [m.group(0) for line in lines for m in re.finditer(r"(?<![\w/.-])scorer [a-z][a-z-]*[^&;#]*", line)]


def test_every_option_a_page_names_is_its_command_s():
    """Hand-written command lines name only options the command's parser has (the reference pages are generated)."""
    from scorer.cli.main import build_parser

    parsers = next(action.choices for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    unknown, named = [], 0
    for page in PAGES:
        for line in command_lines(page):
            command, rest = (line.split(maxsplit=2) + [""])[1:3]
            if command not in parsers:
                continue
            options = {option for action in parsers[command]._actions for option in action.option_strings}
            for option in re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", rest):
                named += 1
                if option not in options:
                    unknown.append(f"{page.name}: scorer {command} {option}")
    assert named > 100 and unknown == []
