"""Which lines of a Claude Code transcript belong to the conversation being imported.

Two things make a transcript more than a list:
- **Rewinds.** Going back (esc esc) and sending a new prompt, or regenerating a reply, makes a second child of
  an earlier line: two user text lines, or two assistant messages, under the same `parentUuid` (no parent,
  for a rewind to the very start: a second root). The live conversation keeps the last-written branch;
  every line under an earlier one is abandoned. (Parallel tool results also share a parent, the calling
  line: they are not branches. Two lines of one assistant message are chained, one the parent of the
  next: two beside each other are the message written twice, and the later one is live.)
- **Sidechains.** Sub-agent lines (`isSidechain`) are written between the main ones (older versions); a
  subagent file (`<session>/subagents/agent-*.jsonl`, newer versions) holds nothing else. Conversation 0 is
  the main one (the sidechain itself in a subagent file); then each inline sub-agent, in order of first
  appearance (parallel sub-agents interleave: a line goes with its `agentId`, else with its parent's
  sub-agent); then the files of `<session>/subagents/` beside the transcript, by name.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Entry = tuple[int, dict[str, Any]]  # (line number, parsed line)


@dataclass(slots=True)
class Selection:
    """The lines to import and why the others are left out (line number → reason)."""

    left_out: dict[int, str] = field(default_factory=dict)
    conversations: int = 1
    abandoned: int = 0
    subagent_file: Path | None = None  # the chosen conversation lives in this file instead


def _is_turn(entry: dict[str, Any]) -> bool:
    return entry.get("type") in ("user", "assistant")


def _branch_key(entry: dict[str, Any]) -> str | None:
    """What makes a child a branch of its parent: a user text line, or an assistant message."""
    message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    if entry.get("type") == "assistant":
        return f"assistant:{message.get('id') or entry.get('uuid')}"
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content]
    is_result = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
    return None if is_result else f"user:{entry.get('uuid')}"


def _abandoned(entries: list[Entry]) -> set[int]:
    """Line numbers under branches a rewind left behind."""
    children: dict[str | None, list[Entry]] = defaultdict(list)
    for number, entry in entries:
        parent = entry.get("parentUuid")
        if isinstance(parent, str) or parent is None:  # None: a root; a rewind to the start makes another
            children[parent].append((number, entry))
    roots: list[Entry] = []
    for kids in children.values():
        branches: dict[str, list[Entry]] = {}
        for number, entry in kids:
            key = _branch_key(entry) if _is_turn(entry) else None
            if key is not None and key in branches and key.startswith("assistant:"):
                # the same reply written again beside itself (Claude Code rewrites a message whole on a
                # resume): each line is a branch of its own, the last written the live one
                key = f"{key}:{entry.get('uuid')}"
            if key is not None:
                branches.setdefault(key, []).append((number, entry))
        kinds = {key.split(":", 1)[0] for key in branches}
        if len(branches) > 1 and len(kinds) == 1:  # two prompts, or two replies, from one point
            for key in list(branches)[:-1]:
                roots.extend(branches[key])
    left: set[int] = set()
    stack = roots
    while stack:
        number, entry = stack.pop()
        if number in left:
            continue
        left.add(number)
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            stack.extend(children.get(uuid, []))
    return left


def _sidechains(entries: list[Entry]) -> list[list[int]]:
    """The turn lines of each inline sub-agent, in order of first appearance.

    A line joins the sub-agent of its parent, else that of its `agentId`; a line whose parent is not in the
    file (a cut transcript) continues the sidechain line before it unless that one is another agent's;
    anything else (a root) opens a sub-agent."""
    group_of: dict[str, int] = {}  # uuid -> sub-agent
    agent_group: dict[str, int] = {}
    agents: list[str | None] = []
    members: list[list[int]] = []
    last: int | None = None
    for number, entry in entries:
        if not entry.get("isSidechain"):
            continue
        agent, parent, uuid = entry.get("agentId"), entry.get("parentUuid"), entry.get("uuid")
        agent = agent if isinstance(agent, str) and agent else None
        if isinstance(parent, str) and parent in group_of:
            key = group_of[parent]
        elif agent in agent_group:
            key = agent_group[agent]
        elif isinstance(parent, str) and last is not None and agents[last] in (None, agent):
            key = last
        else:
            key = len(members)
            members.append([])
            agents.append(None)
        if agent and agents[key] is None:
            agents[key] = agent
            agent_group[agent] = key
        if isinstance(uuid, str):
            group_of[uuid] = key
        if _is_turn(entry):
            members[key].append(number)
        last = key
    return [m for m in members if m]


def subagent_files(path: str) -> list[Path]:
    """`<dir>/<session>/subagents/*.jsonl` beside `<dir>/<session>.jsonl`, by name."""
    source = Path(path)
    if source.suffix != ".jsonl" or not source.is_file():
        return []
    folder = source.with_suffix("") / "subagents"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def _written_again(entries: list[Entry]) -> dict[int, str]:
    """Turn lines whose uuid an earlier line has: a compaction (2.1.2xx) writes the messages it keeps again,
    verbatim, after its summary. The first is read; read as a sibling, the copy made every line under the
    first an abandoned branch."""
    seen: set[str] = set()
    again: dict[int, str] = {}
    for number, entry in entries:
        uuid = entry.get("uuid")
        if not _is_turn(entry) or not isinstance(uuid, str):
            continue
        if uuid in seen:
            again[number] = "written again with its uuid (a compaction keeps it; the first is read)"
        seen.add(uuid)
    return again


def select(entries: list[Entry], conversation: int | None, path: str) -> Selection:
    """Decide which lines the reader imports; raises ValueError for a conversation the file lacks."""
    again = _written_again(entries)
    entries = [(n, e) for n, e in entries if n not in again]
    turns = [(n, e) for n, e in entries if _is_turn(e)]
    subagent_file = bool(turns) and all(e.get("isSidechain") for _, e in turns)
    runs = [] if subagent_file else _sidechains(entries)
    files = [] if subagent_file else subagent_files(path)
    chosen = 0 if conversation is None else conversation
    total = 1 + len(runs) + len(files)
    if not -total <= chosen < total:
        raise ValueError(f"conversation {chosen} is out of range: {path} holds {total} conversation(s)")
    chosen %= total
    selection = Selection(left_out=dict(again), conversations=total)
    if chosen > len(runs):
        selection.subagent_file = files[chosen - 1 - len(runs)]
        return selection
    if chosen == 0:
        for number, entry in turns:
            if entry.get("isSidechain") and not subagent_file:
                selection.left_out[number] = "sidechain (a sub-agent's own conversation)"
        abandoned = _abandoned([(n, e) for n, e in entries if subagent_file or not e.get("isSidechain")])
    else:
        keep = set(runs[chosen - 1])
        for number, entry in entries:  # the main conversation's compactions are not the sub-agent's
            if number not in keep and (_is_turn(entry) or entry.get("isSidechain") is False):
                selection.left_out[number] = "not in the chosen sidechain"
        abandoned = set()
    for number in abandoned:
        selection.left_out.setdefault(number, "abandoned branch (rewound)")
    selection.abandoned = len(abandoned)
    return selection
