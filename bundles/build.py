"""Build the zip a platform takes from the folders beside this script.

    python bundles/build.py codabench OUT.zip --image REGISTRY/scorer:TAG [--truth test.truth.npz]
    python bundles/build.py codalab OUT.zip --image REGISTRY/scorer:TAG [--truth test.truth.npz]
    python bundles/build.py evalai OUT.zip

--image names the grader image (docker/Dockerfile, built and pushed), written into the competition file;
--truth replaces the demo truth of codabench/reference_data. The truth goes into the bundle compiled
(`scorer compile-truth`: a .truth.npz loads in milliseconds, where the grader's read-only cache would compile a
JSONL truth again for every submission); a compiled truth is shipped as it is. The EvalAI zip holds no truth of
yours: with remote evaluation the truth stays on your machine.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).parent
# a Docker image reference: [registry/]name[:tag][@sha256:digest], nothing a shell or YAML would read twice
IMAGE = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
                   r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?")


def _entries(folder: Path, prefix: str = "") -> list[tuple[Path, str]]:
    """(file, its name in the zip: prefix + its path below folder) for every file under folder."""
    files = sorted(path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    return [(path, prefix + path.relative_to(folder).as_posix()) for path in files]


def _add(archive: zipfile.ZipFile, entries: list[tuple[Path, str]]) -> None:
    for path, name in entries:
        archive.write(path, name)


def _zipped(entries: list[tuple[Path, str]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        _add(archive, entries)
    return buffer.getvalue()


COMPILED = (".truth.npz", ".strings.npz")


def reference_files(truth: Path | None, work: Path) -> list[tuple[Path, str]]:
    """(file, name inside reference_data): the truth given, else the demo truth, compiled into the folder work."""
    source = truth if truth is not None else HERE / "codabench" / "reference_data" / "test_labels.jsonl"
    if source.name.endswith(COMPILED):
        return [(source, source.name)]
    compiled = work / (source.name.split(".", 1)[0] + COMPILED[0])
    done = subprocess.run([sys.executable, "-m", "scorer", "compile-truth", str(source), "-o", str(compiled)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bundles/build.py: cannot compile the truth {source}: {done.stderr.strip() or done.stdout.strip()}")
    return [(compiled, compiled.name)]


def _with_line(text: str, after: str, line: str) -> str:
    """`text` with `line` inserted after its first line that starts with `after`."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, old in enumerate(lines) if old.startswith(after)) + 1
    return "".join(lines[:at] + [line + "\n"] + lines[at:])


def codabench(out: Path, image: str, truth: Path | None = None) -> None:
    source = HERE / "codabench"
    competition = _with_line((source / "competition.yaml").read_text(encoding="utf-8"), "version:", f"docker_image: {image}")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive, tempfile.TemporaryDirectory() as work:
        archive.writestr("competition.yaml", competition)
        archive.write(source / "logo.png", "logo.png")
        _add(archive, _entries(source / "pages", "pages/"))
        _add(archive, _entries(source / "scoring_program", "scoring_program/"))
        _add(archive, [(path, f"reference_data/{name}") for path, name in reference_files(truth, Path(work))])


def codalab(out: Path, image: str, truth: Path | None = None) -> None:
    source = HERE / "codalab"
    competition = _with_line((source / "competition.yaml").read_text(encoding="utf-8"), "title:", f"competition_docker_image: {image}")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive, tempfile.TemporaryDirectory() as work:
        archive.writestr("competition.yaml", competition)
        archive.write(HERE / "codabench" / "logo.png", "logo.png")
        for page in sorted(source.glob("*.html")):
            archive.write(page, page.name)
        archive.writestr("scoring_program.zip", _zipped(_entries(source / "scoring_program")))
        archive.writestr("reference_data.zip", _zipped(reference_files(truth, Path(work))))


def evalai(out: Path, image: str | None = None, truth: Path | None = None) -> None:
    source = HERE / "evalai"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(source / "challenge_config.yaml", "challenge_config.yaml")
        archive.write(HERE / "codabench" / "logo.png", "logo.png")
        _add(archive, _entries(source / "templates", "templates/"))
        _add(archive, _entries(source / "annotations", "annotations/"))
        archive.writestr("evaluation_script.zip", _zipped(_entries(source / "evaluation_script")))


PLATFORMS = {"codabench": codabench, "codalab": codalab, "evalai": evalai}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bundles/build.py", description="Build a platform's competition zip.")
    parser.add_argument("platform", choices=sorted(PLATFORMS))
    parser.add_argument("out", type=Path, metavar="OUT.zip")
    parser.add_argument("--image", help="the grader image, e.g. ghcr.io/you/scorer:0.1.0 (codabench, codalab)")
    parser.add_argument("--truth", type=Path, help="the truth file for reference_data (codabench, codalab; default: the demo truth)")
    args = parser.parse_args(argv)
    if args.platform != "evalai" and not args.image:
        parser.error(f"{args.platform} needs --image: the grader image built from docker/Dockerfile and pushed")
    if args.image and not IMAGE.fullmatch(args.image):
        parser.error(f"--image {args.image!r} is not a Docker image reference (registry/name:tag)")
    if args.truth is not None and not args.truth.is_file():
        parser.error(f"--truth {args.truth}: no such file")
    PLATFORMS[args.platform](args.out, args.image, args.truth)
    print(f"{args.platform} bundle: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
