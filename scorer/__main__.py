"""`python -m scorer ...`: the `scorer` command."""

import sys

from scorer.cli.main import main

sys.exit(main())
