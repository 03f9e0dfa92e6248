"""History hygiene: what linnkit does *not* repair (spec §9 D7), reported as warnings, never changed.

Orphan tool calls and outputs, outputs without a `tool_call_id`, repeated message ids and empty messages.
Working memory never keeps incomplete groups, so orphans simply fall out; the user should know why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from engine.forksafe import fork_safe_lock
from engine.lanes import LaneLists
from engine.lineage import MARK_AFTER, MARK_BACK
from engine.messages import AiMessage, call_id
from engine.preprocess.base import starts_with

EMPTY_OK = frozenset({"tool_calls"})  # a tool-call message usually has empty content


HygieneKind = Literal["duplicate_id", "output_without_call_id", "orphan_output", "orphan_call", "empty"]


@dataclass(frozen=True, slots=True)
class HygieneWarning:
    """One thing linnkit would not repair in the history; `str()` is the line a build's warnings carry."""

    kind: HygieneKind
    message_id: str
    text: str

    def __str__(self) -> str:
        return f"{self.message_id}: {self.text}"


def hygiene_warnings(messages: Sequence[AiMessage]) -> list[str]:
    return [str(w) for w in hygiene_checks(messages)]


def hygiene_checks(messages: Sequence[AiMessage]) -> list[HygieneWarning]:
    """The history's hygiene warnings, each with its kind: repeated ids (in order of first use), then
    problems of single messages (in history order), then tool calls no output answers."""
    with _LOCK:
        scan = _Scan()  # the longest earlier scan of `messages` or of a prefix of it, else a new one
        for held in _LAST.items():
            length = len(held.messages)
            if len(scan.messages) < length <= len(messages) and starts_with(messages, held.messages):
                scan = held
        for mark in _MARKS.items():
            if len(scan.messages) < len(mark.messages) <= len(messages) and starts_with(
                messages, mark.messages
            ):
                scan = mark.copy()  # a step back from a long scan: on from its mark, not from the start
        if len(scan.messages) < len(messages):
            if len(messages) - len(scan.messages) > MARK_AFTER:
                _MARKS.add(scan.extended(messages[: len(messages) - MARK_BACK]).copy())
            scan = scan.extended(messages)
            _LAST.add(scan)
        return scan.warnings()


@dataclass(slots=True)
class _Scan:
    """The checks over a history, continued when it grows (a replay's next step checks only what is new).
    Used by one caller at a time (`_LOCK`): `extended` changes it in place (the kept scan of the shorter
    list is then gone; a few are kept, so going back and forth between two steps finds both)."""

    messages: tuple[AiMessage, ...] = ()
    first_use: dict[str, int] = field(default_factory=dict)  # id -> the index of its first use
    repeated: dict[str, int] = field(default_factory=dict)  # ids used more than once -> their uses
    declared: dict[str, str] = field(default_factory=dict)  # call id -> the message that declared it last
    unanswered: dict[str, None] = field(default_factory=dict)  # call ids no output answered yet, in order
    singles: list[HygieneWarning] = field(default_factory=list)

    def extended(self, messages: Sequence[AiMessage]) -> _Scan:
        for index in range(len(self.messages), len(messages)):
            message = messages[index]
            if message.id not in self.first_use:
                self.first_use[message.id] = index
            else:
                self.repeated[message.id] = self.repeated.get(message.id, 1) + 1
            if message.type == "tool_calls":
                for call in message.tool_calls:
                    cid = call_id(call)
                    if cid.strip():
                        if cid not in self.declared:
                            self.unanswered[cid] = None
                        self.declared[cid] = message.id
            elif message.type == "tool_output":
                cid = message.tool_call_id
                if cid is None:
                    text = "tool output without tool_call_id (not sent on the wire)"
                    self.singles.append(HygieneWarning("output_without_call_id", message.id, text))
                elif cid not in self.declared:
                    text = f"orphan tool output: no earlier call declares {cid}"
                    self.singles.append(HygieneWarning("orphan_output", message.id, text))
                else:
                    self.unanswered.pop(cid, None)
            if not message.content.strip() and message.type not in EMPTY_OK:
                self.singles.append(HygieneWarning("empty", message.id, f"empty {message.type} message"))
        self.messages = tuple(messages)
        return self

    def copy(self) -> _Scan:
        return _Scan(
            self.messages,
            dict(self.first_use),
            dict(self.repeated),
            dict(self.declared),
            dict(self.unanswered),
            list(self.singles),
        )

    def warnings(self) -> list[HygieneWarning]:
        repeated = [
            HygieneWarning("duplicate_id", i, f"message id used {self.repeated[i]} times")
            for i in sorted(self.repeated, key=self.first_use.__getitem__)
        ]
        orphans = [
            HygieneWarning("orphan_call", self.declared[cid], f"orphan tool call {cid}: no output answers it")
            for cid in self.unanswered
        ]
        return repeated + self.singles + orphans


_LOCK = fork_safe_lock()
_LAST: LaneLists[_Scan] = LaneLists(4)  # the last runs, per memory lane (`engine.lanes`)
# a scan's mark (`engine.lineage.MARK_BACK`), one per memory lane
_MARKS: LaneLists[_Scan] = LaneLists(1)


def forget() -> None:
    with _LOCK:
        _LAST.clear()
        _MARKS.clear()
