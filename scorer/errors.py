"""Exceptions that carry a user-facing message and the CLI exit code that goes with it."""


class ScorerError(Exception):
    """Base class: the message is meant for the user, never a traceback."""

    exit_code = 2


class ConfigError(ScorerError):
    """A competition config is missing, unreadable or has a bad key or value."""


class TruthError(ScorerError):
    """The ground-truth file cannot be read; the message names the file and line."""


class UsageError(ScorerError):
    """The command line or API call asks for something that cannot be done."""


class SubmissionError(ScorerError):
    """The submission cannot be read at all (missing file, bad archive, over a size limit)."""

    exit_code = 1


def one_line(error: BaseException) -> str:
    """"ValueError: the first line of its message": an exception as a readable line (no traceback, no repr)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__

