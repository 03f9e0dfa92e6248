"""The command line: `linn-playground` and its subcommands (main.py holds the table), their printing,
progress bars and the one-line endings of failures."""


def run() -> None:
    """The `linn-playground` command: `main`, and a Ctrl-C that comes while its modules still load ends as
    any other (one line, exit 130) instead of a traceback."""
    import sys

    try:
        from playground.cli.main import main

        code = main(sys.argv[1:])
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
