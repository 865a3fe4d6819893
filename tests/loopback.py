"""What the tests' stand-ins of public services share: an HTTP server on loopback in a thread of its own, and the files
of a public repository read from a checkout or a fetched git directory (never vendored here)."""

from __future__ import annotations

import subprocess
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path


class LoopbackServer:
    """`with Subclass(...) as server:` serves self._handler() (a BaseHTTPRequestHandler class) at server.address."""

    def _serve(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.address = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handler(self):
        raise NotImplementedError

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def repository_file(repository: Path, path: str) -> str | None:
    """A file of a public repository: from a checkout, or from a fetched repository's git directory; None without."""
    if (repository / path).is_file():
        return (repository / path).read_text()
    if (repository / "HEAD").is_file() or (repository / ".git").exists():
        shown = subprocess.run(["git", "-C", str(repository), "show", f"HEAD:{path}"], capture_output=True, text=True)
        if shown.returncode == 0:
            return shown.stdout
    return None
