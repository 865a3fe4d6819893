"""scorer verify RECEIPT SUBMISSION --truth TRUTH: score again and say whether the receipt's score is proven."""

from __future__ import annotations

from scorer.cli.common import add_format, add_threads

USAGE = "scorer verify RECEIPT SUBMISSION --truth TRUTH [--config PATH] [--format text|json]"
EXAMPLES = ("scorer verify output/receipt.json submission.csv --truth test.truth.npz",
            "scorer verify result.json submission.csv --truth test_labels.jsonl --format json",
            "scorer verify results.jsonl uploads/team42.csv --truth test.truth.npz")
HELP = "score a submission again and check its score receipt: version, config, truth, submission and figures"


def add_arguments(parser) -> None:
    parser.add_argument("receipt", metavar="RECEIPT", help="receipt.json, a `scorer score --format json` output, or the JSON "
                        "lines of `scorer grade -o` (the newest record of SUBMISSION's path, else of its file name, and of its bytes)")
    parser.add_argument("submission", metavar="SUBMISSION", help="the submission file that was scored")
    parser.add_argument("--truth", required=True, help="the ground truth it was scored against (any form: its content is compared)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--competition", metavar="NAME", help="a bundled competition config (default: the receipt's competition)")
    group.add_argument("--config", metavar="PATH", help="a competition config TOML file")
    add_format(parser)
    add_threads(parser)


def run(args) -> int:
    from scorer.analytics.verify import read_receipt, verify
    from scorer.api import resolve_competition
    from scorer.engine.checklist import render

    recorded = read_receipt(args.receipt, args.submission)
    competition = resolve_competition(args.competition or recorded.get("competition", {}).get("name"), args.config)
    checks = verify(recorded, args.submission, args.truth, competition, threads=args.threads)
    print(render(checks, f"verify {args.receipt} against {args.submission}", args.format))
    return 0 if all(check.ok for check in checks) else 1
