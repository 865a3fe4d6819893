"""Hugging Face Competitions: bundles/hf/metric.py called as the platform calls a custom metric.

The platform's worker (github huggingface/competitions, competitions/runner.py) calls compute_metrics(params)
(competitions/compute_metrics.py), which downloads the competition's metric.py with hf_hub_download, imports it as
the module `metric` and returns its compute(params); a raised exception marks the submission FAILED and its traceback
goes to the organisers' log (competitions/utils.py, monitor). Here hf_hub_download is pointed at local files (a
"hub" folder laid out as the competition's private dataset), and the figures must be those of
`scorer score --split usage`.

test_the_platforms_own_compute_metrics runs the platform's own compute_metrics.py, read from a checkout of the
repository ($SCORER_HF_COMPETITIONS, or the copy the development machine fetched); it is not vendored here, so where
neither is there (CI has no network to GitHub) that one test says so and skips. The others call metric.compute
exactly as that code does.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import run_cli, run_main, undo_blas_probe_stub

ROOT = Path(__file__).resolve().parent.parent
METRIC = ROOT / "bundles" / "hf" / "metric.py"
PLATFORM = Path(os.environ.get("SCORER_HF_COMPETITIONS", "/work/.mirror/huggingface+competitions/repo"))
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
def local_hub(competition, monkeypatch, tmp_path):
    """huggingface_hub.hf_hub_download reading the competition's dataset from hub/ (a copy in a cache folder, as the hub's)."""
    import huggingface_hub

    cache = tmp_path / "hf-cache"

    def hf_hub_download(repo_id, filename, token=None, repo_type=None, **kwargs):
        assert repo_id == competition.params.competition_id and repo_type == "dataset" and token == "hf_token"
        competition.downloads.append(filename)
        target = cache / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(competition.hub / filename, target)
        return str(target)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", hf_hub_download)
    monkeypatch.delitem(sys.modules, "metric", raising=False)
    yield competition
    sys.modules.pop("metric", None)
    sys.path[:] = [entry for entry in sys.path if not entry.startswith(str(cache))]


def _as_the_platform_calls(params):
    """compute_metrics' custom branch: download metric.py, import it as `metric`, compute(params), same keys both sides."""
    import huggingface_hub

    metric_file = huggingface_hub.hf_hub_download(repo_id=params.competition_id, filename="metric.py", token=params.token,
                                                  repo_type="dataset")
    sys.path.append(os.path.dirname(metric_file))
    evaluation = importlib.import_module("metric").compute(params)
    assert evaluation["public_score"].keys() == evaluation["private_score"].keys()
    return evaluation


def _split_scores(competition) -> dict:
    code, out, err = run_cli("score", competition.hub / "submissions" / "team-1-sub-1.csv", "--truth", competition.truth_with_usage,
                             "--split", "usage", "--strict", "--format", "json")
    assert code == 0, err
    figures = json.loads(out)["analytics"]["split"]["figures"]
    return {f"{side}_score": {"score": figures[side]["score"], **{t: figures[side]["metrics"][t]["recall@20"] for t in TYPES}}
            for side in ("public", "private")}


def test_the_metric_gives_the_public_and_private_figures_of_score_split_usage(local_hub):
    evaluation = _as_the_platform_calls(local_hub.params)
    assert evaluation == _split_scores(local_hub)
    assert evaluation["public_score"]["score"] != evaluation["private_score"]["score"]
    assert local_hub.downloads == ["metric.py", "solution.csv", "submissions/team-1-sub-1.csv"]


def test_a_bad_submission_is_rejected_with_its_sentence_and_no_byte_of_the_solution(local_hub):
    bad = local_hub.hub / "submissions" / "team-1-sub-1.csv"
    bad.write_text(bad.read_text().replace("1_carts", "1_cart", 1))
    with pytest.raises(Exception) as caught:
        _as_the_platform_calls(local_hub.params)
    assert type(caught.value).__name__ == "SubmissionRejected"
    assert str(caught.value).startswith("Submission rejected: S005 line 3")
    logged = "".join(traceback.format_exception(caught.value))  # what the platform's monitor writes to the log
    assert "During handling" not in logged and "direct cause" not in logged
    solution_rows = (local_hub.hub / "solution.csv").read_text().splitlines()[1:]
    assert not any(row.split(",")[1] and row.split(",")[1] in logged for row in solution_rows if len(row.split(",")[1]) > 4)


def test_a_broken_solution_is_the_organisers_error_and_says_nothing_of_it(local_hub, capsys):
    solution = local_hub.hub / "solution.csv"
    solution.write_text(solution.read_text().replace(",public\n", ",both\n", 1))
    with pytest.raises(Exception) as caught:
        _as_the_platform_calls(local_hub.params)
    assert type(caught.value).__name__ == "EvaluationFailed" and "organisers" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None or caught.value.__suppress_context__
    assert "'both'" in capsys.readouterr().err  # the detail, for the space's log


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


def test_the_platforms_own_compute_metrics(local_hub, tmp_path, monkeypatch):
    source = _platform_source()
    if source is None:
        pytest.skip(f"the platform's source is not here: set SCORER_HF_COMPETITIONS to a checkout of huggingface/competitions "
                    f"(looked in {PLATFORM})")
    undo_blas_probe_stub()  # the export of the fixture ran main() in this process
    pytest.importorskip("sklearn")  # compute_metrics imports it for its built-in metrics
    package = tmp_path / "platform" / "competitions"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compute_metrics.py").write_text(source)
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.delitem(sys.modules, "competitions", raising=False)
    monkeypatch.delitem(sys.modules, "competitions.compute_metrics", raising=False)
    compute_metrics = importlib.import_module("competitions.compute_metrics").compute_metrics
    assert compute_metrics(local_hub.params) == _split_scores(local_hub)
    bad = local_hub.hub / "submissions" / "team-1-sub-1.csv"
    bad.write_text("customer_id,prediction\n1,2\n")
    sys.modules.pop("metric", None)
    with pytest.raises(Exception, match=r"^Submission rejected: S00\d") as caught:
        compute_metrics(local_hub.params)
    assert type(caught.value).__name__ == "SubmissionRejected"
