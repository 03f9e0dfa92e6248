"""The teacher's HTML report: one self-contained file, session text escaped, written atomically."""

from __future__ import annotations

import re
from pathlib import Path

from engine.build import build_context
from engine.messages import AiMessage
from engine.replay import replay_session
from playground.app.views import steps_of
from playground.cli.main import main
from playground.web.report import build_report, replay_report, write_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def hostile_session() -> list[AiMessage]:
    return [
        AiMessage("s", "system", "system_prompt", "Be brief. " + HOSTILE, 0),
        AiMessage("u1", "user", "user_input", "first " + HOSTILE, 1),
        AiMessage("a1", "assistant", "final_answer", "answer & more", 2),
        AiMessage("u2", "user", "user_input", "second", 3),
    ]


def test_session_text_is_escaped_and_nothing_is_loaded_from_outside():
    messages = hostile_session()
    result = build_context(messages, {"budget": {"maxTokens": 8000}}, now=0)
    steps, _ = steps_of(replay_session(messages, {"budget": {"maxTokens": 8000}}, now=0))
    page = build_report(result, title=HOSTILE, policy={"budget": {"maxTokens": 8000}}, steps=steps)
    assert "<script" not in page and "<img" not in page
    # the title, the heading, the system card and the user card
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;") == 4
    assert "answer &amp; more" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 1


def test_a_replay_report_charts_every_step_and_shows_the_last_build():
    session = SAMPLES / "max_steps_streak.jsonl"
    from engine.session import load_session

    loaded = load_session(session)
    header = loaded.header
    replayed = replay_session(
        loaded.messages, header.context_policy, max_steps=header.max_steps,
        available_tools=header.extra["availableTools"], now=0,
    )
    rows, last = steps_of(replayed)
    assert [r.step for r in rows if r.markers] == [13, 17, 19, 20, 21]
    page = replay_report(rows, last, title="audit", policy=header.context_policy)
    assert page.count("<rect ") == 21
    assert "<td>20</td><td>40</td>" in page and "last_steps_hint, context_budget_warning" in page
    assert "maxTokens: 16000" in page


def test_build_html_writes_a_file_and_never_the_session(tmp_path, capsys):
    out = tmp_path / "report.html"
    session = SAMPLES / "summarization_trigger.jsonl"
    assert main(["build", str(session), "--html", str(out)]) == 0
    assert capsys.readouterr().out == f"report written to {out}\n"
    page = out.read_text(encoding="utf-8")
    assert "<title>" in page and page.count("<rect ") == 13 and "history_summary" in page
    before = session.read_bytes()
    assert main(["replay", str(session), "--html", str(session)]) == 2
    said = f"error: {session}: refusing to write over {session}, which this command reads\n"
    assert capsys.readouterr().err == said
    assert session.read_bytes() == before


def test_write_report_is_atomic_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "r.html"
    target.write_text("old", encoding="utf-8")
    write_report(target, "<p>new</p>")
    assert target.read_text(encoding="utf-8") == "<p>new</p>"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
