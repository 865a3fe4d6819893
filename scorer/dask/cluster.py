"""A Dask client: connected to a running scheduler, or to a local cluster of worker processes on loopback."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextlib import contextmanager

from scorer.dask import require
from scorer.errors import UsageError

# distributed's loggers (and those its event loop writes through) that print tracebacks when a scheduler or worker goes
NOISY_LOGGERS = ("distributed", "tornado", "asyncio")


@contextmanager
def quiet_distributed():
    """Keep distributed's log lines and tracebacks off stderr while the block runs (SCORER_DEBUG=1 keeps them).

    What they would say (a lost scheduler, a dead worker, a cancelled task) reaches the user as the
    run's own records and one-line messages instead.
    """
    if os.environ.get("SCORER_DEBUG"):
        yield
        return
    known = [name for name in logging.root.manager.loggerDict if name.startswith(tuple(f"{noisy}." for noisy in NOISY_LOGGERS))]
    loggers = [logging.getLogger(name) for name in (*NOISY_LOGGERS, *known)]  # children too: distributed sets some levels of its own
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@contextmanager
def client_for(scheduler: str | None = None, workers: int | None = None, connect_timeout: float = 15.0):
    """Yield a Client for `scheduler` (tcp://HOST:PORT), or for a new LocalCluster of `workers` processes.

    Local workers run one thread each (the engine threads inside a task are set by the caller)
    and listen on 127.0.0.1 only; the cluster is closed on exit. distributed's logs are kept quiet
    throughout, closing included (see quiet_distributed).
    """
    distributed = require()
    with quiet_distributed():
        if scheduler:
            try:
                client = distributed.Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError, ValueError) as error:
                raise UsageError(f"cannot connect to the Dask scheduler at {scheduler}: {error}") from None
            with client:
                yield client
            return
        n = workers or os.cpu_count() or 1
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster:
            with distributed.Client(cluster) as client:
                yield client


def worker_count(client) -> int:
    """Workers the scheduler knows now (0 when it cannot be asked)."""
    try:
        return int(client.scheduler_info(n_workers=0)["n_workers"])
    except Exception:  # the scheduler is gone
        return 0


def dashboard_link(client) -> str | None:
    """The dashboard address the scheduler advertises (its HTTP service; the pages need bokeh where it runs), if any."""
    try:
        if "dashboard" not in client.scheduler_info(n_workers=0)["services"]:
            return None  # distributed would make up a link from its default port
        return client.dashboard_link or None
    except Exception:  # the scheduler cannot be asked
        return None


def wait_for_workers(client, seconds: float, say: Callable[[str], None]) -> bool:
    """Wait up to `seconds` for a first worker, saying so once if there is none yet; whether one came."""
    if worker_count(client):
        return True
    say(f"waiting up to {seconds:g} s for a Dask worker to join the scheduler at {client.scheduler.address} "
        f"(start one with: dask worker {client.scheduler.address})")
    try:
        client.wait_for_workers(1, timeout=seconds)
    except Exception:  # distributed's TimeoutError (or the scheduler went away)
        return False
    return True
