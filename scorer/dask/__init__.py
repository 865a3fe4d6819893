"""Scale-out on Dask distributed: grade many submissions, or score a partitioned submission.

Dask is an optional extra (`pip install 'recsys-scorer[dask]'`); nothing here imports it at module
level, so the base install stays light. `require()` imports it or explains how to install it.
"""

from __future__ import annotations

INSTALL_HINT = ("pip install 'recsys-scorer[dask]' (or: pip install 'dask[distributed]'); without the package index, copy "
                "the folder that `pip download 'dask[distributed]' -d dask-wheels` fills where the index is (with this "
                "Python, on this platform) and pip install --no-index --find-links dask-wheels 'dask[distributed]'")


def require():
    """Import and return `distributed`, or raise UsageError (exit 2) saying how to install it."""
    from scorer.errors import UsageError

    try:
        import distributed
    except ImportError:
        raise UsageError(f"this command needs Dask distributed, which is not installed: {INSTALL_HINT}") from None
    return distributed
