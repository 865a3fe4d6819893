"""The Kaggle metric notebook's template (bundles/kaggle/metric.py): loading it imports no scorer, score()
installs the wheel from the attached dataset when scorer is missing, and our errors become the notebook's."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "bundles" / "kaggle" / "metric.py"
ROW_ID = "session_type"
TYPES = ("clicks", "carts", "orders")


def load_template(name: str = "kaggle_metric_notebook"):
    spec = importlib.util.spec_from_file_location(name, TEMPLATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def solution() -> pd.DataFrame:
    return pd.DataFrame({ROW_ID: [f"{s}_{t}" for s in (1, 2) for t in TYPES], "labels": ["11", "12 13", "", "21", "", "23"]})


def submission(labels=("11", "12 13", "", "21", "", "23")) -> pd.DataFrame:
    return pd.DataFrame({ROW_ID: [f"{s}_{t}" for s in (1, 2) for t in TYPES], "labels": list(labels)})


def test_loading_the_template_imports_no_scorer():
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('metric', {str(TEMPLATE)!r})\n"
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
            "assert module.ParticipantVisibleError.__module__ == 'metric' and module.HostVisibleError.__module__ == 'metric'\n"
            "print(sorted(name for name in sys.modules if name == 'scorer' or name.startswith('scorer.')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_score_returns_the_adapters_score_and_raises_the_notebooks_classes():
    metric = load_template()
    assert metric.score(solution(), submission(), ROW_ID) == 1.0
    with pytest.raises(metric.ParticipantVisibleError, match=r"^Submission rejected: S008 line 3: item 'x'"):
        metric.score(solution(), submission(("11", "x", "", "21", "", "23")), ROW_ID)
    with pytest.raises(metric.HostVisibleError, match="has no column"):
        metric.score(solution().rename(columns={ROW_ID: "id"}), submission(), ROW_ID)


def test_score_installs_the_wheel_when_scorer_cannot_be_imported(monkeypatch):
    metric = load_template()
    monkeypatch.setitem(sys.modules, "scorer.adapters.kaggle", None)  # `import` now fails, as before the install
    installed = []

    def fake_install():
        installed.append(True)
        monkeypatch.delitem(sys.modules, "scorer.adapters.kaggle")

    monkeypatch.setattr(metric, "install_wheel", fake_install)
    assert metric.score(solution(), submission(), ROW_ID) == 1.0
    assert installed == [True]


def test_install_runs_pip_offline_on_the_attached_wheel(tmp_path, monkeypatch):
    metric = load_template()
    wheel = tmp_path / "scorer-wheel" / "dist" / "recsys_scorer-0.3.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"")
    calls = []
    monkeypatch.setattr(metric.subprocess, "run", lambda command, **kwargs: calls.append(command) or subprocess.CompletedProcess(command, 0, "", ""))
    assert metric.install_wheel(str(tmp_path)) == str(wheel)
    assert calls == [[sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", str(wheel)]]


def test_install_failures_are_the_hosts(tmp_path, monkeypatch):
    metric = load_template()
    with pytest.raises(metric.HostVisibleError, match="no recsys_scorer-\\*.whl was found"):
        metric.install_wheel(str(tmp_path))
    (tmp_path / "recsys_scorer-0.3.0-py3-none-any.whl").write_bytes(b"")
    monkeypatch.setattr(metric.subprocess, "run", lambda command, **kwargs: subprocess.CompletedProcess(command, 1, "", "ERROR: not a zip file"))
    with pytest.raises(metric.HostVisibleError, match="pip could not install .*not a zip file"):
        metric.install_wheel(str(tmp_path))
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "recsys_scorer-0.2.0-py3-none-any.whl").write_bytes(b"")
    with pytest.raises(metric.HostVisibleError, match="several scorer wheels"):
        metric.install_wheel(str(tmp_path))


def test_install_uses_the_wheels_folder_of_the_environment(tmp_path):
    code = f"import importlib.util\nspec = importlib.util.spec_from_file_location('metric', {str(TEMPLATE)!r})\nmodule = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\nprint(module.WHEELS)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "SCORER_WHEELS": str(tmp_path)})
    assert done.stdout.strip() == str(tmp_path)
