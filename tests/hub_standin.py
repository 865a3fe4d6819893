"""A Hugging Face Hub stand-in on loopback: one dataset repository served from a folder, for the real hf_hub_download.

hf_hub_download (huggingface_hub, pointed here by HF_ENDPOINT) asks `HEAD {endpoint}/datasets/{repo}/resolve/{revision}/
{path}` for the file's commit (X-Repo-Commit), etag (ETag) and size (Content-Length), then GETs the same address and
lays the bytes out in its cache as on the Hub: blobs/<etag>, and snapshots/<commit>/<path> linking to it. This serves
those two requests from a folder, as the Hub answers them: the etag is the file's git blob SHA-1 (a file kept in git),
the commit a hash of every file's path and etag (a changed file makes a new commit), a missing file is 404 with
X-Error-Code EntryNotFound, and a request without the repository's token is 401. `GET {endpoint}/api/datasets/{repo}/
tree/{revision}/{folder}` lists a folder's entries (HfApi.list_repo_tree), in one page. Nothing else of the Hub is served.
"""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote

from loopback import LoopbackServer


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubStandIn(LoopbackServer):
    """`with HubStandIn(folder, "org/name", "hf_token") as hub:` serves `folder` at hub.endpoint; hub.downloads lists
    the paths whose bytes were sent, in order."""

    def __init__(self, folder: Path, repo_id: str, token: str):
        self.folder, self.repo_id, self.token = Path(folder), repo_id, token
        self.downloads: list[str] = []
        self._serve()
        self.endpoint = self.address

    def commit(self) -> str:
        listing = sorted((str(p.relative_to(self.folder)), git_blob_sha1(p.read_bytes())) for p in self.folder.rglob("*") if p.is_file())
        return hashlib.sha1(repr(listing).encode()).hexdigest()

    def _handler(self):
        hub = self
        prefix = f"/datasets/{hub.repo_id}/resolve/"

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet: the tests read what was served from hub.downloads
                pass

            def do_HEAD(self):
                self._answer(send_body=False)

            def do_GET(self):
                if self.path.startswith(f"/api/datasets/{hub.repo_id}/tree/"):
                    return self._tree()
                self._answer(send_body=True)

            def _tree(self) -> None:
                """A folder's entries, as the Hub's tree API lists them (one page: no Link header)."""
                if self.headers.get("Authorization") != f"Bearer {hub.token}":
                    return self._error(401, "RepoNotFound")
                rest = unquote(self.path.split("?", 1)[0][len(f"/api/datasets/{hub.repo_id}/tree/"):])
                folder = hub.folder / rest.split("/", 1)[1] if "/" in rest else hub.folder
                if ".." in Path(rest).parts or not folder.is_dir():
                    return self._error(404, "EntryNotFound")
                entries = [{"type": "file", "oid": git_blob_sha1(p.read_bytes()), "size": p.stat().st_size,
                            "path": str(p.relative_to(hub.folder))} if p.is_file() else
                           {"type": "directory", "oid": "0" * 40, "size": 0, "path": str(p.relative_to(hub.folder))}
                           for p in sorted(folder.iterdir())]
                data = json.dumps(entries).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, send_body: bool) -> None:
                path = unquote(self.path.split("?", 1)[0])
                if self.headers.get("Authorization") != f"Bearer {hub.token}":
                    return self._error(401, "RepoNotFound")
                if not path.startswith(prefix) or "/" not in path[len(prefix):]:
                    return self._error(404, "RepoNotFound")
                name = path[len(prefix):].split("/", 1)[1]
                file = hub.folder / name
                if ".." in Path(name).parts or not file.is_file():
                    return self._error(404, "EntryNotFound")
                data = file.read_bytes()
                self.send_response(200)
                self.send_header("X-Repo-Commit", hub.commit())
                self.send_header("ETag", f'"{git_blob_sha1(data)}"')
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if send_body:
                    hub.downloads.append(name)
                    self.wfile.write(data)

            def _error(self, code: int, kind: str) -> None:
                self.send_response(code)
                self.send_header("X-Error-Code", kind)
                self.send_header("X-Error-Message", kind)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler
