"""`scorer prepare`: raw session logs to a test split with labels (readers, the time-based holdout, writers).

Imports scorer.kernels and the base modules.
"""

from scorer.errors import UsageError

MAX_DAYS = 100_000  # the longest test period --days may ask for (274 years: every log is shorter; a larger one overflows the
# dates the split is reported with). Here, not in holdout.py: the CLI's parser reads it without loading numpy.


def check_days(days: float) -> None:
    """A test period in days: more than 0, at most MAX_DAYS (NaN fails both)."""
    if not 0 < days <= MAX_DAYS:
        raise UsageError(f"--days must be a number of days above 0 and at most {MAX_DAYS:,}, got {days}")
