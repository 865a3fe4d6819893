"""The documentation site (docs/conf.py): `sphinx-build -W` builds it (running the notebook page), and headless Chromium
finds on the built pages the search box, a working search, and one page per command of scorer.cli.main.COMMANDS,
generated from its parser (slow: about 30 s). The reference is complete: it leaves argparse's defaults out because every help text says its
default, and each command page is the parser's (slow: conf.py needs the docs extra)."""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from scorer.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SITE_PACKAGES = ("sphinx", "myst_parser", "myst_nb", "ipykernel", "furo", "sphinxarg")
MISSING = [name for name in SITE_PACKAGES if importlib.util.find_spec(name) is None]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def docs_module(name: str):
    """A module of docs/ (conf, cli_reference), loaded from its file; docs/ is on the path while it loads, as Sphinx has it."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}_under_test", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(DOCS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(DOCS))
    return module


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """The parser of each command, as the reference pages render it."""
    reference = docs_module("cli_reference")
    return reference.commands(reference.parser())


def test_every_option_s_default_is_in_its_help():
    """The reference pages leave argparse's defaults out (`:nodefault:`), as --help does: each help text says its own."""
    silent = []
    for name, parser in command_parsers().items():
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._StoreConstAction)) or action.default in (None, argparse.SUPPRESS):
                continue
            if "default" not in (action.help or ""):
                silent.append(f"scorer {name} {'/'.join(action.option_strings) or action.dest} (default {action.default!r})")
    assert silent == []


def test_the_reference_usage_names_every_option():
    """The CLI's own usage lines end in [options]; the reference's are argparse's, written from every option."""
    parsers = command_parsers()
    assert set(COMMANDS) <= set(parsers)
    for name in COMMANDS:
        parser = parsers[name]
        parser.prog = f"scorer {name}"
        usage = parser.format_usage()
        options = [option for action in parser._actions  # an old spelling (help suppressed) is left out of --help too
                   if not isinstance(action, argparse._HelpAction) and action.help != argparse.SUPPRESS
                   for option in action.option_strings[:1]]
        assert [option for option in options if option not in usage] == [], name
    assert "--untrusted" in parsers["score"].format_usage() and "[-o FILE]" in parsers["grade"].format_usage()


@pytest.mark.slow  # conf.py imports docutils, of the docs extra, which .ci/run installs before the slow tests
def test_each_command_page_holds_its_parser_and_examples(tmp_path, monkeypatch):
    """conf.py writes a page per command, rewrites it only when it changes and removes the pages of commands gone."""
    conf = docs_module("conf")
    monkeypatch.setattr(conf, "COMMAND_PAGES", tmp_path)
    (tmp_path / "gone.md").write_text("# scorer gone\n")
    conf.write_command_pages()
    assert sorted(page.stem for page in tmp_path.glob("*.md")) == sorted(COMMANDS)
    score = (tmp_path / "score.md").read_text()
    assert score.startswith("# scorer score\n") and ":path: score\n" in score and ":func: parser\n" in score
    assert "scorer score submission.csv --truth test_labels.jsonl\n" in score  # its EXAMPLES


def dom(url: str, profile: str, wait_ms: int = 0) -> str:
    """The page's DOM once headless Chromium has rendered it (with wait_ms, after its scripts ran that long)."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", "--dump-dom", url]
    if wait_ms:
        command.insert(-2, f"--virtual-time-budget={wait_ms}")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "<html" in done.stdout, f"chromium: exit {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed ({', '.join(MISSING)} missing): pip install -e '.[docs]'")
def test_the_site_builds_and_chromium_finds_search_and_every_command(tmp_path):
    site = tmp_path / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(site)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"sphinx-build -W failed:\n{done.stderr[-5000:]}"
    assert CHROMIUM, "headless Chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it)"

    with tempfile.TemporaryDirectory(prefix="scorer-chromium-") as profile:
        front = dom((site / "index.html").as_uri(), profile)
        assert re.search(r'<form[^>]*role="search"[^>]*>\s*<input[^>]*name="q"', front), "no search box on the front page"
        assert {f"commands/{name}.html" for name in COMMANDS} <= set(re.findall(r'href="(commands/[\w-]+\.html)"', front))

        found = dom((site / "search.html").as_uri() + "?q=untrusted", profile, wait_ms=10_000)
        results = re.search(r'<ul[^>]*class="search"[^>]*>(.*?)</ul>', found, re.S)
        assert results and 'href="commands/score.html' in results.group(1), "the search found no command page"

    def command_page(name: str) -> str:
        with tempfile.TemporaryDirectory(prefix="scorer-chromium-") as own:
            return dom((site / "commands" / f"{name}.html").as_uri(), own)

    with ThreadPoolExecutor(2) as pool:
        pages = dict(zip(COMMANDS, pool.map(command_page, COMMANDS)))
    for name, page in pages.items():
        text = re.sub(r"<[^>]+>", "", page)
        assert f"scorer {name}" in re.search(r"<h1>(.*?)</h1>", page, re.S).group(1), name
        assert f"usage: scorer {name} " in text and "Examples" in text, name
    assert "--untrusted" in re.sub(r"<[^>]+>", "", pages["score"]) and "-o FILE" in re.sub(r"<[^>]+>", "", pages["grade"])
    for name, page in pages.items():  # a metric's name (novelty@20) is text, not an e-mail address
        assert "mailto:" not in page, name
    assert "'novelty@20,gini@20,auc@20'" in html.unescape(pages["score"])

    notebook = (site / "notebook.html").read_text()  # the notebook page ran at the build: its tables and its plot
    outputs = re.findall(r'<div class="cell_output[^"]*"', notebook)
    assert len(outputs) >= 10 and "score 0.340000" in notebook and "<img" in notebook and "Traceback" not in notebook
