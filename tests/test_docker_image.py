"""The images built for real (docker/build-local.sh: the full image and the grader image) and run as the platforms run them.

Codabench's compute worker (codalab/codabench compute_worker/compute_worker.py, _run_program_directory) runs the
image with the bundle's command appended to its ENTRYPOINT: a writable root, the network on (unless the worker's
operator sets COMPETITION_CONTAINER_NETWORK_DISABLED), /app/program, /app/output, /app/shared and /app/input mounted
read-write and /app/data read-only, 14 capabilities dropped, no new privileges, the working directory /app/program,
and PYTHONUNBUFFERED=1 with empty http_proxy and https_proxy. Each job runs both that way and hardened (no network, a
read-only root, every capability dropped, input/ read-only), in both images. On the bundle's reference data
(bundles/build.py, the compiled truth): a good submission scores as on this host, a bad one exits 1 with the
participant's sentence, a symlink in res/ is refused. The grader image holds numpy and xxhash only: a JSONL truth too
large for the line reader is a sentence saying to compile it, exit 2. The Kaggle metric and the EvalAI remote
evaluation run in the full image too. Skipped, saying why, where no Docker engine answers (CI has none).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SUBMISSION = FIXTURES / "otto_submission.csv"
TAG = "scorer:test"
GRADER = TAG + "-grader"  # build-local.sh's grader target
HARDENED = ["--network", "none", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
WORKER = HARDENED  # the Kaggle and EvalAI runs below
CODABENCH_CAPS = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "NET_RAW",
                  "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT")  # compute_worker.py's cap_drop_list
CODABENCH = [*(f"--cap-drop={cap}" for cap in CODABENCH_CAPS), "--security-opt", "no-new-privileges", "--userns", "host",
             "-e", "PYTHONUNBUFFERED=1", "-e", "http_proxy=", "-e", "https_proxy="]
pytestmark = pytest.mark.slow


def _engine_absent() -> str | None:
    """Why no Docker engine can be used here, or None when one answers."""
    if shutil.which("docker") is None:
        return "no docker command"
    try:
        done = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "`docker info` did not answer in 30 s"
    return None if done.returncode == 0 else f"no Docker engine answers (`docker info`: {done.stderr.strip()[:200]})"


@pytest.fixture(scope="module")
def image() -> str:
    absent = _engine_absent()
    if absent:
        pytest.skip(absent)
    for tool in ("debootstrap", "python3.11"):
        if shutil.which(tool) is None:
            pytest.skip(f"docker/build-local.sh needs {tool}, which is not installed here")
    built = subprocess.run([str(ROOT / "docker" / "build-local.sh"), TAG], capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return TAG


def _load_build():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bundle_build", ROOT / "bundles" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The Codabench bundle, unpacked: competition.yaml, scoring_program/, reference_data/ (the compiled truth)."""
    folder = tmp_path_factory.mktemp("bundle")
    _load_build().codabench(folder / "codabench.zip", TAG)
    zipfile.ZipFile(folder / "codabench.zip").extractall(folder / "unpacked")
    return folder / "unpacked"


def _worker_run(image: str, bundle: Path, tmp_path: Path, place, how: str = "hardened",
                reference: Path | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    """A job laid out and run as the worker does (how: "codabench", the compute worker's own settings, or "hardened");
    place(res) puts the submission in input/res; reference: the ref/ folder (default: the bundle's reference data)."""
    import yaml

    run = tmp_path / "run"
    shutil.copytree(reference or bundle / "reference_data", run / "input" / "ref")
    (run / "input" / "res").mkdir(parents=True)
    place(run / "input" / "res")
    shutil.copytree(bundle / "scoring_program", run / "program")
    for folder in ("output", "shared", "data"):
        (run / folder).mkdir(mode=0o755)
    os.chown(run / "output", 0, 0) if os.geteuid() == 0 else None
    command = yaml.safe_load((run / "program" / "metadata.yaml").read_text())["command"].split()
    if how == "codabench":
        mounts = ["-v", f"{run / 'program'}:/app/program", "-v", f"{run / 'output'}:/app/output", "-v", f"{run / 'data'}:/app/data:ro",
                  "-v", f"{run / 'shared'}:/app/shared", "-v", f"{run / 'input'}:/app/input"]
        options = CODABENCH
    else:
        mounts = ["-v", f"{run / 'input'}:/app/input:ro", "-v", f"{run / 'output'}:/app/output", "-v", f"{run / 'program'}:/app/program:ro"]
        options = HARDENED
    done = subprocess.run(["docker", "run", "--rm", *options, *mounts, "-w", "/app/program", image, *command],
                          capture_output=True, text=True, timeout=900)
    return done, run / "output"


def _host_scores(tmp_path: Path, bundle: Path, submission: Path) -> dict:
    """scores.json as this host's scorer writes it for the same job."""
    host = tmp_path / "host"
    shutil.copytree(bundle / "reference_data", host / "input" / "ref")
    (host / "input" / "res").mkdir(parents=True)
    shutil.copy(submission, host / "input" / "res" / submission.name)
    done = subprocess.run([sys.executable, "-m", "scorer", "codabench", str(host / "input"), str(host / "output"), "--competition", "otto"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads((host / "output" / "scores.json").read_text())


def test_the_bundle_ships_the_compiled_truth(bundle):
    assert [path.name for path in (bundle / "reference_data").iterdir()] == ["test_labels.truth.npz"]


JOBS = [(image, how) for image in ("full", "grader") for how in ("codabench", "hardened")]


def _tag(which: str) -> str:
    return TAG if which == "full" else GRADER


@pytest.mark.parametrize("which, how", JOBS)
def test_codabench_job_in_the_image_scores_as_on_this_host(image, bundle, tmp_path, which, how):
    done, output = _worker_run(_tag(which), bundle, tmp_path, lambda res: shutil.copy(SUBMISSION, res / "submission.csv"), how)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "warning" not in done.stderr, done.stderr  # the compiled modules served
    assert json.loads((output / "scores.json").read_text()) == _host_scores(tmp_path, bundle, SUBMISSION)


@pytest.mark.parametrize("which, how", JOBS)
def test_codabench_job_in_the_image_rejects_a_bad_submission_with_the_participants_sentence(image, bundle, tmp_path, which, how):
    bad = SUBMISSION.read_text().replace("_carts", "_cart", 1)
    done, output = _worker_run(_tag(which), bundle, tmp_path, lambda res: (res / "submission.csv").write_text(bad), how)
    assert done.returncode == 1, done.stdout + done.stderr
    shown = (done.stdout + done.stderr).strip()
    assert "Submission rejected: S005 line" in shown and "Traceback" not in shown, shown
    assert not (output / "scores.json").exists()


@pytest.mark.parametrize("which", ("full", "grader"))
def test_codabench_job_in_the_image_refuses_a_symlink_in_res(image, bundle, tmp_path, which):
    def linked(res: Path) -> None:
        shutil.copy(SUBMISSION, res.parent / "elsewhere.csv")
        (res / "submission.csv").symlink_to("../elsewhere.csv")

    done, output = _worker_run(_tag(which), bundle, tmp_path, linked)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "link" in (done.stdout + done.stderr) and not (output / "scores.json").exists()


def test_the_grader_image_holds_what_grades_and_says_to_compile_a_large_jsonl_truth(image, bundle, tmp_path):
    """No numba, llvmlite, pandas or pyarrow in the grader image; a JSONL truth the line reader does not take (over 4 MB)
    needs pyarrow: one sentence, exit 2, not exit 3. Smaller than the full image."""
    listed = subprocess.run(["docker", "run", "--rm", "--entrypoint", "python", GRADER, "-c",
                             "import importlib.util as u; print([m for m in ('numba', 'llvmlite', 'pandas', 'pyarrow') if u.find_spec(m)])"],
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and listed.stdout.strip() == "[]", listed.stdout + listed.stderr
    reference = tmp_path / "ref"
    reference.mkdir()
    (reference / "test_labels.jsonl").write_text("".join(f'{{"session": {s}, "labels": {{"clicks": {s}}}}}\n' for s in range(1, 200_001)))
    done, output = _worker_run(GRADER, bundle, tmp_path, lambda res: shutil.copy(SUBMISSION, res / "submission.csv"),
                               "codabench", reference)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "this needs pyarrow, which is not installed here" in done.stderr and "compile-truth" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    sizes = {name: int(subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", name], capture_output=True, text=True,
                                      check=True).stdout) for name in (TAG, GRADER)}
    assert sizes[GRADER] < sizes[TAG] / 2, sizes


def test_kaggle_metric_in_the_image_gives_this_hosts_score(image, bundle, tmp_path):
    data = tmp_path / "kaggle"
    data.mkdir()
    truth = bundle / "reference_data" / "test_labels.truth.npz"
    subprocess.run([sys.executable, "-m", "scorer", "export", "kaggle-solution", str(truth), "-o", str(data / "solution.csv"),
                    "--public", "0.5", "--seed", "0"], check=True, capture_output=True)
    shutil.copy(SUBMISSION, data / "submission.csv")
    code = ("import pandas as pd, sys\nfrom scorer.adapters.kaggle import score\n"
            "solution, submission = pd.read_csv(sys.argv[1] + '/solution.csv'), pd.read_csv(sys.argv[1] + '/submission.csv')\n"
            "print(repr([score(solution[solution.Usage == u].drop(columns='Usage'), submission, 'session_type') for u in ('Public', 'Private')]))")
    host = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, text=True, check=True).stdout
    inside = subprocess.run(["docker", "run", "--rm", *WORKER, "--tmpfs", "/tmp", "-v", f"{data}:/data:ro", "--entrypoint", "python", image,
                             "-c", code, "/data"],
                            capture_output=True, text=True, timeout=300)
    assert inside.returncode == 0 and inside.stdout == host, inside.stdout + inside.stderr


def test_evalai_remote_evaluation_in_the_image(image, tmp_path):
    evaluation = ROOT / "bundles" / "evalai" / "remote_challenge_evaluation"
    code = ("import json\nfrom evaluate import evaluate\n"
            "print(json.dumps(evaluate('/data/otto_submission.csv', 'test')['result']))")
    host = subprocess.run([sys.executable, "-c", code.replace("/data/", str(FIXTURES) + "/")], capture_output=True, text=True,
                          cwd=evaluation, env={**os.environ, "SCORER_TRUTH_TEST": str(FIXTURES / "otto_truth.jsonl")}, check=True).stdout
    inside = subprocess.run(["docker", "run", "--rm", *WORKER, "--tmpfs", "/tmp", "-e", "SCORER_TRUTH_TEST=/data/otto_truth.jsonl",
                             "-v", f"{FIXTURES}:/data:ro", "-v", f"{evaluation}:/eval:ro", "-w", "/eval", "--entrypoint", "python", image, "-c", code],
                            capture_output=True, text=True, timeout=300)
    assert inside.returncode == 0 and json.loads(inside.stdout) == json.loads(host), inside.stdout + inside.stderr
    assert json.loads(host)[0]["test_split"]["score"] > 0
