"""Observation governance simulated in a build: previews, blob pointers, events (issue 5)."""

from engine.build import build_context
from engine.observation import InMemoryObservationStore
from engine.policy import define_context_policy
from engine.stage_cache import STAGE_CACHE, forget_earlier_builds
from tests.pipeline_helpers import answer, call, calls, output, sys, user

LONG = "\n".join(f"line {i}: " + "x" * 40 for i in range(100))  # 100 lines, 4,790 chars


def session():
    return [
        sys(),
        user("u1"),
        calls("a1", call("c1", "read_file")),
        output("t1", "c1", LONG, "read_file"),
        answer("f1"),
        user("u2"),
    ]


def policy(max_chars: int, max_lines: int = 1200):
    return define_context_policy(
        {"toolOutput": {"observationGovernance": {"maxChars": max_chars, "maxLines": max_lines}}}
    )


def test_long_observation_becomes_a_preview_with_a_blob_pointer():
    store = InMemoryObservationStore()
    result = build_context(session(), policy(1000), observation_store=store)
    governed = next(m for m in result.messages if m.id == "t1")
    blob = governed.meta("tool_output_store")["blob_id"]
    assert store.get(blob) == LONG
    assert governed.meta("observationTruncation")["originalChars"] == len(LONG)
    assert governed.content.startswith("line 0: ") and len(governed.content) < 1000
    assert f"blob_id={blob}" in governed.content
    event = next(e for e in result.events if e.kind == "observation")
    assert event.message_ids == ("t1",) and event.data["blobId"] == blob
    wire_tool = next(w for w in result.wire if w["role"] == "tool")
    assert wire_tool["content"] == governed.content


def test_under_the_limits_nothing_changes_and_nothing_is_stored():
    store = InMemoryObservationStore()
    result = build_context(session(), policy(20000), observation_store=store)
    assert next(m for m in result.messages if m.id == "t1").content == LONG
    assert len(store) == 0
    assert not [e for e in result.events if e.kind == "observation"]


def test_line_limit_alone_cuts_the_observation():
    store = InMemoryObservationStore()
    result = build_context(session(), policy(20000, max_lines=10), observation_store=store)
    governed = next(m for m in result.messages if m.id == "t1")
    assert governed.meta("observationTruncation")["originalLines"] == 100
    assert governed.content.count("\n") < 20


def test_without_a_store_the_build_does_not_govern():
    result = build_context(session(), policy(1000))
    assert next(m for m in result.messages if m.id == "t1").content == LONG


def test_going_back_and_forth_between_two_steps_reuses_every_later_stage():
    store, governed = InMemoryObservationStore(), policy(1000)
    longer = [*session(), answer("f2")]
    forget_earlier_builds()
    first = [build_context(history, governed, observation_store=store) for history in (session(), longer)]
    hits, misses = STAGE_CACHE.hits, STAGE_CACHE.misses
    again = [build_context(history, governed, observation_store=store) for history in (session(), longer)]
    assert (STAGE_CACHE.hits - hits, STAGE_CACHE.misses - misses) == (6, 0)  # 3 stages after governance, ×2
    assert [r.messages for r in again] == [r.messages for r in first]
