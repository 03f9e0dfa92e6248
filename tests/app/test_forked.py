"""Replays in a forked child: the same items as in process, its errors named, stopped at once."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from engine.forksafe import fork_safe_lock
from engine.messages import AiMessage
from playground.app.building import Persisted, for_series_job, series_job, series_steps
from playground.app.forked import ForkedRunError, ReplayProcess, can_fork
from playground.app.inputs import load_inputs
from playground.app.views import StepSample
from playground.app.workspace import Workspace
from tests.tui_session import write_summarized_twice

Step = tuple[StepSample, Persisted | None]
pytestmark = pytest.mark.skipif(not can_fork(), reason="the playground forks its replays on Linux only")
SESSION = (AiMessage("u1", "user", "user_input", "hello", 1),)


# jobs are module-level functions: they are sent to the child by reference
def counting(upto: int, messages: Sequence[AiMessage]) -> Iterator[tuple[int, str]]:
    for n in range(upto):
        yield n, messages[0].id


def endless(start: int, messages: Sequence[AiMessage]) -> Iterator[int]:
    n = start
    while True:
        n += 1
        yield n


def failing(_: object, messages: Sequence[AiMessage]) -> Iterator[int]:
    yield 1
    raise KeyError("budget")


def dying(_: object, messages: Sequence[AiMessage]) -> Iterator[int]:
    os._exit(3)
    yield 0


def noisy(_: object, messages: Sequence[AiMessage]) -> Iterator[int]:
    print("from the child")
    os.write(2, b"raw stderr\n")
    yield 1


LOCK = fork_safe_lock()


def takes_the_lock(_: object, messages: Sequence[AiMessage]) -> list[bool]:
    return [LOCK.acquire(timeout=5)]


def items(process: ReplayProcess, job, payload, messages=SESSION, stopped=lambda: False) -> list:
    return [item for batch in process.run(job, payload, messages, stopped) for item in batch]


@pytest.fixture
def process() -> Iterator[ReplayProcess]:
    made = ReplayProcess(every=0.0)
    yield made
    made.close()


def test_the_child_sends_what_the_job_makes_in_order_and_serves_the_next_job(process) -> None:
    assert items(process, counting, 500) == [(n, "u1") for n in range(500)]
    pid = process._child[0]
    assert items(process, counting, 3) == [(0, "u1"), (1, "u1"), (2, "u1")]
    assert process._child[0] == pid  # the same messages: the same child


def test_other_messages_fork_a_new_child(process) -> None:
    items(process, counting, 1)
    pid = process._child[0]
    other = (AiMessage("u9", "user", "user_input", "bye", 2),)
    assert items(process, counting, 1, other) == [(0, "u9")]
    assert process._child[0] != pid
    with pytest.raises(ChildProcessError):  # the first child was reaped
        os.waitpid(pid, os.WNOHANG)


def test_a_series_made_in_the_child_is_the_series_made_in_process(tmp_path, process) -> None:
    request = Workspace(load_inputs(write_summarized_twice(tmp_path))).timeline_request()

    def untimed(steps: list[Step]) -> list[Step]:
        """A summary's timestamp is the clock's when it is made."""
        return [(s, (p[0], replace(p[1], timestamp=0)) if p else None) for s, p in steps]

    here = untimed(list(series_steps(request)))
    there = untimed(items(process, series_job, for_series_job(request), request.messages))
    assert there == here
    made = [(s.step, p[0], p[1].id) for s, p in there if p]
    assert made == [(13, 27, "summary:1:e0:m002"), (21, 43, "summary:2:e1:m022")]
    resumed = replace(request, known=tuple(s for s, _ in here[:20]), known_summaries=(here[12][1],))
    assert untimed(items(process, series_job, for_series_job(resumed), request.messages)) == here[20:]


def test_the_jobs_error_is_raised_here_with_its_type_and_message_and_the_child_serves_on(process) -> None:
    with pytest.raises(ForkedRunError, match=r"^KeyError: 'budget'$"):
        items(process, failing, None)
    assert items(process, counting, 2) == [(0, "u1"), (1, "u1")]


def test_a_child_that_dies_is_an_error_not_a_hang_and_the_next_job_forks_again(process) -> None:
    with pytest.raises(ForkedRunError, match=r"ended before its work"):
        items(process, dying, None)
    assert items(process, counting, 1) == [(0, "u1")]


def test_a_stopped_job_ends_at_once_and_the_next_one_gets_only_its_own_items(process) -> None:
    seen: list[int] = []
    for batch in process.run(endless, 0, SESSION, lambda: len(seen) > 100):
        seen.extend(batch)
    assert seen[:3] == [1, 2, 3]
    assert items(process, counting, 2) == [(0, "u1"), (1, "u1")]  # no stray item of the endless job
    pid = process._child[0]
    process.close()
    with pytest.raises(ChildProcessError):  # closed: killed and reaped, no zombie left behind
        os.waitpid(pid, os.WNOHANG)


def test_the_childs_output_never_reaches_this_processs_terminal(capfd, process) -> None:
    assert items(process, noisy, None) == [1]
    out, err = capfd.readouterr()
    assert "from the child" not in out and "raw stderr" not in err


def test_an_engine_lock_held_by_another_thread_at_the_fork_is_free_in_the_child(process) -> None:
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with LOCK:
            held.set()
            release.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait()
    try:
        assert items(process, takes_the_lock, None) == [True]
    finally:
        release.set()
        thread.join()


def test_a_series_whose_steps_the_child_does_not_find_again_is_refused(tmp_path, process) -> None:
    request = Workspace(load_inputs(write_summarized_twice(tmp_path))).timeline_request()
    shorter = replace(request, points=request.points[:-1])
    refused = r"^ValueError: the child found 25 steps in the session where the request has 24$"
    with pytest.raises(ForkedRunError, match=refused):
        items(process, series_job, for_series_job(shorter), request.messages)


def test_a_job_whose_process_is_closed_meanwhile_ends_quietly(process) -> None:
    seen: list[int] = []
    for batch in process.run(endless, 0, SESSION):
        seen.extend(batch)
        process.close()  # as the app's end does, from another thread
    assert seen[:1] == [1] and process._child is None
