"""The hosting bundles and the grader image, run the way each platform's worker runs them (no Docker engine here).

Sources read (public repositories; nothing copied, the checks are written from what they do):
- Codabench worker: codalab/codabench compute_worker/compute_worker.py (Run.prepare lays out input/ref,
  input/res and output; _run_program_directory reads program/metadata.yaml, else program/metadata, replaces the
  legacy $input/$output (replace_legacy_metadata_command), and create_container(image, command=...,
  working_dir="/app/program") appends the command to the image's ENTRYPOINT with every capability of
  cap_drop_list dropped, DAC_OVERRIDE included; push_output writes output/metadata and fails if it exists).
- Codabench unpacker: codalab/codabench src/apps/competitions/unpackers/v2.py, base_unpacker.py, utils.py
  (get_datetime); the default queue's cap: documentation/docs/Developers_and_Administrators/Upgrading_Codabench/
  Add-line-into-.env-for-default-queue-worker-duration.md (MAX_EXECUTION_TIME_LIMIT=600).
- CodaLab worker: codalab/competitions-v1-compute-worker worker.py (get_bundle reads a file named `metadata`;
  run() puts real paths in place of $input/$output and runs `docker run ... -w RUN_DIR IMAGE` + command.split(' ')
  with output/ made 0777).
- EvalAI: Cloud-CV/EvalAI-Starters remote_challenge_evaluation/main.py (evaluate(submission_file, codename);
  any exception becomes the participant's stderr as str(e)) and challenge_config.yaml; the whole remote route against
  EvalAI's update_submission is tests/test_evalai_remote.py.
The platforms read their files with PyYAML, as these tests do (it comes with dask, of the test extra).
"""

from __future__ import annotations

import ctypes
import datetime
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from scorer.adapters import evalai as evalai_adapter

ROOT = Path(__file__).parent.parent
BUNDLES = ROOT / "bundles"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
FIXTURES = ROOT / "fixtures"
SUBMISSION, TRUTH = FIXTURES / "otto_submission.csv", FIXTURES / "otto_truth.jsonl"
DEMO_TRUTH = BUNDLES / "codabench" / "reference_data" / "test_labels.jsonl"  # the bundles ship it compiled
KEYS = ["score", "clicks", "carts", "orders"]
IMAGE = "ghcr.io/example/scorer:0.1.0"
DEFAULT_QUEUE_LIMIT = 600  # MAX_EXECUTION_TIME_LIMIT of Codabench's default queue

# compute_worker.py's cap_drop_list, as Linux capability numbers (linux/capability.h); DAC_READ_SEARCH (2) is
# not in Docker's default set either. SETPCAP (8) goes last: it is what lets a process drop the others.
CAP_DROP = {"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6,
            "SETUID": 7, "NET_BIND_SERVICE": 10, "NET_RAW": 13, "SYS_CHROOT": 18, "MKNOD": 27, "AUDIT_WRITE": 29,
            "SETFCAP": 31, "SETPCAP": 8}
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38
FOREIGN_UID = 4321  # a user who is not this process's


def _load_build():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bundle_build", BUNDLES / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build()


# -- the image ------------------------------------------------------------------------------------------
def dockerfile_steps() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", "\n".join(line for line in DOCKERFILE.read_text().splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip()) for line in text.splitlines() if line.strip()]


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for step in dockerfile_steps():
        if step[0] == "FROM":
            found.append([])
        if found:  # the ARGs before the first FROM are the FROM lines' own (global_args)
            found[-1].append(step)
    return found


def global_args() -> dict[str, str]:
    """The ARGs before the first FROM, each default with the earlier ones substituted (what a FROM line names)."""
    args: dict[str, str] = {}
    for step, rest in dockerfile_steps():
        if step == "FROM":
            return args
        if step == "ARG":
            key, _, value = rest.partition("=")
            args[key] = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], value)
    return args


def entrypoint() -> list[str]:
    return json.loads(dict(stages()[-1])["ENTRYPOINT"])


def image_user() -> str:
    """The final stage's USER, its ARG default substituted: who runs in the container."""
    final = stages()[-1]
    args = {k: v for step, rest in final if step == "ARG" for k, _, v in [rest.partition("=")]}
    user = [rest for step, rest in final if step == "USER"][-1]
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], user).split(":")[0]


def test_the_images_are_built_in_stages_pinned_and_checked():
    """builder and grader-builder compile and install; grader and full (the default target, last) are the images."""
    builder, grader_builder, grader, final = stages()
    assert [stage[0][1].split(" AS ")[-1] for stage in (builder, grader_builder, grader, final)] == ["builder", "grader-builder", "grader", "full"]
    for stage in (builder, grader, final):  # ARG BASE_IMAGE (build-local.sh's local base), by default the pinned digest
        named = re.sub(r"\$\{(\w+)\}", lambda m: global_args()[m.group(1)], stage[0][1])
        assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}( AS [\w-]+)?", named), "base pinned by digest"
    runs = lambda stage: " ".join(rest for step, rest in stage if step == "RUN")  # noqa: E731
    assert "g++" in runs(builder) and "scorer warmup" in runs(builder), "the builder compiles the ahead-of-time modules (C++)"
    for image in (grader, final):
        assert "apt-get" not in runs(image) and "g++" not in runs(image), "no compiler in an image"
    assert any(step == "COPY" and "--from=builder" in rest for step, rest in final)
    assert any(step == "COPY" and "--from=grader-builder" in rest for step, rest in grader)
    assert "--no-deps" in runs(grader_builder) and "numpy xxhash" in runs(grader_builder), "the grader: the wheel, numpy and xxhash"
    assert "'numba', 'llvmlite', 'pandas', 'pyarrow'" in runs(grader_builder), "the grader's build fails if the CLI imports them"
    for stage in (grader_builder, final):
        assert "aot.load(stage) is None for stage in door.STAGES" in runs(stage), "the build fails unless every module loads"
    assert entrypoint() == ["scorer"] and json.loads(dict(grader)["ENTRYPOINT"]) == ["scorer"]
    assert image_user() == "0", "Codabench's output folder is root-owned 0755 with DAC_OVERRIDE dropped"
    install = next(rest for step, rest in builder if step == "RUN" and "pip install" in rest)
    assert "PIP_CONSTRAINT=/opt/scorer/constraints.txt" in install
    pinned = {line.split("==")[0].lower() for line in (ROOT / "docker" / "constraints.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = {re.split(r"[<>=!~\[ ;]", dep)[0].lower() for dep in project["dependencies"] + project["optional-dependencies"]["evalai"]
              if "python_version < '3.11'" not in dep}  # the image's Python is 3.11: tomli is not installed there
    assert needed <= pinned, f"unpinned dependencies: {needed - pinned}"
    assert '"${wheel}[evalai]"' in install, "the full image holds requests, which EvalAI-Starters' remote main.py imports"
    assert "optional-dependencies\"][\"evalai\"]" in (ROOT / "docker" / "build-local.sh").read_text(), "and so does the offline wheelhouse"


def test_the_aot_key_survives_image_layers_that_keep_whole_seconds(tmp_path, monkeypatch):
    from scorer.kernels import aot

    (tmp_path / "layered_module.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    stamps = []
    for nanoseconds in (1_700_000_000_123_456_789, 1_700_000_000_000_000_000):  # as built, as a layer keeps it
        os.utime(tmp_path / "layered_module.py", ns=(nanoseconds, nanoseconds))
        stamps.append(aot._version_stamp("layered_module"))
    assert stamps[0] == stamps[1]


# -- a process as the worker's container runs it ----------------------------------------------------------
def _as_container():
    """preexec_fn: the capabilities compute_worker.py drops (when this runs as root: else there are none), no new privileges."""
    libc = ctypes.CDLL(None, use_errno=True)
    if os.geteuid() == 0:
        for number in CAP_DROP.values():
            if libc.prctl(PR_CAPBSET_DROP, number, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def run_image(argv: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The image's ENTRYPOINT plus `argv`, as the container runs it (the `scorer` of this tree stands for the image's)."""
    command = entrypoint() + argv
    assert command[0] == "scorer"
    environment = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "scorer.cli", *command[1:]], cwd=cwd, env=environment,
                          preexec_fn=_as_container, capture_output=True, text=True, timeout=300)


def worker_folder(path: Path) -> Path:
    """A folder as the worker makes it (os.makedirs as root: root-owned 0755), seen by the image's user: its owner
    when the image runs as root (rwx), anyone else otherwise (r-x, which a folder of ours gets with 0555)."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755 if image_user() == "0" else 0o555)
    return path


def unzip_into(data: bytes | Path, folder: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data) as archive:
        archive.extractall(folder)


def codabench_run(tmp_path: Path, bundle: Path, submission: Path, program: str = "scoring_program") -> Path:
    """compute_worker.py's Run.prepare for the scoring step: program/, input/ref (the reference data), input/res (the
    prediction step's output: the upload's files plus the `metadata` the worker wrote there), output/."""
    unpacked = tmp_path / "bundle"
    unzip_into(bundle, unpacked)
    root = tmp_path / "run"
    shutil.copytree(unpacked / program, root / "program")
    shutil.copytree(unpacked / "reference_data", root / "input" / "ref")
    (root / "input" / "res").mkdir(parents=True)
    shutil.copy(submission, root / "input" / "res" / submission.name)
    (root / "input" / "res" / "metadata").write_text(yaml.dump({"exitCode": None, "elapsedTime": None,
                                                              "ingestionExitCode": None, "ingestionElapsedTime": None}))
    worker_folder(root / "output")
    return root


def codabench_command(root: Path) -> list[str]:
    """The program's command as compute_worker.py builds it: metadata.yaml, else metadata; legacy variables replaced;
    /app/* are the run folder's (the container's mounts)."""
    program = root / "program"
    metadata = program / ("metadata.yaml" if (program / "metadata.yaml").exists() else "metadata")
    command = yaml.safe_load(metadata.read_text())["command"]
    for variable, value in (("$input", "/app/input"), ("$output", "/app/output"), ("$program", "/app/program"),
                            ("$hidden", "/app/input/ref"), ("$shared", "/app/shared"), ("$tmp", "/app/output"),
                            ("$predictions", "/app/input/res")):
        command = command.replace(variable, value)
    return [re.sub(r"^/app/", str(root) + "/", part) for part in shlex.split(command)]


def push_output(root: Path) -> dict:
    """compute_worker.py's push_scores and push_output: read scores.json (else scores.txt), then write output/metadata,
    which must not exist yet."""
    output = root / "output"
    scores = json.loads((output / "scores.json").read_text())
    assert not (output / "metadata").exists(), "the worker fails a run whose output holds a file named metadata"
    (output / "metadata").write_text("exitCode: 0\n")
    return scores


def strict_scores(submission: Path, truth: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "scorer.cli", "score", str(submission), "--truth", str(truth), "--strict", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    return {"score": report["score"], **{t: report["metrics"][t]["recall@20"] for t in KEYS[1:]}}


@pytest.fixture(scope="module")
def codabench_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundles") / "codabench.zip"
    build.codabench(out, IMAGE)
    return out


@pytest.fixture(scope="module")
def codalab_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundles") / "codalab.zip"
    build.codalab(out, IMAGE)
    return out


@pytest.mark.parametrize("program", ["scoring_program", "codalab"])
def test_codabench_worker_runs_the_image_with_dropped_capabilities(codabench_zip, codalab_zip, tmp_path, program):
    """Both program files Codabench may get (our metadata.yaml, and the CodaLab bundle's `metadata`) score in a
    root-owned 0755 output with DAC_OVERRIDE dropped, tolerate the worker's input/res/metadata, leave no metadata."""
    bundle = codabench_zip
    if program == "codalab":  # the CodaLab bundle's program (its `metadata`) in place of ours
        bundle = tmp_path / "mixed.zip"
        shutil.copy(codabench_zip, bundle)
        with zipfile.ZipFile(codalab_zip) as source, zipfile.ZipFile(bundle, "a") as target:
            with zipfile.ZipFile(io.BytesIO(source.read("scoring_program.zip"))) as codalab_program:
                for name in codalab_program.namelist():
                    target.writestr(f"codalab/{name}", codalab_program.read(name))
    root = codabench_run(tmp_path, bundle, SUBMISSION, program)
    argv = codabench_command(root)
    assert argv[:3] == ["codabench", str(root / "input"), str(root / "output")]
    done = run_image(argv, cwd=root / "program")
    assert done.returncode == 0, done.stdout + done.stderr
    scores = push_output(root)
    assert list(scores) == KEYS and scores == pytest.approx(strict_scores(SUBMISSION, DEMO_TRUTH), abs=1e-12)


def test_codabench_worker_shows_the_participant_our_message_only(codabench_zip, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(SUBMISSION.read_text().replace("_carts", "_cart", 1))
    root = codabench_run(tmp_path, codabench_zip, bad)
    done = run_image(codabench_command(root), cwd=root / "program")
    assert done.returncode == 1 and "Submission rejected: S005 line" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr and not (root / "output" / "scores.json").exists()


def test_the_emulated_container_cannot_override_permissions(codabench_zip, tmp_path):
    """The emulation bites: a folder its user may not write (the old uid-1000 image's case) fails, with a message."""
    root = codabench_run(tmp_path, codabench_zip, SUBMISSION)
    (root / "output").chmod(0o555)
    try:
        done = run_image(codabench_command(root), cwd=root / "program")
    finally:
        (root / "output").chmod(0o755)
    assert done.returncode == 2 and "cannot write the scores" in done.stderr and "Permission denied" in done.stderr
    assert "Traceback" not in done.stderr


def test_max_seconds_replaces_the_configs_time_limit(tmp_path):
    from scorer.adapters.codabench import grade
    from scorer.cli.main import main

    root = tmp_path / "run"
    (root / "input" / "ref").mkdir(parents=True)
    shutil.copy(TRUTH, root / "input" / "ref")
    (root / "input" / "res").mkdir()
    shutil.copy(SUBMISSION, root / "input" / "res")
    outcome = grade(root / "input", root / "output", max_seconds=1e-9)
    assert outcome.exit_code == 1 and "S028" in outcome.message and "limit of 1e-09 s" in outcome.message
    assert grade(root / "input", root / "output", max_seconds=540).exit_code == 0
    assert main(["codabench", str(root / "input"), str(root / "output"), "--max-seconds", "0"]) == 2


# -- Codabench's unpacker ---------------------------------------------------------------------------------
def codabench_unpacker_problems(folder: Path) -> list[str]:
    """What Codabench's unpacker (v2.py, base_unpacker.py) and worker would refuse in an unzipped bundle; [] if nothing."""
    from dateutil import parser as dates

    problems = []
    spec = yaml.safe_load((folder / "competition.yaml").read_text(encoding="utf-8"))

    def readable(name, what) -> None:  # _unpack_pages / _unpack_terms / _read_image: the file, not empty
        if not name or not (folder / str(name)).is_file():
            problems.append(f"{what}: no file {name!r}")
        elif (folder / str(name)).stat().st_size == 0:
            problems.append(f"{what}: {name} is empty")

    if spec.get("version") != 2:
        problems.append("version is not 2")
    image = spec.get("docker_image")
    if not image or not build.IMAGE.fullmatch(str(image)) or image.startswith("codalab/codalab-legacy"):
        problems.append(f"docker_image {image!r} is not the grader image")
    pages = spec.get("pages")
    if not isinstance(pages, list):
        problems.append("pages: missing (v2.py iterates over it)")
    for page in pages or []:
        readable(page.get("file"), "page")
    readable(spec.get("terms"), "terms")
    readable(spec.get("image"), "image (logo)")
    tasks = {}
    for task in spec.get("tasks") or problems.append("no tasks") or []:
        if "index" not in task or task["index"] in tasks:
            problems.append(f"task without a unique index: {task}")
            continue
        tasks[task["index"]] = task
        if "scoring_program" not in task:
            problems.append(f"task {task['index']} has no scoring program")
        for kind in ("ingestion_program", "input_data", "scoring_program", "reference_data"):  # _get_data_key
            if kind in task and not (folder / task[kind]).exists():
                problems.append(f"task {task['index']}: {kind} {task[kind]!r} is neither in the bundle nor a dataset key")
        program = folder / task.get("scoring_program", "-")
        if not any((program / name).is_file() and "command" in (yaml.safe_load((program / name).read_text()) or {})
                   for name in ("metadata.yaml", "metadata")):
            problems.append(f"task {task['index']}: the scoring program has no metadata.yaml/metadata with a command")
    phases = sorted(spec.get("phases") or problems.append("no phases") or [], key=lambda p: p.get("index", 0))
    for number, phase in enumerate(phases):
        for when in ("start", "end"):  # utils.get_datetime: a date, a datetime or text dateutil reads
            value = phase.get(when)
            if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
                phase[when] = datetime.datetime.combine(value, datetime.time())
            elif isinstance(value, str):
                phase[when] = dates.parse(value)
        if phase.get("start") is None:
            problems.append(f"phase {phase.get('name')}: no start (the phase status is computed from it)")
        if not phase.get("tasks") or any(index not in tasks for index in phase["tasks"]):
            problems.append(f"phase {phase.get('name')}: tasks {phase.get('tasks')} do not name tasks")
        limit = phase.get("execution_time_limit")
        if not isinstance(limit, int) or not 0 < limit <= DEFAULT_QUEUE_LIMIT:
            problems.append(f"phase {phase.get('name')}: execution_time_limit {limit!r} is not within the default queue's {DEFAULT_QUEUE_LIMIT} s")
        if number and (phases[number - 1].get("end") is None or phase.get("start") is None or phases[number - 1]["end"] >= phase["start"]):
            problems.append(f"phase {phase.get('name')}: phases must be sequential")
    boards = spec.get("leaderboards") or problems.append("no leaderboards") or []
    for board in boards:  # src/apps/leaderboards/models.py: Column key unique, title and key <= 36 characters
        columns = board.get("columns", [])
        keys = [column.get("key") for column in columns]
        if len(set(keys)) != len(keys) or not all(column.get("sorting") in ("asc", "desc") for column in columns):
            problems.append(f"leaderboard {board.get('key')}: duplicate keys or a sorting other than asc/desc")
        if any(len(str(column.get(field, ""))) > 36 for column in columns for field in ("title", "key")):
            problems.append(f"leaderboard {board.get('key')}: a column title or key over 36 characters")
    return problems


def test_the_built_codabench_bundle_passes_the_unpackers_checks(codabench_zip, tmp_path):
    unzip_into(codabench_zip, tmp_path / "bundle")
    assert codabench_unpacker_problems(tmp_path / "bundle") == []
    spec = yaml.safe_load((tmp_path / "bundle" / "competition.yaml").read_text())
    assert spec["docker_image"] == IMAGE
    columns = spec["leaderboards"][0]["columns"]
    assert [c["key"] for c in columns] == KEYS and {c["precision"] for c in columns} == {4}
    command = shlex.split(yaml.safe_load((tmp_path / "bundle" / "scoring_program" / "metadata.yaml").read_text())["command"])
    max_seconds = int(command[command.index("--max-seconds") + 1])
    assert max_seconds < spec["phases"][0]["execution_time_limit"] <= DEFAULT_QUEUE_LIMIT, "our time-limit message must win"


def test_the_unpackers_checks_refuse_the_unbuilt_folder_and_the_old_bundle(tmp_path):
    assert any("docker_image" in p for p in codabench_unpacker_problems(BUNDLES / "codabench")), "the folder itself has no image"
    old = tmp_path / "old"
    old.mkdir()
    (old / "competition.yaml").write_text("version: 2\ndocker_image: YOUR_REGISTRY/scorer:latest\ntasks:\n- index: 0\n  scoring_program: sp\n"
                                          "  reference_data: reference_data\nphases:\n- index: 0\n  execution_time_limit: 900\n  tasks: [0]\n"
                                          "leaderboards: []\n")
    problems = codabench_unpacker_problems(old)
    for expected in ("docker_image", "pages", "terms", "image (logo)", "reference_data", "no start", "execution_time_limit"):
        assert any(expected in p for p in problems), (expected, problems)


# -- CodaLab -----------------------------------------------------------------------------------------------
def test_codalab_worker_runs_the_metadata_command_with_real_paths(codalab_zip, tmp_path):
    """worker.py: run/program from scoring_program.zip (its `metadata`), run/input/ref, run/input/res, run/output 0777;
    $input/$output become real paths, the command is split on spaces and follows `docker run ... -w RUN_DIR IMAGE`."""
    bundle = tmp_path / "bundle"
    unzip_into(codalab_zip, bundle)
    spec = yaml.safe_load((bundle / "competition.yaml").read_text())
    assert spec["competition_docker_image"] == IMAGE
    phase = spec["phases"][1]
    run = tmp_path / "codalab" / "run"
    unzip_into((bundle / phase["scoring_program"]).read_bytes(), run / "program")
    unzip_into((bundle / phase["reference_data"]).read_bytes(), run / "input" / "ref")
    (run / "input" / "res").mkdir(parents=True)
    shutil.copy(SUBMISSION, run / "input" / "res")
    (run / "output").mkdir()
    (run / "output").chmod(0o777)
    metadata = yaml.safe_load((run / "program" / "metadata").read_text())
    assert set(metadata) <= {"command", "description"}, "other keys of metadata are fetched as bundle URLs"
    command = metadata["command"].replace("$program", str(run / "program")).replace("$input", str(run / "input")).replace("$output", str(run / "output"))
    assert "/app" not in command
    done = run_image(command.split(" "), cwd=run)
    assert done.returncode == 0, done.stdout + done.stderr
    scores = yaml.safe_load((run / "output" / "scores.txt").read_text())
    assert list(scores) == list(spec["leaderboard"]["columns"]) == KEYS
    assert scores == pytest.approx(strict_scores(SUBMISSION, DEMO_TRUTH), abs=1e-9)
    for name in (spec["image"], *spec["html"].values()):
        assert (bundle / name).is_file() and (bundle / name).stat().st_size > 0, name
    assert phase["execution_time_limit"] > int(command.split(" ")[command.split(" ").index("--max-seconds") + 1])
    assert all(column["leaderboard"] is spec["leaderboard"]["leaderboards"]["Results"] for column in spec["leaderboard"]["columns"].values())


# -- EvalAI ------------------------------------------------------------------------------------------------
def load_remote_evaluate():
    import importlib.util

    spec = importlib.util.spec_from_file_location("evaluate", BUNDLES / "evalai" / "remote_challenge_evaluation" / "evaluate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.evaluate


def as_remote_main(evaluate, submission: Path, codename: str) -> tuple[str, str]:
    """EvalAI-Starters' main.py: ("FINISHED", json of result) or ("FAILED", str(e) shown to the participant)."""
    try:
        results = evaluate(str(submission), codename)
        return "FINISHED", json.dumps(results["result"])
    except Exception as error:  # as main.py does
        return "FAILED", str(error)


def test_evalai_challenge_config_and_remote_evaluation(tmp_path, monkeypatch, capsys):
    folder = BUNDLES / "evalai"
    config = yaml.safe_load((folder / "challenge_config.yaml").read_text())
    schema = config["leaderboard"][0]["schema"]
    assert schema["labels"] == KEYS and schema["default_order_by"] == "score" and config["remote_evaluation"] is True
    splits = {split["id"]: split["codename"] for split in config["dataset_splits"]}
    phases = {phase["id"]: phase["codename"] for phase in config["challenge_phases"]}
    assert set(splits.values()) == {"dev_split", "test_split"} and set(phases.values()) == {"dev", "test"}
    for name in [config[key] for key in ("description", "evaluation_details", "terms_and_conditions", "submission_guidelines")] + \
            [phase[key] for phase in config["challenge_phases"] for key in ("description", "test_annotation_file")]:
        assert (folder / name).is_file(), name
    out = tmp_path / "evalai.zip"
    build.evalai(out)
    assert {"challenge_config.yaml", "evaluation_script.zip", config["image"]} <= set(zipfile.ZipFile(out).namelist())

    evaluate = load_remote_evaluate()
    monkeypatch.setenv("SCORER_TRUTH_TEST", str(TRUTH))
    status, result = as_remote_main(evaluate, SUBMISSION, "test")
    test_split = next(splits[s["dataset_split_id"]] for s in config["challenge_phase_splits"]
                      if phases[s["challenge_phase_id"]] == "test")
    assert status == "FINISHED" and json.loads(result) == [{"split": test_split, "show_to_participant": True,  # EvalAI's remote form
                                                            "accuracies": pytest.approx(strict_scores(SUBMISSION, TRUTH), abs=1e-12)}]

    bad = tmp_path / "bad.csv"
    bad.write_text(SUBMISSION.read_text().replace("_carts", "_cart", 1))
    status, shown = as_remote_main(evaluate, bad, "test")
    assert status == "FAILED" and shown.startswith("Submission rejected: S005 line") and str(tmp_path) not in shown
    status, shown = as_remote_main(evaluate, tmp_path / "never-uploaded.csv", "test")
    assert status == "FAILED" and shown.startswith("Submission rejected:") and "\n" not in shown

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"session": 1, "labels": {"clicks": "x"}}\n')
    monkeypatch.setenv("SCORER_TRUTH_TEST", str(broken))
    status, shown = as_remote_main(evaluate, SUBMISSION, "test")
    assert status == "FAILED" and shown == evalai_adapter.HOST_SIDE, "the host's problem, no path or detail shown"
    assert str(broken) in capsys.readouterr().err, "the detail goes to the host's log"
    status, shown = as_remote_main(evaluate, SUBMISSION, "dev")  # no $SCORER_TRUTH_DEV
    assert status == "FAILED" and shown == evalai_adapter.HOST_SIDE and "SCORER_TRUTH_DEV" in capsys.readouterr().err


# -- a read-only root file system ----------------------------------------------------------------------------
def _numba_warm_cache() -> Path:
    """Where this test run's numba caches of scorer/kernels are ($NUMBA_CACHE_DIR's folder for them, else in the tree)."""
    from numba.core.caching import UserProvidedCacheLocator

    kernels = ROOT / "scorer" / "kernels"
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / UserProvidedCacheLocator.get_suitable_cache_subpath(str(kernels / "parse.py"))
    return kernels / "__pycache__"


def test_a_read_only_root_file_system_scores_with_a_temporary_numba_cache(tmp_path):
    """`docker run --read-only --tmpfs /tmp`: the package, $HOME, $NUMBA_CACHE_DIR and $SCORER_CACHE_DIR cannot be
    written (a read-only folder of ours, with DAC_OVERRIDE dropped when running as root); /tmp can."""
    from numba.core.caching import UserProvidedCacheLocator

    frozen = tmp_path / "ro"
    # without the module compiled with an editable install: these runs are of numba's kernels and their cache
    shutil.copytree(ROOT / "scorer", frozen / "site" / "scorer", ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
    kernels = frozen / "site" / "scorer" / "kernels"
    warm = frozen / "numba-cache" / UserProvidedCacheLocator.get_suitable_cache_subpath(str(kernels / "parse.py"))
    warm.mkdir(parents=True)
    for path in _numba_warm_cache().glob("*.nb[ic]"):  # the image's warm caches, for this copy of the package
        shutil.copy(path, warm / path.name)
    for name in ("home", "scorer-cache"):
        (frozen / name).mkdir()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"PYTHONPATH": str(frozen / "site"), "HOME": str(frozen / "home"), "NUMBA_CACHE_DIR": str(frozen / "numba-cache"),
           "SCORER_CACHE_DIR": str(frozen / "scorer-cache"), "TMPDIR": str(scratch), "XDG_CACHE_HOME": ""}
    env = {k: v for k, v in {**os.environ, **env}.items() if v != ""}
    argv = ["score", str(SUBMISSION), "--truth", str(TRUTH), "--strict", "--format", "json"]
    subprocess.run(["chmod", "-R", "a-w", str(frozen)], check=True)
    try:
        without = subprocess.run([sys.executable, "-c", "import sys, scorer.numba_cache as n, scorer.cli.main as cli; n.prepare = lambda: None; "
                                  f"sys.exit(cli.main({argv!r}))"], env=env, cwd=scratch, preexec_fn=_as_container,
                                 capture_output=True, text=True, timeout=300)
        done = subprocess.run([sys.executable, "-m", "scorer.cli", *argv], env=env, cwd=scratch, preexec_fn=_as_container,
                              capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(frozen)], check=True)
    assert without.returncode == 3 and "no locator available" in without.stderr, "the emulation must reproduce the crash"
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["score"] == pytest.approx(strict_scores(SUBMISSION, TRUTH)["score"], abs=1e-12)
    assert list(scratch.iterdir()) == [], "the temporary cache is removed at exit"


def test_without_numba_cache_dir_a_read_only_package_and_home_get_a_temporary_cache(tmp_path):
    """pip-installed on a read-only root file system: numba would look beside the package and in ~/.cache."""
    frozen = tmp_path / "ro"
    # without the module compiled with an editable install: these runs are of numba's kernels and their cache
    shutil.copytree(ROOT / "scorer", frozen / "site" / "scorer", ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
    (frozen / "home").mkdir()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(frozen / "site"), HOME=str(frozen / "home"), TMPDIR=str(scratch), SCORER_CACHE_DIR=str(frozen / "home" / "cache"))
    code = "import os, scorer.kernels; print(os.environ.get('NUMBA_CACHE_DIR'))"
    subprocess.run(["chmod", "-R", "a-w", str(frozen)], check=True)
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, cwd=scratch, preexec_fn=_as_container, capture_output=True, text=True, timeout=60)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(frozen)], check=True)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == scratch and list(scratch.iterdir()) == []
    writable = subprocess.run([sys.executable, "-c", code], env=env, cwd=scratch, capture_output=True, text=True, timeout=60,
                              preexec_fn=_as_container)  # the same, now that the package's folder is writable again
    assert writable.stdout.strip() == "None", "a writable cache folder is left to numba"



def test_a_read_only_root_as_another_user_without_a_writable_tmp_scores_on_the_modules(tmp_path):
    """`docker run --user 1000 --read-only` with no `--tmpfs /tmp`: nothing the process may write, not even /tmp, and
    the image's numba cache folder and scorer cache are not its own. The ahead-of-time modules serve, numba is never
    imported, so no cache folder is asked for (it stopped with exit 2 asking for one); a run that does need numba's
    kernels stops with exit 2 saying what to give it."""
    from scorer.kernels import aot

    missing = [stage for stage in ("score",) if not any(path.is_file() for path in aot.prebuilt_paths(stage))]
    if missing:
        pytest.skip(f"no module compiled with the package for {', '.join(missing)} (installed without a C compiler?)")
    frozen = tmp_path / "ro"
    shutil.copytree(ROOT / "scorer", frozen / "site" / "scorer", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("home", "numba-cache", "scorer-cache", "tmp"):  # the image's folders, none writable by this user
        (frozen / name).mkdir()
    if os.geteuid() == 0:  # the image's scorer cache is another user's than 1000 (root's, 0700): one this run cannot take
        os.chown(frozen / "scorer-cache", FOREIGN_UID, -1)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "SCORER_AOT")}
    env.update(PYTHONPATH=str(frozen / "site"), HOME=str(frozen / "home"), NUMBA_CACHE_DIR=str(frozen / "numba-cache"),
               SCORER_CACHE_DIR=str(frozen / "scorer-cache"), TMPDIR=str(frozen / "tmp"))
    probe = ("import os, tempfile\ntempfile.tempdir = os.environ['TMPDIR']\n"  # as on a read-only root: no other /tmp to fall back on
             "import sys, json, io, contextlib\nfrom scorer.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n    code = main(sys.argv[1:])\n"
             "print(json.dumps({'exit': code, 'out': out.getvalue(), 'numba': 'numba' in sys.modules}))")
    argv = ["score", str(SUBMISSION), "--truth", str(TRUTH), "--strict", "--format", "json"]
    subprocess.run(["chmod", "-R", "a-w", str(frozen)], check=True)
    try:
        runs = [subprocess.run([sys.executable, "-c", probe, *argv], env={**env, **extra}, cwd=frozen, preexec_fn=_as_container,
                               capture_output=True, text=True, timeout=600) for extra in ({}, {"SCORER_AOT": "0"})]
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(frozen)], check=True)
    on_modules = json.loads(runs[0].stdout.strip().splitlines()[-1])
    assert on_modules["exit"] == 0 and not on_modules["numba"], runs[0].stderr
    assert json.loads(on_modules["out"])["score"] == pytest.approx(strict_scores(SUBMISSION, TRUTH)["score"], abs=1e-12)
    assert "numba" not in runs[0].stderr, runs[0].stderr
    if os.geteuid() != 0:
        return  # a folder of this user's could be made private again (chmod), and numba would have it
    on_numba = json.loads(runs[1].stdout.strip().splitlines()[-1])
    assert on_numba["exit"] == 2 and "no folder numba's kernels could be compiled into is writable here" in runs[1].stderr
    assert "--tmpfs /tmp" in runs[1].stderr and "Traceback" not in runs[1].stderr

# -- bundles of another competition (issue 25) ---------------------------------------------------------------
def test_a_bundle_scores_the_competition_it_names_with_its_leaderboard_columns(tmp_path):
    """--config ships the config in the scoring program, whose command names it; the columns are the config's."""
    config = tmp_path / "shop.toml"
    config.write_text((ROOT / "configs" / "hm.toml").read_text().replace('title = "H&M Personalized Fashion Recommendations"',
                                                                        'title = "Shop week"'))
    hm = FIXTURES / "hm"
    out = tmp_path / "shop.zip"
    assert build.main(["codabench", str(out), "--image", IMAGE, "--config", str(config), "--truth", str(hm / "truth.csv")]) == 0
    root = codabench_run(tmp_path, out, hm / "submission.csv")
    spec = yaml.safe_load((tmp_path / "bundle" / "competition.yaml").read_text())
    assert spec["title"] == "Shop week" and "map@12" in spec["description"]
    columns = spec["leaderboards"][0]["columns"]
    assert [(c["key"], c["title"], c["sorting"]) for c in columns] == [("score", "Score", "desc")]
    argv = codabench_command(root)
    assert argv[3:5] == ["--config", str(root / "program" / "competition.toml")]
    from scorer.cli.main import main

    assert main(argv) == 0
    scores = json.loads((root / "output" / "scores.json").read_text())
    assert {c["key"] for c in columns} <= set(scores)
    assert scores["score"] == pytest.approx(strict_scores_of(hm / "submission.csv", hm / "truth.csv", "hm"), abs=1e-12)


def strict_scores_of(submission: Path, truth: Path, competition: str) -> float:
    from scorer.api import score

    return score(submission, truth, competition, strict=True).score


def test_bundle_columns_follow_the_config():
    from scorer.spec.competition import load_competition

    assert build.leaderboard_columns(load_competition("otto")) == [
        ("score", "Score", "desc"), *((kind, f"Recall@20 {kind}", "desc") for kind in ("clicks", "carts", "orders"))]
    assert build.leaderboard_columns(load_competition("ratings")) == [("score", "Score", "asc")]  # an error: lower is better


def test_a_truth_needs_its_competition_and_must_read_as_its_truth(tmp_path, capsys):
    hm_truth = FIXTURES / "hm" / "truth.csv"
    with pytest.raises(SystemExit) as stop:
        build.main(["codabench", str(tmp_path / "a.zip"), "--image", IMAGE, "--truth", str(hm_truth)])
    assert stop.value.code == 2 and "needs --competition NAME or --config PATH" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        build.main(["codalab", str(tmp_path / "b.zip"), "--image", IMAGE, "--truth", str(hm_truth), "--competition", "otto"])
    assert stop.value.code == 2 and "truth file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        build.main(["codalab", str(tmp_path / "c.zip"), "--image", IMAGE, "--competition", "hmm"])
    assert stop.value.code == 2 and "did you mean 'hm'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
