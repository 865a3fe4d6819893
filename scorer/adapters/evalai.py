"""EvalAI: ``evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)``.

Returns ``{"result": [{split: {metric: value}}], "submission_result": {metric: value}, "receipt": {...}}`` with the
leaderboard keys ``score`` and one per type, and the score's receipt (scorer.engine.receipt), also written as
``<submission name>.receipt.json`` to the folder ``receipt_dir=`` (keyword) or ``$SCORER_RECEIPT_DIR`` names.
With ``ladder_state=`` (or ``$SCORER_LADDER_STATE``), the leaderboard keys are the team's shown ones under the
parameter-free Ladder, on the split's public sessions (scorer.adapters.live_ladder; its state kept in that file).
The split codename comes from ``split=`` (keyword), else ``PHASE_SPLITS[phase_codename]``, else the phase
codename itself. EvalAI shows the participant the text of whatever evaluate raises (str(error) with remote
evaluation), so only two exceptions leave it:
``SubmissionRejected``, whose text is the participant message, and ``EvaluationFailed`` for a problem on
the host's side (truth, config, a bug), whose text names no detail; the detail goes to the host's stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from scorer.adapters.message import leaderboard_values, participant_message
from scorer.api import resolve_competition, score
from scorer.engine.receipt import make_receipt, write_receipt
from scorer.errors import SubmissionError, one_line

PHASE_SPLITS: dict[str, str] = {}  # organisers: {"dev": "dev_split", "test": "test_split"}
HOST_SIDE = "The submission could not be evaluated: a problem on the organisers' side (they can see it in their log)."


class SubmissionRejected(Exception):
    """The submission is invalid; str(error) is the message for the participant."""


class EvaluationFailed(Exception):
    """Not the participant's fault (a bad truth or config, a bug); str(error) says so without details."""


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    """Score `user_submission_file` strictly against `test_annotation_file` (truth, any supported form).

    Keywords (all optional): split, competition (default $SCORER_COMPETITION or "otto"),
    config (default $SCORER_CONFIG), receipt_dir (default $SCORER_RECEIPT_DIR: where the receipt is written); the Ladder's
    ladder_state, ladder_split, ladder_seed, team and submitted_at (scorer.adapters.live_ladder). EvalAI's own keywords
    are ignored, but for submission_metadata's team and time when the Ladder is on.
    """
    split = kwargs.get("split") or PHASE_SPLITS.get(phase_codename) or str(phase_codename)
    competition = kwargs.get("competition") or os.environ.get("SCORER_COMPETITION") or "otto"
    config = kwargs.get("config") or os.environ.get("SCORER_CONFIG") or None
    try:
        result = score(user_submission_file, test_annotation_file, competition, config=config, strict=True, untrusted=True)
    except SubmissionError as error:
        raise SubmissionRejected(f"Submission rejected: {error}.") from None
    except Exception as error:  # the truth, the config or a bug: the host's business, not the participant's
        print(f"scorer: evaluation failed: {one_line(error)}", file=sys.stderr)
        raise EvaluationFailed(HOST_SIDE) from None
    if result.score is None:
        raise SubmissionRejected(participant_message(result))
    values = _ladder_values(result, test_annotation_file, competition, config, user_submission_file, kwargs) or leaderboard_values(result)
    folder = kwargs.get("receipt_dir") or os.environ.get("SCORER_RECEIPT_DIR")
    try:
        receipt = make_receipt(result, resolve_competition(competition, config), user_submission_file)
        if folder:
            write_receipt(Path(folder) / f"{Path(user_submission_file).name}.receipt.json", receipt)
    except Exception as error:  # an unwritable folder or a bug: the host's business
        print(f"scorer: cannot make or write the receipt (receipt_dir {folder}): {one_line(error)}", file=sys.stderr)
        raise EvaluationFailed(HOST_SIDE) from None
    return {"result": [{split: values}], "submission_result": values, "receipt": receipt}


def _ladder_values(result, truth_path, competition, config, submission, kwargs) -> dict | None:
    """The team's shown figures under the Ladder when it is on (None when not); a wrong setting or state file is the
    host's business (EvaluationFailed, the detail on stderr)."""
    from scorer.adapters.ladder_state import StateError
    from scorer.adapters.live_ladder import LadderSettingError, Settings, shown_values
    from scorer.errors import ScorerError

    try:
        settings = Settings.of(kwargs)
        if settings is None:
            return None
        return shown_values(result, settings, str(truth_path), resolve_competition(competition, config), Path(submission).name, kwargs)
    except (LadderSettingError, StateError, ScorerError, OSError) as error:
        print(f"scorer: the Ladder could not be applied: {one_line(error)}", file=sys.stderr)
        raise EvaluationFailed(HOST_SIDE) from None
