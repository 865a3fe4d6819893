"""scorer compile-truth TRUTH -o FILE: the truth in the compiled form graders load in milliseconds.

FILE ends in .truth.npz for the id_type shape (OTTO), in .strings.npz for the string shapes and in .impressions.npz for
the impression shape (MIND's truth.txt, EB-NeRD's behaviors.parquet).
"""

from __future__ import annotations

from scorer.cli.common import add_competition, add_output, output_path
from scorer.wording import counted

USAGE = "scorer compile-truth TRUTH -o FILE [--competition NAME | --config PATH]"
EXAMPLES = ("scorer compile-truth test_labels.jsonl -o test_labels.truth.npz",
            "scorer compile-truth truth.csv -o truth.strings.npz --competition airbnb",
            "scorer compile-truth ebnerd_testset/test/behaviors.parquet -o ebnerd.impressions.npz --competition ebnerd")
HELP = ("compile ground truth (JSONL, Parquet, CSV, MIND's truth.txt, EB-NeRD's behaviors.parquet) into a .truth.npz / "
        ".strings.npz / .impressions.npz that loads in milliseconds")


def add_arguments(parser) -> None:
    parser.add_argument("truth", metavar="TRUTH", help="ground truth: OTTO labels .jsonl, a session,type,aid .parquet/.csv, "
                        "MIND's truth.txt or EB-NeRD's behaviors.parquet")
    add_output(parser, "FILE", "output file; its name ends in .truth.npz (shape id_type), .strings.npz (string shapes) or "
               ".impressions.npz (shape impression)")
    add_competition(parser)


def run(args) -> int:
    from scorer.api import resolve_competition
    from scorer.cli.outputs import refuse_overwriting
    from scorer.errors import UsageError
    from scorer.truth.impressions import IMPRESSIONS_SUFFIX, read_impression_truth
    from scorer.truth.load import load_truth
    from scorer.truth.npz import COMPILED_SUFFIX
    from scorer.truth.strings import STRINGS_SUFFIX, read_string_truth

    competition = resolve_competition(args.competition, args.config)
    suffix = {"id_type": COMPILED_SUFFIX, "impression": IMPRESSIONS_SUFFIX}.get(competition.shape, STRINGS_SUFFIX)
    if not args.output.endswith(suffix):
        raise UsageError(f"for shape {competition.shape!r} the output name must end in {suffix} (that is how readers "
                         f"recognise it), got {args.output!r}")
    output_path(args.output, "-o")
    refuse_overwriting(args, [("-o", args.output)])
    if competition.shape == "id_type":
        truth = load_truth(args.truth, competition.types, use_cache=False)
    elif competition.shape == "impression":
        truth = read_impression_truth(args.truth, use_cache=False)
    else:
        truth = read_string_truth(args.truth, competition.shape, competition.types[0], use_cache=False, competition=competition)
    try:
        truth.save(args.output)
    except OSError as error:
        raise UsageError(f"cannot write {args.output}: {error.strerror or error}") from None
    labelled = int((truth.sizes.sum(axis=1) > 0).sum())
    rows = "impression" if competition.shape == "impression" else "session"
    print(f"wrote {args.output}: {counted(truth.n_sessions, rows)} ({labelled:,} with labels), {counted(int(truth.indptr[-1]), 'label')}")
    return 0
