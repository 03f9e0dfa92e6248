"""How the front ends describe a decision in words: the rows of the trace explorer, why a message fell out of
an incomplete tool group, and which hygiene warnings are ordinary in real sessions."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.hygiene import hygiene_checks
from engine.messages import AiMessage, call_id
from engine.result import BuildResult, Decision


def decision_rows(
    decision: Decision, tokens: Callable[[int], str] = str, why: str | None = None
) -> list[tuple[str, str]]:
    """The trace explorer's rows; `why` (see `why_dropped`) follows the engine's reason."""
    rows = [
        ("fate", "kept" if decision.kept else "dropped"),
        ("message", f"{decision.role} · {decision.type}"),
        ("index", "created by the build" if decision.index < 0 else str(decision.index)),
        ("stage", decision.stage),
        ("phase", decision.phase or "–"),
        ("reason", decision.reason),
        ("strategy", decision.strategy or "–"),
        ("tokens", tokens(decision.tokens)),
        ("wire index", "–" if decision.wire_index is None else str(decision.wire_index)),
    ]
    if decision.replaced_by:
        rows.append(("replaced by", decision.replaced_by))
    if why:
        rows.insert(6, ("why", why))
    if decision.note:
        rows.append(("note", decision.note))
    return rows


def why_dropped(result: BuildResult, decision: Decision) -> str | None:
    """Why a message fell out of an incomplete tool group, in words. linnkit names a drop by its phase
    only, so a tool call with no result and a result of no call are both `dropped_by_budget_or_priority`
    (the engine keeps linnkit's reason); working memory never sends half a group."""
    if decision.kept or decision.reason != "dropped_by_budget_or_priority":
        return None
    return incomplete_groups(result.preprocessed).get(decision.message_id)


def summarization_verdict(result: BuildResult, tokens: Callable[[int], str] = str) -> str:
    """Why this build made a summary or not, with linnkit's two trigger stages and their numbers."""
    if result.error is not None:
        return f"no summary: the build failed ({result.error.code})"
    made = next((e for e in result.events if e.kind == "summarization" and "summaryId" in e.data), None)
    if made is not None:
        data = made.data
        return (f"summary made: {len(data['replacedIds'])} messages ({tokens(data['replacedTokens'])} tok) → "
                f"{tokens(data['summaryTokens'])} tok")
    check = result.summarization_check
    if not check:
        return "no summary: the trigger was not checked"
    used, available, threshold = check["used"], check["available"], check["threshold"]
    trigger = threshold / result.tokens.total_budget if result.tokens.total_budget else 0.0
    if available < 0:
        return f"no summary: skipped, the context is already over budget ({tokens(-available)} tok over)"
    if not check["precheckPassed"]:
        share = used / available if available else 0.0
        return (f"no summary: stage 1, kept {tokens(used)} ÷ remaining {tokens(available)} = {share:.0%} "
                f"< trigger {trigger:.0%}")
    if check.get("contentTokens") is None:
        return f"no summary: stage 2, kept {tokens(used)} < 0.9 × threshold {tokens(round(threshold))}"
    if not check["fired"]:
        return (f"no summary: stage 2, content-only count {tokens(check['contentTokens'])} "
                f"< threshold {tokens(round(threshold))}")
    if "ai_history_summarization_failed_continue" in result.strategies_applied:
        return "no summary: the summarizer failed; the build went on without one (continue-if-within-budget)"
    return "no summary: the trigger fired but there were fewer than 5 candidates to summarise"


AWAITS = "awaits its result (the session ends on it)"


def incomplete_groups(messages: Sequence[AiMessage]) -> dict[str, str]:
    """message id -> why its tool group is incomplete, for the calls no later output answers and the
    outputs no earlier call declares (one pass each way: a long session's table asks once)."""
    last_answer: dict[str, int] = {}
    last_other = -1  # the last message that is not a tool output: a call at or after it awaits its result
    for index, message in enumerate(messages):
        if message.type == "tool_output" and message.tool_call_id is not None:
            last_answer[message.tool_call_id] = index
        elif message.type != "tool_output":
            last_other = index
    found: dict[str, str] = {}
    declared: set[str] = set()
    for index, message in enumerate(messages):
        if message.type == "tool_calls":
            ids = [call_id(call) for call in message.tool_calls]
            declared.update(ids)
            missing = ", ".join(cid for cid in ids if last_answer.get(cid, -1) < index)
            if missing:
                state = AWAITS if index >= last_other else "has no result"
                found[message.id] = f"call {missing} {state}; a call is sent only with its result"
        elif message.type == "tool_output":
            cid = message.tool_call_id
            if cid is not None and cid not in declared:
                found[message.id] = f"no call before it declares {cid}; a result is sent only with its call"
    return found


HIDDEN_REASONING = "thought recorded without its text (only its signature): it counts 0 tokens here"


def _sealed(message: AiMessage) -> bool:
    """A thought that carries its provider's signature or encrypted data (`reasoning_details`)."""
    details = message.meta("reasoning_details")
    return isinstance(details, list) and any(
        isinstance(d, dict) and (d.get("signature") or d.get("data")) for d in details
    )


UNRECORDED_RESULT = "has no result: the transcript records none (Cursor's)"


def ordinary_warnings(messages: Sequence[AiMessage], *, results_recorded: bool = True) -> dict[str, str]:
    """The hygiene warnings (by their text) that real sessions show in normal use, each with the line to
    print as a warning instead of a problem: an empty tool result (a command that printed nothing), a
    thought whose text the agent did not record, only its signature or encrypted data (Claude Code 2.1.170+
    writes every thinking block so), a call awaiting its result because the session ends on it (a
    transcript saved mid-call), any call without a result when the header says the agent records none
    (`toolResultsRecorded: false`, Cursor's transcripts), and one the user's next turn interrupted."""
    last_other = max((i for i, m in enumerate(messages) if m.type != "tool_output"), default=-1)
    position = {m.id: i for i, m in enumerate(messages)}
    found: dict[str, str] = {}
    for warning in hygiene_checks(messages):
        if warning.kind == "empty" and warning.text == "empty tool_output message":
            found[str(warning)] = f"{warning.message_id}: empty tool result"
        elif warning.kind == "empty" and warning.text == "empty thought message" and _sealed(
            messages[position[warning.message_id]]
        ):
            found[str(warning)] = f"{warning.message_id}: {HIDDEN_REASONING}"
        elif warning.kind == "orphan_call":
            index = position.get(warning.message_id)
            if index is not None and index >= last_other:
                why = AWAITS
            elif not results_recorded:  # the header says the tool wrote none
                why = UNRECORDED_RESULT
            elif _interrupted(messages, index):
                why = INTERRUPTED
            else:
                continue  # a problem
            cid = warning.text.removeprefix("orphan tool call ").split(": ")[0]
            found[str(warning)] = f"{warning.message_id}: call {cid} {why}"
    return found


INTERRUPTED = "has no result: the user spoke next (the call was interrupted)"


def _interrupted(messages: Sequence[AiMessage], index: int | None) -> bool:
    """The call's results that came (if any) are followed by the user's turn: the user stopped the call
    (Cline's `[TASK RESUMPTION]`, an agent killed mid-call and started again)."""
    if index is None:
        return False
    after = index + 1
    while after < len(messages) and messages[after].type == "tool_output":
        after += 1
    return after < len(messages) and messages[after].type == "user_input"
