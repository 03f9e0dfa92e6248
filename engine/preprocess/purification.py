"""HistoryPurification (priority 1): after a summary, the messages it replaced leave the list
(spec §5.1, §9 D7: summary-replacement cleanup only; hygiene problems are reported, not repaired)."""

from __future__ import annotations

from engine.messages import AiMessage
from engine.preprocess.base import Entry, Removal, StageOutput, messages_of
from engine.result import Event

STRATEGY = "summary_replacement_cleanup"


def latest_summary(messages: list[AiMessage]) -> AiMessage | None:
    """The summary with the highest `summarySeq` (missing counts as -1; the first wins a tie)."""
    best: AiMessage | None = None
    best_seq = None
    for message in messages:
        if message.type != "history_summary":
            continue
        seq = message.meta("summarySeq")
        seq = seq if isinstance(seq, (int, float)) and not isinstance(seq, bool) else -1
        if best_seq is None or seq > best_seq:
            best, best_seq = message, seq
    return best


def purify_history(entries: list[Entry]) -> StageOutput:
    messages = messages_of(entries)
    summary = latest_summary(messages)
    if summary is None:
        return StageOutput.unchanged(entries)
    replaced = set(summary.meta("replacedMessageIds") or [])
    if not replaced:
        return StageOutput.unchanged(entries)
    out: list[Entry] = []
    removed: list[Entry] = []
    for entry in entries:
        message = entry.message
        sources = message.metadata.get("replacementSourceIds") if message.metadata else None
        sources = sources if isinstance(sources, list) else ()
        if message.id != summary.id and (message.id in replaced or replaced.intersection(sources)):
            removed.append(entry)
        else:
            out.append(entry)
    if not removed:
        return StageOutput.unchanged(entries)
    removals = [Removal(e.origins, STRATEGY, summary.id) for e in removed]
    event = Event(
        kind="purification",
        title=f"purification: {len(removed)} message(s) already covered by summary {summary.id}",
        message_ids=tuple(e.message.id for e in removed),
        data={"summaryId": summary.id},
    )
    return StageOutput(out, STRATEGY, removals, [event])
