"""EvalAI's remote evaluation end to end: a worker as EvalAI-Starters' main.py runs, against EvalAI's API on loopback.

main.py (Cloud-CV/EvalAI-Starters remote_challenge_evaluation/, with eval_ai_interface.py; not in this repository)
polls the challenge's queue, fetches the submission and its phase, marks it running (PATCH), downloads the upload,
calls evaluate(path, phase codename), then PUTs update_submission with submission_status FINISHED and
`result` = json.dumps(evaluate(...)["result"]), or, when anything in that raises (an HTTP error of the PUT too),
FAILED with stderr = str(error); every call through requests.request(method, url, headers, data=form) and
raise_for_status(). remote_main_py() below does those steps, in that order, with requests.

EvalAI's answer to the PUT is its view update_submission (Cloud-CV/EvalAI apps/jobs/views.py):
- in every run, evalai_update_submission() below: the view's checks as its code makes them, in our words;
- where a checkout of EvalAI is here ($SCORER_EVALAI, else the copy the development machine fetched), the view's
  own code: test_the_upload_passes_evalai_s_own_view runs the function's body from views.py as written (its
  decorators, which authenticate and throttle, left out), with Django's and Django REST framework's request, parsers
  and Response; the database behind it (the phase splits, the submission, the leaderboard rows) is held in memory
  from challenge_config.yaml. It is not vendored here, so where no checkout is there (CI) that test says so and skips.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

import pytest
import requests

from evalai_standin import Challenge, EvalAIStandIn
from loopback import repository_file

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "bundles" / "evalai"
SUBMISSION, TRUTH = ROOT / "fixtures" / "otto_submission.csv", ROOT / "fixtures" / "otto_truth.jsonl"
EVALAI = Path(os.environ.get("SCORER_EVALAI", "/work/.mirror/Cloud-CV+EvalAI/repo"))
TOKEN, QUEUE = "host-token", "otto-queue"
TEST_PHASE = 2  # challenge_config.yaml: phase 2 is `test`, on the split test_split


def remote_evaluate():
    spec = importlib.util.spec_from_file_location("evaluate", BUNDLE / "remote_challenge_evaluation" / "evaluate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.evaluate


def remote_main_py(api: str, challenge_pk: int, evaluate, save_dir: Path, rounds: int = 10) -> None:
    """main.py's loop, without its minute's sleep, until the queue is empty (at most `rounds` messages)."""
    headers = {"Authorization": f"Bearer {TOKEN}"}

    def call(method, path, data=None):
        response = requests.request(method=method, url=api + path, headers=headers, data=data, timeout=60)
        response.raise_for_status()
        return response.json()

    update = f"/api/jobs/challenge/{challenge_pk}/update_submission/"
    for _ in range(rounds):
        message = call("GET", f"/api/jobs/challenge/queues/{QUEUE}/")
        body = message.get("body")
        if not body:
            return
        submission = call("GET", f"/api/jobs/submission/{body['submission_pk']}")
        phase = call("GET", f"/api/challenges/challenge/phase/{body['phase_pk']}")
        if submission.get("status") in ("finished", "failed", "cancelled"):
            call("POST", f"/api/jobs/queues/{QUEUE}/", {"receipt_handle": message.get("receipt_handle")})
            continue
        if submission.get("status") == "submitted":
            call("PATCH", update, {"submission": body["submission_pk"], "submission_status": "RUNNING"})
        path = save_dir / submission["input_file"].split("/")[-1]
        path.write_bytes(requests.get(submission["input_file"], timeout=60).content)
        finished = {"challenge_phase": body["phase_pk"], "submission": body["submission_pk"], "stdout": "", "metadata": ""}
        try:
            results = evaluate(str(path), phase["codename"])
            call("PUT", update, {**finished, "stderr": "", "submission_status": "FINISHED", "result": json.dumps(results["result"])})
        except Exception as error:
            call("PUT", update, {**finished, "stderr": str(error), "submission_status": "FAILED"})
    raise AssertionError(f"the queue still holds messages after {rounds} rounds")


def evalai_update_submission(request, challenge: Challenge) -> tuple[int, dict]:
    """update_submission's PUT as EvalAI's code checks it (apps/jobs/views.py), in our words: the status must be
    finished, failed or cancelled; for finished, `result` must be JSON, a list whose every entry names in "split" a
    dataset split of this phase (else 400), and whose "accuracies" hold only the labels of that split's leaderboard
    (else 400) with int or float values (else 400). An entry that is not an object fails the view (500). Stored: the
    status, stdout, stderr, and each split's accuracies as its leaderboard row."""
    form = request.form
    status = form.get("submission_status", "").lower()
    if status not in ("failed", "cancelled", "finished"):
        return 400, {"error": "Sorry, submission status is invalid"}
    rows = {}
    if status == "finished":
        try:
            results = json.loads(form.get("result", ""))
        except (ValueError, TypeError) as exc:
            return 400, {"error": f"`result` key contains invalid data with error {exc}.Please try again with correct format."}
        for entry in results:
            if not isinstance(entry, dict):
                return 500, {"error": "AttributeError: the view reads each entry with .get"}
            split, accuracies = entry.get("split"), entry.get("accuracies")
            labels = challenge.phase_splits.get((int(form["challenge_phase"]), split))
            if labels is None:
                return 400, {"error": f"Challenge Phase Split does not exist with phase_id: {form['challenge_phase']} andsplit codename: {split}"}
            if not isinstance(accuracies, dict):
                return 500, {"error": "AttributeError: the view reads accuracies with .items()"}
            if [metric for metric in accuracies if metric not in labels]:
                return 400, {"error": f"Following metrics are missing in theleaderboard data: {[m for m in accuracies if m not in labels]}"}
            if [metric for metric, value in accuracies.items() if not isinstance(value, (float, int))]:
                return 400, {"error": "Values for following metrics are not offloat/int"}
            rows[split] = accuracies
    submission = challenge.submissions[int(form["submission"])]
    submission.update(status=status, stdout=form.get("stdout", ""), stderr=form.get("stderr", ""), leaderboard=rows)
    return 200, {"success": "Submission result has been successfully updated"}


def strict_figures(submission: Path, truth: Path) -> dict:
    from scorer.adapters.message import leaderboard_values
    from scorer.api import score

    return leaderboard_values(score(submission, truth, "otto", strict=True))


def _run_worker(tmp_path, monkeypatch, update) -> Challenge:
    """Three uploads to the test phase (good, a bad row, not even a CSV), run through main.py's steps."""
    monkeypatch.setenv("SCORER_TRUTH_TEST", str(TRUTH))
    challenge = Challenge.of(BUNDLE / "challenge_config.yaml")
    save_dir = tmp_path / "downloads"
    save_dir.mkdir()
    with EvalAIStandIn(challenge, TOKEN, QUEUE, update) as api:
        api.submit(TEST_PHASE, "a1b2c3.csv", SUBMISSION.read_bytes())
        api.submit(TEST_PHASE, "d4e5f6.csv", SUBMISSION.read_bytes().replace(b"_carts", b"_cart", 1))
        api.submit(TEST_PHASE, "g7h8i9.csv", b"\x89PNG\r\n\x1a\n")
        remote_main_py(api.address, challenge.pk, remote_evaluate(), save_dir)
    return challenge


def _check_the_worker_s_outcome(challenge: Challenge) -> None:
    good, bad, image = (challenge.submissions[pk] for pk in (1, 2, 3))
    assert good["status"] == "finished" and good["stderr"] == "", good
    assert good["leaderboard"] == {"test_split": pytest.approx(strict_figures(SUBMISSION, TRUTH), abs=1e-12)}
    assert bad["status"] == "failed" and bad["stderr"].startswith("Submission rejected: S005 line"), bad
    assert image["status"] == "failed" and image["stderr"].startswith("Submission rejected:") and "\n" not in image["stderr"]


def test_the_remote_worker_s_upload_passes_evalai_s_checks(tmp_path, monkeypatch):
    challenge = _run_worker(tmp_path, monkeypatch, evalai_update_submission)
    _check_the_worker_s_outcome(challenge)


def test_the_hosted_workers_result_form_is_refused_by_the_remote_route(tmp_path, monkeypatch):
    """What evaluate.py returned before: [{split: figures}], the hosted worker's form. EvalAI answers 400 (no "split"),
    and main.py marks the submission FAILED, the HTTP error as its stderr: the failure this route had."""
    monkeypatch.setenv("SCORER_TRUTH_TEST", str(TRUTH))
    evaluate = remote_evaluate()

    def hosted_form(path, codename):
        output = evaluate(path, codename)
        return {**output, "result": [{entry["split"]: entry["accuracies"]} for entry in output["result"]]}

    challenge = Challenge.of(BUNDLE / "challenge_config.yaml")
    (tmp_path / "downloads").mkdir()
    with EvalAIStandIn(challenge, TOKEN, QUEUE, evalai_update_submission) as api:
        api.submit(TEST_PHASE, "a1b2c3.csv", SUBMISSION.read_bytes())
        remote_main_py(api.address, challenge.pk, hosted_form, tmp_path / "downloads")
    assert challenge.submissions[1]["status"] == "failed" and "400 Client Error" in challenge.submissions[1]["stderr"]


# -- EvalAI's own view -----------------------------------------------------------------------------------------------
def _evalai_file(path: str) -> str | None:
    return repository_file(EVALAI, path)


def _in_memory_models(challenge: Challenge, model_source: str) -> dict:
    """The names the view reads from EvalAI's models and utils, over `challenge` in memory. Submission's status
    constants are read from apps/jobs/models.py."""
    classes = {node.name: node for node in ast.parse(model_source).body if isinstance(node, ast.ClassDef)}
    constants = {target.id: node.value.value for node in classes["Submission"].body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name) and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, str)}

    class Missing(Exception):
        """Django's Model.DoesNotExist."""

    class PhaseSplits:
        DoesNotExist = Missing

        class objects:  # noqa: N801 (Django's manager attribute)
            @staticmethod
            def get(challenge_phase__pk, dataset_split__codename):
                labels = challenge.phase_splits.get((int(challenge_phase__pk), dataset_split__codename))
                if labels is None:
                    raise Missing
                return SimpleNamespace(pk=f"{challenge_phase__pk}/{dataset_split__codename}", split=dataset_split__codename,
                                       leaderboard=SimpleNamespace(pk=1, schema={"labels": labels}))

    class StoredFile:
        def __init__(self, record, key):
            self.record, self.key, self.name = record, key, key

        def save(self, name, content):
            data = content.read()
            self.record[self.key] = data.decode() if isinstance(data, bytes) else data

    class SubmissionRow:
        def __init__(self, record):
            self.record, self.id, self.pk, self.job_name = record, record["id"], record["id"], []
            for key in ("stdout", "stderr", "environment_log", "submission_result", "submission_metadata"):
                setattr(self, f"{key}_file", StoredFile(record, key))

        status = property(lambda self: self.record["status"], lambda self, value: self.record.__setitem__("status", value))

        def save(self):
            pass

    from rest_framework import serializers

    class LeaderboardRows(serializers.Serializer):
        """CreateLeaderboardDataSerializer's fields (apps/jobs/serializers.py: a ModelSerializer of LeaderboardData whose
        `result` is a JSONField), filled from the context as its __init__ fills them; save() keeps the row."""
        challenge_phase_split = serializers.CharField()
        submission = serializers.IntegerField()
        leaderboard = serializers.IntegerField()
        result = serializers.JSONField()

        def __init__(self, *args, **kwargs):
            split, submission = kwargs["context"]["challenge_phase_split"], kwargs["context"]["submission"]
            kwargs["data"].update(challenge_phase_split=split.pk, submission=submission.pk, leaderboard=split.leaderboard.pk)
            self.row = (submission.record, split.split)
            super().__init__(*args, **kwargs)

        def save(self):
            self.row[0].setdefault("leaderboard", {})[self.row[1]] = self.validated_data["result"]

    def no_row(submission_pk, split_pk):
        raise Missing

    return {"Submission": type("Submission", (), constants), "ChallengePhaseSplit": PhaseSplits,
            "LeaderboardData": SimpleNamespace(DoesNotExist=Missing), "get_leaderboard_data_model": no_row,
            "get_submission_model": lambda pk: SubmissionRow(challenge.submissions[int(pk)]),
            "CreateLeaderboardDataSerializer": LeaderboardRows,
            "is_user_a_staff": lambda user: True, "is_user_a_host_of_challenge": lambda user, pk: True,
            "log_submission_artifact_upload_context": lambda *a, **k: None, "trigger_eks_node_autoscale": lambda *a, **k: None,
            "enqueue_submission_artifact_retention_tagging": lambda *a, **k: None}


def evalai_s_view(views_source: str, model_source: str):
    """update(request, challenge) answering with EvalAI's own update_submission, its body as views.py writes it."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(SECRET_KEY="scorer-tests", USE_TZ=True, ALLOWED_HOSTS=["*"],
                           INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "rest_framework"],
                           DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}})
        django.setup()
    import logging

    from django.core.files.base import ContentFile
    from django.db import IntegrityError, transaction
    from django.test import RequestFactory
    from django.utils import timezone
    from rest_framework import status
    from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
    from rest_framework.request import Request
    from rest_framework.response import Response

    function = next(node for node in ast.parse(views_source).body
                    if isinstance(node, ast.FunctionDef) and node.name == "update_submission")
    function.decorator_list = []  # authentication, permissions, throttling: this is the host's own token

    def update(request, challenge: Challenge) -> tuple[int, dict]:
        names = {"json": json, "logger": logging.getLogger("evalai"), "Response": Response, "status": status,
                 "transaction": transaction, "IntegrityError": IntegrityError, "ContentFile": ContentFile, "timezone": timezone,
                 **_in_memory_models(challenge, model_source)}
        exec(compile(ast.Module([function], []), "apps/jobs/views.py", "exec"), names)
        django_request = RequestFactory().generic("PUT", request.path, request.body.encode(), content_type=request.content_type)
        answer = names["update_submission"](Request(django_request, parsers=[JSONParser(), FormParser(), MultiPartParser()]),
                                            challenge.pk)
        return answer.status_code, dict(answer.data)

    return update


def test_the_upload_passes_evalai_s_own_view(tmp_path, monkeypatch):
    views, models = _evalai_file("apps/jobs/views.py"), _evalai_file("apps/jobs/models.py")
    if views is None or models is None:
        pytest.skip(f"EvalAI's source is not here: set SCORER_EVALAI to a checkout of Cloud-CV/EvalAI (looked in {EVALAI})")
    pytest.importorskip("django", reason="Django (the test extra) runs EvalAI's view")
    pytest.importorskip("rest_framework", reason="Django REST framework (the test extra) runs EvalAI's view")
    view = evalai_s_view(views, models)
    challenge = _run_worker(tmp_path, monkeypatch, view)
    _check_the_worker_s_outcome(challenge)

    hosted = Challenge.of(BUNDLE / "challenge_config.yaml")  # the hosted worker's form, refused by the view itself
    hosted.submissions[1] = {"id": 1, "status": "running", "challenge_phase": TEST_PHASE}
    form = {"challenge_phase": str(TEST_PHASE), "submission": "1", "submission_status": "FINISHED", "stdout": "", "stderr": "",
            "metadata": "", "result": json.dumps([{"test_split": strict_figures(SUBMISSION, TRUTH)}])}
    request = SimpleNamespace(form=form, body=urlencode(form),
                              content_type="application/x-www-form-urlencoded", path=f"/api/jobs/challenge/{hosted.pk}/update_submission/")
    code, answer = view(request, hosted)
    assert code == 400 and "split codename: None" in answer["error"], answer
