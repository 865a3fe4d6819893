"""EvalAI remote evaluation with the scorer: use this file as the `evaluate.py` of EvalAI-Starters'
remote_challenge_evaluation/ (its main.py polls the challenge queue, downloads each submission and calls
``evaluate(submission_file, phase_codename)``; whatever this raises reaches the participant as str(error)).

main.py sends ``json.dumps(evaluate(...)["result"])`` to EvalAI's update_submission (apps/jobs/views.py), which takes
one entry per dataset split, ``{"split": codename, "show_to_participant": true, "accuracies": {label: number}}``: a
split of the phase, every label one of the leaderboard's, every value a number. Anything else is answered 400, and
main.py then marks the submission FAILED. So ``result`` here is that list (the worker's own evaluation_script/ returns
``[{split: figures}]``, the hosted workers' form), and ``submission_result`` the figures.

Run main.py where the scorer and `requests` (main.py imports it) are installed, with the network to reach EvalAI's
API (the full image has both; the grader image has no `requests`): ``docker run --entrypoint python -e AUTH_TOKEN
-e API_SERVER -e QUEUE_NAME -e CHALLENGE_PK -v $PWD:/eval -w /eval -v /srv/truth:/truth:ro
-e SCORER_TRUTH_DEV=/truth/dev.truth.npz -e SCORER_TRUTH_TEST=/truth/test.truth.npz scorer main.py``.
The truth of a phase is $SCORER_TRUTH_<CODENAME> (e.g. SCORER_TRUTH_TEST); the leaderboard split is
PHASE_SPLITS[codename] (challenge_config.yaml's dataset splits). With -e SCORER_LADDER_STATE=/state/ladder.state (a
volume of its own), the leaderboard shows each team's score under the parameter-free Ladder: call
``evaluate(..., submission_metadata=submission)`` in main.py so that it knows the team (docs/hosting.md).
"""

import os
import sys

from scorer.adapters import evalai

PHASE_SPLITS = {"dev": "dev_split", "test": "test_split"}


def evaluate(user_submission_file, phase_codename, test_annotation_file=None, **kwargs):
    variable = f"SCORER_TRUTH_{str(phase_codename).upper()}"
    truth = test_annotation_file or os.environ.get(variable)
    if not truth:
        print(f"scorer: no truth for phase {phase_codename!r}: set ${variable}", file=sys.stderr)
        raise evalai.EvaluationFailed(evalai.HOST_SIDE)
    split = PHASE_SPLITS.get(phase_codename, phase_codename)
    output = evalai.evaluate(truth, user_submission_file, phase_codename, split=split, **kwargs)
    figures = output["submission_result"]
    return {**output, "result": [{"split": split, "show_to_participant": True, "accuracies": figures}]}
