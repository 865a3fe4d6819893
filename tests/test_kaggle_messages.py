"""The Kaggle metric's messages: nothing but ParticipantVisibleError reaches a participant, and no message
depends on the Usage split (which sessions are public, or how many)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import scorer.adapters.kaggle as kaggle
from conftest import TYPES
from scorer.adapters.kaggle import MAX_MESSAGE, HostVisibleError, ParticipantVisibleError, score

ROW_ID = "session_type"
SESSIONS = range(1, 9)
PUBLIC = {1, 2, 5}


def solution_rows(sessions) -> pd.DataFrame:
    return pd.DataFrame({ROW_ID: [f"{s}_{t}" for s in sessions for t in TYPES],
                         "labels": [str(10 * s + j) for s in sessions for j, _ in enumerate(TYPES)]})


SPLITS = {"Public": solution_rows(sorted(PUBLIC)), "Private": solution_rows(sorted(set(SESSIONS) - PUBLIC))}


def submission(changes: dict[str, str | None] | None = None) -> pd.DataFrame:
    """A perfect submission with some rows' labels replaced (None drops the row)."""
    changes = changes or {}
    rows = [(row_id, changes.get(row_id, labels)) for row_id, labels in zip(*solution_rows(SESSIONS).to_dict("list").values())
            if changes.get(row_id, "") is not None]
    return pd.DataFrame(rows, columns=[ROW_ID, "labels"])


def messages(frame: pd.DataFrame) -> dict[str, str]:
    """Each split's message (Kaggle calls score once per split)."""
    out = {}
    for usage, part in SPLITS.items():
        with pytest.raises(ParticipantVisibleError) as raised:
            score(part.copy(), frame.copy(), ROW_ID)
        out[usage] = str(raised.value)
        assert len(out[usage]) <= MAX_MESSAGE
    return out


def test_a_good_submission_scores_one_in_each_split():
    assert [score(part.copy(), submission(), ROW_ID) for part in SPLITS.values()] == [1.0, 1.0]


def test_bad_rows_give_the_same_message_in_every_split():
    # line 5 is a private session's row, line 14 a public one's: both splits name line 5 first, and count both
    frame = submission({"2_clicks": "x", "5_orders": "7 y"})
    assert frame[ROW_ID].tolist().index("2_clicks") + 2 == 5 and frame[ROW_ID].tolist().index("5_orders") + 2 == 16
    said = messages(frame)
    assert said["Public"] == said["Private"]
    assert said["Public"].startswith("Submission rejected: S008 line 5: item 'x' is not an integer; S008 line 16: item 'y'")


def test_missing_rows_name_no_ids_and_no_count():
    frame = submission({"1_carts": None, "3_orders": None, "4_orders": None})  # one public, two private sessions
    said = messages(frame)
    assert said["Public"] == said["Private"] == kaggle.MISSING_ROWS
    assert not re.search(r"\d+_(clicks|carts|orders)", said["Public"]) and not re.search(r"\b\d+ rows?\b", said["Public"])


def test_an_unexpected_exception_reaches_the_participant_as_a_sentence(monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("max_line_bytes")

    monkeypatch.setattr(kaggle, "judge_rows", broken)
    with pytest.raises(ParticipantVisibleError) as raised:
        score(SPLITS["Public"].copy(), submission(), ROW_ID)
    assert str(raised.value) == kaggle.UNREADABLE and "KeyError" not in str(raised.value)
    assert isinstance(raised.value.__cause__, KeyError)  # the host's log keeps the cause


def test_a_line_over_the_limit_is_the_participants_error_in_every_split():
    frame = submission({"2_carts": " ".join(["5"] * 40_000)})  # 80 kB: over the 64 kB a line may hold
    said = messages(frame)
    assert said["Public"] == said["Private"] and said["Public"].startswith("Submission rejected: S022 line 6: line of 80,007 bytes")


def test_an_unexpected_exception_on_the_solution_is_the_hosts(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("arrow broke")

    monkeypatch.setattr(kaggle, "parse_ids", broken)
    with pytest.raises(HostVisibleError, match="RuntimeError: arrow broke"):
        score(SPLITS["Public"].copy(), submission(), ROW_ID)
