"""`scorer score DIRECTORY [--engine dask]`: the command-line side of partitioned scoring."""

from __future__ import annotations

import os
import sys


def score_directory(args):
    """Score the part files of args.submission, on a Dask cluster with --engine dask, else here."""
    from scorer.api import resolve_competition
    from scorer.dask.dataset import score_dataset
    from scorer.dask.parts import list_parts
    from scorer.dask.shuffled import check_metrics
    from scorer.errors import TruthError

    options = {"strict": args.strict, "max_per_code": args.max_per_code, "untrusted": args.untrusted}
    if args.engine != "dask":
        return score_dataset(args.submission, args.truth, args.competition, config=args.config, threads=args.threads, **options)
    from scorer.dask import require
    from scorer.dask.cluster import client_for

    require()
    competition = resolve_competition(args.competition, args.config)
    check_metrics(competition)  # before a cluster starts
    if not os.path.isfile(args.truth):  # the truth itself is read by one task on the cluster, never here
        raise TruthError(f"cannot read the truth {args.truth}: not a file")
    list_parts(args.submission)  # an empty directory: said before a cluster starts
    with client_for(args.scheduler, args.workers) as client:
        return score_dataset(args.submission, args.truth, competition, client=client, partitions=args.partitions,
                             truth_parts=args.truth_parts, progress=not args.no_progress and sys.stderr.isatty(), **options)
