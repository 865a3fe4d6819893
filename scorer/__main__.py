"""`python -m scorer ...`: the `scorer` command."""

import sys

from scorer.cli.main import console

sys.exit(console())
