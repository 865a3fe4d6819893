"""`scorer prepare EVENTS -o DIR`: a validation split with labels, made the way the competition made its own."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from scorer.cli.common import PREPARE_SEED, add_aliased, add_output, add_progress, add_seed, number, output_path, whole_number
from scorer.prepare import MAX_DAYS

USAGE = "scorer prepare EVENTS -o DIR [options]"
EXAMPLES = ("scorer prepare train.jsonl -o prepared/", "scorer prepare events.parquet -o prepared/ --days 7 --seed 42 --output-format parquet")
HELP = (
    "split an OTTO session log (JSONL or Parquet) by time like the competition did: train sessions, cut test "
    "sessions and their labels (which `scorer score` reads as truth), plus summary.json."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("events", metavar="EVENTS",
                        help="session log: OTTO JSONL (one session a line, may be .gz) or Parquet with one event "
                             "per row (session, aid, ts, type)")
    add_output(parser, "DIR", "output directory (created if missing)", old_names=("--out",))
    parser.add_argument("--days", type=number(0, MAX_DAYS, what="a number of days", above=True), default=7.0,
                        help="test period: sessions starting in the last DAYS days form the test set (default 7)")
    add_seed(parser, PREPARE_SEED, "seed of the per-session random cut; same input and seed, same bytes", own="prepare")
    add_aliased(parser, ("--output-format",), ("--format",), choices=("jsonl", "parquet"), default=None,
                help="format of the files written (default: the input's)")
    parser.add_argument("--input-format", choices=("jsonl", "parquet"), default=None,
                        help="input format (default: from the file name)")
    parser.add_argument("--ts-unit", choices=("auto", "s", "ms"), default="auto",
                        help="unit of the timestamps (default auto: milliseconds if the largest is >= 1e11)")
    parser.add_argument("--chunk-mb", type=whole_number(1, 1024, "a number of MiB"), default=64, help="JSONL read chunk in MiB (default 64)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_progress(parser)


def next_command(folder: str, labels: str) -> str:
    """The command that scores a submission against the labels just written (their real name: .jsonl or .parquet)."""
    import shlex

    return f"scorer score SUBMISSION.csv --truth {shlex.quote(os.path.join(folder, labels))}"


def run(args: argparse.Namespace) -> int:
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError
    from scorer.file_formats import unreadable
    from scorer.prepare.pipeline import format_summary, prepare
    from scorer.prepare.readers import detect_format
    from scorer.prepare.writers import output_files

    output_path(args.output, "-o", folder=True, make=False)  # prepare makes it, and removes it again if it fails
    why = unreadable(args.events, "session log")  # said before its format is guessed from its name
    if why:
        raise UsageError(why)
    written = output_files(args.output, args.output_format or args.input_format or detect_format(Path(args.events)))
    refuse_overwriting(args, [("-o", path) for path in written.values()])
    summary = prepare(
        args.events,
        args.output,
        days=args.days,
        seed=args.seed,
        fmt=args.output_format,
        input_format=args.input_format,
        ts_unit=args.ts_unit,
        chunk_bytes=args.chunk_mb << 20,
        progress=sys.stderr.isatty() and not (args.quiet or args.no_progress),
    )
    if not args.quiet:
        for note in summary["notes"]:
            print(f"scorer prepare: {note}", file=sys.stderr)
        print(format_summary(summary))
        print(f"wrote {', '.join(summary['outputs'].values())} to {args.output}")
        print(f"next: {next_command(args.output, summary['outputs']['test_labels'])}")
    return 0
