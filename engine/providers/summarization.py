"""SummarizationProvider (priority 3): when the kept context nears the trigger, the oldest part is replaced
by one `history_summary` message (spec §5.4, §9 D8–D10)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from engine.errors import SUMMARIZATION_FAILED, ContextProviderError
from engine.jsvalues import js_to_number, js_trim
from engine.lanes import LaneLists
from engine.matched_runs import FEW, matched_runs
from engine.messages import AiMessage
from engine.pipeline import BuildContext, ProviderOutcome, TriggerCheck
from engine.preprocess.base import new_id
from engine.providers.state import (
    KEEP_CORE,
    SUMMARIZATION,
    Kept,
    ProviderReport,
    State,
    States,
    kept_of,
    kept_states,
)
from engine.result import Event
from engine.shared_ids import folded_ids
from engine.summarizer import SummaryRequest
from engine.tokens import DefaultTokenizer, content_counter

NAME = "SummarizationProvider"
STRATEGY = "ai_history_summarization"
FAILED_CONTINUE = "ai_history_summarization_failed_continue"
ATTEMPTS = 3
_MESSAGE = attrgetter("message")


def check_trigger(states: list[State], available: int, ctx: BuildContext) -> TriggerCheck:
    policy = ctx.policy.summarization
    kept = kept_of(states)
    used = kept.tokens
    check = TriggerCheck(used, available, ctx.total_budget * policy.trigger_threshold, kept_of=(states, kept))
    if available < 0 or (available > 0 and used / available < policy.trigger_threshold):
        return check
    check.precheck_passed = True
    if used < 0.9 * check.threshold:
        return check
    # linnkit counts the states' own message content (not a truncated version), by the model's encoding
    check.content_tokens = _content_tokens(kept, ctx)
    check.fired = check.content_tokens >= check.threshold
    return check


@dataclass(frozen=True, slots=True)
class _Counted:
    """The last check's count of each message's content, by `counter`."""

    messages: list[AiMessage]  # this check's own list, held so that no id below is reused while kept
    ids: list[int]
    counts: list[int]
    counter: DefaultTokenizer


_LAST: LaneLists[_Counted] = LaneLists(1)  # per memory lane, the last check's, as `engine.sent`'s


def forget() -> None:
    _LAST.clear()


def _content_tokens(kept: Kept, ctx: BuildContext) -> int:
    """`ctx.content_tokens` of the kept states' message contents. Near the trigger, a replay's every step
    counts thousands of contents that the last step counted: a span's sum is its runs' (`Span.content`),
    and the other states are counted; without spans, the runs of messages the last check counted are taken
    over (`matched_runs`), and only the others are counted."""
    counter = content_counter(ctx.policy.token_estimation.encoding, ctx.avg_chars_per_token, ctx.tokenizer)
    spans = kept.spans_content(counter)
    if spans is not None:
        contents = [s.message.content for s in kept.unspanned]  # type: ignore[union-attr]  # told apart
        return spans + sum(counter.precise_count(c) for c in contents if isinstance(c, str))
    messages = list(map(_MESSAGE, kept.states))
    if len(messages) < FEW:
        return ctx.content_tokens([m.content for m in messages])
    last = _LAST.newest()
    ids = list(map(id, messages))
    counts: list[int] = []
    known = last.ids if last is not None and last.counter is counter else []
    for position, start, length in matched_runs(ids, known):
        if start < 0:
            content = messages[position].content
            counts.append(counter.precise_count(content) if isinstance(content, str) else 0)
        else:
            counts += last.counts[start : start + length]  # type: ignore[union-attr]  # known: last's
    _LAST.add(_Counted(messages, ids, counts, counter))
    return sum(counts)


def run_summarization(states: list[State], available: int, ctx: BuildContext) -> ProviderOutcome:
    """The outcome carries the history_summary event a host would persist, and the trigger's numbers."""
    report = ProviderReport(NAME)
    check = check_trigger(states, available, ctx)
    if not check.fired:
        report.skipped = not check.precheck_passed
        return ProviderOutcome(report, trigger_check=check)
    chosen = _candidates(states, ctx.policy.summarization.oldest_messages_percentage)
    if not chosen:
        event = _trigger_event(check, "fewer than 5 candidates: nothing to summarise")
        return ProviderOutcome(report, (event,), trigger_check=check)
    low, high = min(s.index for s in chosen), max(s.index for s in chosen)
    replaced = [
        s
        for s in states
        if low <= s.index <= high and s.message.type not in ("system_prompt", "context_injection")
    ]
    prompt = "\n\n".join(f"{s.message.role}: {s.message.content}" for s in chosen)
    reply, error, attempts = _generate(ctx, prompt)
    # what the summary agent was sent, for a cost estimate (engine.cost): the prompt, by the build's tokenizer
    call = {"promptTokens": ctx.tokenizer.estimate_text(prompt, ctx.model_id), "attempts": attempts}
    if error is not None:
        return _failed(report, check, error, ctx, call)
    summary = _summary_message(states, replaced, reply, ctx)
    origins = tuple(sorted({o for s in replaced for o in s.origins}))
    summary_state = State(summary, -1, origins, ctx.estimate(summary))
    summary_state.keep(KEEP_CORE, SUMMARIZATION, STRATEGY)
    replaced_tokens = sum(s.tokens for s in replaced)
    ratio = summary_state.tokens / replaced_tokens if replaced_tokens else 0
    summary.metadata["compressionRatio"] = ratio
    gone = {id(s) for s in replaced}
    remaining = [s for s in states if id(s) not in gone]
    remaining.insert(min(3, len(remaining)), summary_state)
    states[:] = remaining
    if isinstance(states, States):
        states.owned = None  # positions moved: `kept_states` reads every state from here on
    report.tokens_used = summary_state.tokens
    report.strategies.append(STRATEGY)
    persisted = _persist_event(summary, ctx)
    event = _trigger_event(check, f"{len(replaced)} messages → {summary_state.tokens} tokens")
    event.data.update(
        summaryId=summary.id,
        replacedIds=[s.message.id for s in replaced],
        candidateIds=[s.message.id for s in chosen],
        summaryTokens=summary_state.tokens,
        replacedTokens=replaced_tokens,
        summary=summary.content,
        **call,
    )
    return ProviderOutcome(report, (event,), (persisted,), check)


def _candidates(states: list[State], oldest_percentage: float) -> list[State]:
    kinds = ("user_input", "final_answer", "history_summary")
    core = [s for s in kept_states(states) if s.message.type in kinds]
    if len(core) <= 4:
        return []
    core.sort(key=lambda s: (s.message.type != "history_summary", s.index))
    n = math.ceil(len(core) * oldest_percentage)
    last_user = max((p for p, s in enumerate(core) if s.message.type == "user_input"), default=None)
    cap = last_user if last_user is not None else len(core) - 2
    k = min(n, cap)
    return core[:k] if k > 0 else []


def _generate(ctx: BuildContext, prompt: str) -> tuple[str, BaseException | None, int]:
    """The reply (or the last error) and how many attempts were made."""
    policy = ctx.policy.summarization
    request = SummaryRequest(
        prompt_key=policy.agent_id or "history_compression",
        model_id=ctx.model_id,
        prompt=prompt,
        budget_tokens=math.floor(ctx.total_budget * policy.budget_percentage),
        avg_chars_per_token=ctx.avg_chars_per_token,
        count_tokens=lambda text: ctx.tokenizer.estimate_text(text, ctx.model_id),
    )
    error: BaseException | None = None
    # linnkit sleeps attempt × 1 s between tries; a playground need not
    for attempt in range(1, ATTEMPTS + 1):
        try:
            reply = ctx.summarizer.generate(request) if ctx.summarizer is not None else None
            if reply is None:
                raise RuntimeError("no summary agent configured")
            if not js_trim(reply):
                raise RuntimeError("the summary agent returned a blank reply")
            return reply, None, attempt
        except Exception as exc:  # the host's agent may fail in any way; linnkit retries on any error
            error = exc
    return "", error, ATTEMPTS


def _failed(
    report: ProviderReport, check: TriggerCheck, error: BaseException, ctx: BuildContext, call: dict
) -> ProviderOutcome:
    policy = ctx.policy.summarization
    if policy.failure_behavior == "continue-if-within-budget" and check.used <= check.available:
        report.strategies.append(FAILED_CONTINUE)
        event = _trigger_event(check, f"summary agent failed ({error}); continuing: within budget")
        event.data.update(failed=True, error=str(error), failureBehavior=policy.failure_behavior, **call)
        return ProviderOutcome(report, (event,), trigger_check=check)
    raise ContextProviderError(
        f"summarization failed after {ATTEMPTS} attempts: {error}",
        code=SUMMARIZATION_FAILED,
        fatal=True,
        provider_name=NAME,
        cause=error,
    )


def _summary_message(states: list[State], replaced: list[State], reply: str, ctx: BuildContext) -> AiMessage:
    old = [s for s in replaced if s.message.type == "history_summary"]
    seq = _next_seq(s.message.meta("summarySeq") for s in states if s.message.type == "history_summary")
    n = len(replaced)
    desc = (
        f"[历史对话摘要(更新版) - 合并压缩了{n}条消息，包括旧摘要]"
        if old
        else f"[历史对话摘要 - 压缩了{n}条消息]"
    )
    return AiMessage(
        id=new_id(f"summary:{seq}", replaced[0].message.id),
        role="system",
        type="history_summary",
        content=f"{desc}\n\n{js_trim(reply)}",
        timestamp=ctx.now,
        metadata={
            "messageType": "summary",
            "originalMessageCount": n,
            "compressionRatio": 0,
            "includedOldSummary": bool(old),
            "replacedMessageIds": _replaced_ids(replaced),
            "summarySeq": seq,
        },
    )


def _next_seq(seqs: Iterable[Any]) -> int | float | None:
    """linnkit's `Math.max(seq, summarySeq || 0)` over the summaries, plus 1: values read as JavaScript
    numbers (`"2"` is 2, 3.5 stays 3.5); one that is no number makes NaN, which JSON writes as null."""
    seq: float = 0
    for value in seqs:
        number = 0 if _js_falsy(value) else js_to_number(value)  # `|| 0`
        seq = math.nan if math.isnan(seq) or math.isnan(number) else max(seq, number)
    if math.isnan(seq):
        return None
    seq += 1
    return int(seq) if float(seq).is_integer() and abs(seq) < 2**53 else seq


def _js_falsy(value: Any) -> bool:
    """null, false, 0, NaN and "" (an empty array or object is truthy in JavaScript)."""
    if value is None or value is False or value == "":
        return True
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and (value == 0 or math.isnan(value))


def _replaced_ids(replaced: list[State]) -> list[str]:
    """Each replaced message's id, the ids it stood for and an old summary's replacedMessageIds, distinct
    in first-seen order. The longest old summary's list is shared, not copied (`engine.shared_ids`)."""
    lists = [s.message.meta("replacedMessageIds") for s in replaced if s.message.type == "history_summary"]
    shared = max((ids for ids in lists if isinstance(ids, list)), key=len, default=None)
    before: list[str] = []
    after: list[str] = []
    ids = before
    for state in replaced:
        ids.append(state.message.id)
        ids.extend(state.replacement_source_ids or [])
        ids.extend(state.message.meta("replacementSourceIds") or [])
        if state.message.type == "history_summary":
            own = state.message.meta("replacedMessageIds") or []
            if own is shared and ids is before:
                ids = after  # the shared list itself goes between the two
            else:
                ids.extend(own)
    return folded_ids(before, shared, after)


def _persist_event(summary: AiMessage, ctx: BuildContext) -> dict:
    meta = summary.metadata or {}
    return {
        "type": "history_summary",
        "id": summary.id,
        "content": summary.content,
        "replaced_message_ids": meta["replacedMessageIds"],
        "summary_seq": meta["summarySeq"],
        "original_message_count": meta["originalMessageCount"],
        "compression_ratio": meta["compressionRatio"],
        "included_old_summary": meta["includedOldSummary"],
        "timestamp": ctx.now,
    }


def _trigger_event(check: TriggerCheck, outcome: str) -> Event:
    title = (
        f"summarization: {check.used} tokens used ≥ 90% of trigger {check.threshold:g}; "
        f"content count {check.content_tokens} → {outcome}"
    )
    return Event(
        kind="summarization",
        title=title,
        data={
            "used": check.used,
            "available": check.available,
            "threshold": check.threshold,
            "contentTokens": check.content_tokens,
            "fired": check.fired,
        },
    )
