"""Copy sets: linnkit's Chinese words by default, English on request, marked on the cards, exportable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.build import build_context
from engine.copyset import ENGLISH_TEMPLATES, host_registration, reminder_registry_for
from engine.messages import AiMessage
from engine.policy import effective_policy
from engine.reminders.builtins import BUILTIN_TEMPLATES
from engine.replay import build_at_step
from engine.session import load_session
from playground.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def _session() -> list[AiMessage]:
    call = {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"q": "x"}'}}
    return [
        AiMessage("s", "system", "system_prompt", "be brief"),
        AiMessage("u1", "user", "user_input", "find x"),
        AiMessage("a1", "assistant", "tool_calls", "", metadata={"tool_calls": [call]}),
        AiMessage("t1", "tool", "tool_output", "", metadata={"tool_call_id": "c1"}),
        AiMessage("f1", "assistant", "final_answer", "none"),
        AiMessage("u2", "user", "user_input", "thanks"),
    ]


POLICY = {"toolHistory": {"strategy": "per-run", "retentionMode": "compress", "keepLatestRuns": 0}}


@pytest.mark.parametrize(
    ("copy", "text", "marks"),
    [
        (
            "zh",
            '我已经调用了工具「grep」（参数：q="x"），'
            "并得到了结果：无输出，我需要思考下一步行动",
            ("compressed",),
        ),
        (
            "en",
            'I called the tool "grep" (arguments: q="x") and got: no output'
            "; now I need to think about the next step",
            ("compressed", "copy:en"),
        ),
    ],
)
def test_compressed_tool_history_in_each_copy(copy, text, marks):
    result = build_context(_session(), effective_policy(POLICY), copy=copy)
    card = next(c for c in result.cards if "compressed" in c.marks)
    assert card.message["content"] == text
    assert card.marks == marks


def test_builtin_reminders_in_english_are_marked():
    session = load_session(SAMPLES / "max_steps_streak.jsonl")
    header = session.header
    _, _, result = build_at_step(
        session.messages,
        21,
        effective_policy(header.context_policy),
        max_steps=header.max_steps,
        available_tools=header.to_dict()["availableTools"],
        copy="en",
    )
    assert result.reminder.hit_rule_ids == ("last_steps_hint", "context_budget_warning")
    assert "Step reminder: you are at step 19/20, 1 left." in result.reminder.appended_text
    assert "⚠️ Context budget warning: you have taken 19/20 steps" in result.reminder.appended_text
    assert "copy:en" in result.cards[-1].marks and "reminder" in result.cards[-1].marks


def test_the_english_set_replaces_every_builtin_template_and_exports_them():
    assert set(ENGLISH_TEMPLATES) == set(BUILTIN_TEMPLATES)
    registry = reminder_registry_for("en")
    assert all(registry.template(name) is fn for name, fn in ENGLISH_TEMPLATES.items())
    code = host_registration("en")
    for name in BUILTIN_TEMPLATES:
        assert f"registry.registerContentTemplate('{name}', " in code
    assert host_registration("zh").startswith("// The Chinese copy is linnkit's built-in")
    with pytest.raises(ValueError, match="unknown copy set 'fr'; choose one of zh, en"):
        reminder_registry_for("fr")


def test_cli_copy_option(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(m.to_dict()) + "\n" for m in _session()))
    policy = tmp_path / "p.yaml"
    policy.write_text("toolHistory:\n  strategy: per-run\n  retentionMode: compress\n  keepLatestRuns: 0\n")
    assert main(["build", str(path), "--policy", str(policy), "--copy", "en", "--json"]) == 0
    wire = json.loads(capsys.readouterr().out)["wire"]
    assert wire[2]["content"].startswith('I called the tool "grep"')
