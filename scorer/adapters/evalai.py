"""EvalAI: ``evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)``.

Returns ``{"result": [{split: {metric: value}}], "submission_result": {metric: value}}`` with the
leaderboard keys ``score`` and one per type. The split codename comes from ``split=`` (keyword), else
``PHASE_SPLITS[phase_codename]``, else the phase codename itself. A bad submission raises
``SubmissionRejected`` whose message is the participant message.
"""

from __future__ import annotations

import os

from scorer.adapters.message import leaderboard_values, participant_message
from scorer.api import score

PHASE_SPLITS: dict[str, str] = {}  # organisers: {"dev": "dev_split", "test": "test_split"}


class SubmissionRejected(Exception):
    """The submission is invalid; str(error) is the message for the participant."""


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    """Score `user_submission_file` strictly against `test_annotation_file` (truth, any supported form).

    Keywords (all optional): split, competition (default $SCORER_COMPETITION or "otto"),
    config (default $SCORER_CONFIG). EvalAI's own keywords (submission_metadata, ...) are ignored.
    """
    split = kwargs.get("split") or PHASE_SPLITS.get(phase_codename) or str(phase_codename)
    competition = kwargs.get("competition") or os.environ.get("SCORER_COMPETITION") or "otto"
    config = kwargs.get("config") or os.environ.get("SCORER_CONFIG") or None
    result = score(user_submission_file, test_annotation_file, competition, config=config, strict=True, untrusted=True)
    if result.score is None:
        raise SubmissionRejected(participant_message(result))
    values = leaderboard_values(result)
    return {"result": [{split: values}], "submission_result": values}
