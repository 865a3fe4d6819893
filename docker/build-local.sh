#!/usr/bin/env bash
# The grader image built where no image registry is reachable, and no package index from inside a build (an
# organiser behind a firewall, or this project's machines):
#   1. a local base: Debian bookworm (debootstrap --variant=minbase) with Python from Debian's packages, imported
#      with `docker import`; and a builder base, the same with the C++ compiler and Python's headers;
#   2. a wheelhouse: every wheel the image installs, the build backend's included (pip wheel -w, on this host,
#      pinned by docker/constraints.txt);
#   3. the images: docker/Dockerfile built with --network none from a context of the package and the wheelhouse, its
#      full target as TAG and its grader target as TAG-grader (scorer:local-grader); the builder stages' images are
#      removed after (they hold the compiler and every wheel: 1.5 GB).
# Usage (as root, from anywhere):  docker/build-local.sh [TAG]      TAG defaults to scorer:local
# The work folder (the bases' root file system, the build context) is $SCORER_DOCKER_WORK, else a temporary folder
# outside the checkout, removed at the end.
# Needs docker, debootstrap and python3.11 with pip on this host, Debian's mirror and the package index reachable
# from it. The bases are made once (SCORER_REBASE=1 makes them again); DEBIAN_MIRROR picks the mirror.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:-scorer:local}
base=scorer-base:bookworm
builder=scorer-base:bookworm-gcc
work=${SCORER_DOCKER_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/scorer-docker-XXXXXX")}
[ -n "${SCORER_DOCKER_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
python=${PYTHON:-python3.11}  # the wheels must fit the base's Python: bookworm's is 3.11
mkdir -p "$work"

if [ -n "${SCORER_REBASE:-}" ] || ! docker image inspect "$base" >/dev/null 2>&1; then
    echo "== the base: debootstrap bookworm, Python from Debian's packages -> $base"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase --include=python3,python3-venv bookworm "$work/rootfs" "$mirror"
    # what no grader reads: apt's downloaded packages and lists, documentation, manuals, translations
    rm -rf "$work/rootfs"/var/cache/apt/archives/*.deb "$work/rootfs"/var/lib/apt/lists/* \
        "$work/rootfs"/usr/share/doc/* "$work/rootfs"/usr/share/man/* "$work/rootfs"/usr/share/info/* "$work/rootfs"/usr/share/locale/*
    tar -C "$work/rootfs" -c . | docker import -c 'ENV LANG=C.UTF-8' -c 'CMD ["/bin/bash"]' - "$base"
    rm -rf "$work/rootfs"
fi
if [ -n "${SCORER_REBASE:-}" ] || ! docker image inspect "$builder" >/dev/null 2>&1; then
    echo "== the builder's base: $base with g++ and Python's headers -> $builder"
    container=scorer-base-builder-$$
    docker run --name "$container" --network host "$base" sh -c \
        'apt-get update && apt-get install -y --no-install-recommends g++ libc6-dev python3-dev && rm -rf /var/lib/apt/lists/*'
    docker commit "$container" "$builder" >/dev/null
    docker rm "$container" >/dev/null
fi

echo "== the wheelhouse: every wheel the image installs, the build backend's too"
context="$work/context"
rm -rf "$context"
mkdir -p "$context/docker/wheelhouse"
requirements=$("$python" - <<'EOF'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))
print("\n".join(project["project"]["dependencies"] + project["project"]["optional-dependencies"]["evalai"]
                + project["build-system"]["requires"]))
EOF
)
# shellcheck disable=SC2086
"$python" -m pip wheel --quiet --only-binary :all: -c docker/constraints.txt -w "$context/docker/wheelhouse" $requirements

echo "== the image, offline: $tag"
cp pyproject.toml setup.py README.md "$context/"
cp docker/Dockerfile docker/constraints.txt "$context/docker/"
tar -c --exclude=__pycache__ --exclude=prebuilt scorer | tar -C "$context" -x
for target in full grader; do
    name=$tag
    [ "$target" = full ] || name=$tag-$target
    echo "== the $target image: $name"
    docker build --network none -f "$context/docker/Dockerfile" --build-arg BASE_IMAGE="$base" --build-arg BUILDER_IMAGE="$builder" \
        --build-arg PIP_NO_INDEX=1 --target "$target" -t "$name" "$context"
done
# the builder stages' images (compiler, wheelhouse, both venvs): kept by the legacy builder as untagged images
docker image prune --force --filter "label=scorer.stage=builder" >/dev/null
docker image ls --filter "reference=${tag%%:*}"
