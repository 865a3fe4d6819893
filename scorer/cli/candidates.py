"""scorer candidates CANDIDATES --truth TRUTH: the candidate stage's recall at each K and the ceiling of a perfect reranker."""

from __future__ import annotations

import json

from scorer.cli.common import add_competition, add_format, add_max_per_code, add_threads, output_path, warning_examples

USAGE = "scorer candidates CANDIDATES --truth TRUTH [--k 20,50,100,200] [--plot FILE.png] [options]"
EXAMPLES = ("scorer candidates candidates.parquet --truth test_labels.jsonl",
            "scorer candidates candidates.parquet --truth test_labels.jsonl --k 20,50,100,200 --plot curves.png --format json")
HELP = "judge candidate lists before reranking: recall at each K, hit rate, list lengths and the best score a reranker could reach"


def add_arguments(parser) -> None:
    parser.add_argument("candidates", metavar="CANDIDATES", help="a long table (Parquet or CSV): session, aid, and optionally type and score")
    parser.add_argument("--truth", required=True, help="ground truth (as for score)")
    add_competition(parser)
    parser.add_argument("--k", default="20,50,100,200", metavar="K,K,...", help="the cut-offs to judge the lists at (default: 20,50,100,200)")
    parser.add_argument("--plot", metavar="FILE.png", help="draw recall and the ceiling over K into this PNG (needs matplotlib)")
    add_format(parser)
    add_max_per_code(parser)
    add_threads(parser, what="threads of the pass over the table")


def run(args) -> int:
    from scorer.api import candidates
    from scorer.cli.outputs import refuse_overwriting

    if args.plot:
        from scorer.analytics.plots import _pyplot

        output_path(args.plot, "--plot", (".png",))
        refuse_overwriting(args, [("--plot", args.plot)])
        _pyplot()  # matplotlib missing: said before the work, not after
    result = candidates(args.candidates, args.truth, args.competition, config=args.config, k=args.k,
                        max_per_code=args.max_per_code, threads=args.threads)
    if args.plot:
        from scorer.analytics.candidate_plot import write_curves

        write_curves(result, args.plot)
    print(json.dumps(result.to_dict(), indent=2) if args.format == "json" else result.text(warning_examples(args)))
    return 0
