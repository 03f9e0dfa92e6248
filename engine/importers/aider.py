"""Aider chat histories (`.aider.chat.history.md`) as linnkit messages.

The file is Markdown appended to by every aider run: `# aider chat started at …` opens a session, `#### `
lines are what the user typed (`/` commands to aider itself are counted, not imported), `> ` lines are
aider's console output (shown to the user, never sent as such to the model: counted, not imported) — as are
`####` lines that only echo the answer to one of aider's own questions (`… (Y)es/(N)o [Yes]: y`) — and the
other lines are the model's replies. Aider records no structured tool calls (edits are inside the reply
text) and no system prompt. A file holds many sessions: `conversation` picks one, by default the last that
holds a turn (a run that only started aider holds none); the text before the first header is a session too.

Aider ends every line of a user turn with a Markdown hard break (two spaces): where a file's `####` lines
have it, a `####` line without it is the model's own heading (`#### Step 1`) inside its reply. A file whose
trailing spaces were stripped (an editor, a linter) reads every `####` line as the user's.
"""

from __future__ import annotations

import re
from typing import Any

from engine.importers._common import Collector, ImportResult, iso_to_ms, leading_reasoning, pick_conversation
from engine.messages import AiMessage
from engine.usage import RecordedUsage

FORMAT = "aider"
HEADER = re.compile(r"^# aider chat started at (.+?)\s*$")
MODEL = re.compile(r"^> Models?: (\S+)")
USER_PREFIX = "#### "
CONSOLE_PREFIX = ">"
REASONING_TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"  # aider's own wrapper of model reasoning
# aider's answer to its own question, echoed as a `####` line (`Add file to the chat? (Y)es/(N)o [Yes]: y`)
# aider asking to add a file the reply named (the line before names it), and the user's answer
ADD_FILE = re.compile(r"^> Add file to the chat\?.*\[(Yes|No)\]:\s*(\S*)\s*$", re.IGNORECASE)
# the user turn aider sends by itself once files were added (aider's `added_files` prompt): not in the file
ADDED_FILES = "I added these files to the chat: {}\nLet me know if there are others we should add."
PROMPT_ECHO = re.compile(r"\(Y\)es/\(N\)o|\[(Yes|No)\]:\s*\S*\s*$|\? - (all|skip|yes|no)\s*$", re.IGNORECASE)
# aider's report after each model call (`show_usage_report`): the provider's counts as `format_tokens` prints
# them (exact below 1,000; `2.0k` to the hundred below 10,000, `12k` to the thousand above)
COUNT = r"(\d+(?:\.\d)?k?)"
TOKENS = re.compile(
    rf"^> Tokens: {COUNT} sent, (?:{COUNT} cache write, )?(?:{COUNT} cache hit, )?{COUNT} received\."
)
BLANK = "<blank>"  # what aider's input history writes for an empty Enter (nothing is sent)


def detect_aider(sniff: Any) -> bool:
    return sniff.document is None and any(HEADER.match(line) for line in sniff.text[:20_000].splitlines())


def _sessions(lines: list[str]) -> list[tuple[int, str | None]]:
    """(first line index, start time) of each session; the text before the first header is one too."""
    starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := HEADER.match(line))]
    if not starts or any(line.startswith((USER_PREFIX, "####")) for line in lines[: starts[0][0]]):
        starts.insert(0, (0, None))
    return starts


def _has_turns(lines: list[str], first: int, last: int) -> bool:
    """Whether `lines[first:last]` hold a user turn or a reply (not only aider's banner and commands)."""
    for line in lines[first:last]:
        text = line.strip()
        if not text or HEADER.match(line) or text.startswith(CONSOLE_PREFIX):
            continue
        if not text.startswith("####") or not text.removeprefix("####").strip().startswith("/"):
            return True
    return False


def import_aider(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    lines = text.split("\n")
    sessions = _sessions(lines)
    index = -1 if conversation is None else conversation
    if conversation is None:  # the last session with a turn: a run that only started aider is none
        ends = [start for start, _ in sessions[1:]] + [len(lines)]
        bounds = zip(sessions, ends, strict=True)
        spoken = [n for n, ((first, _), end) in enumerate(bounds) if _has_turns(lines, first, end)]
        index = spoken[-1] if spoken else -1
    chosen = pick_conversation(sessions, index, path)
    session: dict[str, Any] = {}
    if chosen is not None:
        first, started = chosen
        following = [s for s, _ in sessions if s > first]
        last = following[0] if following else len(lines)
        _read(out, lines, first, last, iso_to_ms(started.replace(" ", "T")) if started else None, session)
        if started:
            session["startedAt"] = started
    return out.result(FORMAT, session=session, conversations=len(sessions))


def _read(
    out: Collector, lines: list[str], first: int, last: int, start_ms: int | None, session: dict
) -> None:
    block: list[str] = []
    kind: str | None = None  # "user" or "assistant"
    block_line = first
    marked = any(line.startswith("####") and line.endswith("  ") for line in lines[first:last])
    added: list[str] = []  # files the user let aider add since the last reply
    adding: list[str] = []  # and those added while the block being read was open (after it)
    console = ""  # the last console line

    def flush() -> None:
        _block(out, kind, "\n".join(block).strip("\n"), block_line + 1, start_ms, added)
        block.clear()

    for number in range(first, last):
        raw = lines[number]
        line = raw[:-2] if raw.endswith("  ") else raw  # Markdown's hard line break
        if HEADER.match(line):
            continue
        if line.startswith(CONSOLE_PREFIX):
            if (model := MODEL.match(line)) and "model" not in session:
                session["model"] = model.group(1)
            if (counted := TOKENS.match(line)) is not None:  # the reply just read was that call's answer
                flush()
                kind = None
                _attach_usage(out, counted, session.get("model"), number + 1)
            if _accepted(line) and console and not ADD_FILE.match(console):
                adding.append(console[2:].strip())
            console = line
            out.skip("aider console output (not sent to the model)", number + 1)
            continue
        now = "user" if line.startswith("####") and (raw.endswith("  ") or not marked) else "assistant"
        if now != kind:
            flush()
            kind, block_line = now, number
            added.extend(name for name in adding if name not in added)
            adding.clear()
        if now == "user":
            line = line[len(USER_PREFIX) :] if line.startswith(USER_PREFIX) else line.removeprefix("####")
        block.append(line)
    flush()


def _accepted(line: str) -> bool:
    """An `Add file to the chat?` console line answered yes (or all; an empty answer takes the default)."""
    found = ADD_FILE.match(line)
    if found is None:
        return False
    answer = found.group(2).lower()
    return answer in ("y", "yes", "a", "all") or (not answer and found.group(1).lower() == "yes")


def _block(
    out: Collector, kind: str | None, text: str, line: int, start_ms: int | None, added: list[str]
) -> None:
    """One block of the history: a user's `####` lines or the model's reply. A reply after files were added
    answers the turn aider sent by itself: it comes first, marked `generated`."""
    if kind == "user" and text.startswith("/"):  # /add, /diff, /run…: commands to aider itself
        out.skip("aider command (not sent to the model)", line)
    elif kind == "user" and _is_prompt_echo(text):
        out.skip("aider console output: answer to its own prompt (not sent to the model)", line)
    elif kind == "user" and text.strip() == BLANK:
        out.skip("aider: an empty input (not sent to the model)", line)
    elif kind == "user" and text.strip():
        added.clear()
        _add(out, f"ad-{line}", "user", "user_input", text, start_ms)
    elif kind == "assistant" and text.strip():
        if added:
            said = ADDED_FILES.format(", ".join(added))
            _add(out, f"ad-{line}-added", "user", "user_input", said, start_ms, {"generated": "aider"})
            added.clear()
        reasoning = leading_reasoning(text, REASONING_TAG)
        if reasoning is not None:  # a reasoning model's thinking, as aider writes it
            thought, text = reasoning
            _add(out, f"ad-{line}-think", "assistant", "thought", thought, start_ms)
        if text:
            _add(out, f"ad-{line}", "assistant", "final_answer", text, start_ms)


def _attach_usage(out: Collector, counted: re.Match[str], model: str | None, line: int) -> None:
    """A `> Tokens:` line's counts as the usage of the reply before it (its last assistant message). `sent`
    holds the cache writes (aider adds them), `cache hit` is the cache read; a count printed with `k` is
    rounded, which `raw.rounded` says."""
    sent, written, hit, received = (_count(group) for group in counted.groups())
    start = len(out.messages)
    while start > 0 and out.messages[start - 1].role == "assistant":
        start -= 1
    rounded = any(group is not None and group.endswith("k") for group in counted.groups())
    raw = {"line": counted.group(0)[2:], "rounded": rounded}
    usage = RecordedUsage("aider", sent, received, hit, written, 0, None, model, None, raw)
    out.attach_usage(start, len(out.messages), usage, line, "a call whose reply the history does not hold")


def _count(text: str | None) -> int:
    if text is None:
        return 0
    return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def _add(
    out: Collector, base: str, role: str, kind: str, text: str, start_ms: int | None, meta: dict | None = None
) -> None:
    out.add(AiMessage(out.unique_id(base), role, kind, text, (start_ms or 0) + len(out.messages), meta))


def _is_prompt_echo(text: str) -> bool:
    """Every line of the block is aider asking and the answer given (console output, not a user turn)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(PROMPT_ECHO.search(line) for line in lines)
