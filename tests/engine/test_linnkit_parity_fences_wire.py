"""linnkit 0.21.0's own tests of the current-turn assembler, fence lifetime, the agent wire formatter and the
orchestrator's policy wiring, as scenarios our engine runs (each test names the linnkit test it follows)."""

from __future__ import annotations

import pytest

from engine.fences import FenceDescriptor, FenceRegistry
from engine.messages import AiMessage
from engine.preprocess.fence_assembly import assemble_current_turn
from engine.preprocess.fence_lifetime import apply_fence_lifetime
from engine.stage_cache import entries_for
from engine.wire import format_message
from tests.engine.parity_helpers import ids, preprocess, text, tool_calls, tool_output, user_input


def descriptor(kind: str, role: str, placement: str, lifetime: str, tag: str) -> FenceDescriptor:
    return FenceDescriptor.from_dict(
        {
            "kind": kind,
            "llmRole": role,
            "placement": placement,
            "lifetime": lifetime,
            "formatter": f"<{tag}>\n{{content}}\n</{tag}>",
        }
    )


# currentTurnMessageAssembler.test.ts's registry
REGISTRY = FenceRegistry(
    [
        descriptor("document-context", "user", "before-current-user", "turn-only", "document_context"),
        descriptor("user-quote", "user", "before-current-user", "turn-only", "user_quote"),
        descriptor("follow-up-context", "user", "after-current-user", "turn-only", "follow_up_context"),
        descriptor("additional-context", "system", "after-system", "persisted", "additional_context"),
    ]
)


def fence(id: str, kind: str, content: str, role: str = "user") -> AiMessage:
    return text(id, role, "context_injection", content, fenceKind=kind)


def assemble(messages: list[AiMessage]):
    output = assemble_current_turn(entries_for(messages), REGISTRY)
    return [e.message for e in output.entries], output.strategy


SYSTEM = text("system", "system", "system_prompt", "system")


# "assembles adjacent system-side fences into the system prompt upstream"
def test_after_system_fences_join_the_system_prompt():
    prompt = text("system", "system", "system_prompt", "System prompt")
    out, strategy = assemble(
        [prompt, fence("ctx", "additional-context", "Stable context", "system"), user_input("user", "继续")]
    )
    assert ids(out) == ["system", "user"]
    assert out[0].content == "System prompt\n\n<additional_context>\nStable context\n</additional_context>"
    assert out[0].metadata["assembledFenceKinds"] == ["additional-context"]
    assert strategy == "current_turn_message_assembly"


# "assembles adjacent current-turn user fences into the current user_input"
def test_user_fences_wrap_the_current_request():
    messages = [
        SYSTEM,
        fence("doc", "document-context", "selected source"),
        fence("quote", "user-quote", "selected element"),
        user_input("user", "改成圆角矩形"),
        fence("after", "follow-up-context", "after note"),
    ]
    out, _ = assemble(messages)
    assert ids(out) == ["system", "user"]
    assert out[1].content == "\n\n".join(
        [
            "<document_context>\nselected source\n</document_context>",
            "<user_quote>\nselected element\n</user_quote>",
            "<user_request>\n改成圆角矩形\n</user_request>",
            "<follow_up_context>\nafter note\n</follow_up_context>",
        ]
    )
    assert out[1].metadata["assembledFenceKinds"] == ["document-context", "user-quote", "follow-up-context"]


# "does not assemble non-adjacent system-side fences", "does not add user fence XML when no user-side fence is
# injected" and "does not consume historical non-adjacent turn-only fences"
@pytest.mark.parametrize(
    "messages",
    [
        [
            SYSTEM,
            text("assistant", "assistant", "final_answer", "interruption"),
            fence("ctx", "additional-context", "stable context", "system"),
            user_input("user", "继续"),
        ],
        [SYSTEM, user_input("user", "直接请求")],
        [
            fence("old-doc", "document-context", "old selected source"),
            user_input("old-user", "旧问题"),
            text("assistant", "assistant", "final_answer", "旧回答"),
            user_input("user", "新问题"),
        ],
    ],
)
def test_nothing_to_assemble(messages):
    out, strategy = assemble(messages)
    assert out == messages
    assert strategy is None


# "uses only actually injected before-current-user fence XML before user_request" and "does not nest
# user_request when the host already wrapped model-facing user content"
@pytest.mark.parametrize(
    ("request_text", "wrapped"),
    [
        ("用户原始请求", "<user_request>\n用户原始请求\n</user_request>"),
        (
            "<local_time>2026-06-18 09:07:05</local_time>\n\n<user_request>\n用户原始请求\n</user_request>",
            "<local_time>2026-06-18 09:07:05</local_time>\n\n<user_request>\n用户原始请求\n</user_request>",
        ),
        # JS trim() strips U+FEFF and keeps U+001C; Python's strip() does the opposite
        ("\ufeff请求\x1c", "<user_request>\n请求\x1c\n</user_request>"),
    ],
)
def test_the_request_is_wrapped_once(request_text, wrapped):
    out, _ = assemble([fence("doc", "document-context", "片段内容"), user_input("user", request_text)])
    assert [m.content for m in out] == ["<document_context>\n片段内容\n</document_context>\n\n" + wrapped]


# fenceLifetimeManager.test.ts: "removes historical turn-only context injection messages" and "keeps
# unregistered fence kinds": turn-only fences before the latest user input leave, persisted and unregistered
# ones stay
def test_fence_lifetime_is_positional():
    messages = [
        SYSTEM,
        fence("old-doc", "document-context", "old"),
        fence("old-persisted", "additional-context", "kept", "system"),
        fence("unknown", "not-registered", "kept"),
        user_input("old-user"),
        fence("doc", "document-context", "current"),
        user_input("user"),
        fence("after", "follow-up-context", "current"),
    ]
    output = apply_fence_lifetime(entries_for(messages), REGISTRY)
    assert ids(e.message for e in output.entries) == [
        "system",
        "old-persisted",
        "unknown",
        "old-user",
        "user",
        "after",
    ]
    assert output.strategy == "fence_lifetime"


# -- MessageFormatter.fences.test.ts ----------------------------------------------------------------------

MEMORY = text(
    "ctx-1",
    "user",
    "context_injection",
    "Memory payload",
    fenceKind="memory-context",
    fenceAttrs={"source": "memory"},
)


# "formats context_injection messages through an injected registry" and "supports registry injection
# through formatAgentLlmMessages"
@pytest.mark.parametrize(
    ("role", "template", "expected"),
    [
        (
            "user",
            '<memory-context source="{attr:source}">\n{content}\n</memory-context>',
            '<memory-context source="memory">\nMemory payload\n</memory-context>',
        ),
        (
            "system",
            "<memory-context>\n{content}\n</memory-context>",
            "<memory-context>\nMemory payload\n</memory-context>",
        ),
    ],
)
def test_fence_on_the_wire_takes_the_descriptor_role_and_formatter(role, template, expected):
    registry = FenceRegistry(
        [
            FenceDescriptor.from_dict(
                {
                    "kind": "memory-context",
                    "llmRole": role,
                    "placement": "before-current-user",
                    "lifetime": "turn-only",
                    "formatter": template,
                }
            )
        ]
    )
    assert format_message(MEMORY, registry) == {"role": role, "content": expected}
    assert format_message(MEMORY, None) is None


# "passes task request content through without host-specific task type text" and "does not merge adjacent
# text messages in the formatter"
def test_plain_messages_pass_through_one_by_one():
    messages = [
        text("task-1", "user", "task_request", "write this", taskType="editor"),
        text("system-1", "system", "system_prompt", "System prompt"),
        text("system-2", "system", "history_summary", "Summary"),
        user_input("user-1", "First user turn"),
        user_input("user-2", "Second user turn"),
    ]
    assert [format_message(m) for m in messages] == [
        {"role": "user", "content": "write this"},
        {"role": "system", "content": "System prompt"},
        {"role": "system", "content": "Summary"},
        {"role": "user", "content": "First user turn"},
        {"role": "user", "content": "Second user turn"},
    ]


# MessageFormatter.ts formatSingleMessage, `tool_code`: `if (tool_name && args)`, JavaScript truthiness
@pytest.mark.parametrize(
    ("args", "content"),
    [
        ({}, '<tool_code>{"name":"grep","arguments":{}}</tool_code>'),
        ([], '<tool_code>{"name":"grep","arguments":[]}</tool_code>'),
        ("", None),
        (0, None),
        (False, None),
        ({"q": 1}, '<tool_code>{"name":"grep","arguments":{"q":1}}</tool_code>'),
    ],
)
def test_tool_code_needs_truthy_name_and_args(args, content):
    message = text("tc", "assistant", "tool_code", "", tool_name="grep", args=args)
    expected = None if content is None else {"role": "assistant", "content": content}
    assert format_message(message) == expected


# AgentMessageOrchestrator.sidecar.test.ts: "按 request 的 workingMemory policy 重建 provider registry，并限制
# 历史工具组": maxInteractionGroups 1 leaves the older of two history groups out
def test_max_interaction_groups_one_keeps_the_latest_history_group():
    messages = [
        *(
            m
            for n in (1, 2)
            for m in (
                tool_calls(f"tool_calls_{n}", (f"call_{n}", "workspace_read", {"path": f"doc_{n}.md"})),
                tool_output(f"tool_output_{n}", f"call_{n}", "workspace_read", f"工具结果 {n}"),
            )
        ),
        user_input("current_user", "继续"),
    ]
    result = preprocess(
        messages,
        toolHistory={"maxInteractionGroups": 1, "retentionMode": "drop"},
        workingMemory={"maxRecentToolInteractions": 1, "minToolInteractionsToKeep": 0},
    )
    assert ids(result.messages) == ["tool_calls_2", "tool_output_2", "current_user"]
