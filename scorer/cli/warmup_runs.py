"""The runs `scorer warmup` makes of every kernel stage (scorer.kernels.door.STAGES) on tiny inputs: each does what
the commands of its stage do, and returns what they found as plain data, so that the two builds of the kernels (the
ahead-of-time modules and numba's JIT) can be held to the same results (warmup, tests/test_aot.py)."""

from __future__ import annotations

import gzip
import hashlib
import json
import zipfile
from pathlib import Path

OTTO_TRUTH = '{"session": 1, "labels": {"clicks": 10, "carts": [20], "orders": [30, 31]}}\n{"session": 2, "labels": {}}\n'
OTTO_GOOD = "session_type,labels\n1_clicks,10 99\n1_carts,21\n1_orders,30 40\n2_clicks,\n2_carts,5\n2_orders,7 0\n"
# every problem the careful path reports: bad ids, types and items, quotes, CRLF, a BOM, a blank line, repeats
OTTO_ODD = ('\ufeffsession_type,labels\r\n"1_clicks",10  99 99\r\n1_carts,2x\r\n1_orders,-3\r\n2_click,1\r\nx_carts,1\r\n'
            '\r\n2_orders,1,2\r\n2_orders,"1 2\r\n9_clicks,\x00\r\n1_carts,' + " ".join(map(str, range(30))) + "\r\n")
VOLATILE = {"seconds", "kernels"}  # what may differ between two runs of the same inputs (time, the kernels' build)


def examples(competition) -> tuple[str, list[str]]:
    """(truth text, submissions: a clean one and one full of problems) in the competition's own format."""
    header = ",".join(competition.header)
    if competition.shape == "id_type":
        if competition.types != ("clicks", "carts", "orders"):
            rows = [competition.id_pattern.format(session=s, type=t) for s in (1, 2) for t in competition.types]
            truth = "session,type,aid\n" + "".join(f"{s},{t},{s * 10}\n" for s in (1, 2) for t in competition.types)
            return truth, [header + "\n" + "".join(f"{r},10 20\n" for r in rows), header + "\n" + "".join(f"{r},x 1  1\n" for r in rows)]
        return OTTO_TRUTH, [OTTO_GOOD, OTTO_ODD]
    if competition.shape == "long":
        return f"{header}\nA,1\nA,2\nB,3\n", [f"{header}\nA,1\nA,2\nB,3\n", f'{header}\r\nA,1\r\nA,\r\n"B,3\r\nC,9\r\n\r\nA,1,2\r\n']
    if competition.shape == "value":
        return f"{header}\nA,1.5\nB,2\n", [f"{header}\nA,1.5\nB,2\n", f"{header}\r\nA,x\r\nC,1e400\r\nB,2,3\r\n\r\n"]
    return f"{header}\nA,1 2\nB,3\n", [f"{header}\nA,1 2\nB,3\n", f'{header}\r\nA,1  1 "2\r\nC,\r\n\r\nB,3,4\r\nB,3\r\n']


def stable(found):
    """found without what may differ between two runs (VOLATILE keys), as plain data."""
    if isinstance(found, dict):
        return {key: stable(value) for key, value in found.items() if key not in VOLATILE}
    if isinstance(found, (list, tuple)):
        return [stable(value) for value in found]
    return found


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def score_files(name: str, folder: Path) -> list:
    """Score the examples of one bundled competition: plain, gzip and zip; truth from a file, an object, compiled; both
    modes; one and two threads; and as a data frame (id_type). The results, and validate's problems."""
    from scorer import api
    from scorer.spec.competition import load_competition
    from scorer.truth.load import load_truth
    from scorer.truth.strings import read_string_truth

    competition = load_competition(name)
    truth_text, submissions = examples(competition)
    truth_path = folder / f"{name}.truth.{'jsonl' if truth_text.startswith('{') else 'csv'}"
    truth_path.write_text(truth_text, encoding="utf-8")
    truths = [truth_path, api.resolve_truth(truth_path, competition)]
    if competition.shape == "id_type":
        truths.append(folder / f"{name}.truth.npz")
        load_truth(truth_path, competition.types, use_cache=False).save(truths[-1])
    else:
        truths.append(folder / f"{name}.strings.npz")
        read_string_truth(truth_path, competition.shape, competition.types[0], use_cache=False).save(truths[-1])
    found = []
    for n, text in enumerate(submissions):
        for submission in written(folder, f"{name}{n}", ".csv", text, member=f"{name}{n}.csv"):
            found += scored_every_way(submission, truths, competition)
    if competition.shape == "id_type":
        found.append(api.score(_frame(OTTO_GOOD if competition.types == ("clicks", "carts", "orders") else submissions[0]), truths[1],
                               competition).to_dict())
    if api.score(folder / f"{name}0.csv", truths[-1], competition, strict=True).score is None:
        raise RuntimeError(f"the warm-up example of {name!r} did not score")  # a bug of ours, not of the input
    return found


def written(folder: Path, stem: str, suffix: str, text: str, member: str | None = None) -> tuple[Path, ...]:
    """text written into folder as stem + suffix, gzipped beside it and, given a member name, zipped as that member: the
    files' paths."""
    plain = folder / f"{stem}{suffix}"
    plain.write_bytes(text.encode("utf-8"))
    packed = folder / f"{stem}{suffix}.gz"
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    if member is None:
        return plain, packed
    archive = folder / f"{stem}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.write(plain, member)
    return plain, packed, archive


def scored_every_way(submission: Path, truths: list, competition) -> list:
    """The submission scored against each form of the truth, in both modes, with one and two threads; then validated
    without truth."""
    from scorer import api

    found = [api.score(submission, truth, competition, strict=strict, threads=threads).to_dict()
             for truth in truths for strict in (False, True) for threads in (1, 2)]
    return found + [api.validate(submission, None, competition).to_dict()]


def _frame(text: str):
    """A CSV's rows as a frame with integer lists (scored by frame_rows)."""
    import pyarrow as pa

    rows = [line.split(",") for line in text.splitlines()[1:]]
    return pa.table({"session_type": [row[0] for row in rows],
                     "labels": pa.array([[int(item) for item in row[1].split()] for row in rows], pa.large_list(pa.int64()))})


def _otto(folder: Path) -> tuple[Path, Path, Path]:
    """OTTO's example truth and its two submissions, written once into folder."""
    truth, good, odd = folder / "otto.jsonl", folder / "otto_good.csv", folder / "otto_odd.csv"
    for path, text in ((truth, OTTO_TRUTH), (good, OTTO_GOOD), (odd, OTTO_ODD)):
        path.write_bytes(text.encode("utf-8"))
    return truth, good, odd


def _command(*argv) -> dict:
    """A command's JSON output, run here (its exit code too)."""
    import contextlib
    import io

    from scorer.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
        code = main([*map(str, argv), "--format", "json"])
    return {"exit": code, "output": json.loads(out.getvalue()) if out.getvalue().strip() else None}


def run_score(names, folder: Path, shapes=("id_type",)) -> list:
    """score_files of the competitions among names whose shape is one of shapes and whose truth is the shape's own (a
    published truth's form, [truth], is the table reader's: run_tables)."""
    from scorer.spec.competition import load_competition

    chosen = [name for name in names if (competition := load_competition(name)).shape in shapes and competition.truth_spec is None]
    return [score_files(name, folder) for name in chosen]


def run_explain(folder: Path) -> list:
    truth, good, odd = _otto(folder)
    return [_command("explain", submission, "--truth", truth) for submission in (good, odd)]


def run_candidates(folder: Path) -> list:
    """Candidate tables of every column width the kernel reads in place (int64/int32 ids, float64/float32 scores), with
    bad rows, ties and repeats; an H&M table of string ids."""
    import pyarrow as pa

    from scorer import api
    from scorer.spec.competition import load_competition

    truth = _otto(folder)[0]
    sessions, items = [1, 1, 1, 1, 2, 2, 9, None], [10, 20, 20, 30, 5, -1, 4, 7]
    found = []
    for ids, scores in ((pa.int64(), pa.float64()), (pa.int32(), pa.float32()), (pa.uint16(), None)):
        columns = {"session": pa.array(sessions, ids), "aid": pa.array(items, pa.int64() if ids == pa.uint16() else ids)}
        if scores is not None:
            columns["score"] = pa.array([0.5, 0.9, 0.9, float("nan"), 1.0, 2.0, 3.0, 0.1], scores)
        columns["type"] = pa.array(["clicks", None, "orders", "carts", "views", None, None, "clicks"])
        found.append(api.candidates(pa.table(columns), truth, k=(1, 2, 20)).to_dict())
    hm = folder / "hm.csv"
    hm.write_text(examples(load_competition("hm"))[0], encoding="utf-8")
    found.append(api.candidates(pa.table({"customer_id": ["A", "A", "B", "C"], "article_id": ["2", "1", "3", "1"]}), hm, "hm",
                                k=(1, 12)).to_dict())
    return [stable(result) for result in found]


def run_resample(folder: Path) -> list:
    """The bootstrap and breakdowns of a score, a comparison, a leaderboard of three files and a hash split."""
    truth, good, odd = _otto(folder)
    other = folder / "otto_other.csv"
    other.write_text(OTTO_GOOD.replace("1_clicks,10 99", "1_clicks,99 10"), encoding="utf-8")
    return [_command("score", good, "--truth", truth, "--bootstrap", 50, "--breakdown", "--split", "public=0.5"),
            _command("compare", good, other, "--truth", truth, "--bootstrap", 50),
            _command("leaderboard", good, other, odd, "--truth", truth, "--bootstrap", 50)]


def run_prepare(folder: Path) -> list:
    """Split a small session log, JSONL (with a session out of time order) and Parquet: the outputs' digests."""
    from scorer.prepare.pipeline import prepare

    day = 86_400
    lines = [{"session": s, "events": [{"aid": (s * 7 + e) % 13, "ts": 1_659_000_000 + s * 3_600 + e * 60 + (day * 9 if s > 40 else 0),
                                        "type": ("clicks", "carts", "orders")[(s + e) % 3]} for e in range(2 + s % 5)]}
             for s in range(60)]
    lines[3]["events"].reverse()
    log = folder / "events.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    found = []
    for fmt in ("jsonl", "parquet"):
        out = folder / f"prepared-{fmt}"
        summary = prepare(log, out, days=7, fmt=fmt)
        found.append([stable(summary), {path.name: _digest(path) for path in sorted(out.iterdir()) if path.suffix != ".json"}])
        if fmt == "parquet":  # the Parquet log read back: the same split
            again = folder / "again"
            summary = prepare(out / "train_sessions.parquet", again, days=2, fmt="jsonl")
            found.append([stable(summary), {path.name: _digest(path) for path in sorted(again.iterdir()) if path.suffix != ".json"}])
    return found


def run_audit(folder: Path) -> list:
    """The perfect, empty and random submissions `scorer audit` writes from a truth."""
    from scorer.analytics.audit import modes, write_submission
    from scorer.spec.competition import load_competition
    from scorer.truth.load import load_truth

    competition = load_competition("otto")
    truth = load_truth(_otto(folder)[0], competition.types, use_cache=False)
    found = []
    for name, mode in modes().items():
        path = folder / f"{name}.csv"
        write_submission(path, truth, competition, mode)
        found.append((name, _digest(path)))
    return found


def run_partitions(folder: Path) -> list:
    """Partitioned scoring's partition function over an OTTO truth (sessions and its JSONL's lines) and a string truth."""
    from scorer.dask.truth_parts import partitions_of_truth, shard_range
    from scorer.spec.competition import load_competition
    from scorer.truth.load import load_truth
    from scorer.truth.strings import read_string_truth

    truth_path = _otto(folder)[0]
    hm = folder / "hm_truth.csv"
    hm.write_text(examples(load_competition("hm"))[0], encoding="utf-8")
    shards = folder / "shards"
    shards.mkdir(exist_ok=True)
    lines = shard_range(str(truth_path), (0, truth_path.stat().st_size), 0, str(shards), 3)
    return [partitions_of_truth(load_truth(truth_path, ("clicks", "carts", "orders"), use_cache=False), 3).tolist(),
            partitions_of_truth(read_string_truth(hm, "list", "all", use_cache=False), 3).tolist(),
            lines, {path.name: _digest(path) for path in sorted(shards.iterdir())}, _shuffled_partitions()]


def _shuffled_partitions() -> list:
    """The partitions and sessions of a submission's rows (OTTO's ids and H&M's), as partitioned scoring reads them."""
    import pyarrow as pa

    from scorer.dask.shuffled import PARTITION, SESSION, _with_partitions
    from scorer.spec.competition import load_competition

    found = []
    for name, ids in (("otto", ["1_clicks", "2_orders", "x_carts", None]), ("hm", ["A", "B", "C", None])):
        competition = load_competition(name)
        table = _with_partitions(pa.table({competition.header[0]: pa.array(ids, pa.large_string())}), 0, competition, 3)
        found.append([table.column(PARTITION).to_pylist(), table.column(SESSION).to_pylist()])
    return found


def run_solution(folder: Path) -> list:
    """A Kaggle solution read into a truth (its ids and labels read by the kernels from the Arrow buffers), and scored."""
    import pandas as pd

    from scorer.adapters.kaggle import score, truth_from_solution
    from scorer.spec.competition import load_competition

    ids = [f"{session}_{kind}" for session in (1, 2) for kind in ("clicks", "carts", "orders")]
    solution = pd.DataFrame({"session_type": ids, "labels": ["10", "", "30 31", "", "5", ""], "Usage": ["Public", "Private"] * 3})
    submission = pd.DataFrame({"session_type": ids, "labels": ["10 11", "", "31", "4", "", "5"]})
    truth = truth_from_solution(solution, "session_type", load_competition("otto"))
    return [truth.sessions.tolist(), truth.indptr.tolist(), truth.items.tolist(), score(solution, submission, "session_type")]


IMPRESSION_TRUTH = "1 [0,1,0]\n2 []\n3 [1,0,0,1]\n4 [" + ",".join(["0", "1"] + ["0"] * 18) + "]\n5 [0,1]\n6 [1,0]\n"
# a clean file, and one with every problem and odd form: CRLF, tabs, decimals, 20 equal ranks, a bad rank, a count,
# an id out of order; it ends before the last impression (filled) and the one before
IMPRESSION_FILES = ("1 [2,1,3]\n2 [1]\n3 [1,3,2,4]\n4 [" + ",".join(map(str, range(20, 0, -1))) + "]\n5 [2,1]\n6 [1,2]\n",
                    "1\t[2.0,1e0,3]\r\n2 x\r\n3 [1,1,2,2]\r\n4 [" + ",".join(["1"] * 20) + "]\r\n9 [1,2]\n")


def run_impressions(folder: Path) -> list:
    """The impression shape (MIND's config): files plain, gzip and zip against the truth's text, object and compiled
    form, both modes and thread counts; frames of ranks and of scores; validate without truth; explain."""
    import pyarrow as pa

    from scorer import api
    from scorer.truth.impressions import read_impression_truth

    truth_path = folder / "mind_truth.txt"
    truth_path.write_text(IMPRESSION_TRUTH)
    compiled = folder / "mind.impressions.npz"
    read_impression_truth(truth_path, use_cache=False).save(compiled)
    truths = [truth_path, api.resolve_truth(truth_path, api.resolve_competition("mind")), compiled]
    found = []
    for n, text in enumerate(IMPRESSION_FILES):
        files = written(folder, f"prediction{n}", ".txt", text, member="prediction.txt")
        for submission in files:
            found += scored_every_way(submission, truths, "mind")
        found.append(_command("explain", files[0], "--truth", truth_path, "--competition", "mind"))
    frames = ({"impression_id": [1, 2, 3], "ranks": [[2, 1, 3], [1], [1, 3, 2, 4]]},
              {"impression_id": [1, 3, 3], "scores": [[0.1, 0.9, float("nan")], [0.5, 0.5, 0.2, 0.1], [0.3]]})
    found += [api.score(pa.table(frame), truths[1], "mind").to_dict() for frame in frames]
    return found


# The table reader (scorer.kernels.table_rows): per config, its truth in the published form and two files, a clean one and
# one of problems (a missing row, a repeated key, a repeated item, a bad field count, quotes, CRLF, a bad rank or value).
TABLE_EXAMPLES = {
    "trivago19": ("truth.csv", "user_id,session_id,timestamp,step,action_type,reference,city\nU,S,1,1,clickout item,7,\"Berlin, DE\"\n"
                  "U,S,2,2,clickout item,8,x\nV,T,3,1,interaction item image,9,x\n",
                  ("step,item_recommendations,timestamp,session_id,user_id\n1,6 7 8,1,S,U\n2,8,2,S,U\n",
                   'user_id,session_id,timestamp,step,item_recommendations\r\nU,S,1,1,7 7\r\nU,S,1,1,"7 6"\r\nX,S,1,1,7\r\nU,S,2\r\n')),
    "spotify-mpd": ("truth.json", '{"playlists": [{"pid": 1, "tracks": [{"track_uri": "a"}, {"track_uri": "b"}]}, '
                                  '{"pid": 2, "tracks": [{"track_uri": "c"}]}]}',
                    ("team_info,main,t,e\n1, b, x, a\n2, c\n", "# c\nteam_info,main,t,e\n\n1, x,a, a ,,b\n3, c\n")),
    "dressipi22": ("truth.csv", "session_id,item_id,date\n1,10,d\n2,20,d\n",
                   ("session_id,item_id,rank\n1,11,2\n1,10,1\n2,20,1\n", "session_id,item_id,rank\n1,10,x\n1,10,2\n1,10,3\n3,1,1\n")),
    "twitter20": ("truth.csv", "tweet_id,engaging_user_id,label\nT1,U1,1\nT2,U2,0\nT3,U3,1\n",
                  ("T1,U1,0.9\nT2,U2,0.1\nT3,U3,0\n", "T1,U1,x\nT2,U2,1e400\nT3,U3,0.5\nT3,U3,0.6\n")),
    "yoochoose15": ("truth.dat", "1;5,6\n2;\n3;7\n", ("1;5,8\n2;6\n", "1;5,,5\n4;1\n")),
}


def run_tables(folder: Path) -> list:
    """The table reader's configs: files plain and gzip against the truth's published, object and compiled form, both
    modes and thread counts; validate without truth."""
    from scorer import api
    from scorer.truth.strings import read_string_truth

    found = []
    for name, (truth_name, truth_text, files) in TABLE_EXAMPLES.items():
        competition = api.resolve_competition(name)
        truth_path = folder / f"{name}_{truth_name}"
        truth_path.write_text(truth_text)
        compiled = folder / f"{name}.strings.npz"
        read_string_truth(truth_path, competition.shape, competition.types[0], use_cache=False, competition=competition).save(compiled)
        truths = [truth_path, api.resolve_truth(truth_path, competition), compiled]
        for n, text in enumerate(files):
            for submission in written(folder, f"{name}{n}", ".csv", text):
                found += scored_every_way(submission, truths, competition)
    return found


def runs(names) -> dict:
    """Per stage, the run that covers its kernels (names: the competitions whose examples score and strings score)."""
    return {"score": lambda folder: run_score(names, folder),
            "strings": lambda folder: run_score(names, folder, ("list", "long", "value")) + run_tables(folder),
            "explain": run_explain, "candidates": run_candidates, "resample": run_resample, "prepare": run_prepare, "audit": run_audit,
            "partitions": run_partitions, "solution": run_solution, "impressions": run_impressions}


def run(stage: str, folder: Path, names=("otto", "hm", "instacart", "airbnb", "ratings")) -> list:
    """The stage's run in a fresh subfolder of folder, without what may differ between two runs."""
    where = folder / stage
    where.mkdir(exist_ok=True)
    return stable(runs(names)[stage](where))


def digest(found) -> str:
    return hashlib.sha256(json.dumps(found, sort_keys=True, default=str).encode()).hexdigest()
