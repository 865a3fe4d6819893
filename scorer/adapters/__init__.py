"""Platform adapters: the same engine behind a Kaggle metric, a Codabench/CodaLab scoring program and EvalAI.

Every adapter judges strictly (as a grader) and turns an invalid submission into one short
participant message (``participant_message``), never a traceback. audit_files.py holds `scorer audit`'s checks
of a platform's files (a Kaggle solution, a Codabench/CodaLab bundle).
"""

from scorer.adapters.message import leaderboard_values, participant_message

__all__ = ["leaderboard_values", "participant_message"]
