"""`python -m playground.cli ...`, as the `linn-playground` command."""

from playground.cli import run

run()
