"""Hand-built `BuildResult`s for the widget tests (no engine involved)."""

from __future__ import annotations

from engine.messages import AiMessage
from engine.result import BuildResult, Decision, Event, ReminderOutcome, TokenAccount, WireCard

REMINDER_TEXT = "You have called tools 5 times in a row."
APPENDED = f"\n\n<system-reminder>\n{REMINDER_TEXT}\n</system-reminder>"

ACCOUNT = TokenAccount(
    max_tokens=24000,
    reserved_for_response=2400,
    total_budget=21600,
    wm_budget=15120,
    trigger_tokens=15120.0,
    summary_budget=2592,
    final_tokens=18000,
    by_category={
        "core": 1200,
        "user": 300,
        "fence:memory": 600,
        "working_memory": 9800,
        "tool_history": 4900,
        "summary": 1100,
        "reminder": 100,
    },
    backend="chars",
)

OVER_ACCOUNT = TokenAccount(
    max_tokens=24000,
    reserved_for_response=2400,
    total_budget=21600,
    wm_budget=15120,
    trigger_tokens=15120.0,
    summary_budget=2592,
    final_tokens=26400,
    by_category={"core": 1200, "user": 300, "working_memory": 20400, "tool_history": 4500},
    backend="chars",
)

# The session: index, id, role, type, content.
SESSION = [
    (0, "s0", "system", "system_prompt", "You are a careful data analyst.\nAnswer briefly."),
    (1, "u1", "user", "user_input", "Load the sales table."),
    (2, "a2", "assistant", "final_answer", "Loaded 1200 rows."),
    (3, "a3", "assistant", "tool_calls", ""),
    (4, "t4", "tool", "tool_output", "region,total\nnorth,10\nsouth,12"),
    (5, "a5", "assistant", "tool_calls", ""),
    (6, "t6", "tool", "tool_output", "[compressed] 3 rows"),
    (7, "u7", "user", "user_input", "Which region grew fastest?"),
]


ROLE_TYPE = {mid: (role, type_) for _, mid, role, type_, _ in SESSION} | {"h1": ("system", "history_summary")}


def _decision(
    index: int,
    mid: str,
    kept: bool,
    reason: str,
    *,
    phase: str | None = None,
    strategy: str | None = None,
    wire_index: int | None = None,
    replaced_by: str | None = None,
) -> Decision:
    role, type_ = ROLE_TYPE[mid]
    return Decision(
        index, mid, role, type_, kept, "provider", phase, reason, strategy, 100, wire_index, replaced_by
    )


def _card(index: int, mid: str, content: str, marks: tuple[str, ...] = (), **extra: object) -> WireCard:
    role, type_ = ROLE_TYPE[mid]
    return WireCard(
        index, {"role": role, "content": content, **extra}, mid, type_, 100 + index, (mid,), marks
    )


def small_result(account: TokenAccount = ACCOUNT) -> BuildResult:
    """Five wire cards (system, summary, tool call, compressed output, user + reminder), four dropped."""
    call = {"id": "c5", "type": "function", "function": {"name": "run_sql", "arguments": '{"q": "select"}'}}
    cards = (
        _card(0, "s0", SESSION[0][4]),
        WireCard(
            1,
            {"role": "system", "content": "[summary] loaded sales"},
            "h1",
            "history_summary",
            640,
            ("u1", "a2"),
            ("summary",),
        ),
        _card(2, "a5", "", tool_calls=[call]),
        _card(3, "t6", SESSION[6][4], ("compressed",), tool_call_id="c5"),
        _card(4, "u7", SESSION[7][4] + APPENDED, ("reminder",)),
    )
    decisions = (
        _decision(0, "s0", True, "kept_by_CORE_CONTEXT", phase="CORE_CONTEXT", wire_index=0),
        _decision(1, "u1", False, "replaced_by_summarization", replaced_by="h1", strategy="summarization"),
        _decision(2, "a2", False, "replaced_by_summarization", replaced_by="h1", strategy="summarization"),
        _decision(3, "a3", False, "dropped_by_WORKING_MEMORY", phase="WORKING_MEMORY"),
        _decision(4, "t4", False, "dropped_by_WORKING_MEMORY", phase="WORKING_MEMORY"),
        _decision(5, "a5", True, "kept_by_WORKING_MEMORY", phase="WORKING_MEMORY", wire_index=2),
        _decision(6, "t6", True, "kept_by_WORKING_MEMORY", phase="WORKING_MEMORY", wire_index=3),
        _decision(7, "u7", True, "kept_by_CORE_CONTEXT", phase="CORE_CONTEXT", wire_index=4),
        _decision(-1, "h1", True, "kept_by_SUMMARIZATION", phase="SUMMARIZATION", wire_index=1),
    )
    events = (
        Event("summarization", "summarization fired: 2 messages → 640 tok", ("u1", "a2", "h1")),
        Event("working_memory", "2 messages over the budget", ("a3", "t4")),
        Event("tool_history", "1 tool output compressed", ("t6",)),
    )
    preprocessed = tuple(AiMessage(mid, role, type_, content) for _, mid, role, type_, content in SESSION)
    return BuildResult(
        wire=tuple(c.message for c in cards),
        cards=cards,
        messages=(),
        preprocessed=preprocessed,
        decisions=decisions,
        tokens=account,
        events=events,
        trace=None,
        reminder=ReminderOutcome(("tool_call_streak",), {"tool_call_streak": REMINDER_TEXT}, APPENDED, 12),
    )


def big_result(n: int) -> BuildResult:
    """`n` session messages alternating user/assistant; every third one is dropped."""
    decisions, cards, preprocessed = [], [], []
    for i in range(n):
        mid, role = f"m{i}", ("user", "assistant")[i % 2]
        type_ = ("user_input", "final_answer")[i % 2]
        preprocessed.append(AiMessage(mid, role, type_, f"message {i}\nsecond line"))
        if i % 3 == 2:
            decisions.append(
                Decision(
                    i,
                    mid,
                    role,
                    type_,
                    False,
                    "provider",
                    "WORKING_MEMORY",
                    "dropped_by_WORKING_MEMORY",
                    None,
                    10,
                )
            )
            continue
        decisions.append(
            Decision(
                i,
                mid,
                role,
                type_,
                True,
                "provider",
                "WORKING_MEMORY",
                "kept_by_WORKING_MEMORY",
                None,
                10,
                wire_index=len(cards),
            )
        )
        cards.append(
            WireCard(
                len(cards), {"role": role, "content": f"message {i}\nsecond line"}, mid, type_, 10, (mid,)
            )
        )
    return BuildResult(
        wire=tuple(c.message for c in cards),
        cards=tuple(cards),
        messages=(),
        preprocessed=tuple(preprocessed),
        decisions=tuple(decisions),
        tokens=ACCOUNT,
        events=(),
        trace=None,
        reminder=ReminderOutcome(),
    )
