"""Run the official evaluators of MIND and EB-NeRD beside the scorer on generated files, and report the largest
difference (it must be under 1e-12 wherever the official accepts a file, and where it stops the scorer must report
a problem).

The official code is read at run time from local copies of the public repositories, never kept here:
  MIND_REPO    a clone of msnews/MIND (its evaluate.py; default /work/.mirror/msnews+MIND/repo)
  EBNERD_REPO  a clone of ebanalyse/ebnerd-benchmark (src/ebrec/evaluation/metrics/_ranking.py; default
               /work/.mirror/ebanalyse+ebnerd-benchmark/repo)
Either may be a work tree or a bare git directory (the file is then read with `git show HEAD:path`).

The officials run in a child process whose numpy sorts with its own introsort (NPY_DISABLE_CPU_FEATURES set to every
dispatched feature): a numpy that hands argsort to x86-simd-sort orders equal scores otherwise, and the scorer follows
numpy's own order (docs/metrics.md, "The impression shape"). `--simd` runs them with the machine's numpy as it is and
counts the impressions whose MRR or nDCG then differ.

    python tools/compare_news_evaluators.py [--cases 300] [--seed 0] [--simd]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MIND_REPO = os.environ.get("MIND_REPO", "/work/.mirror/msnews+MIND/repo")
EBNERD_REPO = os.environ.get("EBNERD_REPO", "/work/.mirror/ebanalyse+ebnerd-benchmark/repo")


def source(repo: str, path: str) -> str:
    """A file of a clone: read from its work tree, else from its git objects."""
    plain = Path(repo) / path
    if plain.is_file():
        return plain.read_text()
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True, text=True, check=True).stdout


# The child: loads the official functions from their text and scores each case; one JSON line per case.
CHILD = r"""
import json, sys, types
import numpy as np
from sklearn.metrics import roc_auc_score
mind, ebrec = types.ModuleType("mind_evaluate"), types.ModuleType("ebrec_ranking")
exec(compile(sys.argv[1], "evaluate.py", "exec"), mind.__dict__)
exec(compile(sys.argv[2], "_ranking.py", "exec"), ebrec.__dict__)
for line in sys.stdin:
    case = json.loads(line)
    out = {}
    try:
        with open(case["truth"]) as truth, open(case["prediction"]) as prediction:
            out["mind"] = [float(x) for x in mind.scoring(truth, prediction)]
    except Exception as error:
        out["mind_error"] = f"{type(error).__name__}: {error}"
    try:  # ebrec's metric functions over the impressions with labels, on the scores 1/rank (MetricEvaluator's means)
        rows = [(labels, [1.0 / r for r in ranks]) for labels, ranks in case["pairs"] if labels]
        out["ebrec"] = [float(np.mean([roc_auc_score(y, s) for y, s in rows])), float(np.mean([ebrec.mrr_score(np.array(y), np.array(s)) for y, s in rows])),
                        float(np.mean([ebrec.ndcg_score(np.array(y), np.array(s), 5) for y, s in rows])),
                        float(np.mean([ebrec.ndcg_score(np.array(y), np.array(s), 10) for y, s in rows]))]
    except Exception as error:
        out["ebrec_error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(out), flush=True)
"""


def scalar_numpy_env() -> dict:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f)))


def make_case(rng: np.random.Generator, folder: Path, index: int, broken: bool) -> dict:
    """A truth and a prediction of a few impressions: masked ones, ties, decimals, long lists, a file ending early; a
    broken case has one of the faults the official stops at."""
    truth, lines, pairs = [], [], []
    for impression in range(1, int(rng.integers(1, 12)) + 1):
        n = int(rng.integers(2, 40 if rng.random() < 0.3 else 16))
        labels = [0] * n
        for at in rng.choice(n, int(rng.integers(1, n)), replace=False):
            labels[at] = 1
        if rng.random() < 0.15:
            labels = []
        kind = rng.random()
        ranks = (rng.permutation(n) + 1).tolist() if kind < 0.5 else rng.integers(1, 5, n).tolist()
        text = [f"{r}.0" if kind > 0.9 else str(r) for r in ranks]
        truth.append(f"{impression} [{','.join(map(str, labels))}]")
        lines.append(f"{impression} [{','.join(text)}]")
        pairs.append((labels, ranks))
    ends = len(lines) if rng.random() < 0.7 else int(rng.integers(0, len(lines) + 1))
    lines, fills = lines[:ends], pairs[ends:]
    pairs = pairs[:ends] + [(labels, [1] * len(labels)) for labels, _ in fills]
    if broken and lines:
        at = int(rng.integers(0, len(lines)))
        impression, ranks = lines[at].split(" ")
        fault = int(rng.integers(0, 4))
        lines[at] = [f"{int(impression) + 1} {ranks}", f"{impression} [0,{ranks[1:]}", f"{impression} [{ranks[1:-1]},1]",
                     f"{impression} {ranks[:-1]}"][fault]
    (folder / f"truth{index}.txt").write_text("".join(line + "\n" for line in truth))
    (folder / f"prediction{index}.txt").write_text("".join(line + "\n" for line in lines))
    return {"truth": str(folder / f"truth{index}.txt"), "prediction": str(folder / f"prediction{index}.txt"), "pairs": pairs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--simd", action="store_true", help="run the officials with the machine's numpy as it is")
    args = parser.parse_args()
    import scorer

    mind_code, ebrec_code = source(MIND_REPO, "evaluate.py"), source(EBNERD_REPO, "src/ebrec/evaluation/metrics/_ranking.py")
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        cases = [make_case(rng, Path(folder), i, broken=i % 5 == 4) for i in range(args.cases)]
        env = os.environ.copy() if args.simd else scalar_numpy_env()
        child = subprocess.run([sys.executable, "-c", CHILD, mind_code, ebrec_code], input="".join(json.dumps(c) + "\n" for c in cases),
                               capture_output=True, text=True, env=env, check=True)
        worst = {"mind": 0.0, "ebrec": 0.0}
        accepted = stopped = disagreements = 0
        for case, line in zip(cases, child.stdout.splitlines()):
            official = json.loads(line)
            if all(not labels for labels, _ in case["pairs"]):
                continue
            ours = scorer.score(case["prediction"], case["truth"], "mind", strict=True)
            if "mind" in official:
                accepted += 1
                figures = [ours.metrics["all"][m] for m in ("auc", "mrr", "ndcg@5", "ndcg@10")]
                if not ours.valid:
                    disagreements += 1
                    print(f"official accepts, scorer refuses: {case['prediction']}: {[p.message for p in ours.problems]}")
                    continue
                worst["mind"] = max(worst["mind"], float(np.max(np.abs(np.array(figures) - official["mind"]))))
                if "ebrec" in official:
                    worst["ebrec"] = max(worst["ebrec"], float(np.max(np.abs(np.array(figures) - official["ebrec"]))))
            else:
                stopped += 1
                if ours.valid:
                    disagreements += 1
                    print(f"official stops ({official['mind_error']}), scorer accepts: {case['prediction']}")
    print(f"{args.cases} cases: the official accepts {accepted}, stops at {stopped}; disagreements on validity: {disagreements}")
    print(f"largest difference on accepted files: MIND evaluate.py {worst['mind']:.3g}, ebrec's metric functions {worst['ebrec']:.3g}"
          + (" (numpy as it is on this machine)" if args.simd else " (numpy's own argsort)"))
    return 0 if disagreements == 0 and (args.simd or max(worst.values()) < 1e-12) else 1


if __name__ == "__main__":
    sys.exit(main())
