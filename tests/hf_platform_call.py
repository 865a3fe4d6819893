"""One evaluation as Hugging Face Competitions runs it, in a process of its own (the platform's worker starts
`python -m competitions.evaluate` for each submission), printing its outcome as one JSON line on stdout.

    python hf_platform_call.py PARAMS_JSON                   # compute_metrics' custom branch, as written below
    python hf_platform_call.py PARAMS_JSON PLATFORM_FOLDER   # the platform's own competitions/compute_metrics.py there

The custom branch (competitions/compute_metrics.py): hf_hub_download the competition's metric.py, put its folder on
sys.path, import it as `metric`, call compute(params), and refuse public and private scores with different keys. The
real huggingface_hub downloads (HF_ENDPOINT, HF_HOME set by the caller). Printed: {"evaluation": {...}}, or
{"raised": type name, "message": str(error), "log": the traceback the platform's monitor writes to its log}.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from types import SimpleNamespace


def custom_branch(params):
    from huggingface_hub import hf_hub_download

    metric_file = hf_hub_download(repo_id=params.competition_id, filename="metric.py", token=params.token, repo_type="dataset")
    sys.path.append(os.path.dirname(metric_file))
    evaluation = importlib.import_module("metric").compute(params)
    if evaluation["public_score"].keys() != evaluation["private_score"].keys():
        raise ValueError("Public and private scores have different keys")
    return evaluation


def main(argv: list[str]) -> None:
    params = SimpleNamespace(**json.loads(argv[0]))
    if len(argv) > 1:
        sys.path.insert(0, argv[1])
        evaluate = importlib.import_module("competitions.compute_metrics").compute_metrics
    else:
        evaluate = custom_branch
    try:
        outcome = {"evaluation": evaluate(params)}
    except Exception as error:
        outcome = {"raised": type(error).__name__, "message": str(error), "log": traceback.format_exc()}
    print(json.dumps(outcome))


if __name__ == "__main__":
    main(sys.argv[1:])
