"""Benchmark of `scorer similar`: the sketch of one file (CPU-seconds per file) and the comparison of N sketches.

    python bench/bench_similar.py [--otto FILE ...] [--make 2] [--small 5] [--sketches 1000] [--sample 2048] [--hm FILE ...]

Goals (issue 32): each OTTO-size file sketched in at most 2 CPU-s; the pairs of 1,000 sketches compared in under a
minute; memory flat in the number of files. Measured here, in one run:

1. sketch CPU-s (time.process_time) and the RSS the sketch adds, per OTTO-size file: the --otto files given, plus
   --make files written by bench/make_otto.py (other seeds: other predictions for the same sessions) into a
   temporary folder removed at the end;
2. the same for --small files of 1% size (make_otto --sessions 16718), against the straightforward implementation:
   a Python loop that parses every line (split, int) and keeps the rows of the S smallest session hashes in a heap;
3. the comparison of --sketches sketches of the default shape: synthetic ones, each a 1% file's sketch with 80% of its
   tokens replaced (a sketch's size does not depend on the file's once the file holds more than S sessions, so this is
   also the comparison of that many OTTO-size files), against the straightforward implementation: per pair, the exact
   measures of the sampled rows' first-K lists in Python (sets and list equality), timed on a few pairs and scaled.

With --hm, H&M-size files (customer_id,prediction: bench/bench_hm.py makes one) are sketched too, read as
`--competition hm` reads them (text ids and items hashed as written, K = 12): CPU-s and RSS per file.

The figure for 1,000 files at OTTO size follows: 1,000 x the sketch CPU-s of (1) (one pass per file, on any number of
cores) plus the comparison time of (3).
"""

from __future__ import annotations

import argparse
import heapq
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from scorer.analytics.similar.pairs import similarity  # noqa: E402
from scorer.analytics.similar.sketch import DEFAULT_K, DEFAULT_SAMPLE, Sketch, sketch_file  # noqa: E402


def rss_mb() -> float:
    """The process's resident set now (Linux /proc), in MB."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def timed_sketch(path: Path, sample: int, k: int = DEFAULT_K, spec=None) -> tuple[Sketch, float, float]:
    before = rss_mb()
    started = time.process_time()
    sketch = sketch_file(path, sample, k, spec)
    return sketch, time.process_time() - started, rss_mb() - before


MASK = (1 << 64) - 1


def splitmix(x: int) -> int:
    """splitmix64 in Python integers (the sketch's session hash)."""
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def straightforward_sketch(path: Path, sample: int, k: int = DEFAULT_K) -> dict:
    """Every line parsed in Python; the rows of the `sample` smallest session hashes kept (a max-heap of hashes)."""
    heap: list[int] = []  # negated hashes of the kept sessions
    rows: dict[int, dict] = {}
    with open(path) as handle:
        next(handle)
        for line in handle:
            key, labels = line.rstrip("\n").split(",")
            session, kind = key.split("_")
            items = [int(x) for x in labels.split()][:k]
            h = splitmix(int(session))
            if h in rows:
                rows[h][kind] = items
            elif len(heap) < sample or h < -heap[0]:
                if len(heap) >= sample:
                    rows.pop(-heapq.heappushpop(heap, -h))
                else:
                    heapq.heappush(heap, -h)
                rows[h] = {kind: items}
    return rows


def straightforward_pair(a: dict, b: dict) -> tuple[float, float]:
    """Exact identical share and mean Jaccard over the rows both hold."""
    same = jac = n = 0
    for h, kinds in a.items():
        other = b.get(h)
        if other is None:
            continue
        for kind, x in kinds.items():
            y = other.get(kind)
            if y is None:
                continue
            n += 1
            same += x == y
            union = set(x) | set(y)
            jac += len(set(x) & set(y)) / len(union) if union else 1
    return same / max(n, 1), jac / max(n, 1)


def synthetic(base: list[Sketch], count: int, rng) -> list[Sketch]:
    """`count` sketches of the bases' shape, 80% of each one's tokens replaced by random ones."""
    out = []
    for i in range(count):
        s = base[i % len(base)]
        fresh = []
        for tokens in (s.order, s.mins, s.ranks):
            t = tokens.copy()
            change = rng.random(t.shape) < 0.8
            t[change] = rng.integers(0, 1 << 31, int(change.sum()), dtype=np.uint32)
            fresh.append(t)
        out.append(Sketch(f"synthetic{i}", s.rows, s.keys, s.sessions, s.present, *fresh))
    return out


def make(folder: Path, sessions: int, seed: int) -> Path:
    import make_otto

    out = folder / f"seed{seed}_{sessions}"
    make_otto.main(["--sessions", str(sessions), "--out", str(out), "--seed", str(seed)])
    (out / "test_labels.jsonl").unlink()
    return out / "submission.csv"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--otto", nargs="*", type=Path, default=[], help="OTTO-size submissions to sketch (read only)")
    parser.add_argument("--make", type=int, default=2, help="OTTO-size files to write with make_otto (default 2)")
    parser.add_argument("--small", type=int, default=5, help="1%%-size files to write and sketch (default 5; at least 2, a pair)")
    parser.add_argument("--sketches", type=int, default=1000, help="sketches to compare (default 1000)")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, help=f"sessions per sketch (default {DEFAULT_SAMPLE})")
    parser.add_argument("--hm", nargs="*", type=Path, default=[], help="H&M-size submissions to sketch as --competition hm")
    parser.add_argument("--pairs", type=int, default=20, help="pairs the straightforward comparison is timed on (default 20)")
    args = parser.parse_args(argv)
    if args.small < 2:
        parser.error(f"--small must be at least 2: the straightforward comparison is timed on pairs of them, got {args.small}")
    folder = Path(tempfile.mkdtemp(prefix="bench-similar-"))
    try:
        run(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(args, folder: Path) -> None:
    full = list(args.otto) + [make(folder, 1_671_803, 100 + i) for i in range(args.make)]
    costs = []
    print(f"1. OTTO-size files, sample {args.sample:,} sessions ({load()})")
    for path in full:
        sketch, cpu, grew = timed_sketch(path, args.sample)
        costs.append(cpu)
        print(f"   {path.name if path in args.otto else path.parent.name}: {os.path.getsize(path) / 1e6:,.0f} MB, {sketch.rows:,} rows: "
              f"{cpu:.2f} CPU-s, RSS +{grew:.0f} MB (peak {peak_mb():,.0f} MB), sketch {sketch.nbytes / 1e3:,.0f} kB  ({load()})")
        del sketch
    for path in full:
        if path not in args.otto:
            path.unlink()
    if args.hm:
        from scorer.analytics.similar.sketch import spec_of
        from scorer.spec.competition import load_competition

        hm = load_competition("hm")
        print(f"1b. H&M-size files (--competition hm, K {hm.k}), sample {args.sample:,} customers ({load()})")
        for path in args.hm:
            sketch, cpu, grew = timed_sketch(path, args.sample, hm.k, spec_of(hm))
            print(f"   {path.name}: {os.path.getsize(path) / 1e6:,.0f} MB, {sketch.rows:,} rows: {cpu:.2f} CPU-s, RSS +{grew:.0f} MB "
                  f"(peak {peak_mb():,.0f} MB), sketch {sketch.nbytes / 1e3:,.0f} kB  ({load()})")
            del sketch
    small = [make(folder, 16_718, 200 + i) for i in range(args.small)]
    print(f"2. 1%-size files ({load()})")
    bases = []
    for path in small:
        sketch, cpu, _ = timed_sketch(path, args.sample)
        bases.append(sketch)
        print(f"   {path.parent.name}: {os.path.getsize(path) / 1e6:.1f} MB: {cpu:.3f} CPU-s  ({load()})")
    started = time.process_time()
    plain = [straightforward_sketch(path, args.sample) for path in small[:2]]
    slow = (time.process_time() - started) / len(plain)
    print(f"   straightforward (Python, every line parsed): {slow:.3f} CPU-s per file  ({load()})")
    fast = float(np.mean([timed_sketch(path, args.sample)[1] for path in small[:2]]))
    print(f"   sketch {fast:.3f} CPU-s per file: {slow / fast:.1f}x faster than straightforward")

    rng = np.random.default_rng(0)
    many = synthetic(bases, args.sketches, rng)
    n_pairs = args.sketches * (args.sketches - 1) // 2
    print(f"3. {args.sketches:,} sketches ({sum(s.nbytes for s in many) / 1e6:,.0f} MB held), {n_pairs:,} pairs ({load()})")
    before = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    report = similarity(many, [s.name for s in many], DEFAULT_K)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"   compared in {wall:.1f} s wall, {cpu:.1f} CPU-s, RSS +{rss_mb() - before:,.0f} MB (peak {peak_mb():,.0f} MB); "
          f"{len(report['flagged'])} flagged  ({load()})")
    started = time.process_time()
    for i in range(args.pairs):
        straightforward_pair(plain[i % 2], plain[(i + 1) % 2])
    per_pair = (time.process_time() - started) / args.pairs
    print(f"   straightforward (exact per pair in Python): {per_pair * 1e3:.1f} ms per pair -> {per_pair * n_pairs:,.0f} CPU-s "
          f"for {n_pairs:,} pairs: {per_pair * n_pairs / cpu:.0f}x the sketches' CPU-s")
    if costs:
        each = float(np.mean(costs))
        print(f"1,000 OTTO-size files: 1,000 x {each:.2f} CPU-s of sketches = {1000 * each / 60:.0f} CPU-min "
              f"({1000 * each / 60 / os.cpu_count():.0f} min on {os.cpu_count()} cores), then the comparison: "
              f"{wall * (1000 * 999 // 2) / max(n_pairs, 1):.0f} s (its time, scaled by pairs from {args.sketches:,} sketches)")


if __name__ == "__main__":
    main()
