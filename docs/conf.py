"""Sphinx configuration of the documentation site: `sphinx-build -W docs docs/_build/html` (the `docs` extra).

The pages are the Markdown files of docs/ (read by MyST, through MyST-NB). A page with a Jupyter kernel in its front
matter (notebook.md) is a notebook: MyST-NB runs it at every build (its outputs are never committed), and an error in
a cell fails the build. The command-line reference is generated from the argparse parsers: at every build, one page
per command of scorer.cli.main.COMMANDS is written into docs/commands/ (not committed), each holding sphinx-argparse's
directive for that command, so nothing of it is written by hand.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from docutils import nodes

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # the scorer of this tree (also where it is not installed), cli_reference

from scorer import __version__  # noqa: E402
from scorer.cli.main import COMMANDS  # noqa: E402

project = "scorer"
author = "the scorer authors"
copyright = "the scorer authors"
version = release = __version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinxarg.ext"]  # myst_nb: MyST's parser, and the notebook pages run
source_suffix = {".md": "myst-nb"}
exclude_patterns = ["_build"]
smartquotes = False  # "--truth" stays two hyphens
highlight_language = "none"  # a block without a language (the usage lines) is shown as it is
myst_heading_anchors = 3  # [text](page.md#a-heading) links, as GitHub makes the anchors
nb_execution_mode = "force"  # every build runs the notebook pages: their outputs are this version's
nb_execution_raise_on_error = True  # a cell that raises fails the build
nb_execution_timeout = 300  # seconds a cell may take
nb_merge_streams = True

html_theme = "furo"
html_title = f"scorer {version}"
html_static_path: list[str] = []

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
maximum_signature_line_length = 100  # a long signature gets one parameter a line

COMMAND_PAGES = HERE / "commands"


def command_page(name: str) -> str:
    """The page of one command: its title, sphinx-argparse's rendering of its parser, and its examples."""
    module = importlib.import_module(COMMANDS[name])
    examples = "\n".join(module.EXAMPLES)
    return (f"# scorer {name}\n\n"
            "```{argparse}\n:module: cli_reference\n:func: parser\n:prog: scorer\n"
            f":path: {name}\n:noepilog:\n:nodefault:\n```\n\n"
            f"## Examples\n\n```sh\n{examples}\n```\n")


def write_command_pages() -> None:
    """One page per command into docs/commands/, rewritten only when it changes; pages of commands gone are removed."""
    COMMAND_PAGES.mkdir(exist_ok=True)
    wanted = {f"{name}.md": command_page(name) for name in COMMANDS}
    for stale in COMMAND_PAGES.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    for filename, text in wanted.items():
        page = COMMAND_PAGES / filename
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")


write_command_pages()


def code_not_citations(app, doctree) -> None:
    """`text` in a parser's help or a docstring is code, as in the Markdown pages (reStructuredText would cite it)."""
    for node in list(doctree.findall(nodes.title_reference)):
        node.replace_self(nodes.literal(node.rawsource, node.astext()))


def setup(app) -> dict:
    app.connect("doctree-read", code_not_citations)
    return {"parallel_read_safe": True}
