"""A Dask cluster started by hand, as a platform runs one: `dask scheduler` and `dask worker` as subprocesses.

Used by bench/bench_grade_resume.py and tests/test_dask_resume.py to kill the scheduler mid-run and
start it again at the same address. Everything listens on 127.0.0.1; logs go to files in `log_dir`.
Only the processes started here are stopped, by their own ids.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HandCluster:
    """One scheduler process and one `dask worker --nworkers N` process (N single-threaded workers, with nannies)."""

    def __init__(self, log_dir: Path, workers: int = 2, env: dict | None = None):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.workers = workers
        self.env = dict(os.environ, **(env or {}))
        self.scheduler: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.starts = 0

    def _spawn(self, name: str, module: str, *arguments: str) -> subprocess.Popen:
        self.starts += 1
        log = open(self.log_dir / f"{name}-{self.starts}.log", "wb")
        with log:  # the child keeps its own descriptor
            return subprocess.Popen([sys.executable, "-m", module, *arguments], stdout=log, stderr=subprocess.STDOUT,
                                    env=self.env, start_new_session=True)

    def start_scheduler(self) -> None:
        self.scheduler = self._spawn("scheduler", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                     "--port", str(self.port), "--no-dashboard", "--dashboard-address", "127.0.0.1:0")

    def start_workers(self) -> None:
        self.worker = self._spawn("worker", "distributed.cli.dask_worker", self.address, "--nworkers", str(self.workers),
                                  "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0")

    def start(self, timeout: float = 120) -> HandCluster:
        self.start_scheduler()
        self.start_workers()
        self.wait_for_workers(timeout)
        return self

    def wait_for_workers(self, timeout: float = 120, n: int | None = None) -> None:
        from distributed import Client

        with Client(self.address, timeout=timeout) as client:
            client.wait_for_workers(self.workers if n is None else n, timeout=timeout)

    def kill_scheduler(self) -> None:
        """SIGKILL the scheduler, as a crash or an OOM kill would."""
        _stop(self.scheduler, signal.SIGKILL)

    def workers_alive(self) -> bool:
        return self.worker is not None and self.worker.poll() is None

    def restart(self, timeout: float = 120) -> None:
        """A new scheduler at the same address and new workers (what is still running is stopped first)."""
        self.close()
        self.start(timeout)

    def close(self) -> None:
        for process in (self.worker, self.scheduler):
            _stop(process, signal.SIGTERM)

    def __enter__(self) -> HandCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def _stop(process: subprocess.Popen | None, how: signal.Signals, grace: float = 20.0) -> None:
    """Stop the process (and its process group: a worker's nannies and their workers) and wait for it."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, how)  # its own session (start_new_session): the group is just this process and its children
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
