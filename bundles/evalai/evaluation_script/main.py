"""EvalAI calls evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs).

Map each phase codename to the dataset split codename of challenge_config.yaml; the leaderboard
schema's labels are score, clicks, carts and orders. The worker needs the scorer package installed, hence
Python >= 3.10: EvalAI's hosted workers run Python 3.7-3.9 (and show a traceback for any exception), so use
remote evaluation (../remote_challenge_evaluation/evaluate.py) there; this script serves a worker of yours.
"""

from scorer.adapters import evalai

evalai.PHASE_SPLITS.update({"dev": "dev_split", "test": "test_split"})


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    """The adapter's evaluate: competition= (default $SCORER_COMPETITION, else "otto") and config= pass through."""
    return evalai.evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)
