"""Simulated observation governance: what `toolOutput.observationGovernance` would have done at execution.

Not a linnkit preprocessor (governance runs when the tool returns); the playground runs it before the
pipeline, when a build is given an observation store, so a user sees previews, blob pointers and what was
saved while tuning `maxChars` / `maxLines`.
"""

from __future__ import annotations

from typing import Any

from engine.observation import ObservationPreviewPort, govern_message
from engine.preprocess.base import Entry, StageOutput
from engine.result import Event

STRATEGY = "observation_governance"


def simulate_governance(entries: list[Entry], tool_output: Any, store: ObservationPreviewPort) -> StageOutput:
    out: list[Entry] = []
    events: list[Event] = []
    for entry in entries:
        governed = govern_message(entry.message, tool_output, store)
        if governed is not entry.message:
            cut = governed.meta("observationTruncation") or {}
            blob = (governed.meta("tool_output_store") or {}).get("blob_id")
            events.append(
                Event(
                    kind="observation",
                    title=f"observation {entry.message.id} cut to a preview: {cut.get('originalChars')} → "
                    f"{cut.get('previewChars')} chars, full text saved as blob {blob}",
                    message_ids=(entry.message.id,),
                    data={"blobId": blob, **cut},
                )
            )
        out.append(Entry(governed, entry.origins))
    return StageOutput(out, STRATEGY if events else None, [], events)
