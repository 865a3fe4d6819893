"""The parser the command-line reference is generated from: scorer.cli.main.build_parser, whose every command's usage
line argparse writes from its options (the CLI's own --help keeps each command's short usage line, ending in
[options]), so that the synopsis names every option the command takes."""

from __future__ import annotations

import argparse
import functools

from scorer.cli.main import build_parser

WIDTH = 100  # the usage lines' width, whatever the terminal of the build


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command (and of each subcommand, such as export's), by name."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def parser() -> argparse.ArgumentParser:
    top = build_parser()
    pending = list(commands(top).values())
    while pending:
        command = pending.pop()
        command.usage = None
        command.formatter_class = functools.partial(command.formatter_class, width=WIDTH)
        for action in command._actions:
            if action.help:  # sphinx-argparse reads help as reStructuredText, which takes 'novelty@20 for an e-mail address
                action.help = action.help.replace("@", "\\@")
        pending.extend(commands(command).values())
    return top
