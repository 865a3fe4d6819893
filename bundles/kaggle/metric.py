"""A Kaggle metric notebook's code (OTTO's weighted recall@20).

Attach the scorer's wheel (``recsys_scorer-*.whl``: the release's wheel of the notebook's Python, which
``tools/release.sh`` writes to ``dist/``; docs/install.md, Release files) to the metric notebook as a
dataset: the first ``score`` call installs it from ``/kaggle/input`` when ``scorer`` cannot be imported (numpy,
numba, pandas and pyarrow are already in Kaggle's image), so nothing here imports scorer when the notebook
is loaded (the same by hand: ``!pip install --no-index --no-deps /kaggle/input/scorer-wheel/recsys_scorer-*.whl``).
Create the solution with ``scorer export kaggle-solution TRUTH -o solution.csv --public 0.3``;
the row id column is ``session_type``.
"""

import glob
import importlib
import os
import subprocess
import sys

import pandas as pd

WHEELS = os.environ.get("SCORER_WHEELS", "/kaggle/input")  # where the attached datasets are
WHEEL_NAME = "recsys_scorer-*.whl"
COMPETITION = "otto"


class ParticipantVisibleError(Exception):
    """A problem with the submission: Kaggle shows the message to the participant."""


class HostVisibleError(Exception):
    """A problem with the solution or the set-up: only the host sees it."""


def install_wheel(root: str = WHEELS) -> str:
    """pip-install the scorer's wheel found under `root` (offline, no dependencies); returns its path."""
    wheels = sorted(glob.glob(os.path.join(root, "**", WHEEL_NAME), recursive=True))
    if not wheels:
        raise HostVisibleError(f"scorer is not installed and no {WHEEL_NAME} was found under {root}: attach the wheel as a dataset")
    if len(wheels) > 1:
        raise HostVisibleError(f"several scorer wheels under {root} ({', '.join(wheels)}): attach one")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", wheels[0]],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise HostVisibleError(f"pip could not install {wheels[0]}: {(done.stderr or done.stdout).strip()[-500:]}")
    importlib.invalidate_caches()
    return wheels[0]


def _kaggle_adapter():
    """scorer.adapters.kaggle, installed first when missing."""
    try:
        return importlib.import_module("scorer.adapters.kaggle")
    except ImportError:
        install_wheel()
        return importlib.import_module("scorer.adapters.kaggle")


def score(solution: pd.DataFrame, submission: pd.DataFrame, row_id_column_name: str) -> float:
    """OTTO's weighted recall@20 (0.10 clicks, 0.30 carts, 0.60 orders); every submission problem is a ParticipantVisibleError."""
    try:
        adapter = _kaggle_adapter()
    except HostVisibleError:
        raise
    except Exception as error:
        raise HostVisibleError(f"the scorer could not be loaded ({type(error).__name__}: {error})") from error
    try:
        return adapter.score(solution, submission, row_id_column_name, competition=COMPETITION)
    except adapter.ParticipantVisibleError as error:
        raise ParticipantVisibleError(str(error)) from error
    except adapter.HostVisibleError as error:
        raise HostVisibleError(str(error)) from error
