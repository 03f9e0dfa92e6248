"""A long command's step loop: a progress bar on a terminal, Ctrl-C ending it between two steps, and the
cyclic collector paced.

`replay` writes one record per step as it is made; stopping it at any moment could cut a record in half.
While `stop_between_steps` is active, the first Ctrl-C only asks the loop to stop after the step it is on
(every record written stays whole); a second one interrupts at once, as Ctrl-C does elsewhere.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TimeRemainingColumn
from rich.text import Text

T = TypeVar("T")
INTERRUPTED = 130  # the shell's exit status for a command ended by SIGINT


@dataclass(slots=True)
class StopRequest:
    requested: bool = False


@contextmanager
def stop_between_steps() -> Iterator[StopRequest]:
    """A flag set by the first Ctrl-C (SIGINT) while the block runs; the loop reads it between steps."""
    request = StopRequest()

    def ask_to_stop(signum: int, frame: object) -> None:
        if request.requested:
            raise KeyboardInterrupt
        request.requested = True

    previous = signal.signal(signal.SIGINT, ask_to_stop)
    try:
        yield request
    finally:
        signal.signal(signal.SIGINT, previous)


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("– steps/s" if speed is None else f"{speed:,.0f} steps/s", style="progress.data.speed")


def with_progress(items: Iterable[T], total: Callable[[], int], label: str) -> Iterator[T]:
    """`items`, with a progress bar (steps/s, time left) on stderr while they come when stderr is a
    terminal (`total()` is asked then); the bar is gone once they are done. Lines printed to a terminal
    stdout meanwhile show above it; stdout to a file or pipe is left alone."""
    if not sys.stderr.isatty():
        yield from items
        return
    columns = (BarColumn(), MofNCompleteColumn(), _Rate(), TimeRemainingColumn())
    console = Console(stderr=True)
    with Progress(f"[bold]{label}", *columns, console=console, transient=True,
                  redirect_stdout=sys.stdout.isatty(), redirect_stderr=False) as progress:  # fmt: skip
        task = progress.add_task(label, total=total())
        for item in items:
            yield item
            progress.advance(task)


