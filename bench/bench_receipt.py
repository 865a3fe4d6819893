"""What a score receipt costs at full size, against the score it vouches for and against hashing the straightforward
way (SHA-256 of the submission's bytes read in blocks, and of the truth's arrays), measured in the same run.

    python bench/make_otto.py                        # once: bench/data/test_labels.jsonl, submission.csv (820 MB)
    python bench/bench_receipt.py [--data bench/data] [--runs 5]

Measures (medians of --runs, files in the page cache, truth loaded once):
  - the strict score of submission.csv in this process (kernels warm),
  - the receipt's parts: the truth's content hash (xxh3-128 over its arrays), the submission's (xxh3-128 of the
    mapped file), the config's (SHA-256 of its canonical JSON), and make_receipt as a whole (nothing kept from before),
  - SHA-256 of the same bytes (hashlib, the straightforward way),
and prints the receipt as a share of the score and xxh3 against SHA-256.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def median_seconds(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def sha256_arrays(truth) -> str:
    digest = hashlib.sha256()
    for array in (truth.sessions, truth.indptr, truth.items):
        digest.update(np.ascontiguousarray(array).view(np.uint8).reshape(-1))
    return digest.hexdigest()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    from scorer.api import load_truth, resolve_competition, score
    from scorer.engine import receipt
    from scorer.truth.cache import content_key

    submission = args.data / "submission.csv"
    comp = resolve_competition("otto")
    truth = load_truth(args.data / "test_labels.jsonl")
    result = score(submission, truth, comp, strict=True)  # warm: kernels loaded, files in the page cache

    def fresh_truth_hash():
        receipt._truth_hashes.clear()
        return receipt.truth_hash(truth)

    def whole_receipt():
        receipt._truth_hashes.clear()
        return receipt.make_receipt(result, comp, submission)

    timings = {
        "score (strict, in process)": median_seconds(lambda: score(submission, truth, comp, strict=True), args.runs),
        "truth hash (xxh3-128 of the arrays)": median_seconds(fresh_truth_hash, args.runs),
        "submission hash (xxh3-128, mapped)": median_seconds(lambda: content_key(submission), args.runs),
        "config hash (SHA-256 of canonical JSON)": median_seconds(lambda: receipt.config_hash(comp), args.runs),
        "make_receipt, all of it": median_seconds(whole_receipt, args.runs),
        "SHA-256 of the truth's arrays (hashlib)": median_seconds(lambda: sha256_arrays(truth), args.runs),
        "SHA-256 of the submission (hashlib, 16 MiB blocks)": median_seconds(lambda: sha256_file(submission), args.runs),
    }
    arrays = sum(a.nbytes for a in (truth.sessions, truth.indptr, truth.items))
    print(f"OTTO size: {truth.n_sessions:,} sessions, truth arrays {arrays / 1e6:.0f} MB, submission {submission.stat().st_size / 1e6:.0f} MB; "
          f"medians of {args.runs} runs")
    for name, seconds in timings.items():
        print(f"  {name:<52} {seconds * 1000:9.1f} ms")
    share = timings["make_receipt, all of it"] / timings["score (strict, in process)"]
    print(f"receipt / score: {share:.1%}")
    print(f"xxh3 / SHA-256: truth {timings['truth hash (xxh3-128 of the arrays)'] / timings['SHA-256 of the truth' + chr(39) + 's arrays (hashlib)']:.2f}, "
          f"submission {timings['submission hash (xxh3-128, mapped)'] / timings['SHA-256 of the submission (hashlib, 16 MiB blocks)']:.2f}")


if __name__ == "__main__":
    main()
