"""scorer audit --truth TRUTH [--sample S] [--solution S] [--bundle ZIP]: a competition's checklist before launch."""

from __future__ import annotations

import tempfile
from pathlib import Path

from scorer.cli.common import add_competition, add_format, add_seed, add_threads, seconds

USAGE = "scorer audit --truth TRUTH [--competition NAME | --config PATH] [--sample FILE] [--solution FILE] [--bundle ZIP] [options]"
EXAMPLES = ("scorer audit --truth test_labels.jsonl --sample sample_submission.csv",
            "scorer audit --truth test.truth.npz --solution solution.csv --sample sample_submission.csv --format json",
            "scorer audit --truth test.truth.npz --bundle otto_codabench.zip --sample sample_submission.csv")
HELP = "check a competition before launch: truth, sample, perfect/empty/random submissions, split, repeatability, time, bundle"


def add_arguments(parser) -> None:
    parser.add_argument("--truth", required=True, help="the ground truth the competition is scored against")
    add_competition(parser)
    parser.add_argument("--sample", metavar="FILE", help="the sample submission participants get")
    parser.add_argument("--solution", metavar="FILE", help="the Kaggle solution file (id, labels, Usage): its labels and its split")
    parser.add_argument("--bundle", metavar="ZIP", help="a Codabench or CodaLab bundle zip: its files, truth and scoring program")
    parser.add_argument("--split", metavar="public=F|usage", help="the split to check without a solution: a hashed public "
                        "share (seeded by --seed), or the truth's Usage column (the default when it has one)")
    add_seed(parser)
    parser.add_argument("--time-limit", type=seconds, metavar="SECONDS", help="the platform's execution limit (default: the "
                        "bundle's execution_time_limit, else Codabench's default of 600 s)")
    add_threads(parser)
    add_format(parser)


def run(args) -> int:
    from scorer.analytics import audit
    from scorer.api import resolve_competition, resolve_truth
    from scorer.engine.checklist import Check, render

    competition = resolve_competition(args.competition, args.config)
    truth = resolve_truth(args.truth, competition)
    bundle = None
    if args.bundle:
        from scorer.adapters.audit_files import read_bundle

        bundle = read_bundle(args.bundle)
    limit = args.time_limit or (bundle.limit if bundle is not None and bundle.limit else audit.CODABENCH_LIMIT)
    checks = audit.check_truth(truth, competition)
    if args.sample:
        checks.append(audit.check_sample(args.sample, truth, competition, args.threads))
    checks += split_checks(args, truth, competition)
    with tempfile.TemporaryDirectory(prefix="scorer-audit-") as scratch:
        folder = Path(scratch)
        perfect = None
        if competition.shape == "id_type":
            for name, mode in audit.modes().items():
                path = folder / f"{name}.csv"
                audit.write_submission(path, truth, competition, mode)
                checks.append(audit.check_made(name, path, truth, competition, args.threads))
                if name == "random":
                    checks.append(audit.check_repeatable(path, truth, competition))
                    path.unlink()
                elif name == "perfect":
                    perfect = path
            checks.append(audit.check_time(perfect, args.truth, truth, competition, limit, args.threads))
        else:
            checks.append(Check("made submissions", True, f"not checked: perfect, empty and random submissions are made for "
                                                          f"shape id_type only, not {competition.shape!r}"))
        if bundle is not None:
            from scorer.adapters.audit_files import file_checks, program_check, reference_check

            checks += [file_checks(bundle), reference_check(bundle, truth, competition, folder)]
            run_on = Path(args.sample) if args.sample else perfect
            if run_on is not None:
                checks.append(program_check(bundle, run_on, folder, limit))
    print(render(checks, f"audit of {competition.name} (truth {args.truth})", args.format))
    return 0 if all(check.ok for check in checks) else 1


def split_checks(args, truth, competition) -> list:
    """The solution's checks (its labels and Usage split), else the split of --split or of the truth's Usage."""
    from scorer.analytics.audit import check_split
    from scorer.analytics.split import parse_split, resolve_split
    from scorer.engine.checklist import Check
    from scorer.errors import UsageError

    if args.solution:
        from scorer.adapters.audit_files import solution_checks

        return solution_checks(args.solution, truth, competition)
    if args.split == "usage" and getattr(truth, "usage", None) is None:
        raise UsageError(f"--split usage: the truth {args.truth} has no Usage column; use --split public=F")
    fraction = parse_split(args.split) if args.split not in (None, "usage") else None
    split = resolve_split(truth, fraction, args.seed)
    if split is None:
        return [Check("split", True, "not checked: no --solution, no --split and no Usage column in the truth")]
    return [check_split(split)]
