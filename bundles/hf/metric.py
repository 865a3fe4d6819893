"""The custom metric of a Hugging Face Competitions competition, scored by `scorer` (OTTO's weighted recall@20).

Put this file as `metric.py` in the competition's private dataset, beside `solution.csv` (made with
`scorer export hf-solution test_labels.jsonl -o solution.csv`: the rows' ids, labels and their `split`, public or
private), and set `"EVAL_METRIC": "custom"`, `"EVAL_HIGHER_IS_BETTER": 1` and `"SCORING_METRIC": "score"` in
conf.json. The platform imports this file and calls `compute(params)` in its own Python, the environment /app/env
(Python 3.10) of its image, which must hold the scorer. The dataset's requirements.txt is installed only for script
competitions, so install the release's cp310 wheel (docs/install.md, Release files) in the image of the
competition's Space, whose Dockerfile then reads:

    FROM huggingface/competitions:latest
    COPY recsys_scorer-*-cp310-cp310-manylinux_*_x86_64.whl /tmp/wheels/
    RUN /app/env/bin/python -m pip install --no-cache-dir /tmp/wheels/recsys_scorer-*.whl
    CMD uvicorn competitions.app:app --host 0.0.0.0 --port 7860 --workers 1

It returns {"public_score": {...}, "private_score": {...}} with the keys `score` and one per type (the scored
metric of each; NaN on a side where no session has truth of that type). A bad submission raises SubmissionRejected:
the platform marks it FAILED and logs the sentence (code, line, what is wrong) for the organisers, never a byte of
the solution. The platform's downloader hands back a link of its cache; only that link is followed (docs/hosting.md).
"""

from huggingface_hub import HfApi, hf_hub_download

from scorer.adapters import hf_competitions

COMPETITION = "otto"  # a bundled competition of shape id_type (rows '{session}_{type}': otto), or set CONFIG to such a TOML file's path
CONFIG = None

SubmissionRejected = hf_competitions.SubmissionRejected
EvaluationFailed = hf_competitions.EvaluationFailed


def compute(params):
    return hf_competitions.compute(params, hf_hub_download, competition=COMPETITION, config=CONFIG, listing=HfApi().list_repo_tree)
