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

import gzip
import importlib.util
import json
import math
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
from loopback import repository_file

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
    """`scorer score --split usage`'s figures of each side, a null (no truth of that type on that side) as NaN."""
    code, out, err = run_cli("score", competition.hub / "submissions" / "team-1-sub-1.csv", "--truth", competition.truth_with_usage,
                             "--split", "usage", "--strict", "--format", "json")
    assert code == 0, err
    figures = json.loads(out)["analytics"]["split"]["figures"]
    nan_for_null = lambda value: math.nan if value is None else value  # noqa: E731
    return {f"{side}_score": {"score": figures[side]["score"], **{t: nan_for_null(figures[side]["metrics"][t]["recall@20"]) for t in TYPES}}
            for side in ("public", "private")}


def _same(evaluation: dict | None, expected: dict) -> bool:
    """The same keys and figures, NaN equal to NaN."""
    return evaluation is not None and json.dumps(evaluation, sort_keys=True) == json.dumps(expected, sort_keys=True)


def _cached_link(cache: Path, filename: str) -> Path:
    """The path hf_hub_download returned for `filename`: its cache's snapshot entry (one snapshot per commit)."""
    found = sorted((cache / "datasets--org--otto-demo" / "snapshots").glob(f"*/{filename}"), key=lambda p: p.lstat().st_mtime)
    assert found, f"no snapshot of {filename} in {cache}"
    return found[-1]


def test_the_metric_gives_the_public_and_private_figures_of_score_split_usage(hub):
    outcome = hub.evaluate()
    assert _same(outcome.get("evaluation"), _split_scores(hub)), outcome
    assert outcome["evaluation"]["public_score"]["score"] != outcome["evaluation"]["private_score"]["score"]
    assert hub.server.downloads == ["metric.py", "solution.csv", "submissions/team-1-sub-1.csv"]
    upload = _cached_link(hub.cache, "submissions/team-1-sub-1.csv")  # as on Linux: a link into the cache's blobs
    assert upload.is_symlink() and os.readlink(upload) == "../../../blobs/" + git_blob_sha1(upload.read_bytes())

    resubmitted = hub.hub / "submissions" / "team-1-sub-1.csv"  # the dataset changes: a new commit, a second snapshot
    resubmitted.write_text(resubmitted.read_text().replace("1_clicks,", "1_clicks,59 58 ", 1))
    outcome = hub.evaluate()
    assert _same(outcome.get("evaluation"), _split_scores(hub)), outcome
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


def _platform_source(path: str = "competitions/compute_metrics.py") -> str | None:
    return repository_file(PLATFORM, path)


def _platform_package(tmp_path) -> Path | None:
    """A folder holding the package `competitions` with the platform's compute_metrics.py, or None without a checkout."""
    source = _platform_source()
    if source is None:
        return None
    package = tmp_path / "platform" / "competitions"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compute_metrics.py").write_text(source)
    return package.parent


def test_the_platforms_own_compute_metrics(hub, tmp_path):
    platform = _platform_package(tmp_path)
    if platform is None:
        pytest.skip(f"the platform's source is not here: set SCORER_HF_COMPETITIONS to a checkout of huggingface/competitions "
                    f"(looked in {PLATFORM})")
    if importlib.util.find_spec("sklearn") is None:  # compute_metrics imports it for its built-in metrics
        pytest.skip("scikit-learn is not installed (the test extra has it)")
    outcome = hub.evaluate(platform=platform)
    assert _same(outcome.get("evaluation"), _split_scores(hub)), outcome
    bad = hub.hub / "submissions" / "team-1-sub-1.csv"
    bad.write_text("customer_id,prediction\n1,2\n")
    outcome = hub.evaluate(platform=platform)
    assert outcome.get("raised") == "SubmissionRejected" and outcome["message"].startswith("Submission rejected: S00"), outcome


# -- the platform's Python ----------------------------------------------------------------------------------------------
# The platform's image (huggingface/competitions: Dockerfile, requirements.txt, requirements_docker.txt at d887d2e):
# a conda environment of Python 3.10 at /app/env holding these, among others.
PLATFORM_PYTHON = "3.10"
PLATFORM_PINS = ("huggingface_hub==0.24.6", "pandas==2.2.2", "scikit-learn==1.5.1")


def _python(version: str) -> Path | None:
    """That Python: pyenv's, else pythonX.Y on PATH (as tools/release.sh finds it)."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for candidate in sorted(root.glob(f"versions/{version}.*/bin/python3")) + [Path(p) for p in [shutil.which(f"python{version}")] if p]:
        done = subprocess.run([str(candidate), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == version:
            return candidate
    return None


def test_the_documented_route_installs_into_the_platform_s_python():
    """docs/hosting.md and metric.py install the wheel into /app/env, the conda environment the platform's image makes
    of Python 3.10 and runs the app and each evaluation in; its pins are the ones the 3.10 test installs beside it."""
    route = "RUN /app/env/bin/python -m pip install --no-cache-dir /tmp/wheels/recsys_scorer-*.whl"
    assert route in (ROOT / "docs" / "hosting.md").read_text() and route in METRIC.read_text()
    assert "FROM huggingface/competitions:latest" in METRIC.read_text()
    dockerfile = _platform_source("Dockerfile")
    if dockerfile is None:
        pytest.skip(f"the platform's source is not here: set SCORER_HF_COMPETITIONS to a checkout (looked in {PLATFORM})")
    assert f"conda create -p /app/env -y python={PLATFORM_PYTHON}\n" in dockerfile
    assert "pip install -e ." in dockerfile  # the platform itself goes into that environment
    create = _platform_source("competitions/create.py")
    assert "FROM huggingface/competitions:latest" in create and "CMD uvicorn competitions.app:app --host 0.0.0.0 --port 7860 --workers 1" in create
    pinned = (_platform_source("requirements.txt") + _platform_source("requirements_docker.txt")).lower().replace("-", "_")
    assert all(pin.lower().replace("-", "_") in pinned.splitlines() for pin in PLATFORM_PINS), PLATFORM_PINS
    evaluate = _platform_source("competitions/evaluate.py")  # requirements.txt: script competitions only
    assert 'if params.competition_type == "script":' in evaluate and evaluate.index("competition_type == \"script\"") < evaluate.index("install_requirements")


@pytest.mark.slow
def test_the_scorer_installs_and_grades_on_the_platform_s_python_3_10(hub, tmp_path):
    """docs/hosting.md's route: the wheel installed with pip into the platform's Python 3.10 beside its pins of
    huggingface_hub, pandas and scikit-learn; then evaluations as the platform runs them, with that Python. The wheel
    is the pure one of this tree (the release's cp310 wheel is the same code with its kernels compiled)."""
    python = _python(PLATFORM_PYTHON)
    if python is None:
        pytest.skip(f"no Python {PLATFORM_PYTHON} here (looked under pyenv and for python{PLATFORM_PYTHON} on PATH)")
    source = tmp_path / "source"  # the work tree's files, less what git ignores (build output, caches, .venv)
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    venv = tmp_path / "py310"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    env = {**os.environ, "SCORER_BUILD_AOT": "0"}
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(source)], check=True, env=env, timeout=900)
    wheel = next((tmp_path / "dist").glob("recsys_scorer-*-py3-none-any.whl"))
    subprocess.run([*pip, "install", str(wheel), *PLATFORM_PINS], check=True, timeout=1800)

    outcome = hub.evaluate(python=str(venv / "bin" / "python"))
    assert _same(outcome.get("evaluation"), _split_scores(hub)), outcome
    zulu = subprocess.run([str(venv / "bin" / "python"), "-c", "from scorer.analytics.teams_file import _seconds\n"
                           "print(_seconds('2024-03-01T12:00:00Z', 'row 2', 'teams.csv'))"], capture_output=True, text=True)
    assert zulu.stdout.split() == ["1709294400.0"], zulu.stderr  # a teams file's times as 3.11 reads them (3.10 reads no Z)
    platform = _platform_package(tmp_path)
    if platform is not None:  # and through the platform's own compute_metrics, where a checkout is here
        outcome = hub.evaluate(platform=platform, python=str(venv / "bin" / "python"))
        assert _same(outcome.get("evaluation"), _split_scores(hub)), outcome
    bad = hub.hub / "submissions" / "team-1-sub-1.csv"
    bad.write_text(bad.read_text().replace("1_carts", "1_cart", 1))
    outcome = hub.evaluate(python=str(venv / "bin" / "python"))
    assert outcome.get("raised") == "SubmissionRejected" and outcome["message"].startswith("Submission rejected: S005 line 3"), outcome
    bad.with_suffix(".gz").write_bytes(gzip.compress(bad.read_bytes()))  # found by the platform's huggingface_hub's listing
    bad.unlink()
    outcome = hub.evaluate(python=str(venv / "bin" / "python"))
    assert outcome.get("raised") == "SubmissionRejected" and outcome["message"].startswith("Submission rejected: S005 line 3"), outcome


# -- the shapes the metric reads -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["hf-solution", "kaggle-solution"])
def test_exporting_a_solution_of_another_shape_says_the_shape_before_reading_the_truth(tmp_path, target):
    """hm's truth is read as hm's (a list shape): the sentence is the shape's, not a truth column missing for otto's."""
    truth = tmp_path / "hm_truth.csv"
    truth.write_text("customer_id,prediction\n" + "a" * 64 + ",0706016001\n")
    code, _, err = run_main("export", target, truth, "-o", tmp_path / "solution.csv", "--competition", "hm")
    assert code == 2 and f"{target} writes solutions of shape 'id_type'" in err and "shape 'list'" in err, err
    assert "column" not in err and not (tmp_path / "solution.csv").exists()


def _hand_split(competition, public: dict, private: dict) -> None:
    """The competition's solution.csv and truth with usage rewritten: `public` and `private` map sessions to labels."""
    rows, lines = ["session_type,labels,split"], []
    for side, truth in (("public", public), ("private", private)):
        for session, labels in truth.items():
            rows += [f"{session}_{t},{' '.join(map(str, labels.get(t, [])))},{side}" for t in TYPES]
            lines.append(json.dumps({"session": session, "labels": labels, "usage": side.title()}) + "\n")
    (competition.hub / "solution.csv").write_text("\n".join(rows) + "\n")
    competition.truth_with_usage.write_text("".join(lines))
    guesses = {**public, **private}
    (competition.hub / "submissions" / "team-1-sub-1.csv").write_text("session_type,labels\n" + "".join(
        f"{s}_{t},{' '.join(map(str, guesses[s].get(t, [])[:1] + [90, 91]))}\n" for s in guesses for t in TYPES))


def test_a_type_without_truth_on_a_side_is_nan_there_where_score_gives_null(hub):
    """Not 0.0, which reads as a submission that found nothing; and not None, with which the platform's leaderboard
    (competitions/leaderboard.py: every score column .round(4)) fails on a column of None."""
    _hand_split(hub, public={1: {"clicks": [1], "carts": [2]}, 2: {"clicks": [3]}},
                private={3: {"clicks": [4], "orders": [5]}, 4: {"orders": [6, 7]}})
    evaluation = hub.evaluate().get("evaluation")
    assert _same(evaluation, _split_scores(hub)), evaluation
    assert math.isnan(evaluation["public_score"]["orders"]) and math.isnan(evaluation["private_score"]["carts"])
    assert evaluation["public_score"]["carts"] == 1.0 and evaluation["private_score"]["orders"] == 2 / 3



@pytest.mark.parametrize("extension", ["gz", "zip"])
def test_an_upload_kept_under_the_participant_s_extension_is_found_and_read(hub, extension):
    """The platform stores an upload as submissions/{team}-{submission}.{the participant's file's extension}
    (competitions/submissions.py, new_submission): a .csv.gz becomes .gz. The metric finds it through the Hub's tree
    listing and reads it by its bytes."""
    import zipfile

    csv = hub.hub / "submissions" / "team-1-sub-1.csv"
    expected = _split_scores(hub)
    kept = csv.with_suffix("." + extension)
    if extension == "gz":
        kept.write_bytes(gzip.compress(csv.read_bytes()))
    else:
        with zipfile.ZipFile(kept, "w") as archive:
            archive.writestr("submission.csv", csv.read_bytes())
    csv.unlink()
    outcome = hub.evaluate()
    assert _same(outcome.get("evaluation"), expected), outcome
    assert hub.server.downloads[-1] == f"submissions/team-1-sub-1.{extension}"
    (hub.hub / "submissions" / "team-1-sub-1.txt").write_text("session_type,labels\n")  # two of that name: which?
    outcome = hub.evaluate()
    assert outcome.get("raised") == "EvaluationFailed" and "2 files named submissions/team-1-sub-1." in outcome["stderr"], outcome
