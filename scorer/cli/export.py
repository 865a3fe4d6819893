"""scorer export kaggle-solution|hf-solution TRUTH -o solution.csv: a platform's solution file (with its split column)
and its sample submission."""

from __future__ import annotations

from pathlib import Path

from scorer.cli.common import add_competition, add_output, add_seed, number, output_path
from scorer.wording import counted

USAGE = "scorer export (kaggle-solution | hf-solution) TRUTH -o FILE [options]"
EXAMPLES = ("scorer export kaggle-solution test_labels.jsonl -o solution.csv",
            "scorer export kaggle-solution test_labels.jsonl -o solution.csv --sample sample.csv --public 0.3 --seed 0",
            "scorer export hf-solution test_labels.jsonl -o solution.csv")
HELP = ("export ground truth for a platform: kaggle-solution writes solution.csv (with Usage: Public, Private), hf-solution "
        "Hugging Face Competitions' (with split: public, private); both with sample_submission.csv")


def add_arguments(parser) -> None:
    parser.add_argument("target", choices=("kaggle-solution", "hf-solution"), help="what to export")
    parser.add_argument("truth", metavar="TRUTH", help="ground truth (.jsonl, .parquet, .csv or .truth.npz)")
    add_output(parser, "FILE", "the solution CSV to write")
    parser.add_argument("--sample", metavar="FILE", help="the sample submission to write (default: sample_submission.csv beside the solution)")
    parser.add_argument("--public", type=number(0, 1, "a fraction"), default=0.3, metavar="FRACTION",
                        help="share of sessions in the Public split, the rest Private (default 0.3)")
    add_seed(parser, what="seed of the Public/Private draw: the same draw as `scorer score --split public=F --seed SEED`")
    parser.add_argument("--sample-labels", choices=("empty", "popular"), default="empty",
                        help="sample submission labels: empty, or each type's most frequent truth items (this reveals them; default empty)")
    add_competition(parser)


def run(args) -> int:
    from scorer.adapters.kaggle_export import id_type_only, write_solution
    from scorer.api import resolve_competition
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError
    from scorer.truth.load import load_truth

    sample = Path(args.sample) if args.sample else Path(args.output).with_name("sample_submission.csv")
    output_path(args.output, "-o")
    output_path(str(sample), "--sample")
    refuse_overwriting(args, [("-o", args.output), ("--sample" if args.sample else "the sample submission", str(sample))])
    competition = resolve_competition(args.competition, args.config)
    id_type_only(competition, args.target)  # before the truth is read as another shape's
    truth = load_truth(args.truth, competition.types)
    try:
        summary = write_solution(truth, competition, args.output, sample, args.public, args.seed, args.sample_labels, args.target,
                                 replace_sample=bool(args.sample))
    except OSError as error:
        raise UsageError(f"cannot write {error.filename or args.output}: {error.strerror or error}") from None
    kept = " (already there with the same bytes: kept)" if summary["sample"] == "kept" else ""
    print(f"wrote {args.output} ({counted(summary['rows'], 'row')}; {counted(summary['public_sessions'], 'session')} Public, "
          f"{summary['private_sessions']:,} Private) and {sample}{kept}")
    return 0
