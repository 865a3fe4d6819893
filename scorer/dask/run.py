"""`scorer score DIRECTORY [--engine dask]`: the command-line side of partitioned scoring."""

from __future__ import annotations

import sys


def score_directory(args):
    """Score the part files of args.submission, on a Dask cluster with --engine dask, else here."""
    from scorer.api import resolve_competition, resolve_truth
    from scorer.dask.dataset import check_shape, score_dataset
    from scorer.dask.parts import list_parts

    options = {"strict": args.strict, "max_per_code": args.max_per_code, "untrusted": args.untrusted}
    if args.engine != "dask":
        return score_dataset(args.submission, args.truth, args.competition, config=args.config, threads=args.threads, **options)
    from scorer.dask import require
    from scorer.dask.cluster import client_for

    require()
    competition = resolve_competition(args.competition, args.config)
    check_shape(competition)
    resolve_truth(args.truth, competition)  # bad truth or an empty directory: said before a cluster starts
    list_parts(args.submission)
    reruns: list = []
    with client_for(args.scheduler, args.workers) as client:
        result = score_dataset(args.submission, args.truth, competition, client=client, threads=1, reruns=reruns,
                               progress=not args.no_progress and sys.stderr.isatty(), **options)
    for part, workers in reruns:
        print(f"scorer: part {part} ran {len(workers)} times (on {' then '.join(workers)}): a worker was lost or the task failed",
              file=sys.stderr)
    return result
