"""Build the zip a platform takes from the folders beside this script.

    python bundles/build.py codabench OUT.zip --image REGISTRY/scorer:TAG [--competition NAME | --config PATH] [--truth T]
    python bundles/build.py codalab OUT.zip --image REGISTRY/scorer:TAG [--competition NAME | --config PATH] [--truth T]
    python bundles/build.py evalai OUT.zip

--image names the grader image (docker/Dockerfile, built and pushed), written into the competition file;
--competition (a bundled config, default otto) or --config (any config TOML, shipped in the scoring program)
decides what the scoring program scores, the competition's title and its leaderboard columns (the weighted
score, then the scored metric of each type); --truth replaces the demo truth of codabench/reference_data and
needs --competition or --config, so that no truth is bundled with another competition's config: it must read as
that competition's truth. The truth goes into the bundle compiled (`scorer compile-truth` for that competition:
a .truth.npz or .strings.npz loads in milliseconds, where a JSONL truth would be compiled again for every
submission: Codabench's worker runs each in a new container and removes it, cache and all); a compiled truth is shipped as it is. The EvalAI zip holds no truth of
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
from typing import NamedTuple

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
    return _zipped_files([(name, path.read_bytes()) for path, name in entries])


COMPILED = {"id_type": ".truth.npz", "impression": ".impressions.npz"}  # by shape; the string shapes' is .strings.npz
STRINGS = ".strings.npz"


def reference_files(truth: Path | None, work: Path, chosen: Chosen) -> list[tuple[Path, str]]:
    """(file, name inside reference_data): the truth given, else the demo truth, compiled for the chosen competition
    into the folder work."""
    source = truth if truth is not None else HERE / "codabench" / "reference_data" / "test_labels.jsonl"
    if source.name.endswith((*COMPILED.values(), STRINGS)):
        return [(source, source.name)]
    compiled = work / (source.name.split(".", 1)[0] + COMPILED.get(chosen.load().shape, STRINGS))
    which = ["--config", str(chosen.config)] if chosen.config is not None else ["--competition", chosen.name]
    done = subprocess.run([sys.executable, "-m", "scorer", "compile-truth", str(source), "-o", str(compiled), *which],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bundles/build.py: cannot compile the truth {source}: {done.stderr.strip() or done.stdout.strip()}")
    return [(compiled, compiled.name)]


def _with_line(text: str, after: str, line: str) -> str:
    """`text` with `line` inserted after its first line that starts with `after`."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, old in enumerate(lines) if old.startswith(after)) + 1
    return "".join(lines[:at] + [line + "\n"] + lines[at:])


class Chosen(NamedTuple):
    """The competition a bundle scores: its bundled name, or the config file shipped in the scoring program."""

    name: str = "otto"
    config: Path | None = None

    def load(self):
        _importable()
        from scorer.spec.competition import load_competition

        return load_competition(self.name, self.config)

    def option(self, program: str) -> str:
        """The scoring command's option naming it; program: where the scoring program lies when it runs."""
        return f"--config {program}/{CONFIG_NAME}" if self.config else f"--competition {self.name}"


def _importable() -> None:
    """Make the scorer of this checkout importable when it is not installed (its configs decide the bundle)."""
    try:
        import scorer  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(HERE.parent))


CONFIG_NAME = "competition.toml"  # a --config file, as shipped in the scoring program


def leaderboard_columns(competition) -> list[tuple[str, str, str]]:
    """(key, title, sorting) of each leaderboard column, from the config: the weighted score, then (with several
    types) the scored metric of each type; the keys are those the scoring program writes
    (scorer.adapters.message.leaderboard_values). An error metric (rmse, mae) sorts ascending."""
    metric = str(competition.metric)
    title = metric[:1].upper() + metric[1:]
    sorting = "asc" if competition.metric.family == "value" else "desc"
    columns = [("score", "Score", sorting)]
    if len(competition.types) > 1:
        columns += [(kind, f"{title} {kind}", sorting) for kind in competition.types]
    return columns


def _described(text: str, competition) -> str:
    """The competition file's title, description and upload sentence, and its leaderboard columns (the text after
    the line `leaderboards:` or `  columns:`), as the competition's config says."""
    weights = "/".join(f"{weight:g}" for weight in competition.weights)
    per_type = f" per type, weighted {weights}" if len(competition.types) > 1 else ""
    lines = {"title:": f"title: {competition.title}",
             "description:": f"description: Scored by {competition.metric}{per_type}, strictly.",
             "upload:": f"One CSV (plain, .gz or .zip) with the header {','.join(competition.header)}."}
    if competition.shape == "impression":  # no header: a line per impression, in the truth's order
        lines["upload:"] = ("One prediction.txt (or a zip holding it), a line `ImpId [r1,r2,...]` per impression in the "
                            "truth's order, with the rank of each candidate.")
    if competition.name != "otto":  # the bundled text describes OTTO in words of its own
        text = re.sub(r"(?m)^title: .*$", lambda _: lines["title:"], text, count=1)
        text = re.sub(r"(?m)^description: .*$", lambda _: lines["description:"], text, count=1)
    text = re.sub(r"Upload one CSV \(plain, \.gz or \.zip\) with the header [^ \n]+\.", lambda _: "Upload o" + lines["upload:"][1:], text)
    return text


def _codabench_columns(competition) -> str:
    rows = ["leaderboards:", "- index: 0", "  title: Results", "  key: main", "  columns:"]
    for index, (key, title, sorting) in enumerate(leaderboard_columns(competition)):
        rows += [f"  - title: {title}", f"    key: {key}", f"    index: {index}", f"    sorting: {sorting}", "    precision: 4"]
    return "\n".join(rows) + "\n"


def _codalab_columns(competition) -> str:
    rows = ["  columns:"]
    for rank, (key, title, sorting) in enumerate(leaderboard_columns(competition), 1):
        rows += [f"    {key}:", "      leaderboard: *RESULTS", f"      label: {title}", f"      rank: {rank}",
                 "      numeric_format: 4", f"      sort: {sorting}"]
    return "\n".join(rows) + "\n"


def _program(folder: Path, prefix: str, chosen: Chosen, where: str) -> list[tuple[str, bytes]]:
    """(name, bytes) of the scoring program's files, its command naming the competition, the config shipped with it."""
    files = []
    for path, name in _entries(folder, prefix):
        data = path.read_bytes()
        if path.name in ("metadata.yaml", "metadata"):
            data = data.replace(b"--competition otto", chosen.option(where).encode())
            if chosen.config is not None or chosen.name != "otto":
                data = data.replace(b"OTTO scorer (recall@20 per type)", f"{chosen.load().title} scorer".encode())
        files.append((name, data))
    if chosen.config is not None:
        files.append((prefix + CONFIG_NAME, chosen.config.read_bytes()))
    return files


def _zipped_files(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            archive.writestr(name, data)
    return buffer.getvalue()


def _competition_file(source: Path, chosen: Chosen, columns_at: str, columns, after: str, image_line: str) -> str:
    """The platform's competition.yaml for the chosen competition: its title and description, the leaderboard
    columns (everything from `columns_at` on is replaced by columns(competition)), and `image_line` after the first
    line that starts with `after`."""
    competition = chosen.load()
    text = _described((source / "competition.yaml").read_text(encoding="utf-8"), competition)
    text = text[: text.index(columns_at) + 1] + columns(competition)
    return _with_line(text, after, image_line)


def codabench(out: Path, image: str, truth: Path | None = None, chosen: Chosen = Chosen()) -> None:
    source = HERE / "codabench"
    text = _competition_file(source, chosen, "\nleaderboards:", _codabench_columns, "version:", f"docker_image: {image}")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive, tempfile.TemporaryDirectory() as work:
        archive.writestr("competition.yaml", text)
        archive.write(source / "logo.png", "logo.png")
        _add(archive, _entries(source / "pages", "pages/"))
        for name, data in _program(source / "scoring_program", "scoring_program/", chosen, "/app/program"):
            archive.writestr(name, data)
        _add(archive, [(path, f"reference_data/{name}") for path, name in reference_files(truth, Path(work), chosen)])


def codalab(out: Path, image: str, truth: Path | None = None, chosen: Chosen = Chosen()) -> None:
    source = HERE / "codalab"
    text = _competition_file(source, chosen, "\n  columns:", _codalab_columns, "title:", f"competition_docker_image: {image}")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive, tempfile.TemporaryDirectory() as work:
        archive.writestr("competition.yaml", text)
        archive.write(HERE / "codabench" / "logo.png", "logo.png")
        for page in sorted(source.glob("*.html")):
            archive.write(page, page.name)
        archive.writestr("scoring_program.zip", _zipped_files(_program(source / "scoring_program", "", chosen, "$program")))
        archive.writestr("reference_data.zip", _zipped(reference_files(truth, Path(work), chosen)))


def evalai(out: Path, image: str | None = None, truth: Path | None = None, chosen: Chosen = Chosen()) -> None:
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
    parser.add_argument("--image", help="the grader image, e.g. ghcr.io/you/scorer:TAG (codabench, codalab)")
    parser.add_argument("--truth", type=Path, help="the truth file for reference_data (codabench, codalab; default: the demo "
                        "truth); needs --competition or --config")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--competition", metavar="NAME", help="a bundled competition config (codabench, codalab; default: otto)")
    which.add_argument("--config", type=Path, metavar="PATH", help="a competition config TOML, shipped in the scoring program")
    args = parser.parse_args(argv)
    if args.platform != "evalai" and not args.image:
        parser.error(f"{args.platform} needs --image: the grader image built from docker/Dockerfile and pushed")
    if args.image and not IMAGE.fullmatch(args.image):
        parser.error(f"--image {args.image!r} is not a Docker image reference (registry/name:tag)")
    if args.truth is not None and not args.truth.is_file():
        parser.error(f"--truth {args.truth}: no such file")
    if args.truth is not None and args.platform != "evalai" and not (args.competition or args.config):
        parser.error(f"--truth {args.truth} needs --competition NAME or --config PATH: the competition it is the truth of")
    chosen = Chosen(args.competition or "otto", args.config)
    try:
        competition = chosen.load()
        if competition.shape == "impression" and args.truth is None and args.platform != "evalai":
            parser.error(f"{competition.name} needs --truth: its truth.txt (or behaviors.parquet); the demo truth is OTTO's")
        if args.truth is not None:
            import scorer

            scorer.load_truth(args.truth, competition=competition)  # a truth of another competition fails here
    except Exception as error:  # ConfigError, TruthError: the message says what is wrong
        parser.error(str(error))
    PLATFORMS[args.platform](args.out, args.image, args.truth, chosen)
    columns = ", ".join(key for key, _, _ in leaderboard_columns(competition))
    print(f"{args.platform} bundle: {args.out} ({competition.name}; leaderboard columns {columns})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
