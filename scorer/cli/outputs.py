"""What a command writes, checked against what it reads before any work: no file it writes may be one it reads, nor two
files it writes one file, under any spelling (scorer.file_identity: `x/./a.csv`, a symbolic link, a hard link). Every
command that writes a file calls refuse_overwriting once its outputs are known."""

from __future__ import annotations

from collections.abc import Iterable

# The options (argparse dests) through which a command reads a file, and how a message names each.
INPUTS = {
    "submission": "the submission", "submissions": "the submission", "a": "the submission A", "b": "the submission B",
    "truth": "the truth", "config": "--config", "sessions": "--sessions", "items": "--items", "train": "--train",
    "results": "--results", "teams": "the teams file", "state": "the Ladder state", "events": "the session log",
    "candidates": "the candidate table", "receipt": "the receipt", "seeds": "--seeds", "artists": "--artists",
}


def inputs_of(args) -> list[tuple[str, str]]:
    """(how a message names it, path) of every file the command line names to read."""
    found = []
    for dest, label in INPUTS.items():
        value = getattr(args, dest, None)
        for path in value if isinstance(value, list) else [value]:
            if isinstance(path, str) and path:
                found.append((label, path))
    return found


def refuse_overwriting(args, outputs: Iterable[tuple[str, str | None]], more_inputs: Iterable[tuple[str, str]] = ()) -> None:
    """UsageError when an output (option, path) is a file the command reads (inputs_of(args) and `more_inputs`) or
    another of its outputs: the command would destroy what it reads, or write one file twice."""
    from scorer.errors import UsageError
    from scorer.file_identity import identity

    read = {}
    for label, path in [*inputs_of(args), *more_inputs]:
        read.setdefault(identity(path), (label, path))
    written: dict[tuple, tuple[str, str]] = {}
    for option, path in outputs:
        if not path:
            continue
        key = identity(path)
        if key in read:
            label, other = read[key]
            same = "" if other == path else f" ({other})"
            raise UsageError(f"cannot write {option} {path}: it is {label}{same}, which this command reads; choose another file")
        if key in written:
            first, other = written[key]
            raise UsageError(f"cannot write {option} {path}: {first} {other} is the same file; give each output its own file")
        written[key] = (option, path)
