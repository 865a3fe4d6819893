"""EvalAI's API on loopback, as a remote evaluation worker (EvalAI-Starters' remote_challenge_evaluation/main.py) meets it.

Served, for one challenge built from a challenge_config.yaml (its phases, dataset splits, phase splits and leaderboard
labels, as EvalAI makes them when the challenge is created), the five addresses main.py calls, under the host's token
(`Authorization: Bearer TOKEN`; else 401):
  GET   /api/jobs/challenge/queues/QUEUE/                  the next message {"body": {...}, "receipt_handle"}, or {}
  POST  /api/jobs/queues/QUEUE/                            removes the message whose receipt_handle is sent
  GET   /api/jobs/submission/PK                            the submission: status, input_file (an address here)
  GET   /api/challenges/challenge/phase/PK                 the phase: codename
  PATCH and PUT /api/jobs/challenge/CHALLENGE/update_submission/
                                                           PATCH: running; PUT: the end of an evaluation
and the uploaded files under /media/. PUT is answered by `update(request, challenge)`, the caller's (request: the
form, its raw body, content type and path): EvalAI's view as the tests hold it, or the view itself (test_evalai_remote.py). Bodies come form-encoded, as main.py's
requests.request(data=...) sends them. Nothing else of EvalAI is served.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qsl

import yaml

from loopback import LoopbackServer


@dataclass
class Challenge:
    """What EvalAI holds of a challenge made from `config` (challenge_config.yaml): ids as the config numbers them."""

    pk: int
    phases: dict[int, str]  # phase pk -> codename
    phase_splits: dict[tuple[int, str], list[str]]  # (phase pk, split codename) -> the leaderboard's labels
    submissions: dict[int, dict] = field(default_factory=dict)  # pk -> status, phase, input_file, and what PUT stored

    @classmethod
    def of(cls, config: Path, pk: int = 7) -> Challenge:
        spec = yaml.safe_load(config.read_text())
        splits = {split["id"]: split["codename"] for split in spec["dataset_splits"]}
        labels = {board["id"]: board["schema"]["labels"] for board in spec["leaderboard"]}
        phase_splits = {(item["challenge_phase_id"], splits[item["dataset_split_id"]]): labels[item["leaderboard_id"]]
                        for item in spec["challenge_phase_splits"]}
        return cls(pk, {phase["id"]: phase["codename"] for phase in spec["challenge_phases"]}, phase_splits)


class EvalAIStandIn(LoopbackServer):
    """`with EvalAIStandIn(challenge, token, queue, update) as api:` serves at api.address; api.submit(phase_pk, name,
    data) queues an upload and returns its pk."""

    def __init__(self, challenge: Challenge, token: str, queue: str, update):
        self.challenge, self.token, self.queue, self.update = challenge, token, queue, update
        self.messages: list[dict] = []
        self.media: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._serve()

    def submit(self, phase_pk: int, name: str, data: bytes) -> int:
        with self._lock:
            pk = len(self.challenge.submissions) + 1
            self.media[f"submission_{pk}/{name}"] = data
            self.challenge.submissions[pk] = {"id": pk, "status": "submitted", "challenge_phase": phase_pk,
                                              "input_file": f"{self.address}/media/submission_{pk}/{name}"}
            self.messages.append({"body": {"submission_pk": pk, "challenge_pk": self.challenge.pk, "phase_pk": phase_pk},
                                  "receipt_handle": f"handle-{pk}"})
        return pk

    def _handler(self):
        api = self
        update_path = f"/api/jobs/challenge/{api.challenge.pk}/update_submission/"

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.startswith("/media/") and self.path[len("/media/"):] in api.media:
                    return self._send(200, api.media[self.path[len("/media/"):]], "application/octet-stream")
                if not self._authorised():
                    return
                if self.path == f"/api/jobs/challenge/queues/{api.queue}/":
                    with api._lock:
                        return self._json(200, api.messages[0] if api.messages else {})
                for prefix, table in (("/api/jobs/submission/", api.challenge.submissions),
                                      ("/api/challenges/challenge/phase/", {pk: {"id": pk, "codename": codename}
                                                                            for pk, codename in api.challenge.phases.items()})):
                    if self.path.startswith(prefix) and self.path[len(prefix):].rstrip("/").isdigit():
                        found = table.get(int(self.path[len(prefix):].rstrip("/")))
                        return self._json(200, found) if found else self._json(404, {"detail": "Not found."})
                self._json(404, {"detail": "Not found."})

            def do_POST(self):
                form = self._form()
                if self._authorised() and self.path == f"/api/jobs/queues/{api.queue}/":
                    with api._lock:
                        api.messages = [m for m in api.messages if m["receipt_handle"] != form.get("receipt_handle")]
                    return self._json(200, {"success": "Message deleted successfully from the queue"})
                self._json(404, {"detail": "Not found."})

            def do_PATCH(self):
                form = self._form()
                if not self._authorised() or self.path != update_path:
                    return self._json(404, {"detail": "Not found."})
                submission = api.challenge.submissions[int(form["submission"])]
                if form.get("submission_status", "").lower() not in ("queued", "running"):
                    return self._json(400, {"error": "Sorry, submission status is invalid"})
                submission["status"] = form["submission_status"].lower()
                self._json(200, submission)

            def do_PUT(self):
                form = self._form()
                if not self._authorised() or self.path != update_path:
                    return self._json(404, {"detail": "Not found."})
                request = SimpleNamespace(form=form, body=self.raw_body, content_type=self.content_type, path=self.path)
                try:
                    code, answer = api.update(request, api.challenge)
                except Exception as error:  # as a server's 500: the view failed
                    code, answer = 500, {"error": f"{type(error).__name__}: {error}"}
                self._json(code, answer)

            def _authorised(self) -> bool:
                if self.headers.get("Authorization") == f"Bearer {api.token}":
                    return True
                self._json(401, {"detail": "Authentication credentials were not provided."})
                return False

            def _form(self) -> dict:
                """The form-encoded body, each field's last value (as Django's QueryDict.get gives it)."""
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                self.raw_body, self.content_type = body, self.headers.get("Content-Type", "")
                return dict(parse_qsl(body, keep_blank_values=True))

            def _json(self, code: int, answer) -> None:
                self._send(code, json.dumps(answer).encode(), "application/json")

            def _send(self, code: int, data: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
