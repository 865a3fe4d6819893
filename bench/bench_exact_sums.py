"""Benchmark the exact sums of the totals (scorer/kernels/exact_sum.py) against the compensated sums they replaced.

    python bench/bench_exact_sums.py [--data bench/data] [--runs 5]

At OTTO size (bench/make_otto.py's data, made if missing), in one process: the submission is scored once, then
each type's figure sums are taken from its hit masks (recall hits, AP, NDCG of the OTTO config) by
- exact: the kernel the scorer runs (figure_sums, a superaccumulator of integer buckets, rounded once), and
- compensated: the kernel it replaced (Neumaier's compensated sum of the same figures, written out below),
best of --runs each; then a whole `scorer.score` for scale. Both sums are compared with math.fsum of the
figures: the exact one must equal it to the last bit.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from scorer.kernels.rank import _mask_figure

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@njit(cache=True, nogil=True)
def compensated_sums(hits, starts, ends, kinds, ks, discount, ideal, out):
    """The sums as the scorer took them before: each row's figure added with Neumaier's compensation."""
    compensation = np.zeros(kinds.shape[0])
    for j in range(kinds.shape[0]):
        out[j] = 0.0
    for i in range(hits.shape[0]):
        mask = np.uint64(hits[i])
        if mask == 0:
            continue
        n_truth = ends[i] - starts[i]
        for j in range(kinds.shape[0]):
            value = _mask_figure(mask, n_truth, kinds[j], ks[j], discount, ideal)
            total = out[j] + value
            if abs(out[j]) >= abs(value):
                compensation[j] += (out[j] - total) + value
            else:
                compensation[j] += (value - total) + out[j]
            out[j] = total
    for j in range(kinds.shape[0]):
        out[j] += compensation[j]
    return out


def best(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    truth_path, submission = args.data / "test_labels.jsonl", args.data / "submission.csv"
    if not submission.exists():
        import make_otto

        make_otto.main(["--out", str(args.data)])
    import scorer
    from scorer.kernels.rank import figure_sums, figures_from_hits
    from scorer.spec.exact_sums import ExactSum, new_accumulators

    scorer.score(submission, truth_path)  # compiles and caches
    whole = best(lambda: scorer.score(submission, truth_path), args.runs)
    result = scorer.score(submission, truth_path)
    figures, n_types = result.outcome.figures, len(result.weights)
    kinds, ks, indptr, hits = figures.kinds, figures.ks, figures.indptr, figures.hits
    columns = [(np.ascontiguousarray(hits[t::n_types]), indptr[t:-1:n_types], indptr[t + 1 :: n_types]) for t in range(n_types)]

    def exact():
        return [[float(ExactSum.of_buckets(b)) for b in figure_sums(h, s, e, kinds, ks, figures.discount, figures.ideal,
                                                                     new_accumulators(len(kinds)))] for h, s, e in columns]

    def compensated():
        return [compensated_sums(h, s, e, kinds, ks, figures.discount, figures.ideal, np.empty(len(kinds))).tolist()
                for h, s, e in columns]

    exact(), compensated()  # compile
    exact_seconds, compensated_seconds = best(exact, args.runs), best(compensated, args.runs)
    truth_figures = [[math.fsum(figures_from_hits(h, s, e, kinds[j : j + 1], ks[j : j + 1], figures.discount, figures.ideal,
                                                  np.empty((len(h), 1)))[:, 0]) for j in range(len(kinds))] for h, s, e in columns]
    print(f"OTTO size: {len(hits):,} slots, {len(kinds)} metrics; best of {args.runs}")
    print(f"  scorer.score, whole:              {whole:8.3f} s")
    print(f"  figure sums, exact (now):         {exact_seconds * 1e3:8.1f} ms")
    print(f"  figure sums, compensated (before): {compensated_seconds * 1e3:7.1f} ms")
    print(f"exact / compensated: {exact_seconds / compensated_seconds:.2f}x; the difference is "
          f"{(exact_seconds - compensated_seconds) / whole:.1%} of a score")
    print(f"exact == fsum to the last bit: {exact() == truth_figures}; compensated == fsum: {compensated() == truth_figures}")


if __name__ == "__main__":
    main()
