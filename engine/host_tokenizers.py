"""Host tokenizers (spec §3's port, implemented by a host): `MockTokenizer`, linnkit's test tokenizer that
the conformance cases use, and `TableTokenizer`, fixed counts per message id for worked examples."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from engine.jsvalues import utf16_len
from engine.messages import AiMessage
from engine.tokens import TokenizerPort

__all__ = ["MockTokenizer", "TableTokenizer"]


class MockTokenizer(TokenizerPort):
    """A host tokenizer for tests and the conformance cases.

    `estimate_message` is `message_fn(msg)` if given; else with `chars_per_token` C it is
    `tokens_per_message + ceil(utf16_len(content) / C)` (tool calls, tool_call_id and metadata do not count);
    else `tokens_per_message`. `estimate_text` is `text_fn(text)` if given, else `tokens_per_text`.
    """

    is_host = True

    def __init__(
        self,
        tokens_per_message: int = 50,
        tokens_per_text: int = 10,
        chars_per_token: float | None = None,
        message_fn: Callable[[AiMessage], int] | None = None,
        text_fn: Callable[[str], int] | None = None,
    ) -> None:
        if chars_per_token is not None and not chars_per_token > 0:
            raise ValueError(f"chars_per_token must be > 0, got {chars_per_token!r}")
        self.tokens_per_message = tokens_per_message
        self.tokens_per_text = tokens_per_text
        self.chars_per_token = chars_per_token
        self.message_fn = message_fn
        self.text_fn = text_fn

    @property
    def backend(self) -> str:
        if self.message_fn is not None:
            return "host:mock(custom)"
        if self.chars_per_token is not None:
            return f"host:mock({self.tokens_per_message}+chars/{self.chars_per_token})"
        return f"host:mock({self.tokens_per_message})"

    def estimate_text(self, text: str, model_id: str | None = None) -> int:
        return self.text_fn(text) if self.text_fn is not None else self.tokens_per_text

    def estimate_message(self, msg: AiMessage, model_id: str | None = None) -> int:
        if self.message_fn is not None:
            return self.message_fn(msg)
        if self.chars_per_token is None:
            return self.tokens_per_message
        return self.tokens_per_message + math.ceil(utf16_len(msg.content) / self.chars_per_token)


class TableTokenizer(TokenizerPort):
    """A host tokenizer with fixed tokens per message, as in the spec's worked examples ("table").

    A message costs `per_id[msg.id]`, else `per_type[msg.type]`, else `per_role[msg.role]`, else `default`.
    """

    is_host = True

    def __init__(
        self,
        per_id: Mapping[str, int],
        default: int = 0,
        *,
        per_type: Mapping[str, int] | None = None,
        per_role: Mapping[str, int] | None = None,
        text_tokens: int = 10,
    ) -> None:
        self.per_id = dict(per_id)
        self.per_type = dict(per_type or {})
        self.per_role = dict(per_role or {})
        self.default = default
        self.text_tokens = text_tokens

    @property
    def backend(self) -> str:
        return "host:table"

    def estimate_text(self, text: str, model_id: str | None = None) -> int:
        return self.text_tokens

    def estimate_message(self, msg: AiMessage, model_id: str | None = None) -> int:
        for table, key in ((self.per_id, msg.id), (self.per_type, msg.type), (self.per_role, msg.role)):
            if key in table:
                return table[key]
        return self.default
