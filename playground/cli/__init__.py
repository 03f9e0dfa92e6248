"""The command line: `linn-playground` and its subcommands (main.py holds the table), their printing,
progress bars and the one-line endings of failures."""
