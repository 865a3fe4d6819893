"""The custom metric of a Hugging Face Competitions competition, scored by `scorer` (OTTO's weighted recall@20).

Put this file as `metric.py` in the competition's private dataset, beside `solution.csv` (made with
`scorer export hf-solution test_labels.jsonl -o solution.csv`: the rows' ids, labels and their `split`, public or
private), and set `"EVAL_METRIC": "custom"`, `"EVAL_HIGHER_IS_BETTER": 1` and `"SCORING_METRIC": "score"` in
conf.json. The platform imports this file and calls `compute(params)`; the scorer must be installed where it
evaluates (add `recsys-scorer` to the dataset's requirements.txt, or use an image that holds it).

It returns {"public_score": {...}, "private_score": {...}} with the keys `score` and one per type (the scored
metric of each). A bad submission raises SubmissionRejected: the platform marks it FAILED and logs the sentence
(code, line, what is wrong) for the organisers, never a byte of the solution.
"""

from huggingface_hub import hf_hub_download

from scorer.adapters import hf_competitions

COMPETITION = "otto"  # a bundled competition of the scorer (otto, hm, ...), or set CONFIG to a TOML file's path
CONFIG = None

SubmissionRejected = hf_competitions.SubmissionRejected
EvaluationFailed = hf_competitions.EvaluationFailed


def compute(params):
    return hf_competitions.compute(params, hf_hub_download, competition=COMPETITION, config=CONFIG)
