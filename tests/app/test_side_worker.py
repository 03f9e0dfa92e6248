"""Run B of a diff replayed in a forked child (playground/app/side_worker.py): the same diff as one process,
its errors raised here, its process ended when the diff stops early."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cache_breaks import WireUnit
from engine.cost import StepCost
from engine.prices import BUILTIN_PRICES
from engine.result import WireCard
from playground.app.diffing import ReplaySource, replay_source
from playground.app.inputs import load_inputs
from playground.app.rundiff import SentStep, diff_runs, diff_until
from playground.app.side_worker import ForkedSource, _decode, _encode, parallel_sides
from tests.app.test_rundiff import run_a, run_b, source

PRICE = BUILTIN_PRICES.find("claude-sonnet-4-5", None)
SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "tool_loop_runs.jsonl"
pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the side worker forks"
)


def test_a_forked_side_gives_the_same_diff_as_one_process(tmp_path: Path) -> None:
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    sides = [load_inputs(SAMPLE), load_inputs(SAMPLE, drop)]

    def sources() -> list[ReplaySource]:
        return [
            replay_source(n, f"w{n}", i, "openai", PRICE, BUILTIN_PRICES)
            for n, i in zip("AB", sides, strict=True)
        ]

    alone = diff_runs(*sources())
    a, b = parallel_sides(*sources(), jobs=2)
    assert isinstance(b, ForkedSource) and not isinstance(a, ForkedSource)
    forked = diff_runs(a, b)
    assert forked.to_json() == alone.to_json()
    assert forked.totals_b == alone.totals_b and forked.totals_a == alone.totals_a
    assert len(forked.steps) == 71 and len(forked.changed_steps) == len(alone.changed_steps) > 30
    # the steps B's worker sent are the steps the replay made, wire units included
    replayed = list(sources()[1].steps())
    sent = list(ForkedSource(sources()[1]).steps())
    assert [s.cards for s in sent] == [s.cards for s in replayed]
    assert [s.units for s in sent] == [s.units for s in replayed]
    assert [s.cost.cost_usd for s in sent] == [s.cost.cost_usd for s in replayed]


def test_one_job_or_a_source_that_is_no_replay_stays_in_process() -> None:
    a, b = source("A", run_a()), source("B", run_b())
    assert parallel_sides(a, b, jobs=1) == (a, b)
    assert parallel_sides(a, "stored", jobs=2) == (a, "stored")  # type: ignore[arg-type]


def test_an_error_in_the_child_is_raised_where_the_diff_reads() -> None:
    broken = source("B", run_b())
    broken.request = replace(broken.request, shape="no-such-shape")
    with pytest.raises(ValueError, match="no-such-shape"):
        list(ForkedSource(broken).steps())


def test_a_diff_stopped_early_ends_the_child() -> None:
    forked = ForkedSource(source("B", run_b()))
    steps = forked.steps()
    next(steps)
    children = multiprocessing.active_children()
    assert len(children) == 1
    steps.close()  # what a stopped diff does to its stream
    assert not children[0].is_alive()
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2

    assert diff_until(source("A", run_a()), ForkedSource(source("B", run_b())), stop) is None
    assert multiprocessing.active_children() == []
    with pytest.raises(RuntimeError, match="totals are known once its steps were read"):
        forked.totals()


def _card(index: int, message_id: str, text: str, tokens: int = 5) -> WireCard:
    return WireCard(index, {"role": "user", "content": text}, message_id, "user_input", tokens, (message_id,))


def _step(cards: tuple[WireCard, ...]) -> SentStep:
    units = tuple(WireUnit(c.message, c.tokens, (c.index,)) for c in cards)
    cost = StepCost(1, 10, 0, 10, len(cards), 0, None, None, 0, 0, 0, 0, False, False, False, 0, None, None,
                    None, None, None, None, None, None, units, ())  # fmt: skip
    return SentStep(1, 3, cards, units, cost)


def test_a_step_goes_as_what_is_new_since_the_step_before() -> None:
    before = (_card(0, "u1", "hello"), _card(1, "a1", "hi"), _card(2, "u2", "more"))
    after = (_card(0, "a1", "hi"), _card(1, "u2", "more", tokens=6), _card(2, "u3", "new"))
    coded = _encode(_step(after), before)
    cards = coded[2]
    assert cards[0] == (1, 0)  # a1 moved from index 1 to 0: its position before, and where it is now
    assert cards[1][2] == "u2" and len(cards[1]) == 7  # u2's tokens changed: sent whole
    assert cards[2][2] == "u3"
    assert [u[0] for u in coded[3]] == [None, None, None]  # each unit is its card's message
    back = _decode(coded, before)
    assert back.cards == after and back.units == _step(after).units
    assert back.cards[0].message is before[1].message  # the card the step before sent, not a copy
    assert _encode(_step(before), before)[2] == [0, 1, 2]


def test_what_was_printed_before_the_fork_is_printed_once(tmp_path: Path) -> None:
    """multiprocessing flushes the streams before it forks: the child ends without printing them again."""
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        "from tests.app.test_rundiff import run_a, run_b, source\n"
        "from playground.app.rundiff import diff_runs\n"
        "from playground.app.side_worker import parallel_sides\n"
        "print('before the diff')\n"
        "diff = diff_runs(*parallel_sides(source('A', run_a()), source('B', run_b()), jobs=2))\n"
        "print('steps', len(diff.steps))\n",
        encoding="utf-8",
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, str(script)], cwd=root, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert out.stdout == "before the diff\nsteps 5\n" and out.stderr == ""
