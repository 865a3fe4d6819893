"""Command-line entry point: builds the parser from scorer/cli/* and maps errors to exit codes.

Exit codes: 0 scored / valid, 1 submission invalid or unreadable, 2 usage, config or truth error,
3 internal error (a bug in scorer; set SCORER_DEBUG=1 to see the traceback).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from scorer.dask import INSTALL_HINT as DASK_HINT  # the missing-Dask sentence (scorer.dask imports nothing more)

# Each command module defines HELP, USAGE (its usage line), EXAMPLES (command lines), add_arguments(parser) and run(args) -> int.
COMMANDS = {
    "score": "scorer.cli.score",
    "validate": "scorer.cli.validate",
    "prepare": "scorer.cli.prepare",
    "compare": "scorer.cli.compare",
    "compile-truth": "scorer.cli.compile_truth",
    "export": "scorer.cli.export",
    "codabench": "scorer.cli.codabench",
    "warmup": "scorer.cli.warmup",
    "grade": "scorer.cli.grade",
    "explain": "scorer.cli.explain",
    "verify": "scorer.cli.verify",
    "audit": "scorer.cli.audit",
    "leaderboard": "scorer.cli.leaderboard",
    "ladder": "scorer.cli.ladder",
    "candidates": "scorer.cli.candidates",
    "similar": "scorer.cli.similar",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits with 2 too; keep its message, drop nothing
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps a description as usual, but prints a text of indented lines (usage lines, examples) as written."""

    def _fill_text(self, text, width, indent):
        if "\n  " in text:
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def _epilog(title: str, lines) -> str:
    return title + "\n" + "\n".join(f"  {line}" for line in lines)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `scorer` parser of every command; or, given one of COMMANDS, the same parser with that command alone, which
    parses its command lines alike without importing the other command modules (main's choice when the command line
    names one: about a tenth of a score's start)."""
    from scorer import __version__

    chosen = {command: COMMANDS[command]} if command in COMMANDS else COMMANDS
    modules = {name: importlib.import_module(module_name) for name, module_name in chosen.items()}
    parser = _Parser(prog="scorer", description="Score and validate recommender-system competition submissions.",
                     formatter_class=_HelpFormatter, epilog=_epilog(
                         "usage of each command (scorer COMMAND --help for its options and examples):",
                         (module.USAGE for module in modules.values())))
    parser.add_argument("--version", action="version", version=f"scorer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, module in modules.items():
        command = sub.add_parser(name, help=module.HELP, description=module.HELP, usage=module.USAGE,
                                 epilog=_epilog("examples:", module.EXAMPLES), formatter_class=_HelpFormatter)
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def _skip_blas_probe() -> None:
    """Spare the CLI process numba's BLAS probe (about 0.2 s where SciPy is installed).

    The first compiled function numba loads imports numba.np.arraymath, which imports scipy.linalg
    only to learn whether np.dot may use BLAS. No kernel of ours uses BLAS and this process runs
    nothing else, so scipy.linalg.cython_blas is made unimportable here: the probe answers "no" at once.
    Nothing is imported now, so a pass on the ahead-of-time kernels never loads numba at all.
    """
    if "scipy.linalg" not in sys.modules:
        sys.modules.setdefault("scipy.linalg.cython_blas", None)


def _quiet_blas_threads() -> None:
    """Let OpenBLAS's threads sleep as soon as they are idle (2**4 cycles; its default is 2**28, about 0.1 s), unless the
    environment says otherwise.

    numpy starts them when it is imported, and each spins for that long before it sleeps: 0.06-0.07 CPU-seconds of a
    score's 2-core machine that no kernel of ours uses (tests/test_cli.py). Matrix products (the bootstraps) still use
    every thread. main() calls it first: building the parser imports numpy.
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def _warmup_tip() -> None:
    """At a terminal, say once per run that `scorer warmup` would make runs start faster (until it has been run)."""
    from scorer.kernels import aot

    tip = aot.tip()
    if tip:
        print(f"scorer: tip: {tip}", file=sys.stderr)


DISK_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
# The libraries an installation may leave out (the grader image holds numpy and xxhash only), and what to do then.
COMPILE_FIRST = ("compile the truth where the full package is installed (scorer compile-truth TRUTH -o TRUTH.truth.npz) "
                 "and give that, or install the full package (pip install recsys-scorer)")
OPTIONAL = {
    "pyarrow": COMPILE_FIRST, "pandas": COMPILE_FIRST,
    "numba": "its ahead-of-time kernels are not in this installation: install the full package (pip install recsys-scorer)",
    "llvmlite": "its ahead-of-time kernels are not in this installation: install the full package (pip install recsys-scorer)",
    "matplotlib": "pip install 'recsys-scorer[report]'", "dask": DASK_HINT, "distributed": DASK_HINT,
    "yaml": "pip install pyyaml", "polars": "pip install polars",
}


def _missing_library(error: ModuleNotFoundError) -> str | None:
    """The sentence for a library this installation leaves out, None for any other missing module (a bug)."""
    name = (error.name or "").split(".")[0]
    return f"this needs {name}, which is not installed here: {OPTIONAL[name]}" if name in OPTIONAL else None


ESCAPING = ("backslashreplace", "replace", "namereplace", "xmlcharrefreplace", "ignore")  # error handlers that never raise


def _any_encoding() -> None:
    """Text the output's encoding cannot hold ('—' under PYTHONIOENCODING=ascii, or under the C locale without UTF-8
    coercion, where stdout's handler is 'surrogateescape', which escapes only surrogates) is escaped, never an error."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure") and stream.errors not in ESCAPING:
            stream.reconfigure(errors="backslashreplace")


def _say(text: str) -> None:
    """A line on stderr, if stderr can take it (it may be the full device, or closed)."""
    try:
        print(text, file=sys.stderr)
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    from scorer.errors import ScorerError
    from scorer.wording import printable

    _any_encoding()
    _quiet_blas_threads()
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)  # a command's name comes first (the only option before it is --version)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version and argparse errors
        return int(stop.code or 0)
    try:
        _skip_blas_probe()
        code = int(args._run(args))
        if args.command in ("score", "validate") and sys.stderr.isatty():
            _warmup_tip()
        sys.stdout.flush()  # a full output device fails here, not at exit
        return code
    except ScorerError as error:
        _say(f"scorer: error: {printable(str(error))}")
        return error.exit_code
    except KeyboardInterrupt:
        _say("scorer: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:  # a truth, a table or analytics too large for this process's memory: a refusal, not a bug
        _say("scorer: error: out of memory: this input needs more memory than the process may use "
             "(give it more memory, or less input at once)")
        return 2
    except OSError as error:
        if error.errno not in DISK_FULL or os.environ.get("SCORER_DEBUG"):
            raise
        where = f" {error.filename}" if error.filename else " the output"
        _say(f"scorer: error: cannot write{where}: {error.strerror} (free space, or write somewhere else)")
        return 2
    except Exception as error:  # a bug of ours, or a library this installation leaves out: never a traceback
        if os.environ.get("SCORER_DEBUG"):
            raise
        missing = _missing_library(error) if isinstance(error, ModuleNotFoundError) else None
        if missing is not None:
            _say(f"scorer: error: {missing}")
            return 2
        _say(f"scorer: internal error ({type(error).__name__}: {printable(str(error))}); set SCORER_DEBUG=1 for details")
        return 3


def console() -> int:
    """The `scorer` command as its own process: main, then every object it leaves exempted from the collections of the
    interpreter's exit (gc.freeze). Those walks took about 20 ms at the end of an OTTO-size score (a fortieth of it), and
    an exiting process frees its memory anyway. main has closed and flushed what it wrote; Python does not promise to
    finalize objects still alive at exit either. Not for a caller of main: its objects would stay exempt."""
    code = main()
    import gc

    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(console())
