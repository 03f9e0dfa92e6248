"""Re-placing a session's fences by an edited descriptor (playground/app/fence_placement.py)."""

from __future__ import annotations

from engine.fences import FenceDescriptor
from engine.messages import AiMessage
from playground.app.fence_placement import reinject


def fence(id: str, kind: str, role: str, placement: str) -> AiMessage:
    meta = {"fenceKind": kind, "fenceAttrs": {}, "fencePlacement": placement}
    return AiMessage(id, role, "context_injection", f"{kind} text", metadata=meta)


def msg(id: str, role: str, type_: str) -> AiMessage:
    return AiMessage(id, role, type_, id)


SESSION = [
    msg("sys", "system", "system_prompt"),
    fence("n1", "notes", "system", "after-system"),
    msg("u1", "user", "user_input"),
    msg("a1", "assistant", "tool_calls"),
    msg("t1", "tool", "tool_output"),
    msg("f1", "assistant", "final_answer"),
    fence("m2", "memory", "user", "before-current-user"),
    msg("u2", "user", "user_input"),
    msg("a2", "assistant", "tool_calls"),
    msg("t2", "tool", "tool_output"),
    msg("a3", "assistant", "final_answer"),
]


def ids(messages: list[AiMessage]) -> list[str]:
    return [m.id for m in messages]


def test_no_changes_leaves_the_session_as_recorded() -> None:
    assert reinject(SESSION, {}) == SESSION


def test_before_user_fence_moves_after_its_user_input() -> None:
    out = reinject(SESSION, {"memory": FenceDescriptor("memory", "user", "after-current-user", "turn-only")})
    assert ids(out) == ["sys", "n1", "u1", "a1", "t1", "f1", "u2", "m2", "a2", "t2", "a3"]
    assert out[7].meta("fencePlacement") == "after-current-user"


def test_fence_moves_after_the_last_tool_result_of_its_turn() -> None:
    out = reinject(
        SESSION, {"memory": FenceDescriptor("memory", "user", "after-last-tool-result", "turn-only")}
    )
    assert ids(out) == ["sys", "n1", "u1", "a1", "t1", "f1", "u2", "a2", "t2", "m2", "a3"]


def test_after_system_fence_moves_before_its_turn_and_takes_the_new_role_and_kind() -> None:
    descriptor = FenceDescriptor("project-notes", "user", "before-current-user", "persisted")
    out = reinject(SESSION, {"notes": descriptor})
    assert ids(out) == ["sys", "n1", "u1", "a1", "t1", "f1", "m2", "u2", "a2", "t2", "a3"]
    assert (out[1].role, out[1].fence_kind, out[1].meta("fencePlacement")) == (
        "user",
        "project-notes",
        "before-current-user",
    )
    assert out[1].meta("fenceAttrs") == {}


def test_user_fence_moves_to_after_the_system_prompt() -> None:
    out = reinject(SESSION, {"memory": FenceDescriptor("memory", "system", "after-system", "persisted")})
    assert ids(out) == ["sys", "m2", "n1", "u1", "a1", "t1", "f1", "u2", "a2", "t2", "a3"]
    assert out[1].role == "system"


def test_a_turn_without_tool_results_gets_the_fence_at_its_end() -> None:
    session = [msg("u1", "user", "user_input"), fence("m", "memory", "user", "before-current-user")]
    session.insert(0, msg("sys", "system", "system_prompt"))
    out = reinject(
        session, {"memory": FenceDescriptor("memory", "user", "after-last-tool-result", "turn-only")}
    )
    assert ids(out) == ["sys", "u1", "m"]


def test_two_fences_of_a_kind_keep_their_order() -> None:
    session = [*SESSION[:6], fence("m1", "memory", "user", "before-current-user"), *SESSION[6:]]
    out = reinject(session, {"memory": FenceDescriptor("memory", "user", "after-current-user", "turn-only")})
    assert ids(out) == ["sys", "n1", "u1", "a1", "t1", "f1", "u2", "m1", "m2", "a2", "t2", "a3"]
