"""Run the published evaluators of the RecSys challenges beside the scorer on generated files, and report the largest
difference (it must be under 1e-12 wherever the official accepts a file).

The official code is read at run time from local copies of the public repositories, never kept here:
  TRIVAGO_REPO   recsyschallenge/2019 (src/score_submission/functions.py at TRIVAGO_COMMIT, default 1d15a69, the
                 challenge's version of March 2019; default /work/.mirror/recsyschallenge+2019/repo)
  MPD_REPO       plamere/RecsysChallengeTools (metrics.py, and verify_submission.py, Python 2: turned into Python 3 by
                 lib2to3 as it is read; default /work/.mirror/plamere+RecsysChallengeTools/repo)
  METRICS_REPO   benhamner/Metrics (Python/ml_metrics/average_precision.py, Kaggle's apk; default
                 /work/.mirror/benhamner+Metrics/repo)
Each may be a work tree or a bare git directory (the file is then read with `git show`). Twitter's RecSys 2020 metric
(compute_prauc, compute_rce of recsys-twitter.com/code/snippets) is scikit-learn's precision_recall_curve, auc and
log_loss; it is run here as the snippet calls them, the predictions clipped to [1e-15, 1 - 1e-15] first, as log_loss
clipped them in 2020 (today's clips at the dtype's epsilon; predictions of 0 and 1 are among the cases).

The officials run in a child process with pandas' string inference off (the code of 2019 was written for pandas'
object columns).

verify_submission.py runs at a smaller size (challenge sets of VERIFY_PLAYLISTS playlists, lists of VERIFY_TRACKS
tracks: its 10,000 and 500, and the config's list_length, made small alike); its verdict (no error) is compared with
`scorer validate --seeds challenge_set.json`'s, and the lines where it finds a seed track or a bad track URI with those of
S042 and S041 (where it read the rows: without the team_info line it reads none; a pid not in the challenge set stops
it, a KeyError, where the scorer gives S012).

    python tools/compare_recsys_evaluators.py [--cases 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_news_evaluators import source as news_source  # noqa: E402

TRIVAGO_REPO = os.environ.get("TRIVAGO_REPO", "/work/.mirror/recsyschallenge+2019/repo")
TRIVAGO_COMMIT = os.environ.get("TRIVAGO_COMMIT", "1d15a69")
MPD_REPO = os.environ.get("MPD_REPO", "/work/.mirror/plamere+RecsysChallengeTools/repo")
METRICS_REPO = os.environ.get("METRICS_REPO", "/work/.mirror/benhamner+Metrics/repo")
VERIFY_PLAYLISTS, VERIFY_TRACKS = 20, 5  # verify_submission.py's 10,000 playlists and 500 tracks, made small


def source(repo: str, path: str, commit: str = "HEAD") -> str:
    """A file of a clone at `commit` (a work tree's file as it is): compare_news_evaluators.source, at another commit."""
    if commit == "HEAD" or (Path(repo) / path).is_file():
        return news_source(repo, path)
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout


# The child: loads the official functions from their text and scores each case; one JSON line per case.
CHILD = r"""
import json, sys, types
import pandas as pd
pd.set_option("future.infer_string", False)
import numpy as np
from sklearn.metrics import auc, log_loss, precision_recall_curve, roc_auc_score, average_precision_score
import contextlib, io, re
trivago, mpd, kaggle, verify = (types.ModuleType(name) for name in ("trivago_functions", "mpd_metrics", "average_precision", "verify"))
exec(compile(sys.argv[1], "functions.py", "exec"), trivago.__dict__)
exec(compile(sys.argv[2], "metrics.py", "exec"), mpd.__dict__)
exec(compile(sys.argv[3], "average_precision.py", "exec"), kaggle.__dict__)
exec(compile(sys.argv[4], "verify_submission.py", "exec"), verify.__dict__)
verify.NTRACKS = int(sys.argv[6])
for line in sys.stdin:
    case = json.loads(line)
    out = {}
    try:
        kind = case["kind"]
        if kind == "trivago19":
            out["figures"] = [float(trivago.score_submissions(case["submission"], case["truth"], trivago.get_reciprocal_ranks))]
        elif kind == "spotify-mpd":
            truth = {int(pid): tracks for pid, tracks in case["targets"].items()}
            sub = {int(pid): tracks for pid, tracks in case["predictions"].items()}
            summary = mpd.aggregate_metrics(truth, sub, 500, list(truth))
            out["figures"] = [float(summary.mean_r_precision), float(summary.mean_ndcg), float(summary.mean_plex_clicks)]
        elif kind == "verify":
            said = io.StringIO()
            with contextlib.redirect_stdout(said):
                errors = verify.verify_submission(case["challenge"], case["submission"])
            lines = said.getvalue().splitlines()
            at = lambda words: sorted({int(re.search(r" at (?:line )?(\d+)$", line).group(1)) + 1 for line in lines if words in line})
            out["figures"] = [float(errors == 0)]
            if not any("missing team_info" in line for line in lines):  # without it, it reads no row further
                out["lines"] = {"S042": at("found seed tracks"), "S041": at("bad track uri")}
        elif kind == "hm-multiset":
            out["figures"] = [float(kaggle.mapk(case["actual"], case["predicted"], 12))]
        elif kind == "twitter20":
            gt, pred = np.array(case["labels"]), np.array(case["predictions"])
            precision, recall, _ = precision_recall_curve(gt, pred)
            clipped = np.clip(pred, 1e-15, 1 - 1e-15)  # log_loss's eps of 2020 (today's clips at the dtype's epsilon)
            ctr = gt.mean()
            rce = (1.0 - log_loss(gt, clipped) / log_loss(gt, [ctr] * len(gt))) * 100.0
            out["figures"] = [float(auc(recall, precision)), float(rce), float(roc_auc_score(gt, pred)),
                              float(average_precision_score(gt, pred)), float(log_loss(gt, clipped))]
    except Exception as error:
        out["error"] = f"{type(error).__name__}: {error}"
    print("RESULT " + json.dumps(out), flush=True)  # functions.py prints what it reads on stdout too
"""


def _uri(rng) -> str:
    return "spotify:track:" + "".join(rng.choice(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), 22))


def trivago_case(rng, folder: Path, index: int) -> dict:
    """A ground truth in train.csv's form and a submission with the three rules at play: rows missing, keys given twice,
    the clicked item listed twice; extra columns on both sides; timestamps and steps now and then written with leading
    zeros, a '+', spaces or as floats (pandas reads them as the integers they are: key_types)."""
    items = [str(5000 + i) for i in range(30)]
    truth_lines = ["user_id,session_id,timestamp,step,action_type,reference,platform,city,device,current_filters,impressions,prices"]
    keys = []
    for row in range(int(rng.integers(1, 25))):
        key = (f"U{rng.integers(0, 6)}", f"S{row}", str(1541000000 + row), str(int(rng.integers(1, 9))))
        keys.append((key, str(rng.choice(items))))
        truth_lines.append(",".join(key) + f",clickout item,{keys[-1][1]},DE,\"Berlin, Germany\",mobile,,1|2,3|4")
        if rng.random() < 0.2:
            truth_lines.append(",".join(key[:3]) + f",{int(key[3]) + 1},interaction item image,{rng.choice(items)},DE,Berlin,mobile,,,")
    sub_lines = ["user_id,session_id,timestamp,step,platform,item_recommendations"]
    for key, reference in keys:
        for _ in range(int(rng.choice([0, 1, 1, 1, 2]))):  # missing, once, or twice
            chosen = list(rng.choice(items, int(rng.integers(1, 26)), replace=False))
            if rng.random() < 0.3:
                chosen.insert(int(rng.integers(0, len(chosen) + 1)), reference)
            if rng.random() < 0.15:
                chosen.insert(int(rng.integers(0, len(chosen) + 1)), reference)  # listed twice (or once more)
            if rng.random() < 0.1:
                chosen = ["0" + item if rng.random() < 0.3 else item for item in chosen]  # int() reads 05001 as 5001
            written = list(key)
            if rng.random() < 0.2:
                written[2:] = [str(rng.choice(["0", "+", " ", ""])) + part + str(rng.choice(["", ".0", "e0", " "])) for part in key[2:]]
            sub_lines.append(",".join(written) + ",DE," + " ".join(chosen))
    truth, submission = folder / f"trivago_truth_{index}.csv", folder / f"trivago_sub_{index}.csv"
    truth.write_text("\n".join(truth_lines) + "\n")
    submission.write_text("\n".join(sub_lines) + "\n")
    return {"kind": "trivago19", "truth": str(truth), "submission": str(submission)}


def spotify_case(rng, folder: Path, index: int) -> dict:
    """Playlists with hidden tracks (a track repeated now and then) and a submission with repeats, missing playlists and
    lists longer and shorter than 500."""
    pool = [_uri(rng) for _ in range(400)]
    targets, predictions = {}, {}
    for pid in range(1000, 1000 + int(rng.integers(1, 12))):
        hidden = list(rng.choice(pool, int(rng.integers(1, 40)), replace=False))
        if rng.random() < 0.2:
            hidden.append(hidden[0])
        targets[str(pid)] = hidden
        if rng.random() < 0.15:
            continue  # missing: metrics.py scores it 0, 0, 0
        listed = list(rng.choice(pool, int(rng.integers(1, 399)), replace=False))
        listed += list(rng.choice(pool, int(rng.integers(0, 200)), replace=True))  # repeats, some past 500
        predictions[str(pid)] = listed
    truth = folder / f"mpd_truth_{index}.json"
    truth.write_text(json.dumps({"playlists": [{"pid": int(pid), "tracks": [{"track_uri": uri} for uri in tracks]}
                                               for pid, tracks in targets.items()]}))
    submission = folder / f"mpd_sub_{index}.csv"
    submission.write_text("team_info,main,tools,tools@example.com\n" + "".join(f"{pid}, {', '.join(tracks)}\n"
                                                                           for pid, tracks in predictions.items()))
    return {"kind": "spotify-mpd", "targets": targets, "predictions": predictions, "truth": str(truth), "submission": str(submission)}


def verify_case(rng, folder: Path, index: int) -> dict:
    """A challenge set of VERIFY_PLAYLISTS playlists (0 to 3 seed tracks each) and a submission of VERIFY_TRACKS tracks a
    row with verify_submission.py's checks at play: seeds listed, URIs of another form, pids missing, unknown or written
    with leading zeros, lists too short or long or with repeats, blank and comment lines, the team_info line left out."""
    pool = [_uri(rng) for _ in range(60)]
    pids = list(range(1000, 1000 + VERIFY_PLAYLISTS))
    seeds = {pid: list(rng.choice(pool, int(rng.integers(0, 4)), replace=False)) for pid in pids}
    challenge = folder / f"verify_challenge_{index}.json"
    challenge.write_text(json.dumps({"playlists": [{"pid": pid, "tracks": [{"track_uri": uri} for uri in tracks]}
                                                   for pid, tracks in seeds.items()]}))
    careful = rng.random() < 0.3  # a file that should pass
    lines = ["# made by compare_recsys_evaluators.py"] if rng.random() < 0.3 else []
    if careful or rng.random() < 0.9:
        lines.append("team_info,main,tools,tools@example.com")
    for pid in pids:
        if not careful and rng.random() < 0.05:
            continue
        free = [uri for uri in pool if uri not in seeds[pid]]
        tracks = list(rng.choice(free, VERIFY_TRACKS, replace=False))
        if not careful:
            for _ in range(int(rng.choice([0, 0, 0, 1, 2]))):
                spot, what = int(rng.integers(0, len(tracks))), rng.random()
                if what < 0.25 and seeds[pid]:
                    tracks[spot] = str(rng.choice(seeds[pid]))
                elif what < 0.5:
                    tracks[spot] = str(rng.choice(["spotify:album:", "spotify:track:x:", "spotify:track:", "Spotify:track:"])) + tracks[spot][-22:]
                elif what < 0.6:
                    tracks[spot] = tracks[spot][:-1]
                elif what < 0.75:
                    tracks.append(str(rng.choice(free)))
                elif what < 0.85 and len(tracks) > 1:
                    tracks = tracks[:-1]
                else:
                    tracks[spot] = tracks[(spot + 1) % len(tracks)]
        written = f"0{pid}" if rng.random() < 0.1 else str(pid)
        lines.append(f"{written}, {', '.join(tracks)}")
        if rng.random() < 0.05:
            lines.append("")
    if not careful and rng.random() < 0.1:
        lines.append(f"{pids[-1] + 1}, {', '.join(pool[:VERIFY_TRACKS])}")
    submission = folder / f"verify_sub_{index}.csv"
    submission.write_text("\n".join(lines) + "\n")
    return {"kind": "verify", "challenge": str(challenge), "submission": str(submission)}


def hm_case(rng, folder: Path, index: int) -> dict:
    """H&M-like rows whose truth repeats an article (a customer who bought it twice), for the multiset rule."""
    articles = [f"07060160{i:02d}" for i in range(40)]
    actual, predicted, truth_lines, sub_lines = [], [], ["customer_id,prediction"], ["customer_id,prediction"]
    for customer in range(int(rng.integers(1, 20))):
        bought = list(rng.choice(articles, int(rng.integers(1, 8))))  # with repeats
        guess = list(rng.choice(articles, int(rng.integers(1, 14))))
        actual.append(bought)
        predicted.append(guess)
        truth_lines.append(f"c{customer},{' '.join(bought)}")
        sub_lines.append(f"c{customer},{' '.join(guess)}")
    truth, submission = folder / f"hm_truth_{index}.csv", folder / f"hm_sub_{index}.csv"
    truth.write_text("\n".join(truth_lines) + "\n")
    submission.write_text("\n".join(sub_lines) + "\n")
    return {"kind": "hm-multiset", "actual": actual, "predicted": predicted, "truth": str(truth), "submission": str(submission)}


def twitter_case(rng, folder: Path, index: int) -> dict:
    """One engagement's labels and predictions (ties now and then); both labels occur."""
    n = int(rng.integers(2, 300))
    labels = (rng.random(n) < rng.uniform(0.05, 0.6)).astype(int)
    labels[:2] = [1, 0]
    predictions = np.round(rng.uniform(0.001, 0.999, n), int(rng.choice([2, 6, 12])))
    ids = [(f"{rng.integers(0, 2**62):016X}", f"{row:032X}") for row in range(n)]
    truth, submission = folder / f"tw_truth_{index}.csv", folder / f"tw_sub_{index}.csv"
    truth.write_text("tweet_id,engaging_user_id,label\n" + "".join(f"{t},{u},{y}\n" for (t, u), y in zip(ids, labels)))
    submission.write_text("".join(f"{t},{u},{p!r}\n" for (t, u), p in zip(ids, predictions.tolist())))
    return {"kind": "twitter20", "labels": labels.tolist(), "predictions": predictions.tolist(), "truth": str(truth),
            "submission": str(submission)}


def python3(text: str) -> str:
    """Python 2 source (verify_submission.py's print statements) as Python 3, by lib2to3 (standard library to 3.12)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DeprecationWarning, PendingDeprecationWarning))
        from lib2to3 import refactor

        tool = refactor.RefactoringTool(refactor.get_fixers_from_package("lib2to3.fixes"))
        return str(tool.refactor_string(text if text.endswith("\n") else text + "\n", "verify_submission.py"))


def hm_multiset():
    """H&M's config with its truth read as a multiset (Kaggle's apk divides by len(actual) with the repeats)."""
    from dataclasses import replace

    from scorer.spec.competition import load_competition

    hm = load_competition("hm")
    return replace(hm, rules=hm.rules.turned(truth="multiset"))


def verify_config():
    """spotify-mpd with its lists made as short as the run's verify_submission.py wants them."""
    from dataclasses import replace

    from scorer.spec.competition import load_competition

    return replace(load_competition("spotify-mpd"), list_length=VERIFY_TRACKS)


def ours(case: dict) -> list[float]:
    import scorer

    kind = case["kind"]
    if kind == "verify":
        result = scorer.validate(case["submission"], competition=verify_config(), seeds=case["challenge"])
        case["lines"] = {code: sorted({p.line for p in result.problems if p.code == code}) for code in ("S042", "S041")}
        return [float(result.valid)]
    competition = hm_multiset() if kind == "hm-multiset" else kind
    result = scorer.score(case["submission"], case["truth"], competition)
    metrics = result.metrics["all"]
    names = {"trivago19": ["mrr"], "spotify-mpd": ["r_precision", "ndcg@500", "clicks@500"], "hm-multiset": ["map@12"],
             "twitter20": ["pr_auc", "rce", "roc_auc", "average_precision", "log_loss"]}[kind]
    return [float("nan") if metrics[name] is None else metrics[name] for name in names]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200, help="cases of each competition (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    codes = [source(TRIVAGO_REPO, "src/score_submission/functions.py", TRIVAGO_COMMIT), source(MPD_REPO, "metrics.py"),
             source(METRICS_REPO, "Python/ml_metrics/average_precision.py"), python3(source(MPD_REPO, "verify_submission.py"))
             .replace("!= 10000", f"!= {VERIFY_PLAYLISTS}"), str(VERIFY_PLAYLISTS), str(VERIFY_TRACKS)]
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        cases = [make(rng, Path(folder), index) for index in range(args.cases)
                 for make in (trivago_case, spotify_case, hm_case, twitter_case, verify_case)]
        child = subprocess.run([sys.executable, "-c", CHILD, *codes], input="".join(json.dumps(case) + "\n" for case in cases),
                               capture_output=True, text=True)
        if child.returncode:
            print(child.stderr, file=sys.stderr)
            return 2
        worst, errors = {}, {}
        results = [line[len("RESULT "):] for line in child.stdout.splitlines() if line.startswith("RESULT ")]
        for case, line in zip(cases, results):
            official = json.loads(line)
            kind = case["kind"]
            if "error" in official:
                errors[kind] = errors.get(kind, 0) + 1
                continue
            mine = ours(case)
            if kind == "verify" and official.get("lines", case["lines"]) != case["lines"]:
                mine = [math.inf]  # the same verdict on other lines is no agreement
            gap = max(0.0 if math.isnan(a) and math.isnan(b) else abs(a - b) if not math.isnan(a - b) else math.inf
                      for a, b in zip(official["figures"], mine))
            if gap > worst.get(kind, (-1.0,))[0]:
                worst[kind] = (gap, official["figures"], mine, case.get("submission"))
    for kind, (gap, official, mine, where) in worst.items():
        print(f"{kind}: {args.cases} cases, largest difference {gap:.3g} (official {official}, scorer {mine})")
    for kind, count in errors.items():
        print(f"{kind}: the official stopped on {count} cases")
    return 0 if all(gap < 1e-12 for gap, *_ in worst.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
