"""`scorer prepare EVENTS --out DIR`: a validation split with labels, made the way the competition made its own."""

from __future__ import annotations

import argparse
import sys

HELP = (
    "Split an OTTO session log (JSONL or Parquet) by time like the competition did: train sessions, cut test "
    "sessions and their labels (which `scorer score` reads as truth), plus summary.json."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("events", metavar="EVENTS",
                        help="session log: OTTO JSONL (one session a line, may be .gz) or Parquet with one event "
                             "per row (session, aid, ts, type)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    parser.add_argument("--days", type=float, default=7.0,
                        help="test period: sessions starting in the last DAYS days form the test set (default 7)")
    parser.add_argument("--seed", type=int, default=42,
                        help="seed of the per-session random cut (default 42); same input and seed, same bytes")
    parser.add_argument("--format", choices=("jsonl", "parquet"), default=None,
                        help="output format (default: the input's)")
    parser.add_argument("--input-format", choices=("jsonl", "parquet"), default=None,
                        help="input format (default: from the file name)")
    parser.add_argument("--ts-unit", choices=("auto", "s", "ms"), default="auto",
                        help="unit of the timestamps (default auto: milliseconds if the largest is >= 1e11)")
    parser.add_argument("--chunk-mb", type=int, default=64, help="JSONL read chunk in MiB (default 64)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def run(args: argparse.Namespace) -> int:
    from scorer.errors import UsageError
    from scorer.prepare.pipeline import format_summary, prepare

    if args.chunk_mb <= 0:
        raise UsageError(f"--chunk-mb must be positive, got {args.chunk_mb}")
    summary = prepare(
        args.events,
        args.out,
        days=args.days,
        seed=args.seed,
        fmt=args.format,
        input_format=args.input_format,
        ts_unit=args.ts_unit,
        chunk_bytes=args.chunk_mb << 20,
        progress=sys.stderr.isatty() and not args.quiet,
    )
    if not args.quiet:
        for note in summary["notes"]:
            print(f"scorer prepare: {note}", file=sys.stderr)
        print(format_summary(summary))
        print(f"wrote {', '.join(summary['outputs'].values())} to {args.out}")
    return 0
