"""Background replays in a forked child process, so that they never take the GIL from the UI. No UI import.

The TUI's step series and session cost replay a long session for minutes after each edit. In a thread they
share the GIL with the UI: a key then waits for the step in flight (14 ms late in a 64,000-message
session) and its build and paint run at half speed. A `ReplayProcess` is a child forked once for a
session's messages, which it then has without their being copied or sent; it runs one job at a time (a
module-level function of a request and those messages) and sends back what the job makes, in batches. A
newer job, or a stop, ends the running one at its next item. A job with other messages forks a new child.

The child is forked once, not per job: after a fork, each page this process writes first is copied (the
child shares it), which cost the first build after a fork 15 ms more on 64,000 messages.

The fork is made from a worker thread while other threads may be inside the engine: the engine's locks
are re-made unlocked in the child (`engine.forksafe`), and the child forgets the engine's memory of earlier
builds (which such a thread may have left half-updated) before its first job; a result never depends on
that memory. The child's output goes to /dev/null (the TUI owns the terminal), it ends with `os._exit`
(running none of this process's exit handlers), and it ends when this process closes its end or dies.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from functools import partial
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from engine.messages import AiMessage
from engine.stage_cache import forget_earlier_builds

FORK_FROM = 5_000  # messages: a shorter session's steps take a few ms, and its replays no child
POLL = 0.02  # seconds between two looks at whether the reader should stop
CHILD_NICE = 19  # the child yields a shared core to the UI process (the lowest priority)

# a module-level function (sent by reference) of a job's payload and the child's messages
Job = Callable[[Any, Sequence[AiMessage]], Iterable[Any]]


class ForkedRunError(RuntimeError):
    """The child failed (its error's type and message), or ended without saying it was done."""


def can_fork() -> bool:
    """Linux only: macOS frameworks are not safe to use in a forked child, Windows has no fork."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class ReplayProcess:
    """A child process that runs jobs over one session's messages (see the module's text)."""

    def __init__(self, every: float) -> None:
        self._every = every  # seconds between two batches of a job
        self._child: tuple[int, Connection, Sequence[AiMessage]] | None = None
        self._jobs = 0
        self._reading = threading.Lock()  # one job's reader at a time

    def run(
        self,
        job: Job,
        payload: Any,
        messages: Sequence[AiMessage],
        stopped: Callable[[], bool] = lambda: False,
    ) -> Iterator[list[Any]]:
        """`job(payload, messages)` in the child (forked now, unless the running one has equal messages);
        its items in batches until it is done. Ends early, the child told to stop the job,
        once `stopped()` is true or the iteration is closed. Raises `ForkedRunError` when the job fails."""
        with self._reading:
            if stopped():
                return
            connection = self._connection(messages)
            self._jobs += 1
            number, over = self._jobs, False
            try:
                connection.send((number, job, payload))
                while not stopped():
                    if not connection.poll(POLL):
                        continue
                    kind, of, got = connection.recv()
                    if of != number:  # the last words of a job stopped before this one
                        continue
                    if kind == "items":
                        yield got
                        continue
                    over = True
                    if kind == "error":
                        raise ForkedRunError(got)
                    return
            except (EOFError, OSError):
                if self._child is None:  # closed meanwhile: the app is ending
                    return
                self.close()
                raise ForkedRunError("the replay's child process ended before its work") from None
            finally:
                if not over and self._child is not None:
                    with suppress(OSError):
                        connection.send((number, None, None))  # stop it

    def _connection(self, messages: Sequence[AiMessage]) -> Connection:
        if self._child is not None:
            _, connection, held = self._child
            if held == messages:  # in C, identity first: mostly the very same objects
                return connection
            self.close()
        ours, theirs = Pipe()
        pid = os.fork()
        if pid == 0:
            ours.close()
            _serve(theirs, messages, self._every)
        theirs.close()
        self._child = (pid, ours, messages)
        return ours

    def close(self) -> None:
        """End the child (killed: a job may be running) and reap it."""
        child, self._child = self._child, None
        if child is None:
            return
        pid, connection, _ = child
        connection.close()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def _serve(connection: Connection, messages: Sequence[AiMessage], every: float) -> NoReturn:
    try:
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115  # a UI's print capture, too
        os.nice(CHILD_NICE)
        gc.freeze()  # what it inherited is never collected here: its scans would only copy its pages
        forget_earlier_builds()
        waiting = None
        while True:
            number, job, payload = waiting or connection.recv()
            waiting = None
            if job is not None:
                waiting = _run_job(connection, number, partial(job, payload, messages), every)
    except BaseException:  # this process closed its end, or died: nothing here may reach its terminal
        pass
    os._exit(0)


def _run_job(connection: Connection, number: int, items: Callable[[], Iterable[Any]], every: float) -> Any:
    """Send the job's items in batches and then "done" (or its error); the message that ended it early
    (a stop, or the next job), or None."""
    batch: list[Any] = []
    last = time.monotonic()
    try:
        for item in items():
            batch.append(item)
            if connection.poll():
                return connection.recv()
            if time.monotonic() - last >= every:
                connection.send(("items", number, batch))
                batch, last = [], time.monotonic()
    except Exception as error:
        connection.send(("error", number, f"{type(error).__name__}: {error}"))
        return None
    if batch:
        connection.send(("items", number, batch))
    connection.send(("done", number, None))
    return None
