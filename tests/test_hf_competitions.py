"""Hugging Face Competitions: bundles/hf/metric.py called as the platform calls a custom metric.

The platform's worker (github huggingface/competitions, competitions/runner.py) starts `python -m competitions.evaluate`
for each submission, which calls compute_metrics(params) (competitions/compute_metrics.py): it downloads the
competition's metric.py with hf_hub_download, imports it as the module `metric` and returns its compute(params); a
raised exception marks the submission FAILED and its traceback goes to the organisers' log (competitions/utils.py,
monitor). Here each evaluation is such a process (hf_platform_call.py) with the real huggingface_hub, pointed by
HF_ENDPOINT at a Hub stand-in on loopback serving the competition's private dataset (hub_standin.py), so its cache is
laid out as on Linux: the returned paths are links into the cache's blobs/. The figures must be those of
`scorer score --split usage`.

test_the_platforms_own_compute_metrics runs the platform's own compute_metrics.py, read from a checkout of the
repository ($SCORER_HF_COMPETITIONS, or the copy the development machine fetched); it is not vendored here, and the
package index's `competitions` (0.1.6, January 2024) predates its custom-metric branch, so where no checkout is
there (CI has no network to GitHub) that one test says so and skips. The others run that branch as it is written.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import run_cli, run_main
from hub_standin import HubStandIn, git_blob_sha1

ROOT = Path(__file__).resolve().parent.parent
METRIC = ROOT / "bundles" / "hf" / "metric.py"
PLATFORM = Path(os.environ.get("SCORER_HF_COMPETITIONS", "/work/.mirror/huggingface+competitions/repo"))
CALL = Path(__file__).resolve().parent / "hf_platform_call.py"
TYPES = ("clicks", "carts", "orders")

pytest.importorskip("huggingface_hub")


def _truth(rng, sessions: int) -> dict[int, dict[str, list[int]]]:
    truth = {}
    for session in range(1, sessions + 1):
        labels = {t: sorted(set(rng.integers(0, 60, rng.integers(0, 4)).tolist())) for t in TYPES}
        truth[session] = {t: items for t, items in labels.items() if items}
    return truth


def _submission(rng, truth) -> str:
    lines = ["session_type,labels"]
    for session, labels in truth.items():
        for t in TYPES:
            guess = list(dict.fromkeys(labels.get(t, [])[:1] + rng.integers(0, 60, 12).tolist()))[:20]
            lines.append(f"{session}_{t},{' '.join(map(str, guess))}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def competition(tmp_path):
    """A competition's private dataset ("hub/"), the same truth as JSONL with Usage, and the params of one submission."""
    rng = np.random.default_rng(7)
    truth = _truth(rng, 300)
    jsonl = tmp_path / "truth.jsonl"
    jsonl.write_text("".join(json.dumps({"session": s, "labels": labels}) + "\n" for s, labels in truth.items()))
    hub = tmp_path / "hub"
    (hub / "submissions").mkdir(parents=True)
    code, _, err = run_main("export", "hf-solution", jsonl, "-o", hub / "solution.csv", "--sample", tmp_path / "sample.csv",
                           "--public", "0.4", "--seed", "3")
    assert code == 0, err
    shutil.copy(METRIC, hub / "metric.py")
    params = SimpleNamespace(competition_id="org/otto-demo", competition_type="generic", metric="custom", token="hf_token",
                             team_id="team-1", submission_id="sub-1", submission_id_col="session_type",
                             submission_cols=["session_type", "labels"], submission_rows=900, output_path=str(tmp_path / "out"),
                             submission_repo="", time_limit=600, dataset="", submission_filenames=["submission.csv"])
    (hub / "submissions" / "team-1-sub-1.csv").write_text(_submission(rng, truth))
    with_usage = tmp_path / "truth_usage.jsonl"
    sides = {}
    for line in (hub / "solution.csv").read_text().splitlines()[1:]:
        row_id, _, side = line.split(",")
        sides[int(row_id.split("_")[0])] = side.title()
    with_usage.write_text("".join(json.dumps({"session": s, "labels": labels, "usage": sides[s]}) + "\n" for s, labels in truth.items()))
    return SimpleNamespace(hub=hub, params=params, truth=truth, truth_with_usage=with_usage, downloads=[])


@pytest.fixture
def hub(competition, tmp_path):
    """The competition's private dataset served by a Hub stand-in on loopback; hub.evaluate() runs one evaluation as the
    platform does, in a process of its own, with the real hf_hub_download and its cache (HF_HOME) under tmp_path."""
    with HubStandIn(competition.hub, competition.params.competition_id, competition.params.token) as server:
        home = tmp_path / "hf-home"
        env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
        env.update(HF_ENDPOINT=server.endpoint, HF_HOME=str(home), HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")

        def evaluate(platform: Path | None = None, python: str = sys.executable) -> dict:
            """The outcome (hf_platform_call.py's JSON) with the process's stderr (the space's log) as "stderr"."""
            argv = [python, str(CALL), json.dumps(vars(competition.params))] + ([str(platform)] if platform else [])
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
            assert done.returncode == 0 and done.stdout.strip(), done.stderr
            return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}

        yield SimpleNamespace(**vars(competition), server=server, evaluate=evaluate, cache=home / "hub")


def _split_scores(competition) -> dict:
    code, out, err = run_cli("score", competition.hub / "submissions" / "team-1-sub-1.csv", "--truth", competition.truth_with_usage,
                             "--split", "usage", "--strict", "--format", "json")
    assert code == 0, err
    figures = json.loads(out)["analytics"]["split"]["figures"]
    return {f"{side}_score": {"score": figures[side]["score"], **{t: figures[side]["metrics"][t]["recall@20"] for t in TYPES}}
            for side in ("public", "private")}


def _cached_link(cache: Path, filename: str) -> Path:
    """The path hf_hub_download returned for `filename`: its cache's snapshot entry (one snapshot per commit)."""
    found = sorted((cache / "datasets--org--otto-demo" / "snapshots").glob(f"*/{filename}"), key=lambda p: p.lstat().st_mtime)
    assert found, f"no snapshot of {filename} in {cache}"
    return found[-1]


def test_the_metric_gives_the_public_and_private_figures_of_score_split_usage(hub):
    outcome = hub.evaluate()
    assert outcome.get("evaluation") == _split_scores(hub), outcome
    assert outcome["evaluation"]["public_score"]["score"] != outcome["evaluation"]["private_score"]["score"]
    assert hub.server.downloads == ["metric.py", "solution.csv", "submissions/team-1-sub-1.csv"]
    upload = _cached_link(hub.cache, "submissions/team-1-sub-1.csv")  # as on Linux: a link into the cache's blobs
    assert upload.is_symlink() and os.readlink(upload) == "../../../blobs/" + git_blob_sha1(upload.read_bytes())

    resubmitted = hub.hub / "submissions" / "team-1-sub-1.csv"  # the dataset changes: a new commit, a second snapshot
    resubmitted.write_text(resubmitted.read_text().replace("1_clicks,", "1_clicks,59 58 ", 1))
    outcome = hub.evaluate()
    assert outcome.get("evaluation") == _split_scores(hub), outcome
    assert len(list((hub.cache / "datasets--org--otto-demo" / "snapshots").iterdir())) == 2


def test_a_bad_submission_is_rejected_with_its_sentence_and_no_byte_of_the_solution(hub):
    bad = hub.hub / "submissions" / "team-1-sub-1.csv"
    bad.write_text(bad.read_text().replace("1_carts", "1_cart", 1))
    outcome = hub.evaluate()
    assert outcome.get("raised") == "SubmissionRejected", outcome
    assert outcome["message"].startswith("Submission rejected: S005 line 3")
    logged = outcome["log"]  # what the platform's monitor writes to the log
    assert "During handling" not in logged and "direct cause" not in logged
    solution_rows = (hub.hub / "solution.csv").read_text().splitlines()[1:]
    assert not any(row.split(",")[1] and row.split(",")[1] in logged for row in solution_rows if len(row.split(",")[1]) > 4)


def test_a_broken_solution_is_the_organisers_error_and_says_nothing_of_it(hub):
    solution = hub.hub / "solution.csv"
    solution.write_text(solution.read_text().replace(",public\n", ",both\n", 1))
    outcome = hub.evaluate()
    assert outcome.get("raised") == "EvaluationFailed" and "organisers" in outcome["message"], outcome
    assert "During handling" not in outcome["log"] and "direct cause" not in outcome["log"]
    assert "'both'" in outcome["stderr"]  # the detail, for the space's log


# -- the cache's link, and no other -----------------------------------------------------------------------------------
def _cache(tmp_path, filename: str, target: str | None = None, content: bytes = b"session_type,labels\n") -> Path:
    """A cache laid out as hf_hub_download lays it out for `filename` of org/otto-demo; `target`: another link text."""
    repo = tmp_path / "hub" / "datasets--org--otto-demo"
    etag = git_blob_sha1(content)
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "blobs" / etag).write_bytes(content)
    link = repo / "snapshots" / ("c" * 40) / filename
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target if target is not None else "../" * (filename.count("/") + 2) + "blobs/" + etag)
    return link


def test_the_cache_s_own_link_is_read_as_its_blob(tmp_path):
    from scorer.adapters.hf_competitions import cached_blob

    for filename in ("solution.csv", "submissions/team-1-sub-1.csv"):
        link = _cache(tmp_path, filename)
        blob = Path(cached_blob(str(link), "org/otto-demo", filename))
        assert blob.parent == link.parents[filename.count("/") + 2] / "blobs" and blob.is_file() and not blob.is_symlink()
    plain = tmp_path / "copied.csv"  # a cache without links (Windows, HF_HUB_DISABLE_SYMLINKS, local_dir): as it is
    plain.write_text("session_type,labels\n")
    assert cached_blob(str(plain), "org/otto-demo", "copied.csv") == str(plain)


@pytest.mark.parametrize("case", ["absolute", "one up too many", "not hex", "other repository", "not a snapshot",
                                  "blobs is a link", "another file name", "blob is a link"])
def test_any_other_link_is_refused_as_an_upload_s_link(tmp_path, case):
    """A link a participant could plant (to the truth, anywhere) is not followed: the upload's checks refuse it (S027)."""
    from scorer.adapters.hf_competitions import cached_blob
    from scorer.adapters.message import participant_message
    from scorer.api import score

    secret = tmp_path / "truth.jsonl"
    secret.write_text('{"session": 1, "labels": {"orders": [7]}}\n')
    filename, repo_id = "submissions/t-s.csv", "org/otto-demo"
    etag = git_blob_sha1(secret.read_bytes())
    if case == "absolute":
        link = _cache(tmp_path, filename, target=str(secret))
    elif case == "one up too many":
        link = _cache(tmp_path, filename, target="../../../../blobs/" + etag)
    elif case == "not hex":
        link = _cache(tmp_path, filename, target="../../../blobs/../../../truth.jsonl")
    elif case == "other repository":
        link, repo_id = _cache(tmp_path, filename), "org/another"
    elif case == "not a snapshot":
        link = _cache(tmp_path, filename)
        moved = link.parents[2].with_name("refs") / "x" / filename
        moved.parent.mkdir(parents=True)
        link.rename(moved)
        link = moved
    elif case == "blobs is a link":
        link = _cache(tmp_path, filename)
        blobs = link.parents[3] / "blobs"
        shutil.rmtree(blobs)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / os.readlink(link).rsplit("/", 1)[1]).symlink_to(secret)
        blobs.symlink_to(elsewhere)
    elif case == "another file name":
        link = _cache(tmp_path, filename)
        filename = "submissions/other.csv"
    else:  # the blob itself a link to the truth: the path is worked out, then the blob opened without following it
        link = _cache(tmp_path, filename)
        blob = link.parents[3] / os.readlink(link).replace("../", "")
        blob.unlink()
        blob.symlink_to(secret)
    given = cached_blob(str(link), repo_id, filename)
    assert case == "blob is a link" or given == str(link)
    message = participant_message(score(given, secret, "otto", strict=True, untrusted=True))
    assert message.startswith("Submission rejected: S027") and "symbolic link" in message, message
    assert "orders" not in message and "[7]" not in message


def _platform_source() -> str | None:
    """competitions/compute_metrics.py of the platform: from a checkout, or from the fetched repository's git."""
    checkout = PLATFORM / "competitions" / "compute_metrics.py"
    if checkout.is_file():
        return checkout.read_text()
    if (PLATFORM / "HEAD").is_file() or (PLATFORM / ".git").exists():
        shown = subprocess.run(["git", "-C", str(PLATFORM), "show", "HEAD:competitions/compute_metrics.py"], capture_output=True, text=True)
        if shown.returncode == 0:
            return shown.stdout
    return None


def test_the_platforms_own_compute_metrics(hub, tmp_path):
    source = _platform_source()
    if source is None:
        pytest.skip(f"the platform's source is not here: set SCORER_HF_COMPETITIONS to a checkout of huggingface/competitions "
                    f"(looked in {PLATFORM})")
    if importlib.util.find_spec("sklearn") is None:  # compute_metrics imports it for its built-in metrics
        pytest.skip("scikit-learn is not installed (the test extra has it)")
    package = tmp_path / "platform" / "competitions"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compute_metrics.py").write_text(source)
    outcome = hub.evaluate(platform=package.parent)
    assert outcome.get("evaluation") == _split_scores(hub), outcome
    bad = hub.hub / "submissions" / "team-1-sub-1.csv"
    bad.write_text("customer_id,prediction\n1,2\n")
    outcome = hub.evaluate(platform=package.parent)
    assert outcome.get("raised") == "SubmissionRejected" and outcome["message"].startswith("Submission rejected: S00"), outcome
