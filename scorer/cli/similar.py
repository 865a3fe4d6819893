"""scorer similar SUB...: pairwise similarity of submissions from one-pass sketches; pairs of different teams that sit
far above the distribution of all pairs are flagged, with the sessions that make them alike."""

from __future__ import annotations

from scorer.cli.common import add_competition, add_format, add_threads, output_path, print_board, whole_number

USAGE = ("scorer similar SUBMISSION SUBMISSION... [--competition NAME | --config PATH] [--teams FILE] [--k K] "
         "[--format text|json] [--report PAGE.html]")
EXAMPLES = ("scorer similar final/*.csv --teams teams.csv",
            "scorer similar final/*.csv --teams teams.csv --report similar.html --format json",
            "scorer similar hm_final/*.csv.gz --competition hm")
HELP = "pairwise similarity of submissions (identical lists, Jaccard, rank agreement) to find solutions shared between teams"


def add_arguments(parser) -> None:
    from scorer.analytics.similar.defaults import DEFAULT_SAMPLE, DEFAULT_Z

    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="submission files of the competition (OTTO's "
                        "session_type,labels, H&M's customer_id,prediction, Airbnb's id,country ... CSV: plain, .gz or .zip), at least two")
    add_competition(parser)
    parser.add_argument("--teams", metavar="FILE", help="the teams file (as `scorer ladder` reads it; times optional): CSV with "
                        "the columns file,team (others ignored) or JSON: pairs of one team are never flagged (default: every "
                        "file is its own team)")
    parser.add_argument("--k", type=whole_number(1, 1000, "K"), default=None, help="compare the first K items of each "
                        "row (default: the competition's K, the list it scores: OTTO's 20, H&M's 12)")
    parser.add_argument("--sample", type=whole_number(16, 1 << 20, "a number of sessions"), default=DEFAULT_SAMPLE, metavar="S",
                        help=f"sessions sampled per file, the same in every file (default {DEFAULT_SAMPLE})")
    parser.add_argument("--z", type=float, default=DEFAULT_Z, help=f"flag a pair this many spreads above the median of all "
                        f"pairs (default {DEFAULT_Z:g})")
    parser.add_argument("--top", type=whole_number(0, 10**6, "a number of pairs"), default=20, metavar="N", help="list this many "
                        "of the most similar pairs not flagged, with examples (default 20; the text shows them when no pair is flagged)")
    parser.add_argument("--report", metavar="FILE", help="write a page: FILE.html, a heatmap of the pairs' Jaccard and the "
                        "report (default: none)")
    add_format(parser)
    add_threads(parser, what="files sketched at once, and threads of the pairs' comparison")


def run(args) -> int:
    from scorer.cli.outputs import refuse_overwriting
    from scorer.jobs.similar import similar

    if args.report:
        output_path(args.report, "--report", (".html", ".htm"))
        refuse_overwriting(args, [("--report", args.report)])
    found = similar(args.submissions, competition=args.competition, config=args.config, teams=args.teams, k=args.k,
                    sample=args.sample, z=args.z, top=args.top, threads=args.threads)
    if args.report:
        from scorer.analytics.similar.page import write_page

        write_page(args.report, {**found.to_dict(), "matrix": found.matrix})
    print_board(args, found)
    return 0
