"""scorer compile-truth TRUTH -o FILE: the truth in the compiled form graders load in milliseconds.

FILE ends in .truth.npz for the id_type shape (OTTO) and in .strings.npz for the string shapes.
"""

from __future__ import annotations

from scorer.cli.common import add_competition, add_output, output_path
from scorer.wording import counted

USAGE = "scorer compile-truth TRUTH -o FILE [--competition NAME | --config PATH]"
EXAMPLES = ("scorer compile-truth test_labels.jsonl -o test_labels.truth.npz",
            "scorer compile-truth truth.csv -o truth.strings.npz --competition airbnb")
HELP = "compile ground truth (JSONL, Parquet, CSV) into a .truth.npz / .strings.npz that loads in milliseconds"


def add_arguments(parser) -> None:
    parser.add_argument("truth", metavar="TRUTH", help="ground truth: OTTO labels .jsonl, or a session,type,aid .parquet/.csv")
    add_output(parser, "FILE", "output file; its name ends in .truth.npz (shape id_type) or .strings.npz (string shapes)")
    add_competition(parser)


def run(args) -> int:
    from scorer.api import resolve_competition
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError
    from scorer.truth.load import load_truth
    from scorer.truth.npz import COMPILED_SUFFIX
    from scorer.truth.strings import STRINGS_SUFFIX, read_string_truth

    competition = resolve_competition(args.competition, args.config)
    suffix = COMPILED_SUFFIX if competition.shape == "id_type" else STRINGS_SUFFIX
    if not args.output.endswith(suffix):
        raise UsageError(f"for shape {competition.shape!r} the output name must end in {suffix} (that is how readers "
                         f"recognise it), got {args.output!r}")
    output_path(args.output, "-o")
    refuse_overwriting(args, [("-o", args.output)])
    if competition.shape == "id_type":
        truth = load_truth(args.truth, competition.types, use_cache=False)
    else:
        truth = read_string_truth(args.truth, competition.shape, competition.types[0], use_cache=False)
    try:
        truth.save(args.output)
    except OSError as error:
        raise UsageError(f"cannot write {args.output}: {error.strerror or error}") from None
    labelled = int((truth.sizes.sum(axis=1) > 0).sum())
    print(f"wrote {args.output}: {counted(truth.n_sessions, 'session')} ({labelled:,} with labels), {counted(len(truth.items), 'label')}")
    return 0
