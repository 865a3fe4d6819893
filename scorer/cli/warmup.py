"""scorer warmup: build the ahead-of-time kernel module (scorer.engine.aot), then score tiny built-in examples every way a
grader can, so numba compiles (and caches) every other scoring kernel."""

from __future__ import annotations

import gzip
import tempfile
import time
import zipfile
from pathlib import Path

USAGE = "scorer warmup [--competition NAME]... [--quiet]"
EXAMPLES = ("scorer warmup", "scorer warmup --competition otto --competition hm --quiet")
HELP = "compile and cache the scoring kernels of every bundled competition (run once, e.g. when building a Docker image)"

OTTO_TRUTH = '{"session": 1, "labels": {"clicks": 10, "carts": [20], "orders": [30, 31]}}\n{"session": 2, "labels": {}}\n'
OTTO_GOOD = "session_type,labels\n1_clicks,10 99\n1_carts,21\n1_orders,30 40\n2_clicks,\n2_carts,5\n2_orders,7 0\n"
# every problem the careful path reports: bad ids, types and items, quotes, CRLF, a BOM, a blank line, repeats
OTTO_ODD = ('\ufeffsession_type,labels\r\n"1_clicks",10  99 99\r\n1_carts,2x\r\n1_orders,-3\r\n2_click,1\r\nx_carts,1\r\n'
            '\r\n2_orders,1,2\r\n2_orders,"1 2\r\n9_clicks,\x00\r\n1_carts,' + " ".join(map(str, range(30))) + "\r\n")


def add_arguments(parser) -> None:
    parser.add_argument("--competition", action="append", metavar="NAME",
                        help="warm up for this bundled competition only (repeatable; default: every bundled one)")
    parser.add_argument("--quiet", action="store_true", help="print nothing")


def examples(competition) -> tuple[str, list[str]]:
    """(truth text, submissions: a clean one and one full of problems) in the competition's own format."""
    header = ",".join(competition.header)
    if competition.shape == "id_type":
        if competition.types != ("clicks", "carts", "orders"):
            rows = [competition.id_pattern.format(session=s, type=t) for s in (1, 2) for t in competition.types]
            truth = "session,type,aid\n" + "".join(f"{s},{t},{s * 10}\n" for s in (1, 2) for t in competition.types)
            return truth, [header + "\n" + "".join(f"{r},10 20\n" for r in rows), header + "\n" + "".join(f"{r},x 1  1\n" for r in rows)]
        return OTTO_TRUTH, [OTTO_GOOD, OTTO_ODD]
    if competition.shape == "long":
        return f"{header}\nA,1\nA,2\nB,3\n", [f"{header}\nA,1\nA,2\nB,3\n", f'{header}\r\nA,1\r\nA,\r\n"B,3\r\nC,9\r\n\r\nA,1,2\r\n']
    if competition.shape == "value":
        return f"{header}\nA,1.5\nB,2\n", [f"{header}\nA,1.5\nB,2\n", f"{header}\r\nA,x\r\nC,1e400\r\nB,2,3\r\n\r\n"]
    return f"{header}\nA,1 2\nB,3\n", [f"{header}\nA,1 2\nB,3\n", f'{header}\r\nA,1  1 "2\r\nC,\r\n\r\nB,3,4\r\nB,3\r\n']


def warm(name: str, folder: Path) -> None:
    """Score the examples of one bundled competition: plain, gzip and zip; truth from a file, an object, compiled; both modes."""
    from scorer import api
    from scorer.spec.competition import load_competition
    from scorer.truth.load import load_truth
    from scorer.truth.strings import read_string_truth

    competition = load_competition(name)
    truth_text, submissions = examples(competition)
    truth_path = folder / f"{name}.truth.{'jsonl' if truth_text.startswith('{') else 'csv'}"
    truth_path.write_text(truth_text, encoding="utf-8")
    truths = [truth_path, api.resolve_truth(truth_path, competition)]
    if competition.shape == "id_type":
        truths.append(folder / f"{name}.truth.npz")
        load_truth(truth_path, competition.types, use_cache=False).save(truths[-1])
    else:
        truths.append(folder / f"{name}.strings.npz")
        read_string_truth(truth_path, competition.shape, competition.types[0], use_cache=False).save(truths[-1])
    for n, text in enumerate(submissions):
        plain = folder / f"{name}{n}.csv"
        plain.write_bytes(text.encode("utf-8"))
        packed = folder / f"{name}{n}.csv.gz"
        packed.write_bytes(gzip.compress(plain.read_bytes()))
        archive = folder / f"{name}{n}.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
            handle.write(plain, plain.name)
        for submission in (plain, packed, archive):
            for truth in truths:
                for strict in (False, True):
                    for threads in (1, 2):
                        api.score(submission, truth, competition, strict=strict, threads=threads)
            api.validate(submission, None, competition)
    if api.score(folder / f"{name}0.csv", truths[-1], competition, strict=True).score is None:
        raise RuntimeError(f"the warm-up example of {name!r} did not score")  # a bug of ours, not of the input


def byte_compile_package() -> None:
    """Write the package's .pyc files where they are missing (where PYTHONDONTWRITEBYTECODE kept imports from it):
    a run then imports them rather than compiling the sources, about 40 ms. A read-only install is left as it is."""
    import compileall

    import scorer

    try:
        compileall.compile_dir(Path(scorer.__file__).parent, quiet=2)
    except OSError:
        pass


def run(args) -> int:
    from scorer.engine import aot, aot_build, kernel_set
    from scorer.spec.competition import bundled_names

    started = time.monotonic()
    names = args.competition or bundled_names()
    compiled = aot_build.ensure_built()
    byte_compile_package()
    kernel_sets = [aot.load(), kernel_set.jit_kernels()]  # the compiled module (tried on every example) and numba's, cached
    with tempfile.TemporaryDirectory(prefix="scorer-warmup-") as folder:
        for kernels in filter(None, kernel_sets):
            with kernel_set.using(kernels):
                for name in names:
                    warm(name, Path(folder))
    if not args.quiet:
        print(f"scorer warmup: kernels compiled and cached for {', '.join(names)} in {time.monotonic() - started:.1f} s")
        print(f"ahead-of-time module: {compiled}")
    return 0
