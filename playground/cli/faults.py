"""How a command ends when its output or the machine fails: one line on stderr, never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from engine.safe_input import shorten


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def run_guarded(handler: Callable[[Any], int], args: Any) -> int:
    """`handler(args)`, with its output flushed; a closed pipe, a full disk or an unexpected failure
    ends with one line on stderr and exit code 1, Ctrl-C with `interrupted` and 130."""
    try:
        code = handler(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _quiet_stdout()
        _say("error: the output was closed early (broken pipe)")
        return 1
    except OSError as exc:
        _quiet_stdout()
        _say(f"error: cannot write the output: {exc.strerror or exc}")
        return 1
    except KeyboardInterrupt:  # Ctrl-C: what was written stays (outputs are atomic), no traceback
        _say("interrupted")
        return 130
    except RecursionError:
        _say("error: input nested too deeply to process")
        return 1
    except Exception as exc:  # never a traceback for the user; the type says where to look
        _say(f"error: internal error ({type(exc).__name__}: {shorten(str(exc), 200)}); please report it")
        return 1
