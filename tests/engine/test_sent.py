"""`sent` takes runs of the last build's final states as slices: whatever the order, the registry, the
tokenizer or a changed state, what it gives equals reading every state anew."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import sent as sent_module
from engine.build import build_context
from engine.fences import FenceDescriptor, FenceRegistry
from engine.lanes import memory_lane
from engine.messages import AiMessage
from engine.providers.state import KEEP_CORE, KEEP_WM, State
from engine.sent import Sent, sent
from engine.session import load_session
from engine.tokens import DefaultTokenizer

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_sessions"
TOKENIZERS = (DefaultTokenizer(), DefaultTokenizer(encoding=None, avg_chars_per_token=2))
REGISTRIES = (
    FenceRegistry([FenceDescriptor("env", "user", "before-current-user", "persisted")]),
    FenceRegistry(
        [FenceDescriptor("env", "system", "before-current-user", "persisted", formatter="ENV {content}")]
    ),
    None,
)


def _message(number: int) -> AiMessage:
    kind = number % 7
    if kind == 0:  # a fence: its wire form needs the registry, and none without one
        return AiMessage(
            f"f{number}", "user", "context_injection", f"fence {number}", 0, {"fenceKind": "env"}
        )
    if kind == 1:  # top-level call fields: counted without them once final
        call = {"id": f"c{number}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        return AiMessage(
            f"a{number}", "assistant", "tool_calls", "", 0, {"tool_calls": [call]}, {"tool_calls": [call]}
        )
    if kind == 2:  # dropped by the wire formatter
        return AiMessage(f"l{number}", "assistant", "observation", f"old {number}", 0)
    if kind == 3:
        return AiMessage(f"u{number}", "user", "user_input", f"question {number} " * (number % 5 + 1), 0)
    return AiMessage(f"m{number}", "assistant", "final_answer", f"answer {number} " * (number % 9 + 1), 0)


def _pool(size: int) -> list[State]:
    states = []
    for number in range(size):
        message = _message(number)
        processed = message.with_(content=message.content[:5]) if number % 11 == 4 else None
        action = KEEP_CORE if number % 3 == 0 else KEEP_WM
        shared = number % 5 != 2
        state = State(message, number, (number,), 7 + number % 13, action, processed=processed, kept=True)
        state.shared = shared
        states.append(state)
    return states


def _fresh(final: list[State], registry: FenceRegistry | None, tokenizer: DefaultTokenizer) -> Sent:
    sent_module.forget()
    return sent(final, registry, tokenizer, "gpt-4")


def _as_compared(out: Sent, final: list[State]) -> tuple[Any, ...]:
    return (
        [id(m) for m in out.messages],
        out.tokens,
        out.wire,
        list(out.by_category.items()),  # in order: a view lists the categories as they come
        [id(s) for s in out.unformatted],
        out.positions(final),
    )


# a build's final states: picked from a pool in order, with some moved, repeated, left out or changed
FINALS = st.lists(st.lists(st.integers(0, 299), min_size=0, max_size=300), min_size=2, max_size=6)


@settings(max_examples=80, deadline=None)
@given(
    picks=FINALS,
    keep_order=st.lists(st.booleans(), min_size=6, max_size=6),
    settings_drawn=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1)), min_size=6, max_size=6),
    changed=st.lists(st.integers(0, 299), max_size=20),
)
def test_each_build_sends_what_a_first_build_of_its_states_sends(picks, keep_order, settings_drawn, changed):
    pool = _pool(300)
    sent_module.forget()
    for number, picked in enumerate(picks):
        if keep_order[number]:
            picked = sorted(set(picked))  # a replay's steps: the same order, a few in or out
        final = [pool[i] for i in picked]
        registry, tokenizer = REGISTRIES[settings_drawn[number][0]], TOKENIZERS[settings_drawn[number][1]]
        out = sent(final, registry, tokenizer, "gpt-4")
        assert _as_compared(out, final) == _as_compared(_fresh(final, registry, tokenizer), final)
        sent(final, registry, tokenizer, "gpt-4")  # the next build takes its runs from this one
        for i in changed:  # a state no other build shares may change between builds
            if not pool[i].shared:
                pool[i].action = KEEP_CORE if pool[i].action == KEEP_WM else KEEP_WM


def test_a_long_run_is_taken_whole_and_only_the_states_around_it_are_read(monkeypatch) -> None:
    pool = _pool(400)
    shared = [s for s in pool if s.shared]
    registry, tokenizer = REGISTRIES[0], TOKENIZERS[0]
    sent_module.forget()
    first = sent(shared[:300], registry, tokenizer, "gpt-4")
    read: list[int] = []
    add = sent_module._Figures.add
    monkeypatch.setattr(
        sent_module._Figures, "add", lambda self, p, *rest: (read.append(p), add(self, p, *rest))
    )
    final = shared[2:250] + shared[251:320]  # two dropped at the front, one in the middle, twenty added
    out = sent(final, registry, tokenizer, "gpt-4")
    assert read == list(range(297, 317))
    assert out.wire[:10] == first.wire[2:12] and out.wire[0] is first.wire[2]  # shared, never changed
    monkeypatch.undo()
    assert _as_compared(out, final) == _as_compared(_fresh(final, registry, tokenizer), final)


def test_a_new_registry_formats_the_fences_again() -> None:
    pool = [s for s in _pool(200) if s.shared]
    sent_module.forget()
    before = sent(pool, REGISTRIES[0], TOKENIZERS[0], "gpt-4")
    after = sent(pool, REGISTRIES[1], TOKENIZERS[0], "gpt-4")
    fences_before = [w for w in before.wire if "fence" in str(w["content"])]
    fences_after = [w for w in after.wire if "fence" in str(w["content"])]
    assert fences_before[0] == {"role": "user", "content": "<env>fence 0</env>"}
    assert fences_after[0] == {"role": "system", "content": "ENV fence 0"}
    assert len(fences_before) == len(fences_after) == 23
    assert sent(pool, None, TOKENIZERS[0], "gpt-4").wire == [w for w in before.wire if w not in fences_before]


def test_a_fence_sent_without_a_registry_is_formatted_again_once_one_is_given() -> None:
    session = load_session(SAMPLES_DIR / "fences_showcase.jsonl")
    bare = build_context(session.messages, None, now=0, tokenizer=TOKENIZERS[0])
    fenced = build_context(
        session.messages, None, fences=session.header.fences, now=0, tokenizer=TOKENIZERS[0]
    )
    assert not any("<hint>" in (w["content"] or "") for w in bare.wire)
    assert fenced.wire[-1] == {
        "role": "user",
        "content": "<hint>Tests pass. AGENTS.md also asks for `ruff check .` before you report back.</hint>",
    }


def test_each_memory_lane_takes_its_runs_from_its_own_last_build(monkeypatch) -> None:
    shared = [s for s in _pool(600) if s.shared]
    registry, tokenizer = REGISTRIES[0], TOKENIZERS[0]
    sent_module.forget()
    sent(shared[:300], registry, tokenizer, "gpt-4")  # the user's build
    with memory_lane("series"):
        sent(shared[300:], registry, tokenizer, "gpt-4")  # the step series, in between
    read: list[int] = []
    add = sent_module._Figures.add
    monkeypatch.setattr(
        sent_module._Figures, "add", lambda self, p, *rest: (read.append(p), add(self, p, *rest))
    )
    out = sent(shared[:290] + shared[300:305], registry, tokenizer, "gpt-4")  # the user's next build
    assert read == [290, 291, 292, 293, 294]
    monkeypatch.undo()
    final = shared[:290] + shared[300:305]
    assert _as_compared(out, final) == _as_compared(_fresh(final, registry, tokenizer), final)
