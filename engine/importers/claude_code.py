"""Claude Code transcripts (`~/.claude/projects/*/<session>.jsonl`) as linnkit messages.

One JSON object a line. `user` and `assistant` lines carry an Anthropic message in `message`; everything
else (`progress`, `file-history-snapshot`, `queue-operation`, `system`, ...) is bookkeeping and skipped.
Claude Code writes each content block of an assistant message on its own line (same `message.id`), and a
tool may already answer before the next block of the same message is written; such lines are merged back
into one turn (see `AssistantTurn`).

Decisions:
- `custom-title` (the user's `/rename`) and `ai-title` lines name the session: its title, the user's first.
- `type: summary` lines are session titles for the resume list, not compactions (and Claude Code often
  copies other sessions' titles into a file), so they only supply `ImportResult.title` when their
  `leafUuid` is in this file. A compaction is the user line flagged `isCompactSummary`; it becomes a
  `history_summary` that replaces every message before it.
- `isMeta` lines (caveats, expanded skills, hook context) and slash-command lines (`<command-name>`,
  `<local-command-stdout>`, ...) are sent to the model as user messages (Claude Code merges them into the
  user turn they sit in; the caveat tells the model not to answer them), so they are `user_input` too,
  marked `metadata.generated` (`"meta"` or `"local_command"`): the budget counts them and no title is
  taken from them. `system` lines of subtype `local_command` only echo the command on screen: skipped.
  `[Request interrupted by user...]` lines are kept as `user_input` (the model saw them) with
  `metadata.interrupted`.
- `attachment` lines (2.1.x: todo/task reminders, nested memory, edited-file notices, @-file contents, hook
  context, plan mode) are context the model received: `user_input` marked `metadata.generated:
  "attachment"` (see `claude_attachments`); those never sent are left out by type. Since 2.1.23x a line
  carries `rendered` (the `<system-reminder>` text as sent): that text is the message, and in such a file
  an attachment without `rendered` sent nothing (left out).
- Line types not known here are drift: left out, and named in the import report.
- A compaction written as a `compact_boundary` system line followed by a `summary` line is a
  `history_summary` too (the boundary's `compactMetadata` kept on it).
- Usage: a model call (one `message.id`, often written over several lines) counts once, with its last
  line's `usage`, kept as `metadata.usage` (`engine.usage`) on the call's last message. Billed calls no
  imported message carries — another branch, an inline sub-agent, the files of `<session>/subagents/` when
  the main conversation is imported — are `ImportResult.other_calls`, so the recorded cost has them all.
- Whitespace-only text blocks are skipped (`empty_text`). Which lines are read at all — the live branch
  after a rewind, the main conversation or one sidechain, a subagent file on its own — is decided first, by
  `engine.importers.claude_branches`; the rest is counted by reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.importers._blocks import AssistantTurn, as_blocks, flatten_blocks, tool_output, wrong_block
from engine.importers._common import (
    Collector,
    ImportResult,
    Names,
    Problem,
    iso_to_ms,
    iter_jsonl,
    iter_jsonl_file,
    load_json_document,
    read_transcript,
    summary_metadata,
    with_usage,
)
from engine.importers._json import READING_LINE
from engine.importers.claude_attachments import attachment_text
from engine.importers.claude_branches import select, subagent_files
from engine.messages import AiMessage
from engine.safe_input import InputError
from engine.session_lines import json_type
from engine.usage import UsageProblem, anthropic_usage

FORMAT = "claude-code"
SESSION_KEYS = ("sessionId", "cwd", "gitBranch", "version", "slug")
COMMAND_TAGS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
)
INTERRUPTED_PREFIX = "[Request interrupted by user"
SLIM_TYPES = Names({"progress", "file-history-snapshot", "queue-operation"})
SLIM_KEYS = ("type", "uuid", "parentUuid", "isSidechain", "agentId", "timestamp", "sessionId")
# line types that are bookkeeping of Claude Code's own (UI, resume list, history); others are drift
KNOWN_LINE_TYPES = Names(
    {"progress", "file-history-snapshot", "queue-operation", "custom-title", "ai-title", "last-prompt"}
    | {"agent-name", "tag", "pr-link", "mode", "cost-state", "worktree-state", "permission-mode"}
)

LOGLINES_KEY, LOGLINES_LOOK = '"loglines"', 256  # a web session's log: the key, within the first characters

# what `claude_stream` leaves of a stream-json run's own lines (init, result, partial events): counted
STREAM_BOOKKEEPING = "stream:"
NAMED_TITLES = {"custom-title": "customTitle", "ai-title": "aiTitle"}  # line type -> its title's field
ITERATION_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def import_claude_code(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    """Read a Claude Code transcript: its live branch (see `claude_branches`), or one of its sidechains.
    Malformed lines are reported in `problems` and skipped. The lines may also come as one JSON document
    `{"loglines": [...]}` (a web session's log, as Claude Code on the web serves it): each element is a
    line, numbered from 1."""
    logged = loglines(text)
    if logged is not None:
        return _import_lines(((n, line, None) for n, line in enumerate(logged, 1)), path, conversation)
    return _import_lines(iter_jsonl(text), path, conversation)


def import_claude_code_file(path: Path, conversation: int | None = None) -> ImportResult:
    """As `import_claude_code`, reading the file a line at a time (a 100 MB file is never one string)."""
    with path.open("rb") as file:
        start = file.read(LOGLINES_LOOK).decode("utf-8", "replace")
    if LOGLINES_KEY in start and start.lstrip().startswith("{"):
        text, unreadable = read_transcript(path)
        result = import_claude_code(text, str(path), conversation)
        result.problems[:0] = unreadable
        return result
    return _import_lines(iter_jsonl_file(path), str(path), conversation)


def loglines(text: str) -> list[Any] | None:
    """The lines of a `{"loglines": [...]}` document, or None for any other text (read as JSONL)."""
    if LOGLINES_KEY not in text[:LOGLINES_LOOK] or not text.lstrip().startswith("{"):
        return None
    value, error, _ = load_json_document(text)
    if error is not None or not isinstance(value, dict) or not isinstance(value.get("loglines"), list):
        return None
    return value["loglines"]


def _bad_links(out: Collector, number: int, entry: dict[str, Any]) -> None:
    """A `uuid` or `parentUuid` that cannot name a line cuts the conversation's tree there: said, not silent
    (the lines above it read as another branch)."""
    for key in ("uuid", "parentUuid"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            out.problem(number, f"{key}: must be a line's uuid (a string), got {json_type(value)}")


def _wrong_type(entry: dict[str, Any]) -> str | None:
    """What makes a line unreadable without stopping the reader (a value of a type Claude Code never
    writes, which would change what is read without a word), or None: the line is then left out, named."""
    sidechain = entry.get("isSidechain")
    if "isSidechain" in entry and not isinstance(sidechain, bool):
        # read as false it made a sub-agent file's line the main conversation, and the rest another branch
        return f"isSidechain: must be true or false, got {json_type(sidechain)}"
    message = entry.get("message")
    if entry.get("type") not in ("user", "assistant") or not isinstance(message, dict):
        return None
    if "content" not in message:  # read as no blocks: a tool result vanished as an empty line
        return "message: no content (text or a list of blocks)"
    if message["content"] is None:
        return "message.content: must be text or a list of blocks, got null"
    content = message["content"]
    return wrong_block(content, "message.content") if isinstance(content, list) else None


def _import_lines(
    lines: Iterator[tuple[int, Any, str | None]], path: str, conversation: int | None
) -> ImportResult:
    reader = _Reader(Collector(path))
    entries: list[tuple[int, dict[str, Any]]] = []
    for number, entry, error in lines:
        if error:
            reader.out.problem(number, error)
        elif not isinstance(entry, dict):
            reader.out.problem(number, f"expected a JSON object, found {type(entry).__name__}")
        elif (wrong := _wrong_type(entry)) is not None:
            reader.out.problem(number, f"{wrong}; left out")
        else:
            entries.append((number, _slim(entry)))
            _bad_links(reader.out, number, entry)
    reader.renders = any(_rendered(e) is not None for _, e in entries if e.get("type") == "attachment")
    selection = select(entries, conversation, path)
    if selection.subagent_file is not None:
        chosen = selection.subagent_file
        text, unreadable = read_transcript(chosen)
        result = import_claude_code(text, str(chosen))
        result.problems[:0] = unreadable
        result.conversations = selection.conversations
        return result
    for number, entry in entries:
        reason = selection.left_out.get(number)
        if reason:
            reader.out.skip(reason, number)
            reader.note_other_call(number, entry, reason)
            if isinstance(entry.get("uuid"), str):
                reader.uuids.add(entry["uuid"])
        else:
            reader.read(number, entry)
    if conversation in (None, 0):
        for file in subagent_files(path):
            reader.subagent_calls(file)
    return reader.finish(selection.conversations)


def _preserved(metadata: dict[str, Any] | None) -> set[str]:
    """The uuids a compaction keeps after its summary (`compactMetadata.preservedMessages.uuids`, 2.1.2xx)."""
    kept = (metadata or {}).get("preservedMessages")
    uuids = kept.get("uuids") if isinstance(kept, dict) else None
    return {u for u in uuids if isinstance(u, str)} if isinstance(uuids, list) else set()


def _microcompacted(entry: dict[str, Any]) -> str:
    """The report's line for a `microcompact_boundary` (2.1.x): from there on Claude Code sent the tool
    results it names with their content cleared. A session message has one content for every step, so they
    come in whole, and the calls recorded after the boundary were smaller than their replay."""
    meta = entry.get("microcompactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    ids = meta.get("compactedToolIds")
    saved = meta.get("tokensSaved")
    cleared = f"{len(ids)} earlier tool results" if isinstance(ids, list) else "earlier tool results"
    tokens = f" ({saved} tokens)" if isinstance(saved, int) and not isinstance(saved, bool) else ""
    return (
        f"system:microcompact_boundary: Claude Code cleared {cleared}{tokens} from here on; imported whole, "
        "so the calls recorded after it are smaller than their replay"
    )


def _rendered(entry: dict[str, Any]) -> str | None:
    """An attachment line's `rendered` text (the `<system-reminder>`s Claude Code sent for it), or None when
    the line has no `rendered` list."""
    rendered = entry.get("rendered")
    if not isinstance(rendered, list):
        return None
    texts = []
    for item in rendered:
        content = item.get("content") if isinstance(item, dict) else item
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):  # content blocks
            texts.append(flatten_blocks(content)[0])
    return "\n".join(t for t in texts if t)


def _slim(entry: dict[str, Any]) -> dict[str, Any]:
    """The line without what no reader here uses: the UI's copy of each tool result (`toolUseResult`, a
    quarter of a transcript) and the payload of bookkeeping lines (progress, file snapshots), so a 100 MB
    transcript is held in memory at about half its parsed size."""
    entry.pop("toolUseResult", None)
    if entry.get("type") in SLIM_TYPES:
        return {k: entry[k] for k in SLIM_KEYS if k in entry}
    return entry


def _call_usage(entry: dict[str, Any]) -> tuple[str, Any, str | None] | None:
    """(message id, raw usage, model) of an assistant line that records a billed call, else None."""
    message = entry.get("message")
    if entry.get("type") != "assistant" or not isinstance(message, dict) or "usage" not in message:
        return None
    model = message.get("model") if isinstance(message.get("model"), str) else None
    if model == "<synthetic>" or entry.get("isApiErrorMessage"):
        return None
    key = message.get("id") if isinstance(message.get("id"), str) else entry.get("uuid")
    return (key, message["usage"], model) if isinstance(key, str) else None


class _Reader:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.session: dict[str, Any] = {}
        self.turn: AssistantTurn | None = None
        self.tool_names: dict[str, str] = {}
        self.titles: list[tuple[str, Any]] = []
        self.named: dict[str, str] = {}  # the latest `custom-title` and `ai-title` lines' titles
        self.uuids: set[str] = set()
        self.compact_metadata: dict[str, Any] | None = None
        self.boundary: tuple[int, dict[str, Any]] | None = None  # a compact_boundary awaiting its summary
        self.summary_seq = -1
        self.calls: dict[str, tuple[int, Any, str | None]] = {}  # message id → its last line's usage
        self.call_ends: dict[str, str] = {}  # message id → the id of the last message it produced
        self.others: dict[str, tuple[int, Any, str | None, str]] = {}  # calls on lines not imported
        self.renders = False  # the file's attachments carry their `rendered` text (Claude Code 2.1.23x+)

    # -- dispatch ---------------------------------------------------------------------------------
    def read(self, number: int, entry: dict[str, Any]) -> None:
        READING_LINE.set(number)  # entries are read in the tree's order, after every line was parsed
        kind = entry.get("type")
        if isinstance(entry.get("uuid"), str):
            self.uuids.add(entry["uuid"])
        if not isinstance(kind, str):
            self.out.problem(number, "line without a 'type'" if kind is None else "'type' is not a string")
        elif kind == "summary" and self.boundary is not None and _is_compaction_summary(entry):
            self._compact_summary(number, entry, _summary_blocks(entry))
        elif kind == "summary" or kind in NAMED_TITLES:
            self._title(number, kind, entry)
        elif kind == "system":
            self._system(number, entry)
        elif kind == "attachment" and isinstance(entry.get("attachment"), dict):
            self._attachment(number, entry, entry["attachment"])
        elif kind in KNOWN_LINE_TYPES or str(kind).startswith(STREAM_BOOKKEEPING):
            self.out.skip(kind, number)
        elif kind not in ("user", "assistant"):
            self.out.drift(f"line type {kind!r}", number)
        elif not isinstance(entry.get("message"), dict):
            self.out.problem(number, f"'{kind}' line without a message object")
        else:
            self._note_session(entry)
            if self.boundary is not None and not entry.get("isCompactSummary"):
                self._missing_summary()
            if kind == "assistant":
                self._assistant(number, entry, entry["message"])
            else:
                self._user(number, entry, entry["message"])

    def _system(self, number: int, entry: dict[str, Any]) -> None:
        subtype = entry.get("subtype")
        if subtype == "compact_boundary":
            if self.boundary is not None:
                self._missing_summary()
            meta = entry.get("compactMetadata")
            self.compact_metadata = meta if isinstance(meta, dict) else {}
            self.boundary = (number, entry)
        elif subtype == "microcompact_boundary":
            self.out.skip(_microcompacted(entry), number)
            return
        self.out.skip(f"system:{subtype}" if subtype else "system", number)

    def _attachment(self, number: int, entry: dict[str, Any], attachment: dict[str, Any]) -> None:
        kind = str(attachment.get("type"))
        rendered = _rendered(entry)
        if rendered is not None:  # what the model received, byte for byte
            text, known = rendered or None, True
        elif self.renders:  # a version that writes what it sends: an attachment without it sent nothing
            text, known = None, True
        else:
            text, known = attachment_text(attachment)
        if not known:
            self.out.drift(f"attachment type {kind!r}", number, "user_input" if text else None)
        if not text:
            if known:
                self.out.skip(f"attachment {kind} (not sent to the model)", number)
            return
        self._close_turn()
        meta = {"generated": "attachment", "attachment": kind, "source": self._source(number, entry)}
        self.out.add(
            AiMessage(self._id(number, entry), "user", "user_input", text, self._ts(number, entry), meta)
        )

    def _missing_summary(self) -> None:
        """A compact_boundary with no summary after it: what came before is still gone from the model's
        view, so it becomes a history_summary of the boundary's own text, marked `summaryMissing`."""
        if self.boundary is None:
            return
        number, entry = self.boundary
        content = entry.get("content")
        text = content if isinstance(content, str) and content else "Conversation compacted"
        self._compact_summary(number, entry, [{"type": "text", "text": text}], missing=True)

    # -- user lines --------------------------------------------------------------------------------
    def _user(self, number: int, entry: dict[str, Any], message: dict[str, Any]) -> None:
        blocks = as_blocks(message.get("content"))
        if blocks is None:
            self.out.problem(number, "message content is neither text nor a list of blocks")
            return
        if entry.get("isCompactSummary"):
            self._compact_summary(number, entry, blocks)
            return
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        for block in results:
            self._tool_result(number, entry, block)
        text, notes = flatten_blocks(rest)
        if not text.strip() and not notes:
            if not results:
                self.out.skip("empty", number)
        else:
            self._close_turn()
            meta = {**notes, "source": self._source(number, entry)}
            if entry.get("isMeta"):
                meta["generated"] = "meta"
            elif text.lstrip().startswith(COMMAND_TAGS):
                meta["generated"] = "local_command"
            elif text.startswith(INTERRUPTED_PREFIX):
                meta["interrupted"] = True
            self.out.add(
                AiMessage(self._id(number, entry), "user", "user_input", text, self._ts(number, entry), meta)
            )

    def _tool_result(self, number: int, entry: dict[str, Any], block: dict[str, Any]) -> None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or not call_id:
            self.out.problem(number, "tool_result block without a tool_use_id")
            call_id = ""
        extra = {"source": self._source(number, entry)}
        message = tool_output(
            block, self._id(number, entry), self._ts(number, entry), self.tool_names.get(call_id), extra
        )
        if self.turn is not None:
            self.turn.outputs.append(message)
        else:
            self.out.add(message)

    def _compact_summary(
        self, number: int, entry: dict[str, Any], blocks: list[Any], missing: bool = False
    ) -> None:
        self._close_turn()
        self.boundary = None
        text, notes = flatten_blocks(blocks)
        kept = _preserved(self.compact_metadata)  # a partial compaction keeps its last messages after it
        replaced = [
            m for m in self.out.messages if m.type != "system_prompt" and m.id.split("#")[0] not in kept
        ]
        self.summary_seq += 1
        source: dict[str, Any] = self._source(number, entry)
        if self.compact_metadata is not None:
            source["compactMetadata"] = self.compact_metadata
            self.compact_metadata = None
        meta = {
            **summary_metadata(text, replaced, self.summary_seq),
            **({"summaryMissing": True} if missing else {}),
            **notes,
            "source": source,
        }
        message_id = self._id(number, entry)
        self.out.add(AiMessage(message_id, "system", "history_summary", text, self._ts(number, entry), meta))

    # -- assistant lines ---------------------------------------------------------------------------
    def _assistant(self, number: int, entry: dict[str, Any], message: dict[str, Any]) -> None:
        if message.get("model") == "<synthetic>" or entry.get("isApiErrorMessage"):
            self.out.skip("synthetic", number)
            return
        blocks = as_blocks(message.get("content"))
        if blocks is None:
            self.out.problem(number, "message content is neither text nor a list of blocks")
            return
        key = message.get("id") if isinstance(message.get("id"), str) else None
        if self.turn is None or key is None or key != self.turn.key:
            self._close_turn()
            self.turn = AssistantTurn(key, self.tool_names)
        source = self._source(number, entry)
        source.update(
            {k: v for k, v in (("model", message.get("model")), ("messageId", key)) if v is not None}
        )
        if isinstance(message.get("model"), str):
            self.session.setdefault("model", message["model"])  # the header's modelId: the first call's
        extra = {"source": source}
        timestamp = self._ts(number, entry)
        for block in blocks:
            reason = self.turn.add_block(block, lambda: self._id(number, entry), timestamp, extra)
            if reason:
                self.out.skip(reason, number)
        if message.get("stop_reason") is not None:
            self.turn.tail = {"stop_reason": message["stop_reason"]}
        call = _call_usage(entry)
        if call is not None:
            self.calls[call[0]] = (number, call[1], call[2])

    # -- helpers -----------------------------------------------------------------------------------
    def _close_turn(self) -> None:
        if self.turn is not None:
            produced = self.turn.finish()
            for message in produced:
                self.out.add(message)
            ends = [m for m in produced if m.role == "assistant"]
            if self.turn.key is not None and ends:
                self.call_ends[self.turn.key] = ends[-1].id
            self.turn = None

    # -- usage ---------------------------------------------------------------------------------------
    def note_other_call(self, number: int, entry: dict[str, Any], why: str) -> None:
        call = _call_usage(entry)
        if call is not None:
            self.others[call[0]] = (number, call[1], call[2], why)

    def subagent_calls(self, file: Path) -> None:
        """The billed calls of a sub-agent file beside the transcript (unreadable lines are that file's
        own import's business: they are skipped here)."""
        calls: dict[str, tuple[int, Any, str | None]] = {}
        try:
            text, _ = read_transcript(file)  # a bad byte is that file's own import's business
        except InputError as error:
            self.out.problems.append(Problem(str(file), None, f"not read for its usage ({error.reason})"))
            return
        for number, entry, error in iter_jsonl(text):
            call = None if error or not isinstance(entry, dict) else _call_usage(entry)
            if call is not None:
                calls[call[0]] = (number, call[1], call[2])
        for key, (number, raw, model) in calls.items():
            usage = anthropic_usage(raw, model, key)
            if isinstance(usage, UsageProblem):
                self.out.problems.append(Problem(str(file), number, str(usage)))
            else:
                self.out.other_call(usage, number, "sub-agent file", str(file))

    def _attach_usage(self) -> None:
        """Each call's last usage onto the last message it produced; the rest become other calls."""
        positions = {m.id: i for i, m in enumerate(self.out.messages)}
        for key, (number, raw, model) in self.calls.items():
            usage = self.out.usage(number, anthropic_usage(raw, model, key))
            end = self.call_ends.get(key)
            if usage is None:
                continue
            self._earlier_iterations(number, raw, key)
            if end is None:
                self.out.other_call(usage, number, "a call whose reply was left out")
                continue
            index = positions[end]
            self.out.messages[index] = with_usage(self.out.messages[index], usage)
        for key, (number, raw, model, why) in self.others.items():
            if key not in self.calls:
                usage = self.out.usage(number, anthropic_usage(raw, model, key))
                if usage is not None:
                    self.out.other_call(usage, number, why)

    def _earlier_iterations(self, number: int, raw: Any, key: str) -> None:
        """A request the API ran more than once (`usage.iterations`: a model fallback after a refusal)
        reports its last run at the top level; each earlier run was billed too, under its own model."""
        runs = raw.get("iterations") if isinstance(raw, dict) else None
        if not isinstance(runs, list) or len(runs) < 2 or not isinstance(runs[-1], dict):
            return
        if any(raw.get(count) != runs[-1].get(count) for count in ITERATION_COUNTS):
            return  # the top level is not the last run's alone: what it holds is not known here
        for run in runs[:-1]:
            model = run.get("model") if isinstance(run, dict) and isinstance(run.get("model"), str) else None
            usage = self.out.usage(number, anthropic_usage(run, model, key))
            if usage is not None:
                self.out.other_call(usage, number, "an earlier run of the same request (a model fallback)")

    def _note_session(self, entry: dict[str, Any]) -> None:
        for key in SESSION_KEYS:
            if key not in self.session and entry.get(key) is not None:
                self.session[key] = entry[key]

    def _source(self, number: int, entry: dict[str, Any]) -> dict[str, Any]:
        """The line number, plus cwd/branch where they differ from the session's first values."""
        source: dict[str, Any] = {"line": number}
        for key in ("cwd", "gitBranch"):
            if entry.get(key) is not None and entry[key] != self.session.get(key):
                source[key] = entry[key]
        return source

    def _id(self, number: int, entry: dict[str, Any]) -> str:
        uuid = entry.get("uuid")
        return self.out.unique_id(uuid if isinstance(uuid, str) and uuid else f"cc-{number}")

    def _ts(self, number: int, entry: dict[str, Any]) -> int:
        ms = iso_to_ms(entry.get("timestamp"))
        return number if ms is None else ms

    def _title(self, number: int, kind: str, entry: dict[str, Any]) -> None:
        """A title line: a `summary` (the resume list's, for the leaf it names), or the name the user gave
        the session (`custom-title`) or Claude Code gave it (`ai-title`), which wins."""
        if kind == "summary":
            self.titles.append((str(entry.get("summary") or ""), entry.get("leafUuid")))
            self.out.skip("session_title", number)
            return
        named = entry.get(NAMED_TITLES[kind])
        if isinstance(named, str) and named.strip():
            self.named[kind] = named.strip()
        self.out.skip(kind, number)

    def finish(self, conversations: int = 1) -> ImportResult:
        self._missing_summary()
        self._close_turn()
        self._attach_usage()
        own = [summary for summary, leaf in self.titles if summary and leaf in self.uuids]
        title = self.named.get("custom-title") or self.named.get("ai-title") or (own[-1] if own else None)
        return self.out.result(FORMAT, title=title, session=self.session, conversations=conversations)


def _is_compaction_summary(entry: dict[str, Any]) -> bool:
    """A `summary` line after a compact_boundary: one carrying a message, or any but a session title
    (titles name the line they describe in `leafUuid`)."""
    return isinstance(entry.get("message"), dict) or "leafUuid" not in entry


def _summary_blocks(entry: dict[str, Any]) -> list[Any]:
    """A compaction `summary` line's text: its `summary` field, or the blocks of its `message`."""
    if isinstance(entry.get("summary"), str):
        return [{"type": "text", "text": entry["summary"]}]
    message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    return as_blocks(message.get("content")) or []
