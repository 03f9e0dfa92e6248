"""`python -m playground.cli ...`, as the `linn-playground` command."""

import sys

from playground.cli.main import main

sys.exit(main(sys.argv[1:]))
