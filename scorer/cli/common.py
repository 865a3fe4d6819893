"""Option helpers the commands share (each command is a module of scorer/cli: HELP, add_arguments(parser), run(args))."""

from __future__ import annotations

import argparse
import math
import os
import stat
from pathlib import Path

from scorer.spec import MAX_SECONDS


def whole_number(low: int, high: int | None = None, what: str = "a number"):
    """An argparse type: a whole number from low to high (inclusive); the error names the bad text."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low or (high is not None and value > high):
            limits = f"of at least {low:,}" if high is None else f"from {low:,} to {high:,}"
            raise argparse.ArgumentTypeError(f"expected {what} {limits}, got {value}")
        return value

    return parse


positive_int = whole_number(1)


def number(low: float | None = None, high: float | None = None, what: str = "a number", above: bool = False):
    """An argparse type: a finite number from low (above: more than low) to high; NaN, Infinity and what is out of range
    are refused with the bad text named (a NaN limit would turn a check off: every comparison with it is false)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        out = (low is not None and (value <= low if above else value < low)) or (high is not None and value > high)
        if not math.isfinite(value) or out:
            bounds = (f" from {low:,g} to {high:,g}" if low is not None and high is not None and not above else
                      "".join([f" above {low:,g}" if above else f" of at least {low:,g}"] if low is not None else [])
                      + (" and" if low is not None and high is not None else "")
                      + (f" at most {high:,g}" if high is not None else ""))
            raise argparse.ArgumentTypeError(f"expected {what}{bounds} (a finite number), got {text!r}")
        return value

    return parse


seconds = number(0, MAX_SECONDS, "a number of seconds", above=True)

# Seed defaults, said in every --help: 0 for score, compare and export (export's Public/Private draw is score's
# --split public=F, so they must agree); prepare keeps the 42 it had from the start, as changing it would silently
# change every split made without --seed.
DEFAULT_SEED = 0
PREPARE_SEED = 42


def add_aliased(parser, names: tuple[str, ...], old_names: tuple[str, ...], required: bool = False, **options):
    """An option and its old spellings: --help shows only `names`; the old ones still parse, into the same value.

    Giving two spellings at once is a usage error, as for any pair of exclusive options.
    """
    if not old_names:
        return parser.add_argument(*names, required=required, **options)
    group = parser.add_mutually_exclusive_group(required=required)
    action = group.add_argument(*names, **options)
    for old in old_names:
        group.add_argument(old, dest=action.dest, type=action.type, choices=action.choices, metavar=action.metavar,
                           default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return action


def add_output(parser, metavar: str, help: str, required: bool = True, old_names: tuple[str, ...] = ()) -> None:
    """-o/--output: what the command writes (every command that writes a file spells it so)."""
    add_aliased(parser, ("-o", "--output"), old_names, required=required, metavar=metavar, help=help)


def output_path(path: str, option: str, suffixes: tuple[str, ...] = (), folder: bool = False, make: bool = True) -> str:
    """Check what a command will write before it starts any work: the name ends in one of `suffixes`; what is there now
    is a regular file we may replace (with folder: a folder), never a FIFO or a device; its folder is made if missing, as
    `scorer prepare -o` makes its own (make=False: only checked), and can be written into. UsageError otherwise."""
    from scorer.errors import UsageError
    from scorer.file_formats import kind_of

    target = Path(path)
    if suffixes and not target.name.lower().endswith(suffixes):
        names = ", ".join(suffixes[:-1]) + " or " * (len(suffixes) > 1) + suffixes[-1]
        raise UsageError(f"{option} {path}: the name must end in {names}")
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise UsageError(f"cannot write {option} {path}: {error.strerror or error}") from None
    if mode is not None and not (stat.S_ISDIR if folder else stat.S_ISREG)(mode):
        kind = "a regular file" if stat.S_ISREG(mode) else kind_of(mode)
        raise UsageError(f"cannot write {option} {path}: it is {kind}, not {'a folder' if folder else 'a regular file'}")
    parent = target if folder else target.parent
    if make:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"cannot make the folder {parent} for {option} {path}: {error.strerror or error}") from None
    else:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {option} {path}: the folder {parent} is not a folder this user can write into")
    if mode is not None and not folder and not os.access(target, os.W_OK):
        raise UsageError(f"cannot write {option} {path}: the file is not writable")
    return path


def add_cluster_options(parser, when: str = "") -> None:
    """--scheduler or --workers: the Dask cluster a command runs on (`when`: the option it needs, said in --help)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--scheduler", metavar="tcp://HOST:PORT", help=f"{when}a running Dask scheduler (`dask scheduler`, `dask worker ADDRESS`)")
    group.add_argument("--workers", type=whole_number(1, 256, "a number of workers"), metavar="N",
                       help=f"{when}start a local cluster of N worker processes on this machine (default: one per CPU)")


def add_competition(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--competition", default="otto", metavar="NAME", help="a bundled competition config (default: otto)")
    group.add_argument("--config", metavar="PATH", help="a competition config TOML file")


WARNING_EXAMPLES = 3  # examples of each warning or note code the text of score and candidates prints without --max-per-code
MAX_EXAMPLES = 10_000  # scorer.api.MAX_PER_CODE: the kernel's record table has this many rows per code and block
MAX_THREADS = 64  # scorer.api.MAX_THREADS
example_count = whole_number(0, MAX_EXAMPLES, "a number of examples")


class _Given(argparse.Action):
    """Store the value, and note that it was given (args.max_per_code_given)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.max_per_code_given = True


# The options several commands take, each defined once: the same spelling, values, default and meaning everywhere.
def add_format(parser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def add_max_per_code(parser, where: str = "") -> None:
    """--max-per-code N (0: only the counts); args.max_per_code_given says whether it was given (see warning_examples)."""
    text = "" if where else f", and the text of score and candidates shows {WARNING_EXAMPLES} of each warning or note"
    parser.add_argument("--max-per-code", type=example_count, default=20, metavar="N", action=_Given,
                        help=f"keep the first N problems of each code{where} (all are counted; 0: only the counts; default: 20{text})")
    parser.set_defaults(max_per_code_given=False)


def warning_examples(args) -> int | None:
    """How many examples of each warning or note code a text report prints: a few, unless --max-per-code was given."""
    return None if getattr(args, "max_per_code_given", True) else WARNING_EXAMPLES


def add_threads(parser, default: int = 2, what: str = "parsing threads") -> None:
    parser.add_argument("--threads", type=whole_number(1, MAX_THREADS, "a number of threads"), default=default, metavar="N",
                        help=f"{what} (default: {default})")


def add_progress(parser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal anyway)")


def add_untrusted(parser) -> None:
    parser.add_argument("--untrusted", action="store_true", help="read the submission as a grader reads an upload: "
                        "a symbolic link or a file of several hard links is refused (for a grader's own script)")


seed_value = whole_number(0, 2**63 - 1, "a seed")


def add_seed(parser, default: int = DEFAULT_SEED, what: str = "seed of --split public=F", own: str = "") -> None:
    """--seed; own: the command whose default is its own (prepare's 42), said in --help."""
    note = f", {own}'s own: the other commands default to {DEFAULT_SEED}" if own else ""
    parser.add_argument("--seed", type=seed_value, default=default, metavar="SEED", help=f"{what} (default {default}{note})")


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """The options of the commands that score or check a file with the engine: score, validate and compare."""
    add_format(parser)
    add_max_per_code(parser)
    add_threads(parser)
    add_progress(parser)
    add_untrusted(parser)


def add_side_inputs(parser) -> None:
    """--seeds and --artists: the table reader's side inputs of a list row (scorer.truth.sides)."""
    parser.add_argument("--seeds", metavar="FILE", help="the items each row was given, which it may not list (the config's "
                        "[seeds]: spotify-mpd's challenge_set.json); validate without --truth also checks the rows it names")
    parser.add_argument("--artists", metavar="FILE", nargs="+", help="files or folders of each item's artist (the config's "
                        "[artists]: the MPD's slices, with the truth's file), for the metric r_precision(credit=artist)")


def side_inputs(args) -> dict:
    return {"seeds": getattr(args, "seeds", None), "artists": getattr(args, "artists", None)}


def engine_options(args) -> dict:
    return {"config": args.config, "max_per_code": args.max_per_code, "threads": args.threads,
            "progress": False if args.no_progress else None, "untrusted": args.untrusted}


def print_board(args, board, write_report=None) -> None:
    """--report FILE written by write_report(path, board.to_dict()) when given, then the job's object (scorer.jobs) as
    JSON (--format json) or as its text, and where the report went."""
    if args.report and write_report is not None:
        write_report(args.report, board.to_dict())
    if args.format == "json":
        print(board.to_json())
    else:
        print(board.to_text())
        if args.report:
            print(f"\nreport written to {args.report}")
