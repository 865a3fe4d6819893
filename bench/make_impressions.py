"""Write a truth and a prediction file of the impression shape at a chosen size, with the length distribution of a
news dataset's published statistics.

    python bench/make_impressions.py OUT_DIR --dataset mind|ebnerd [--impressions N] [--seed 0]

MIND (large test set, 2,370,727 impressions): candidates per impression drawn from a log-normal with the mean of
MIND's published counts (MIND-small: 5,843,444 candidate rows in 156,965 training impressions, 2,740,998 in 73,152
validation ones: 37.3 per impression; median about 24), cut to 2..299; clicks per impression with the mean of MIND's
24,155,470 clicks in 15,777,377 impressions (1.53), at least one and at least one candidate left unclicked.
EB-NeRD (test set, 13,536,710 impressions, arXiv 2410.03432): 200,000 beyond-accuracy rows of 250 candidates with
impression id 0 and no click (masked in the truth), the others a log-normal of mean 10.4 (the inview lengths of the
dataset's demo behaviors), cut to 2..100, with one click and sometimes two.

The prediction ranks each impression's candidates in a random order (a permutation of 1..n), ids in the truth's order:
`ImpId [r1,...]` lines as the evaluators read them. Files are written a piece of impressions at a time.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SIZES = {"mind": 2_370_727, "ebnerd": 13_536_710}
BEYOND_ACCURACY = 200_000  # EB-NeRD's test rows with impression id 0, 250 candidates each
PIECE = 250_000  # impressions written at a time


def lengths(rng, dataset: str, n: int) -> np.ndarray:
    if dataset == "mind":
        return np.clip(np.round(rng.lognormal(np.log(24.0), 0.93, n)), 2, 299).astype(np.int64)
    return np.clip(np.round(rng.lognormal(np.log(8.5), 0.62, n)), 2, 100).astype(np.int64)


def clicks(rng, dataset: str, sizes: np.ndarray) -> np.ndarray:
    extra = rng.poisson(0.53, len(sizes)) if dataset == "mind" else (rng.random(len(sizes)) < 0.08).astype(np.int64)
    return np.minimum(1 + extra, sizes - 1)


def lists_text(ids: np.ndarray, sizes: np.ndarray, values: np.ndarray) -> bytes:
    """`id [v1,v2,...]` lines of the given flat values, cut by sizes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    text = pc.cast(pa.array(values), pa.string())
    joined = pc.binary_join(pa.LargeListArray.from_arrays(pa.array(offsets), text), ",")
    lines = pc.binary_join_element_wise(pc.cast(pa.array(ids), pa.string()), pc.binary_join_element_wise("[", joined, "]", ""), " ")
    return ("\n".join(lines.to_pylist()) + "\n").encode() if len(lines) else b""


def write(folder: Path, dataset: str, n: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    truth_path, prediction_path = folder / "truth.txt", folder / ("prediction.txt" if dataset == "mind" else "predictions.txt")
    beyond_at = n // 2 if dataset == "ebnerd" else n  # EB-NeRD's beyond-accuracy rows sit together, in one region of the file
    beyond = min(BEYOND_ACCURACY * n // SIZES["ebnerd"], n) if dataset == "ebnerd" else 0
    with open(truth_path, "wb") as truth, open(prediction_path, "wb") as prediction:
        for start in range(0, n, PIECE):
            count = min(PIECE, n - start)
            index = np.arange(start, start + count)
            is_beyond = (index >= beyond_at) & (index < beyond_at + beyond)
            ids = np.where(is_beyond, 0, index + 1)
            sizes = np.where(is_beyond, 250, lengths(rng, dataset, count))
            clicked = np.where(is_beyond, 0, clicks(rng, dataset, sizes))
            offsets = np.zeros(count + 1, np.int64)
            np.cumsum(sizes, out=offsets[1:])
            row = np.repeat(np.arange(count), sizes)
            position = np.arange(offsets[-1]) - offsets[row]
            keys = rng.random(offsets[-1])
            order = np.lexsort((keys, row))  # a random order within each impression
            labels = np.empty(offsets[-1], np.int64)
            labels[order] = (position < clicked[row]).astype(np.int64)  # the first `clicked` of a random order
            ranks = np.empty(offsets[-1], np.int64)
            ranks[np.lexsort((rng.random(offsets[-1]), row))] = position + 1  # a random permutation of 1..n per impression
            truth_sizes = np.where(is_beyond, 0, sizes)
            keep = np.repeat(~is_beyond, sizes)
            truth.write(lists_text(ids, truth_sizes, labels[keep]))
            prediction.write(lists_text(ids, sizes, ranks))
    return truth_path, prediction_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--dataset", choices=sorted(SIZES), default="mind")
    parser.add_argument("--impressions", type=int, help="default: the dataset's test size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    truth, prediction = write(args.out, args.dataset, args.impressions or SIZES[args.dataset], args.seed)
    print(f"wrote {truth} ({truth.stat().st_size:,} bytes) and {prediction} ({prediction.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
