"""Simulated observation governance: what `toolOutput.observationGovernance` would have done at execution.

Not a linnkit preprocessor (governance runs when the tool returns); the playground runs it before the
pipeline, when a build is given an observation store, so a user sees previews, blob pointers and what was
saved while tuning `maxChars` / `maxLines`.

Governing a message depends only on the message and the settings (blob ids are content hashes), so the last
run is kept: a replay's next step, or a rebuild after an edit that leaves the settings alone, governs only
the messages the last run did not see. Ungoverned entries pass on as the same objects, which lets the
stages after this one reuse their own work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.lanes import LaneLists
from engine.observation import ObservationPreviewPort, govern_message, governance_settings
from engine.preprocess.base import Entry, StageOutput, common_prefix
from engine.result import Event

STRATEGY = "observation_governance"


@dataclass(frozen=True, slots=True)
class _Run:
    store: ObservationPreviewPort
    settings: tuple[bool, int, int]
    entries: list[Entry]
    out: list[Entry]
    events_before: list[int]  # events_before[i]: events made for entries[:i]
    events: list[Event]


# The last few runs, per memory lane (`engine.lanes`): the stage cannot be keyed (the store is read from
# disk), so a rebuild finds its own run here and hands the very same output list on (later stages then
# reuse theirs), also when the user goes back and forth between steps.
_LAST: LaneLists[_Run] = LaneLists(4)


def simulate_governance(entries: list[Entry], tool_output: Any, store: ObservationPreviewPort) -> StageOutput:
    settings = governance_settings(tool_output)
    seen, last = 0, None
    for run in _LAST.items():  # the run sharing the longest prefix with these entries
        if run.store is store and run.settings == settings:
            shared = common_prefix(run.entries, entries)
            if shared == len(run.entries) == len(entries):  # a rebuild: the same output list
                return StageOutput(run.out, STRATEGY if run.events else None, [], list(run.events))
            if last is None or shared > seen:
                seen, last = shared, run
    out: list[Entry] = []
    events: list[Event] = []
    events_before = [0]
    if last is not None:
        out, events_before = last.out[:seen], last.events_before[: seen + 1]
        events = last.events[: events_before[-1]]
    for entry in entries[seen:]:
        governed = govern_message(entry.message, tool_output, store)
        if governed is entry.message:
            out.append(entry)
        else:
            out.append(Entry(governed, entry.origins))
            events.append(_event(entry.message.id, governed))
        events_before.append(len(events))
    _LAST.add(_Run(store, settings, entries, out, events_before, events))
    return StageOutput(out, STRATEGY if events else None, [], list(events))


def _event(message_id: str, governed: Any) -> Event:
    cut = governed.meta("observationTruncation") or {}
    blob = (governed.meta("tool_output_store") or {}).get("blob_id")
    return Event(
        kind="observation",
        title=f"observation {message_id} cut to a preview: {cut.get('originalChars')} → "
        f"{cut.get('previewChars')} chars, full text saved as blob {blob}",
        message_ids=(message_id,),
        data={"blobId": blob, **cut},
    )
