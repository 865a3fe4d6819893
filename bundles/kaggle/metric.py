"""A Kaggle metric notebook's code. Attach the scorer wheel as a dataset and install it first, e.g.
``!pip install --no-index --no-deps /kaggle/input/scorer-wheel/recsys_scorer-*.whl`` (numpy, numba, pandas and
pyarrow are already in Kaggle's image). Create the solution with
``scorer export kaggle-solution TRUTH -o solution.csv --public 0.3``; the row id column is ``session_type``.
"""

import pandas as pd

from scorer.adapters.kaggle import HostVisibleError, ParticipantVisibleError  # noqa: F401  (Kaggle looks these up)
from scorer.adapters.kaggle import score as _score


def score(solution: pd.DataFrame, submission: pd.DataFrame, row_id_column_name: str) -> float:
    """OTTO's weighted recall@20 (0.10 clicks, 0.30 carts, 0.60 orders); every submission problem is a ParticipantVisibleError."""
    return _score(solution, submission, row_id_column_name, competition="otto")
